"""One way to write a confidence interval for people: '(lo to hi)', as the Findings always did, in the
tables, the terminal, a comparison and the analysis sentences too (report/format.py `ci`, `metric_ci`;
spec/units.py `format_interval`). Expected strings written by hand from the inputs."""

from __future__ import annotations

from types import SimpleNamespace

from vnetbench.report import format as fmt
from vnetbench.report.sections.findings import _effect, _mean_ci
from vnetbench.spec.units import format_interval, format_metric_interval


def test_an_interval_is_lo_to_hi_with_its_zeros_and_the_minus_sign() -> None:
    assert fmt.ci(95.53, 95.7) == "(95.53 to 95.70)"  # four significant digits, the zero kept
    assert fmt.ci(-0.51, 0.58) == "(−0.5100 to 0.5800)"  # U+2212, no '+' on the positive end
    assert fmt.ci(-1.601, -1.571) == "(−1.601 to −1.571)"
    assert fmt.ci(0.0, 0.1327) == "(0 to 0.1327)"  # an exact 0 (a cut at the domain) stays 0
    assert fmt.ci(12_345_678.0, 12_355_678.0) == "(12345678 to 12355678)"  # no exponent, no comma
    assert fmt.ci(1.0, 3.0, 1, "%", fixed=True) == "(1.0 to 3.0) %"  # the unit after it


def test_ends_that_would_print_alike_get_up_to_three_more_digits() -> None:
    # 237.93 and 238.04 to three digits are 238 and 238; to four, 237.9 and 238.0
    assert fmt.ci(237.93, 238.04, 3) == "(237.9 to 238.0)"
    # 1.00001 and 1.00002 are 1.000 twice to four digits, 1.0000 to five, apart to six
    assert fmt.ci(1.00001, 1.00002) == "(1.00001 to 1.00002)"
    assert fmt.ci(1.000001, 1.000002) == "(1.000001 to 1.000002)"  # seven: three more, the most
    assert fmt.ci(1.0000001, 1.0000002) == "(1.000000 to 1.000000)"  # no more than that
    assert fmt.ci(5.0, 5.0) == "(5.000 to 5.000)"  # equal ends keep their digits
    # one decimal of 0.0211 and 0.0421 is 0.0 twice; two write them apart
    assert fmt.ci(0.0211, 0.0421, 1, "%", fixed=True) == "(0.02 to 0.04) %"


def test_a_missing_end_is_a_dash_never_an_empty_interval() -> None:
    assert fmt.ci(None, 1.0) == fmt.MISSING == "–"
    assert fmt.ci(float("nan"), 1.0) == "–"
    assert fmt.metric_ci("throughput_bps", 95e6, float("inf")) == "–"
    assert format_interval(float("nan"), 1.0) == "–"


def test_a_metric_interval_is_in_its_display_unit_with_its_digits() -> None:
    assert fmt.metric_ci("throughput_bps", 95.1e6, 95.42e6) == "(95.10 to 95.42)"
    assert fmt.metric_ci("throughput_bps", 95.1e6, 95.42e6, unit=True) == "(95.10 to 95.42) Mbit/s"
    assert fmt.metric_ci("rtt_mean_ns", 237.93e6, 238.04e6) == "(237.9 to 238.0)"  # RTT: 3 digits, 4 here
    assert fmt.metric_ci("pps", 1_995.0, 2_004.0, unit=True) == "(1.995 to 2.004) K pps"
    # an interval of a difference of losses is in percentage points, as the difference
    assert (
        format_metric_interval("loss_ratio", -0.003, 0.001, unit=True, delta=True) == "(−0.300 to 0.100) pp"
    )
    assert format_metric_interval("loss_ratio", 0.001, 0.003, unit=True) == "(0.100 to 0.300) %"


def test_the_findings_and_the_tables_write_the_same_interval() -> None:
    assert _mean_ci("throughput_bps", 95.11e6, 94.97e6, 95.26e6) == ("95.11 Mbit/s", "(94.97 to 95.26)")
    assert _mean_ci("throughput_bps", 95.11e6, 94.97e6, 95.26e6)[1] == fmt.metric_ci(
        "throughput_bps", 94.97e6, 95.26e6
    )
    assert _mean_ci("rtt_mean_ns", 0.107e6, float("nan"), float("nan")) == ("0.107 ms", "")
    r = SimpleNamespace(response="throughput_bps", coding={"flows": (2, 3)})
    e = SimpleNamespace(name="flows", q=-1.586e6, ci_low=-1.601e6, ci_high=-1.571e6)
    assert _effect(r, e) == (
        "q = −1.586 Mbit/s, interval −1.601 to −1.571: flows 2 → 3 changes the mean by −3.172 Mbit/s"
    )
