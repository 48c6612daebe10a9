"""A comparison of two campaigns (analysis/compare.py) as display strings: one layout for
`vnetbench compare` in the terminal and the report's "Compared with the previous run" section."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from vnetbench.analysis.compare import Comparison, Missing, Row
from vnetbench.report import format as fmt
from vnetbench.report.view import TableView
from vnetbench.spec.units import minus, plain_number, signed

DISPLAY = {  # scale and unit per metric in tables
    "throughput_bps": (1e6, "Mbit/s", "throughput"),
    "loss_ratio": (1e-2, "%", "loss"),
    "jitter_mean_ns": (1e6, "ms", "jitter"),
    "rtt_ns": (1e6, "ms", "RTT"),
}
COLUMNS = ["pair · measurement · metric", "A", "B", "change", "interval", "p (Holm)", "verdict"]
CUT_MARK = "*"  # after an interval's lower end cut at −100 % (analysis.compare.Row.relative_ci_cut)
CUT_NOTE = (
    f"{CUT_MARK} cut at −100 %: B cannot be negative, so B − A is never below −A "
    "(the verdict is from the uncut interval's test)"
)


def display_rows(result: Comparison) -> list[list[str]]:
    """One row of display strings per compared row (the terminal's and the report's table)."""
    rows = []
    for r in result.rows:
        scale, unit, _ = DISPLAY.get(r.key["metric"], (1.0, "", r.key["metric"]))
        what = key_label(r.key)
        # with the metric's digits, as the Findings (was '.4g': 10 Gbit/s printed as '1e+04 Mbit/s')
        a, b = (fmt.metric(r.key["metric"], c, unit=True) for c in (r.center_a, r.center_b))
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


def why_missing(missing: Missing | None) -> str:
    """Why a row only one campaign has was not compared, after its name: ' — failed in B (iperf3: …);
    ok in A: a regression', ' — not in B's plan'; '' when not known."""
    if missing is None:
        return ""
    failure = f" ({missing.failure})" if missing.failure else ""
    return f" — {missing.reason}{failure}" + ("; ok in A: a regression" if missing.regression else "")


def not_compared(result: Comparison) -> str:
    """'; 3 rows not compared, 2 of them regressions (ok in A, failed in B)', after the counts of
    verdicts, and '; 1 measurement failed in a larger share of its runs in B than in A (a regression)';
    '' when every row is in both and no measurement failed more in B."""
    text = ""
    if result.missing:
        n, bad = len(result.missing), len(result.regressions)
        text = f"; {n} row{'' if n == 1 else 's'} not compared"
        regressions = "a regression" if bad == 1 else "regressions"
        text += f", {bad} of them {regressions} (ok in A, failed in B)" if bad else ""
    if more := len(result.more_failed_runs):
        one = more == 1
        text += (
            f"; {more} measurement{'' if one else 's'} failed in a larger share of "
            f"{'its' if one else 'their'} runs in B than in A ({'a regression' if one else 'regressions'})"
        )
    return text


def _change(r: Row, scale: float, unit: str) -> tuple[str, str]:
    """The change and its interval relative to A; where A is 0 (no loss before) a relative change
    has no meaning, so the difference itself in the metric's unit (percentage points for loss). Too
    few runs for an interval at the confidence asked: `fmt.MISSING`. Signed, '−' (U+2212) for a negative and
    no sign for a change that rounds to zero ('0 pp', not '+0 pp'), as the report's differences; a
    difference with three significant digits, its zeros kept and never in exponent form ('+0.200 pp',
    '+1230 Mbit/s', not '+0.2 pp' beside its interval's 0.100 nor '+1.23e+03 Mbit/s'). The interval
    as the report's tables and Findings write one (`fmt.ci`): '(1.0 to 3.0) %', '(−0.300 to 0.100) pp'
    (no '+' on its ends; a relative one with the change's one decimal, a difference with its three
    significant digits; more where the two ends would print alike). A relative interval's lower end
    below −100 % for a metric that cannot be negative is cut there and marked: '(−100.0* to 1171.1) %'
    (`Row.relative_ci`; the caption says why); where A is 0, the difference's interval is cut at 0
    the same way: '(0* to 5.30) pp'."""
    if not (math.isfinite(r.ci_low) and math.isfinite(r.ci_high)):
        change = _change(replace(r, ci_low=0.0, ci_high=0.0), scale, unit)[0]
        return change, fmt.MISSING
    if r.center_a:
        low, high = (100 * end for end in r.relative_ci)  # cut at −100 % where B cannot be negative
        interval = fmt.ci(low, high, 1, "%", fixed=True)
        if r.relative_ci_cut:  # the mark on the end that was cut; the caption says why (CUT_NOTE)
            interval = interval.replace(" to ", f"{CUT_MARK} to ", 1)
        return f"{_relative(100 * r.relative_change, low, high)} %", interval
    unit = "pp" if unit == "%" else unit
    low = 0.0 if r.ci_cut else r.ci_low / scale  # A is 0 and B cannot be negative: B − A ≥ 0
    interval = fmt.ci(low, r.ci_high / scale, 3, unit)
    if r.ci_cut:
        interval = interval.replace(" to ", f"{CUT_MARK} to ", 1)
    return f"{_difference(r.difference / scale)} {unit}".rstrip(), interval


def _relative(change: float, low: float, high: float) -> str:
    """A relative change in % with one decimal, more (up to three) where one would print 0.0 though
    its interval excludes 0: '+0.03 %' beside '(0.02 to 0.04) %', not '0.0 %'."""
    decimals = 1
    while decimals < 3 and round(change, decimals) == 0 and (low > 0 or high < 0):
        decimals += 1
    return signed(change, f".{decimals}f")


def _difference(x: float) -> str:
    """A difference with its sign and three significant digits: '+0.200', '−1.50', '0'."""
    if not math.isfinite(x):
        return signed(x)
    text = plain_number(x, 3)
    return text if float(text) == 0 else (minus(text) if x < 0 else "+" + text)


def caption(result: Comparison) -> str:
    """What the columns mean, under the table."""
    rows = f"{len(result.rows)} row{'' if len(result.rows) == 1 else 's'}"
    return (
        f"change = B − A relative to A (the difference itself where A is 0: a change relative to 0 "
        "is undefined), with its "
        f"{100 * result.confidence:g} % interval: means for "
        f"throughput, loss and jitter, medians and the Hodges–Lehmann shift for RTT; p after Holm over all "
        f"{rows}; 'same' within ±{100 * result.tolerance:g} % (at least 0.1 point of loss, "
        "50 µs of RTT or jitter)" + _cut_note(result)
    )


def _cut_note(result: Comparison) -> str:
    """'; * cut at −100 %: …' when an interval was cut; it names the cut at 0 where one was (A is 0)."""
    cut = [r for r in result.rows if r.ci_cut]
    if not cut:
        return ""
    if all(r.center_a for r in cut):
        return f"; {CUT_NOTE}"
    where = "at −100 % (at 0 where A is 0)" if any(r.center_a for r in cut) else "at 0 (A is 0)"
    return "; " + CUT_NOTE.replace("at −100 %", where, 1)


def comparison_table(result: Comparison, title: str = "") -> TableView:
    """The comparison as one table of display strings."""
    return TableView(title, COLUMNS, display_rows(result), caption(result))
