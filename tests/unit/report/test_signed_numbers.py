"""Signed numbers in what people read: a difference is '+0.07172 Mbit/s' or '−86.08 Mbit/s' with the
minus sign U+2212, not the ASCII hyphen-minus the quickstart's Findings printed beside '+' ('cross-site
− same-host -86.06 Mbit/s'), and so are the negative ends of its interval. Exports keep ASCII '-'.
The placement table quotes the Findings' numbers with the same digits, and names its notes' rows."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.placement import compare_placements
from vnetbench.report import format as fmt
from vnetbench.report.analysis_tables import _change_points, _placement
from vnetbench.report.sections.findings import placement_findings
from vnetbench.spec.units import format_metric, signed

MINUS = "\u2212"


def test_a_signed_difference_has_the_minus_sign_and_zero_no_sign() -> None:
    assert format_metric("throughput_bps", -86.08e6, delta=True) == "−86.08 Mbit/s"
    assert format_metric("throughput_bps", 71_720, delta=True) == "+0.07172 Mbit/s"
    assert format_metric("loss_ratio", 0.0, delta=True) == "0 pp"
    assert format_metric("loss_ratio", -0.0002, delta=True) == "−0.0200 pp"
    # not a difference: as stored, for what a program may read (monitor thresholds, exports)
    assert format_metric("throughput_bps", -86.08e6) == "-86.08 Mbit/s"
    assert fmt.metric("rtt_mean_ns", -4100, delta=True) == f"{MINUS}0.00410"


def test_signed_writes_both_signs_and_no_sign_for_what_rounds_to_zero() -> None:
    assert [signed(x, ".1f") for x in (5.04, -5.04, -0.04, 0.04, 0.0)] == [
        "+5.0",
        "−5.0",
        "0.0",
        "0.0",
        "0.0",
    ]
    assert signed(-1, "d") == "−1" and signed(1, "d") == "+1"
    assert signed(float("-inf"), ".1f") == "−inf"


def test_minus_all_changes_only_the_signs_of_numbers() -> None:
    assert fmt.minus_all("(-0.51, 0.58)") == "(−0.51, 0.58)"
    assert fmt.minus_all("-86.11 to -86.04") == "−86.11 to −86.04"
    # a hyphen in a name, a range, an exponent: not a minus
    assert fmt.minus_all("same-host 45-55 % p 3.2e-09 -∞") == "same-host 45-55 % p 3.2e-09 −∞"


def quickstart() -> cp.Placements:
    """The quickstart's TCP throughput per placement (Mbit/s): same-host and same-site near 95.6,
    cross-site near 9.56; differences −86.08 and −86.07 Mbit/s."""
    values = {
        "same-host": [95.62e6, 95.66e6, 95.63e6, 95.65e6],
        "same-site": [95.61e6, 95.65e6, 95.63e6, 95.63e6],
        "cross-site": [9.554e6, 9.566e6],
    }
    frame = pd.DataFrame([{"placement": k, "throughput_bps": v} for k, vs in values.items() for v in vs])
    return cp.Placements(
        0.95, [cp.PlacementEntry("tcp", "throughput_bps", compare_placements(frame, "throughput_bps"))]
    )


def test_the_findings_sign_a_fall_with_the_minus_sign() -> None:
    (line,) = placement_findings(SimpleNamespace(placement=quickstart()))
    assert "significant: cross-site − same-host −86.08 Mbit/s, cross-site − same-site −86.07 Mbit/s" in line
    assert "-" not in line.replace("same-", "").replace("cross-", "")


def test_the_placement_table_quotes_the_findings_numbers() -> None:
    section = _placement(quickstart())
    means, differences = section.tables
    assert means.rows[2] == ["cross-site", "2", "9.560", "0.008485", "(9.484 to 9.636)"]
    assert differences.title == "tcp: differences of throughput (Mbit/s) (second − first, Welch 95 %)"
    first, second, difference, interval = differences.rows[1][:4]
    assert (first, second, difference) == ("same-host", "cross-site", "−86.08")
    assert interval.startswith("(−86.") and "-" not in interval
    assert differences.rows[0][2] == "−0.01000"  # same-site − same-host (95.63 − 95.64), signed as well


def test_rtt_means_have_the_digits_the_findings_give_them() -> None:
    # the quickstart's placement table wrote same-host 0.1068 (0, 0.2383) ms where its Findings, two
    # screens above, wrote 0.107 ms (0 to 0.238): an RTT in ms has three significant digits everywhere
    frame = pd.DataFrame(
        {
            "placement": ["same-host"] * 2 + ["cross-site"] * 2,
            "rtt_mean_ns": [96_450.0, 117_150.0, 119_300.0, 128_850.0],
        }
    )
    placements = cp.Placements(
        0.95, [cp.PlacementEntry("rtt", "rtt_mean_ns", compare_placements(frame, "rtt_mean_ns"))]
    )
    (line,) = placement_findings(SimpleNamespace(placement=placements))
    means, differences = _placement(placements).tables
    assert "same-host 0.107 ms (0 to 0.238)" in line
    # SD (117.15 − 96.45) / √2 = 14.64 µs by hand, to an RTT's 3 digits as the mean beside it: 0.0146 ms
    assert means.rows[0][2:] == ["0.107", "0.0146", "(0 to 0.238)"]  # the Findings' interval
    assert differences.rows[0][2] == "+0.0173"


def test_a_difference_of_percentages_is_titled_in_percentage_points() -> None:
    frame = pd.DataFrame(
        {"placement": ["same-host"] * 2 + ["cross-site"] * 2, "loss_ratio": [0.0, 0.001, 0.01, 0.02]}
    )
    placements = cp.Placements(
        0.95, [cp.PlacementEntry("udp", "loss_ratio", compare_placements(frame, "loss_ratio"))]
    )
    means, differences = _placement(placements).tables
    assert means.title.startswith("udp: loss (%) per placement")
    assert differences.title.startswith("udp: differences of loss (pp) (second − first")
    assert differences.rows[0][2] == "+1.45"


def test_the_placement_notes_name_their_measurement_and_metric() -> None:
    # one cross-site flow: the note used to read 'cross-site: a single value, no SD or interval' in a
    # section with a table per measurement and metric
    flows = pd.DataFrame(
        {
            "measurement": ["tcp"] * 3 + ["rtt"] * 4,
            "kind": ["tcp"] * 3 + ["rtt"] * 4,
            "group_kind": ["single"] * 7,
            "placement": [
                "same-host",
                "same-host",
                "cross-site",
                "same-host",
                "same-host",
                "cross-site",
                "cross-site",
            ],
            "throughput_bps": [95e6, 96e6, 9.5e6, None, None, None, None],
            "rtt_mean_ns": [None, None, None, 1e5, 1.1e5, 2e5, 2.2e5],
        }
    )
    placements = cp.placements(flows, 0.95)
    assert placements is not None
    items = _placement(placements).items
    assert "tcp: throughput (Mbit/s): cross-site: a single value, no SD or interval" in items
    assert (
        "tcp: throughput (Mbit/s): cross-site vs same-host: needs ≥ 2 values in each, not compared" in items
    )
    assert not any(item.startswith("rtt") for item in items)  # the RTTs were compared: nothing to note


def test_a_change_point_s_change_is_signed_with_the_minus_sign() -> None:
    found = SimpleNamespace(index=7, time=1_764_000_000_000_000_000, mean_before=95e6, mean_after=85.5e6,
                            relative_change=-0.1, p_value=0.001)  # fmt: skip
    series = SimpleNamespace(
        key={"series": "connections", "pair": "vm1→vm2", "treatment": "—"},
        response="throughput_bps",
        found=[found],
    )
    (table,) = _change_points(SimpleNamespace(min_points=6, series=[series])).tables
    assert table.rows[0][4] == "−10.0 %"


def test_a_contrast_s_weights_have_the_minus_sign_of_a_named_difference() -> None:
    # 'α(B) − α(A)' names a difference with U+2212; a contrast given by its weights read '+1·α(B) -1·α(A)'
    from vnetbench.analysis.contrasts import contrast
    from vnetbench.analysis.one_factor import one_factor_anova

    frame = pd.DataFrame({"f": ["A", "A", "B", "B", "C", "C"], "y": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0]})
    c = contrast(one_factor_anova(frame, "y", "f"), {"B": 1.0, "A": -0.5, "C": -0.5})
    assert c.label == "+1·α(B) −0.5·α(A) −0.5·α(C)"


def test_an_interval_whose_ends_read_the_same_gets_the_digits_to_tell_them_apart() -> None:
    # exogeni-exp1's Findings: 'bbn-c→nicta-d 238 ms (238 to 238)', an interval of no width; its ends
    # differ in the fourth digit. RTTs 237.95, 237.99, 238.01, 237.97 ms: mean 237.98, SD 0.02582,
    # t[0.975; 3] = 3.1824: (237.939, 238.021). A short path keeps its three digits: 50.91 (50.84 to 50.97)
    # would be 50.9 (50.8 to 51.0) with three.
    frame = pd.DataFrame(
        {
            "placement": ["same-site"] * 4 + ["cross-site"] * 4,
            "rtt_mean_ns": [v * 1e6 for v in (50.85, 50.95, 50.9, 50.92, 237.95, 237.99, 238.01, 237.97)],
        }
    )
    placements = cp.Placements(
        0.95, [cp.PlacementEntry("rtt", "rtt_mean_ns", compare_placements(frame, "rtt_mean_ns"))]
    )
    (line,) = placement_findings(SimpleNamespace(placement=placements))
    assert "same-site 50.9 ms (50.8 to 51.0), cross-site 238.0 ms (237.9 to 238.0)" in line
    means = _placement(placements).tables[0]
    assert [row[2] for row in means.rows] == ["50.9", "238.0"]
    assert [row[4] for row in means.rows] == ["(50.8 to 51.0)", "(237.9 to 238.0)"]
    assert fmt.mean_interval("rtt_mean_ns", 238e6, 238e6, 238e6) == (
        "238",
        "238",
        "238",
    )  # no width: none shown


def test_the_placement_figure_names_its_axis_in_people_s_words(tmp_path: Path) -> None:
    # the quickstart's figure 'tcp: throughput (Mbit/s) per placement' had the y axis 'throughput_bps (Mbit/s)'
    from vnetbench.report.stats_figures import placement_chart

    comparison = quickstart().entries[0].comparison
    assert comparison is not None
    _, svg = placement_chart(
        comparison.to_dict(), tmp_path / "p", 1e6, "Mbit/s", "tcp: throughput per placement"
    )
    text = svg.read_text()
    assert "throughput (Mbit/s)" in text and "throughput_bps" not in text
