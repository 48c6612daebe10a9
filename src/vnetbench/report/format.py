"""How numbers look in reports and terminal tables: the one place that formats them.

A stored metric is shown in the unit its name calls for (`metric`: throughput_bps in Mbit/s, *_ns in
ms, *_pps in K pps, *_ratio in %; the table of units is `spec.units.display_unit`, which analysis
sentences use too); no number is written in exponent form. `--json` keeps the stored SI base units.

Signs: a difference or a change written with its sign ('+0.07172 Mbit/s', '−86.08 Mbit/s') has the
minus sign U+2212, not the ASCII hyphen-minus, as have the negative ends of its interval ('(−0.51 to
0.58)'): `minus`, `signed`, `metric(..., delta=True)`, `minus_all`. Exports and `--json` keep
ASCII '-'.

Missing values: the statistics tables (`num`, `pct`) leave the cell empty; the report's measurement
tables, `vnetbench loss` and `analyze` show `MISSING` ("–", an en dash); an interval with a missing end
is "–", never "(, )".

Intervals: one layout, `ci`, wherever people read one (the Findings, the report's and the terminal's
tables, a comparison): '(lo to hi)', the unit after it when a column does not name it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.spec.units import (
    MINUS,
    digits_apart,
    display_unit,
    format_interval,
    format_metric_interval,
    metric_name,
    minus,
    parse_duration_ns,
    parse_rate,
    parse_size_bytes,
    percent_of,
    plain_number,
    signed,
)
from vnetbench.spec.units import format_metric as _format_metric

# the unit table, for figures' axes; the minus sign of signed numbers; a min and max's digits (html)
__all__ = ["MINUS", "digits_apart", "display_unit", "metric_name", "minus", "signed"]

MISSING = "–"  # a value that is missing or does not apply, in every table (an en dash, not '-')

# ---------------------------------------------------------------- statistics tables (Jain's layout)


def num(x: float | None, digits: int = 6) -> str:
    """`digits` significant digits; '' when missing, ∞ when infinite. Exponent form only for tiny
    values (a p of 3.2e-09), never for large ones (95670100, not 9.56701e+07): their digits beyond
    `digits` are zeros (`significant_figures`)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    if x != 0 and abs(x) < 1e-4:
        return f"{x:.{digits}g}"
    return _as_g(significant_figures(float(x), digits))


def plain(x: float | None, digits: int = 6) -> str:
    """As `num`, never in exponent form: for sums and mean squares, which are measured quantities,
    not p values (an SS of 0.0000269478, not 2.69478e-05)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return (
        num(x, digits)
        if isinstance(x, float) and math.isinf(x)
        else _as_g(significant_figures(float(x), digits))
    )


def significant_figures(x: float, digits: int) -> str:
    """`plain_number` with a large number's digits past the first `digits` written as zeros, so a
    table shows only significant digits: the SSY of 9.4 Gbit/s throughputs, 7.95240018800016e20,
    is 795240020000000000000 to 8 digits, not 795240018800015966208 (every digit of the float's
    binary value, more than a float holds). Below 10^digits, as plain_number."""
    if not math.isfinite(x) or abs(x) < 10**digits:
        return plain_number(x, digits)
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    figures = mantissa.replace("-", "").replace(".", "")
    return ("-" if x < 0 else "") + figures + "0" * (int(exponent) - digits + 1)


def zeros_kept(x: float | None, digits: int = 4) -> str:
    """`digits` significant digits kept as measured, trailing zeros included: an interval
    (95.53 to 95.70) beside a mean 9.570, not (95.53 to 95.7) and 9.57 — a dropped zero reads as a
    less precise number. Exact zero stays '0'. Never in exponent form, small values included: an
    SD of 0.00007010 Mbit/s beside 0.001141, not 7.010e-05."""
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) or x == 0:
        return num(x, digits)
    return plain_number(float(x), digits)


def _as_g(text: str) -> str:
    """Without trailing zeros, as 'g' writes a number: 45.2, not 45.200."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def f_cell(f: float, note: str | None, digits: int = 5) -> str:
    """F as a number, or "undefined" when its test is (the note says why, under the table)."""
    return "undefined" if note else num(f, digits)


def p_cell(p: float, note: str | None) -> str:
    """p as a number; empty when the F test is undefined (see `f_cell`)."""
    return "" if note else num(p, 2)


def pct(x: float | None) -> str:
    """A percentage (already × 100) with two decimals and a space before the sign, as everywhere
    else in the report (95 % interval, 100.0 % of the model): 12.34 %. A positive share that rounds
    to 0.00 is '< 0.01 %': a significant effect explains some of the variation, not '0.00 %' of it."""
    if x is None or math.isnan(x):
        return ""
    text = f"{x:.2f}"
    return "< 0.01 %" if x > 0 and float(text) == 0 else f"{text} %"


def ci(lo: float | None, hi: float | None, digits: int = 4, unit: str = "", fixed: bool = False) -> str:
    """A confidence interval as every human text of the report writes one (the Findings, the
    tables, the terminal, a comparison): '(95.53 to 95.70)', '(−0.5100 to 0.5800)', '(1.0 to 3.0) %'
    with `unit`; `digits` significant digits, zeros kept (`fixed`: decimals), more where the two
    ends would print alike; '–' when an end is missing (`spec.units.format_interval`, which analysis
    sentences use too)."""
    if _missing(lo) or _missing(hi):
        return MISSING
    return format_interval(float(lo), float(hi), digits, unit, fixed)  # type: ignore[arg-type]


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float | np.floating) and not np.isfinite(x))


# ---------------------------------------------------------------- stored metrics in their display unit


def metric(name: str, value: float | None, unit: bool = False, delta: bool = False) -> str:
    """A stored value shown in its metric's unit: metric('throughput_bps', 9.5e7) -> '95.00';
    with `unit`, '95.00 Mbit/s'; `delta` for a signed difference. '–' when missing."""
    if _missing(value):
        return MISSING
    return _format_metric(name, float(value), unit, delta)  # type: ignore[arg-type]


def mean_interval(name: str, mean: float | None, lo: float | None, hi: float | None) -> tuple[str, str, str]:
    """A mean and its interval's ends in the metric's unit (no label), with the metric's digits or as
    many more (up to 3) as keep two different ends apart: an RTT of 238 ms (238 to 238) read as an
    interval of no width; it is 238.0 (237.9 to 238.0). The mean takes the ends' digits. A negative
    end has the minus sign (U+2212); a missing one is '–'."""
    u = display_unit(name)
    digits = u.digits if _missing(lo) or _missing(hi) else digits_apart(u.digits, u.of(lo), u.of(hi))  # type: ignore[arg-type]

    def shown(v: float | None) -> str:
        return MISSING if _missing(v) else minus(plain_number(u.of(float(v)), digits))  # type: ignore[arg-type]

    return shown(mean), shown(lo), shown(hi)


def metric_sd(name: str, sd: float | None, unit: bool = True) -> str:
    """A standard deviation in the metric's unit with two significant digits, as one writes a spread
    beside a mean: '± 0.0043 K pps', not '± 0.004270 K pps' (the mean keeps the metric's digits);
    without the unit's label when `unit` is False (a table names it in its column)."""
    if _missing(sd):
        return MISSING
    u = display_unit(name)
    return f"{sig(u.of(float(sd)), 2)}{' ' + u.label if u.label and unit else ''}"


def metric_ci(name: str, lo: float | None, hi: float | None, unit: bool = False) -> str:
    """An interval in the metric's unit with its digits (`ci`): '(95.10 to 95.42)', with `unit`
    '(95.10 to 95.42) Mbit/s'; its ends as `mean_interval` writes them; '–' when one is missing."""
    if _missing(lo) or _missing(hi):
        return MISSING
    return format_metric_interval(name, float(lo), float(hi), unit)  # type: ignore[arg-type]


def metric_label(name: str, after: str = "") -> str:
    """A column or axis label for a stored metric: 'throughput (Mbit/s)', 'loss (%)', 'jain index';
    after a measurement's name, without repeating it (`metric_name`): 'mean (ms)' after 'rtt'."""
    return metric_name(name, after) + unit_suffix(display_unit(name).label)


def unit_of(response: str) -> tuple[float, str]:
    """(scale, unit label) a response is shown in: stored value / scale, e.g. (1e6, 'Mbit/s')."""
    u = display_unit(response)
    return u.scale, u.label


def shown_metric(text: str) -> str:
    """A label that ends in a stored metric's name, in people's words with the unit:
    'tcp vma→vmb throughput_bps' -> 'tcp vma→vmb throughput (Mbit/s)'; the measurement named once:
    'rtt vma→vmb mean (ms)' for 'rtt vma→vmb rtt_mean_ns'."""
    words = text.split()
    after = words[0] if len(words) > 1 else ""
    return " ".join([*words[:-1], metric_label(words[-1], after)]) if words else text


def shown_model(m: Any) -> Any:
    """A fitted model (analysis.campaign_analysis.FittedModel) whose label names its response in
    people's words: 'into-host · tcp · throughput (Mbit/s)' for '… · throughput_bps'."""
    response = m.result.response
    return replace(m, label=m.label.replace(response, metric_label(response)))


def row_key(row: Mapping[str, Any], columns: Sequence[str]) -> tuple[tuple[int, float, str], ...]:
    """Sort key of a table row by its factor columns, each by number where it is one."""
    return tuple(sort_key(row[c]) for c in columns)


def sort_key(value: Any) -> tuple[int, float, str]:
    """Order factor levels and table rows by number where they are numbers (2 before 10; '10mbit'
    before '100mbit'; '500ms' before '2s'), by text otherwise."""
    if isinstance(value, bool):
        return (1, 0.0, str(value))
    if isinstance(value, int | float | np.number):
        return (0, float(value), "")
    text = str(value).strip()
    for parse in (float, parse_rate, parse_duration_ns, parse_size_bytes):
        try:
            return (0, float(parse(text)), text)
        except (ValueError, TypeError):
            continue
    return (1, 0.0, text)


def yes(flag: bool | None) -> str:
    """A check mark for True, nothing for False, "undefined" for None (no error variance to test)."""
    return "✓" if flag else ("undefined" if flag is None else "")


def scaled(x: float | None, scale: float) -> str:
    """x in a display unit (x / scale, e.g. bit/s / 1e6 for Mbit/s) with four significant digits, as
    its interval beside it (`ci`) and the findings: 95.63, not 95.6338 beside (95.55 to 95.71)."""
    return zeros_kept(None if x is None else x / scale)


def minus_all(text: str) -> str:
    """Every negative number's ASCII '-' in a formatted text as the minus sign: '(-0.51, 0.58)' ->
    '(−0.51, 0.58)'. Only a '-' that starts a number is one: not a hyphen in a word (same-host), nor
    between numbers (45-55), nor in an exponent (3.2e-09)."""
    return _NEGATIVE.sub(MINUS, text)


_NEGATIVE = re.compile(r"(?<![\w.])-(?=[\d.∞])")


def unit_suffix(unit: str) -> str:
    """' (unit)' for an axis or column label; '' without a unit."""
    return f" ({unit})" if unit else ""


# ---------------------------------------------------------------- measurement tables ("–" when missing)


def value(v: Any, digits: int = 3) -> str:
    """A table cell: floats with `digits` significant digits (4 from a million on), others as they are."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return MISSING
    if isinstance(v, float):
        return sig(v, digits if abs(v) < 1e6 else 4)  # 9.50 beside 9.67, 0.0000598 not 5.98e-05
    return str(v)


def measured(v: Any, digits: int = 3) -> str:
    """A measured value (a throughput, an RTT) with `digits` significant digits, its zeros kept even
    when whole: a min of 9.0 Mbit/s is '9.00' beside a mean of 9.10, not '9' (`sig` writes a whole
    number as a count); 4 digits from a million on, as `value`; '–' when missing."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return MISSING
    return plain_number(float(v), digits if abs(float(v)) < 1e6 else 4)


def sig(v: Any, digits: int = 3) -> str:
    """`digits` significant digits, never in exponent form (100000, not 1e+05); '–' when missing.
    A measured value keeps its trailing zeros (9.50 for 9.496, not 9.5 beside 9.67); a whole number
    (a count, a median of counts) is written as one: 13, not 13.0."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return MISSING
    text = plain_number(float(v), digits)
    return _as_g(text) if float(v).is_integer() else text


def ratio_pct(v: Any) -> str:
    """A ratio as a percentage with one decimal: 0.956 -> '95.6 %'."""
    return MISSING if v is None or pd.isna(v) else f"{100 * v:.1f} %"


def loss_pct(v: Any) -> str:
    """Loss with two decimals: 0.04 % of datagrams lost is not '0.0 %'; below 0.01 % two significant
    digits, as `share` writes a loss: a mean loss of 1 datagram in 4 × 8,267 is '0.003 %' in the UDP
    table as in 'UDP effective throughput', not '0.00 %' (no loss) beside it."""
    return MISSING if v is None or pd.isna(v) else share(float(v), 1.0)


def share(n: float, d: float) -> str:
    """n of d as a percentage with two decimals, or two significant digits below 0.01 % (1 of 60,000
    is '0.0017 %', not '0.00 %'); '–' when d is 0."""
    return MISSING if not d else percent_of(n / d)  # as the tools' events write it (spec.units)


def count(v: float | None) -> str:
    """A packet count with thousands separators (frames ÷ fragments leave fractions: no '-0')."""
    if v is None:
        return MISSING
    return "0" if abs(v) < 0.5 else f"{v:,.0f}"


def counted(v: float, noun: str) -> str:
    """A count and its noun, singular for one: '1 measurement', '1,204 ping requests'."""
    return f"{count(v)} {noun}" + ("" if count(v) == "1" else "s")


def whole(n: int | None) -> str:
    """A whole number as it is (MISSING when there is none): 137, not 137.0 nor 137 with separators."""
    return MISSING if n is None else str(n)


def one_decimal(v: float | None) -> str:
    """One decimal ('–' when missing)."""
    return MISSING if v is None else f"{v:.1f}"


def mbit(v: Any) -> str:
    """bit/s in Mbit/s, four significant digits."""
    return MISSING if v is None or pd.isna(v) else f"{v / 1e6:.4g}"


def mbit2(bps: float | None) -> str:
    """bit/s in Mbit/s with two decimals."""
    return MISSING if bps is None else f"{bps / 1e6:.2f}"


def rate(bps: float | None) -> str:
    """A link rate: '100 Mbit/s', '1 Gbit/s', or 'unshaped'."""
    if not bps:
        return "unshaped"
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def ms(ns: Any) -> str:
    """Nanoseconds in milliseconds with three decimals."""
    return MISSING if ns is None else f"{ns / 1e6:.3f}"


def kib_or_auto(n: float | None) -> str:
    """Bytes in KiB (1024 bytes, the spec's K) with one decimal; 'auto' when the kernel chooses."""
    return "auto" if n is None else f"{n / 1024:.1f}"
