"""The CPU section's loss-vs-CPU line: both correlations (host CPU and receiver tool CPU) with their
Pearson r, p and n, so neither reads as more certain than the other."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from vnetbench.analysis.cpu import correlation
from vnetbench.report.sections import cpu


def _ctx(tmp_path: Path, frame: pd.DataFrame) -> SimpleNamespace:
    """The two things the section reads: the CPU frame and where figures go."""
    return SimpleNamespace(cpu=frame, fig_dir=tmp_path)


def _five_pps() -> pd.DataFrame:
    """Five packet-rate measurements (kind pps: no tool-CPU table), the two tests' data."""
    return pd.DataFrame(
        {
            "kind": ["pps"] * 5,
            "rate_bps": [None] * 5,
            "loss_ratio": [0.01, 0.02, 0.02, 0.05, 0.08],
            "host_busy_ratio": [0.1, 0.2, 0.3, 0.4, 0.5],
            "receiver_cpu_ratio": [0.3, 0.1, 0.4, 0.2, 0.5],
        }
    )


def test_receiver_tool_cpu_correlation_has_its_p_and_n(tmp_path: Path) -> None:
    """Five packet-rate measurements (kind pps: no tool-CPU table). By scipy.stats.pearsonr:
    loss [.01 .02 .02 .05 .08] vs host [.1 .2 .3 .4 .5] gives r = 0.9330, p = 0.02061;
    vs receiver [.3 .1 .4 .2 .5] gives r = 0.4939, p = 0.3977 (formatted: r to two decimals, as the
    figure's titles, p to two significant digits)."""
    frame = _five_pps()
    [section] = cpu.build(_ctx(tmp_path, frame))
    [item] = [i for i in section.items if i.startswith("Loss vs host CPU")]
    # all five lost something: the r rests on five points with loss
    assert "Loss vs host CPU: r = 0.93 (p = 0.021, n = 5, 5 with loss)" in item
    assert "loss vs receiver tool CPU: r = 0.49 (p = 0.4, n = 5, 5 with loss)" in item


def test_a_coefficient_has_the_minus_sign_and_no_negative_zero() -> None:
    # exogeni-exp2's report read 'loss vs receiver tool CPU: r = -0.0 (p = 0.92, n = 12)'
    assert [cpu.coefficient(r) for r in (-0.004, 0.004, -0.4217, 0.9330)] == ["0.00", "0.00", "−0.42", "0.93"]


def test_receiver_tool_cpu_without_a_coefficient_says_so(tmp_path: Path) -> None:
    """Receiver CPU constant: pearsonr is undefined, so no r = - (p = -)."""
    frame = pd.DataFrame(
        {
            "kind": ["pps"] * 4,
            "rate_bps": [None] * 4,
            "loss_ratio": [0.01, 0.02, 0.03, 0.05],
            "host_busy_ratio": [0.1, 0.2, 0.3, 0.5],
            "receiver_cpu_ratio": [0.2, 0.2, 0.2, 0.2],
        }
    )
    [section] = cpu.build(_ctx(tmp_path, frame))
    [item] = [i for i in section.items if i.startswith("Loss vs host CPU")]
    assert "loss vs receiver tool CPU: no coefficient (CPU was the same in all 4 measurements)" in item


def test_one_lossy_measurement_gives_no_coefficient(tmp_path: Path) -> None:
    """exogeni-exp1: one datagram lost in 66,136 in one of twelve UDP measurements, none in the
    others; the report gave r = 0.4 and 0.7, which only says where that one point lies. By hand:
    one of the twelve loss ratios is non-zero, fewer than the three a coefficient needs."""
    busy = [0.10, 0.12, 0.15, 0.11, 0.30, 0.28, 0.33, 0.31, 0.50, 0.55, 0.52, 0.60]
    frame = pd.DataFrame(
        {
            "kind": ["udp"] * 12,
            "rate_bps": [10e6] * 12,
            "loss_ratio": [0.0] * 11 + [1 / 66_136],
            "host_busy_ratio": busy,
            "receiver_cpu_ratio": [b / 2 for b in busy],
            **{
                c: [None] * 12
                for c in ("sender_cpu_ratio", "tool_sender_cpu_ratio", "tool_receiver_cpu_ratio")
            },
        }
    )
    corr = correlation(frame)
    assert corr["r"] is None and corr["p"] is None
    assert (corr["n"], corr["n_lossy"]) == (12, 1)
    [section] = cpu.build(_ctx(tmp_path, frame))
    [item] = [i for i in section.items if i.startswith("Loss vs CPU")]
    assert item == (
        "Loss vs CPU: no correlation coefficient: 1 of 12 measurements lost anything; "
        "a coefficient needs at least 3 with loss."
    )
    assert not any("r = 0." in i for i in section.items)


def test_three_lossy_measurements_are_enough(tmp_path: Path) -> None:
    """Three of five lost something (hand count): r is given, and says it rests on three.
    scipy.stats.pearsonr([.1 .2 .3 .4 .5], [0 0 .01 .02 .03]) = 0.9701 (p = 0.00617)."""
    frame = pd.DataFrame(
        {
            "kind": ["udp"] * 5,
            "rate_bps": [10e6] * 5,
            "loss_ratio": [0.0, 0.0, 0.01, 0.02, 0.03],
            "host_busy_ratio": [0.1, 0.2, 0.3, 0.4, 0.5],
            "receiver_cpu_ratio": [0.1, 0.2, 0.3, 0.4, 0.5],
        }
    )
    corr = correlation(frame)
    assert corr["n_lossy"] == 3 and corr["r"] == pytest.approx(0.9701, abs=1e-4)


def test_the_figure_titles_carry_p_and_name_the_cpu_in_words(tmp_path: Path) -> None:
    """The titles read 'loss vs receiver_cpu: r = 0.56 (n=6, 4 with loss)' in quickstart d1453f96: a
    code name and no p (0.25 in the sentence beside it). Same data and scipy values as above."""
    frame = _five_pps()
    cpu.build(_ctx(tmp_path, frame))
    svg = (tmp_path / "loss-vs-cpu.svg").read_text()
    assert "loss vs host CPU: r = 0.93 (p = 0.021, n = 5, 5 with loss)" in svg
    assert "loss vs receiver tool CPU: r = 0.49 (p = 0.4, n = 5, 5 with loss)" in svg
    assert "receiver_cpu" not in svg and "host_busy" not in svg
