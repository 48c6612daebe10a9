"""A comparison of two campaigns (analysis/compare.py) as display strings: one layout for
`vnetbench compare` in the terminal and the report's "Compared with the previous run" section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from vnetbench.analysis.compare import Comparison, Row
from vnetbench.report.view import TableView
from vnetbench.spec.units import signed

DISPLAY = {  # scale and unit per metric in tables
    "throughput_bps": (1e6, "Mbit/s", "throughput"),
    "loss_ratio": (1e-2, "%", "loss"),
    "jitter_mean_ns": (1e6, "ms", "jitter"),
    "rtt_ns": (1e6, "ms", "RTT"),
}
COLUMNS = ["pair · measurement · metric", "A", "B", "change", "interval", "p (Holm)", "verdict"]


def display_rows(result: Comparison) -> list[list[str]]:
    """One row of display strings per compared row (the terminal's and the report's table)."""
    rows = []
    for r in result.rows:
        scale, unit, _ = DISPLAY.get(r.key["metric"], (1.0, "", r.key["metric"]))
        what = key_label(r.key)
        a, b = (f"{center / scale:.4g} {unit}".rstrip() for center in (r.center_a, r.center_b))
        rows.append(
            [what, a, b, *_change(r, scale, unit),
             f"{r.p_holm:.2g}" if math.isfinite(r.p_holm) else r.test, r.verdict]
        )  # fmt: skip
    return rows


def key_label(key: Mapping[str, str]) -> str:
    """A compared (or one-sided) row's name in people's words: 'vm1→vm4 · udp · loss', with its
    treatment where it has one; the stored metric's name only for a metric without a short one."""
    what = f"{key['pair']} · {key['measurement']} · {DISPLAY.get(key['metric'], (1.0, '', key['metric']))[2]}"
    return what + (f" · {key['treatment']}" if key["treatment"] != "—" else "")


def _change(r: Row, scale: float, unit: str) -> tuple[str, str]:
    """The change and its interval relative to A; where A is 0 (no loss before) a relative change
    has no meaning, so the difference itself in the metric's unit (percentage points for loss). Too
    few runs for an interval at the confidence asked: "—". Signed, '−' (U+2212) for a negative and
    no sign for a change that rounds to zero ('0 pp', not '+0 pp'), as the report's differences. The
    interval as the report's tables write one: '(1.0, 3.0) %', '(−0.3, 0.1) pp' (no '+' on its ends)."""
    if not (math.isfinite(r.ci_low) and math.isfinite(r.ci_high)):
        change = _change(replace(r, ci_low=0.0, ci_high=0.0), scale, unit)[0]
        return change, "—"
    if r.center_a:
        a = abs(r.center_a)
        low, high = (_end(100 * v / a, ".1f") for v in (r.ci_low, r.ci_high))
        return f"{signed(100 * r.relative_change, '.1f')} %", f"({low}, {high}) %"
    unit = "pp" if unit == "%" else unit
    low, high = (_end(v / scale, ".3g") for v in (r.ci_low, r.ci_high))
    return f"{signed(r.difference / scale, '.3g')} {unit}", f"({low}, {high}) {unit}".rstrip()


def _end(x: float, spec: str) -> str:
    """An interval's end: its minus sign (U+2212) when negative, no '+' when positive ('0.1', not
    '+0.1'), no sign when it rounds to zero."""
    return signed(x, spec).lstrip("+")


def caption(result: Comparison) -> str:
    """What the columns mean, under the table."""
    rows = f"{len(result.rows)} row{'' if len(result.rows) == 1 else 's'}"
    return (
        f"change = B − A relative to A (the difference itself where A is 0), with its "
        f"{100 * result.confidence:g} % interval: means for "
        f"throughput, loss and jitter, medians and the Hodges–Lehmann shift for RTT; p after Holm over all "
        f"{rows}; 'same' within ±{100 * result.tolerance:g} % (at least 0.1 point of loss, "
        "50 µs of RTT or jitter)"
    )


def comparison_table(result: Comparison, title: str = "") -> TableView:
    """The comparison as one table of display strings."""
    return TableView(title, COLUMNS, display_rows(result), caption(result))
