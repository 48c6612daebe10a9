"""The report says which measurements ran on a saturated host (fidelity.saturated_cpu_items and the
Findings' 'Machine' line). In quickstart d1453f96 the host's CPU was ≥ 95 % busy (other work on the
machine) during 11 of the 13 measurements of repetition 2, and the report said so only for the
star's together step. Frames built by hand (no root); expected counts by hand from the busy shares given."""

from __future__ import annotations

import math

import pandas as pd

from vnetbench.report import fidelity
from vnetbench.report.sections.findings import cpu_findings


def _frame() -> pd.DataFrame:
    # ids 1-3 repetition 1, ids 4-6 repetition 2; id 6 failed (never counted)
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "repetition": [1, 1, 1, 2, 2, 2],
            "status": ["ok", "ok", "ok", "ok", "ok", "failed"],
        }
    )


# busy share per measurement: 1 at 0.50, 2 at 0.95 (the threshold: saturated), 3 without a reading,
# 4 at 0.998, 5 at 0.999, 6 (failed) at 1.0 -> saturated: 2 (rep 1), 4 and 5 (rep 2); read: 1, 2, 4, 5
BUSY = {1: 0.50, 2: 0.95, 3: math.nan, 4: 0.998, 5: 0.999, 6: 1.0}


def test_saturated_measurements_are_counted_per_repetition_of_those_with_a_reading() -> None:
    assert fidelity.saturated_cpu(_frame(), BUSY) == (3, 4, "repetition 1: 1 of 2; repetition 2: 2 of 2")
    (item,) = fidelity.saturated_cpu_items(_frame(), BUSY)
    assert item.startswith("Machine as bottleneck: the host's CPU was ≥ 95 % busy (all its cores,")
    assert (
        "during 3 of 4 measurements with a CPU reading (repetition 1: 1 of 2; repetition 2: 2 of 2)" in item
    )


def test_nothing_is_said_when_no_measurement_ran_on_a_saturated_host() -> None:
    cool = {1: 0.5, 2: 0.94, 4: 0.2, 5: 0.9, 6: 0.99}  # only the failed one is above
    assert fidelity.saturated_cpu(_frame(), cool) is None
    assert fidelity.saturated_cpu_items(_frame(), cool) == []
    assert fidelity.saturated_cpu_items(_frame(), {}) == []


def test_findings_name_the_saturated_measurements() -> None:
    cpu = pd.DataFrame({"measurement_id": list(BUSY), "host_busy_ratio": list(BUSY.values())})
    (line,) = cpu_findings(_frame(), cpu)
    assert line == (
        "<b>Machine</b>: the host's CPU was ≥ 95 % busy during 3 of 4 measurements (repetition 1: 1 of 2; "
        "repetition 2: 2 of 2); their values can be this machine's, not the network's (see Machine as "
        "bottleneck)."
    )
    assert cpu_findings(_frame(), pd.DataFrame()) == []
