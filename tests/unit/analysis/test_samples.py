"""Transient removal and the outlier policy on long-format samples."""

from __future__ import annotations

import pandas as pd
import pytest

from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.outliers import OutlierPolicy, apply_policy
from vnetbench.analysis.transient import drop_transient

S = 1_000_000_000


@pytest.fixture
def samples() -> pd.DataFrame:
    rows = [(1, t * S, "throughput_bps", v) for t, v in enumerate([10, 11, 12, 13, 100])]
    rows += [(2, t * S, "throughput_bps", v) for t, v in enumerate([1, 2, 50])]
    rows += [(1, t * S, "rtt_ns", v) for t, v in enumerate([5, 5, 5, 5, 9])]
    return pd.DataFrame(rows, columns=["measurement_id", "t_ns", "metric", "value"])


def test_transient_removal(samples: pd.DataFrame) -> None:
    f = drop_transient(samples, omit_ns=int(1.5 * S))
    assert len(f.kept) == 13 - 6 and len(f.excluded) == 6  # t = 0 s and 1 s of each of the 3 series
    assert (f.kept["t_ns"] >= 1.5 * S).all()
    assert f.excluded["reason"].iloc[1] == "transient: t 1 s < omit 1.5 s"
    per = drop_transient(samples, omit_ns={2: 2 * S})
    assert per.excluded["measurement_id"].unique().tolist() == [2]
    assert len(per.excluded) == 2
    with pytest.raises(DataError, match="omit_ns"):
        drop_transient(samples, omit_ns=-1)


def test_no_outlier_policy_by_default(samples: pd.DataFrame) -> None:
    f = OutlierPolicy().apply(samples)
    assert f.kept.equals(samples) and f.excluded.empty
    assert "none excluded" in f.summary()


def test_iqr(samples: pd.DataFrame) -> None:
    """Measurement 1 throughput 10, 11, 12, 13, 100: Q1 = 11, Q3 = 13, IQR = 2, fences [8, 16] → 100 out.
    RTT 5, 5, 5, 5, 9: Q1 = Q3 = 5, IQR 0, fences [5, 5] → 9 out. Measurement 2 has 3 values: left alone."""
    f = apply_policy(samples, "iqr")
    assert f.excluded["value"].tolist() == [100, 9]
    assert f.excluded["reason"].iloc[0].startswith("iqr: 100 outside [8, 16]")
    assert "Q1 11, Q3 13" in f.excluded["reason"].iloc[0]
    assert "measurement_id=1, metric=throughput_bps" in f.excluded["reason"].iloc[0]
    assert len(f.kept) + len(f.excluded) == len(samples)
    assert any("measurement_id=2" in n and "fewer than 4" in n for n in f.notes)
    assert f.summary().startswith(
        "outliers: iqr with k = 1.5 per measurement_id, metric: excluded 2 of 13 rows"
    )


def test_mad(samples: pd.DataFrame) -> None:
    """10, 11, 12, 13, 100: median 12, |deviations| 2, 1, 0, 1, 88, MAD = 1, scaled 1.4826:
    100 has z = 88/1.4826 = 59.4 > 3.5; 10 has 1.35, kept. RTT: MAD = 0, the rule is undefined."""
    f = OutlierPolicy("mad").apply(samples)
    assert f.excluded["value"].tolist() == [100]
    assert "= 59.4 > 3.5, median 12" in f.excluded["reason"].iloc[0]
    assert any("MAD is 0" in n for n in f.notes)
    loose = OutlierPolicy("mad", k=100).apply(samples)
    assert loose.excluded.empty


def test_policy_is_checked() -> None:
    with pytest.raises(DataError, match="unknown method"):
        OutlierPolicy("zscore")  # type: ignore[arg-type]
    with pytest.raises(DataError, match="must be positive"):
        OutlierPolicy("iqr", k=0)
