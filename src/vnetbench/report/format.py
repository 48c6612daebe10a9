"""How numbers look in reports and terminal tables: the one place that formats them.

Missing values: the statistics tables (`num`, `pct`) leave the cell empty; the report's measurement
tables show "–".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

# ---------------------------------------------------------------- statistics tables (Jain's layout)


def num(x: float | None, digits: int = 6) -> str:
    """`digits` significant digits; '' when missing, ∞ when infinite."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.{digits}g}"


def f_cell(f: float, note: str | None, digits: int = 5) -> str:
    """F as a number, or "undefined" when its test is (the note says why, under the table)."""
    return "undefined" if note else num(f, digits)


def p_cell(p: float, note: str | None) -> str:
    """p as a number; empty when the F test is undefined (see `f_cell`)."""
    return "" if note else num(p, 2)


def pct(x: float | None) -> str:
    """A percentage (already × 100) with two decimals: 12.34%."""
    return "" if x is None or math.isnan(x) else f"{x:.2f}%"


def ci(lo: float, hi: float) -> str:
    """A confidence interval: (lo, hi) with four significant digits."""
    return f"({num(lo, 4)}, {num(hi, 4)})"


def yes(flag: bool | None) -> str:
    """A check mark for True, nothing for False, "undefined" for None (no error variance to test)."""
    return "✓" if flag else ("undefined" if flag is None else "")


def scaled(x: float | None, scale: float) -> str:
    """`num` of x in a display unit (x / scale, e.g. bit/s / 1e6 for Mbit/s)."""
    return num(None if x is None else x / scale)


def unit_suffix(unit: str) -> str:
    """' (unit)' for an axis or column label; '' without a unit."""
    return f" ({unit})" if unit else ""


# ---------------------------------------------------------------- measurement tables ("–" when missing)


def value(v: Any, digits: int = 3) -> str:
    """A table cell: floats with `digits` significant digits (4 from a million on), others as they are."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1e6 else f"{v:.4g}"
    return str(v)


def sig(v: Any, digits: int = 3) -> str:
    """`digits` significant digits; '–' when missing or not finite."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    return f"{v:.{digits}g}"


def ratio_pct(v: Any) -> str:
    """A ratio as a percentage with one decimal: 0.956 -> '95.6 %'."""
    return "–" if v is None or pd.isna(v) else f"{100 * v:.1f} %"


def loss_pct(v: Any) -> str:
    """Loss with two decimals: 0.04 % of datagrams lost is not '0.0 %'."""
    return "–" if v is None or pd.isna(v) else f"{100 * v:.2f} %"


def share(n: float, d: float) -> str:
    """n of d as a percentage with two decimals ('-' when d is 0)."""
    return f"{n / d:.2%}" if d else "-"


def count(v: float | None) -> str:
    """A packet count with thousands separators (frames ÷ fragments leave fractions: no '-0')."""
    if v is None:
        return "-"
    return "0" if abs(v) < 0.5 else f"{v:,.0f}"


def one_decimal(v: float | None) -> str:
    """One decimal ('-' when missing)."""
    return "-" if v is None else f"{v:.1f}"


def mbit(v: Any) -> str:
    """bit/s in Mbit/s, four significant digits."""
    return "–" if v is None or pd.isna(v) else f"{v / 1e6:.4g}"


def mbit2(bps: float | None) -> str:
    """bit/s in Mbit/s with two decimals."""
    return "–" if bps is None else f"{bps / 1e6:.2f}"


def rate(bps: float | None) -> str:
    """A link rate: '100 Mbit/s', '1 Gbit/s', or 'unshaped'."""
    if not bps:
        return "unshaped"
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def ms(ns: Any) -> str:
    """Nanoseconds in milliseconds with three decimals."""
    return "–" if ns is None else f"{ns / 1e6:.3f}"


def kb_or_auto(n: float | None) -> str:
    """Bytes in kB with one decimal; 'auto' when the kernel chooses."""
    return "auto" if n is None else f"{n / 1000:.1f}"
