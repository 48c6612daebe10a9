"""Sums of squares and standard errors in the analysis tables are measured quantities: never in exponent
form (onl-tcp-factorial, campaign 85dd61fd, printed the Jain index's SS as '2.69478e-05'), and s_e
carries its unit and digits as s_q beside it ('s_e = 0.02478, s_q = 0.0050582 Mbit/s').

The data are Jain's 2^2·2 example as worked by hand in test_design_findings.py, scaled by 1/1000:
cells (cc, len) = (lo, x) 0.010, 0.012; (hi, x) 0.020, 0.022; (lo, y) 0.011, 0.013; (hi, y) 0.021,
0.023. SS_cc = 200 · 1e-6 = 0.0002, SS_len = 2e-6, SS_cc:len = 0, SSE = 8e-6; s_e = √(8e-6 / 4) =
0.0014142, s_q = s_e / √8 = 0.0005.
"""

from __future__ import annotations

import pandas as pd

from vnetbench.analysis.two_k_r import two_k_r
from vnetbench.report import format as fmt
from vnetbench.report.analysis_tables import two_k_r_tabulars

CELLS = [("lo", "x", 10), ("lo", "x", 12), ("hi", "x", 20), ("hi", "x", 22)]
CELLS += [("lo", "y", 11), ("lo", "y", 13), ("hi", "y", 21), ("hi", "y", 23)]


def _table(response: str, scale: float, unit_scale: float):  # type: ignore[no-untyped-def]
    frame = pd.DataFrame(CELLS, columns=["cc", "len", response])
    frame[response] = frame[response] * unit_scale
    result = two_k_r(frame, response, ["cc", "len"], low={"cc": "lo", "len": "x"})
    (table,) = two_k_r_tabulars("s", result, scale, "q")
    return table


def test_small_sums_of_squares_are_written_out() -> None:
    table = _table("jain_index", 1.0, 1e-3)
    ss = {row[0]: row[table.columns.index("SS")] for row in table.rows}
    assert ss["A"] == "0.0002" and ss["B"] == "0.000002" and ss["e"] == "0.000008"
    assert not any("e-" in cell for row in table.rows for cell in row)
    assert table.note.endswith("s_e = 0.0014142, s_q = 0.00050000")


def test_both_standard_errors_carry_the_unit() -> None:
    # the same cells in Mbit/s: s_e = √2 = 1.4142 Mbit/s, s_q = 0.5 Mbit/s
    table = _table("throughput_bps", 1e6, 1e6)
    assert table.note.endswith("SS in (Mbit/s)²; s_e = 1.4142 Mbit/s, s_q = 0.50000 Mbit/s")


def test_plain_keeps_num_digits_without_exponent() -> None:
    assert fmt.plain(2.69478e-05) == "0.0000269478"
    assert fmt.plain(6588.9576123, 8) == "6588.9576"  # as num: trailing digits to eight
    assert fmt.plain(0.0002) == "0.0002" and fmt.plain(None) == "" and fmt.plain(float("inf")) == "∞"
    assert fmt.num(1.9e-79, 2) == "1.9e-79"  # p values keep their exponent (docs/statistics.md)


def test_large_sums_of_squares_keep_their_significant_digits_only() -> None:
    # 795240018800015966208 is every digit of a float's binary value (it holds about 16); to 8
    # significant digits, by hand: 7952400188… rounds to 79524002, then 13 zeros
    assert fmt.plain(795240018800015966208.0, 8) == "795240020000000000000"
    assert fmt.num(795240018800015966208.0, 8) == "795240020000000000000"
    assert fmt.num(95670123.0) == "95670100"  # 6 digits, no exponent (not 9.56701e+07)
    assert fmt.num(-123456789.0, 8) == "-123456790"
    assert fmt.plain(99999999.6, 8) == "100000000"  # below 10⁸: plain_number, rounds up to 10⁸
    assert fmt.plain(15888888.9, 8) == "15888889" and fmt.plain(6588.9576123, 8) == "6588.9576"
