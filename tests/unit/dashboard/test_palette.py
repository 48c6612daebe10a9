"""The colours of the dashboard and the report's figures, told apart by colour-blind readers: each chart line
against the red × of a failed attempt (dashboard.css's failed rows) and against every other line, the
grid's levels against each other, in normal vision and in the three dichromacies. Before: the second line
was #c62828, CIE76 ΔE 4.7 from the failed red #b71c1c; four more were within 30 of it in a dichromacy
(#2e7d32 16.2 under deuteranopia, #ad1457 17.0 under tritanopia, #5d4037 20.3 under protanopia, #ef6c00
21.3 under tritanopia), and the grid's ok green #43a047 and critical red #e53935 were 14.8 apart under
deuteranopia.

Distances, computed here and not by the code under test: sRGB (IEC 61966-2-1) to linear RGB; dichromacy
simulated in linear RGB with the severity-1.0 matrices of Machado, Oliveira & Fernandes, "A
Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), 2009 (their
Table 1, as published at www.inf.ufrgs.br/~oliveira/pubs_files/CVD_Simulation/CVD_Simulation.html);
then XYZ (D65) and CIELAB, and the Euclidean ΔE (CIE76). A ΔE of about 2.3 is just noticeable (Sharma,
Digital Color Imaging Handbook, 2003); 30 is read at a glance as another colour.

Contrast on white, computed here too: WCAG 2.x relative luminance (0.2126 R + 0.7152 G + 0.0722 B of
the linear sRGB) and (L1 + 0.05) / (L2 + 0.05); WCAG 2.1's success criterion 1.4.11 asks 3:1 of a
graphic a reader needs. Before: the seventh line was Okabe & Ito's yellow #F0E442, 1.3:1; the third and
fourth were their orange #E69F00 (2.25:1) and sky blue #56B4E9 (2.31:1), now a dark magenta #840474
(9.33:1) and an azure #3594FF (3.07:1).

Thresholds: a line and the failure red ≥ 30 (a × must not be read as a point of a line, nor a line as a
failure); two lines ≥ 15, told apart side by side in the legend — Okabe & Ito's own closest pair in a
dichromacy (sky blue and bluish green, 16.1 under tritanopia) is just above it; the grid's ok, warning
and critical ≥ 30 from each other, ≥ 15 from the grey of a cell without a value."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from vnetbench import palette
from vnetbench.report import figures

STATIC = Path(__file__).parents[3] / "src/vnetbench/dashboard/static"
REPORT = Path(__file__).parents[3] / "src/vnetbench/report"

NORMAL = np.eye(3)
DEUTERANOPIA = np.array(
    [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
)
PROTANOPIA = np.array(
    [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
)
TRITANOPIA = np.array(
    [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
)
VISIONS = {"normal": NORMAL, "deuteranopia": DEUTERANOPIA, "protanopia": PROTANOPIA, "tritanopia": TRITANOPIA}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
CLEARLY_DISTINCT = 30.0  # a line against the failure red; the grid's levels against each other
SIDE_BY_SIDE = 15.0  # two lines; a level against the grey of no value

# Okabe & Ito, "Color Universal Design (CUD): How to make figures and presentations that are friendly to
# colorblind people", 2008: orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple, black
OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
# lines of our own in the place of Okabe & Ito's colours below 3:1 on white
OWN_LINES = {
    "#7700CC": "a violet for their yellow (1.32:1)",
    "#840474": "a dark magenta for their orange (2.25:1)",
    "#3594FF": "an azure for their sky blue (2.31:1)",
}
GRAPHICS_CONTRAST = 3.0  # WCAG 2.1, 1.4.11 non-text contrast


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(rgb: np.ndarray) -> np.ndarray:
    xyz = SRGB_TO_XYZ @ rgb / (SRGB_TO_XYZ @ np.ones(3))  # relative to the D65 white
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def contrast_on_white(hex_colour: str) -> float:
    """WCAG 2.x contrast ratio of the colour against white (#FFFFFF, relative luminance 1)."""
    luminance = float(np.array([0.2126, 0.7152, 0.0722]) @ _linear(hex_colour))
    return (1 + 0.05) / (luminance + 0.05)


def delta_e(a: str, b: str, vision: np.ndarray) -> float:
    seen = (np.clip(vision @ _linear(c), 0, 1) for c in (a, b))
    return float(np.linalg.norm(_lab(next(seen)) - _lab(next(seen))))


def _hexes(text: str) -> list[str]:
    return [h.upper() for h in re.findall(r"#[0-9a-fA-F]{6}", text)]


def _js() -> dict:
    text = (STATIC / "dashboard.js").read_text()
    return {
        "palette": _hexes(re.search(r"const PALETTE = \[(.*?)\];", text).group(1)),
        "max_lines": int(re.search(r"const MAX_LINES = (\d+);", text).group(1)),
        "failed": re.search(r'const FAILED_COLOUR = "(#[0-9a-fA-F]{6})"', text).group(1).upper(),
        "threshold": re.search(r'const THRESHOLD_COLOUR = "(#[0-9a-fA-F]{6})"', text).group(1).upper(),
        "band": re.search(r'const BAND = "(\d+),(\d+),(\d+)"', text).groups(),
    }


def _css() -> dict[str, str]:
    text = (STATIC / "dashboard.css").read_text()
    levels = {k: v.upper() for k, v in re.findall(r"--(ok|warning|critical|none): (#[0-9a-fA-F]{6})", text)}
    failed = re.search(r'tr:not\(\[data-status="ok"\]\) td \{ color: (#[0-9a-fA-F]{6})', text).group(1)
    return {**levels, "failed": failed.upper(), "mark": re.search(r"\.failed-mark \{ color: (#\w+)", text)[1]}


def test_the_conversion_matches_published_values() -> None:
    # CIELAB of sRGB pure red (D65): L* 53.24, a* 80.09, b* 67.20 (Lindbloom's calculator); white 100/0/0
    assert _lab(_linear("#ff0000")) == pytest.approx([53.24, 80.09, 67.20], abs=0.05)
    assert _lab(_linear("#ffffff")) == pytest.approx([100, 0, 0], abs=1e-6)
    for matrix in VISIONS.values():  # each simulation keeps white white (Machado's rows sum to 1)
        assert matrix.sum(axis=1) == pytest.approx(np.ones(3), abs=1e-5)


def test_the_simulation_finds_what_the_old_colours_confused() -> None:
    # the old grid's ok green and critical red: apart in normal vision, not for a deuteranope
    assert delta_e("#43a047", "#e53935", NORMAL) > 60
    assert delta_e("#43a047", "#e53935", DEUTERANOPIA) < SIDE_BY_SIDE
    # the old second line and the failure red
    assert delta_e("#c62828", "#b71c1c", NORMAL) == pytest.approx(4.7, abs=0.1)


def test_the_dashboard_and_the_report_hold_one_palette() -> None:
    js, css = _js(), _css()
    assert js["palette"] == list(palette.SERIES)  # the same hex strings, in the same order
    assert js["max_lines"] == len(js["palette"]) == len(set(js["palette"]))  # each line its own colour
    assert set(palette.SERIES) <= OKABE_ITO | set(OWN_LINES)
    assert js["failed"] == css["failed"] == css["mark"].upper() == palette.FAILED
    assert js["threshold"] == palette.NEUTRAL  # the report's reference lines are the dashboard's grey
    assert tuple(int(v) for v in js["band"]) == tuple(
        int(palette.SERIES[0][i : i + 2], 16) for i in (1, 3, 5)
    )
    assert (css["ok"], css["warning"], css["critical"]) == (palette.OK, palette.WARNING, palette.CRITICAL)
    assert plt.rcParams["axes.prop_cycle"].by_key()["color"] == list(palette.SERIES)  # report.figures set it
    assert set(figures.FILLS) <= set(palette.SERIES)


def test_the_report_names_no_colour_outside_the_palette_cycle() -> None:
    # matplotlib's own cycle (tab10, "C3") is red beside green; every figure takes palette.py's colours
    for path in REPORT.rglob("*.py"):
        text = path.read_text()
        assert "tab10" not in text and not re.search(r"""colou?r=["']C\d["']""", text), path
        assert not re.search(r"""colou?r=["'](red|green)["']""", text), path
        # nor a hex string of its own (the loss diagram's #b3261e and #4a6fa5, the topology's #a33 rates)
        assert not re.search(r"""colou?r["']?\s*[=:]\s*["']#""", text), path
        assert "tab:" not in text, path


# the benchmarks' figure scripts moved to the palette (their committed figures are published with them)
BENCHMARK_FIGURES = (
    "delay/geni_tail.py", "delay/plot.py", "fidelity/receive_work.py", "fidelity/fairness.py",
    "fidelity/receive_queue_cpu.py", "scale/run.py", "probe/bc_figure.py", "probe/sender_cpu_figure.py",
    "probe/figure.py", "probe/report_defaults.py", "build_teardown/run.py", "dashboard/run.py",
    "ssh/tables.py", "telemetry/run.py", "probe/lateness_steal.py", "fidelity/run.py", "fidelity/tcp_loss.py",
)  # fmt: skip


def test_the_benchmark_figures_draw_in_the_palette() -> None:
    """No tab: colour, no red, green or grey of matplotlib's (a reference line is palette.NEUTRAL), no
    "C0" of its red-beside-green cycle, no hex of their own; black stays for medians and single runs.
    Lines drawn without a colour take the palette's cycle, set by the one shared use_palette() (the
    report's too), not a copy of the rcParams line per script."""
    benchmarks = Path(__file__).parents[3] / "benchmarks"
    drawing = {str(p.relative_to(benchmarks)) for p in benchmarks.rglob("*.py") if "savefig" in p.read_text()}
    assert drawing == set(BENCHMARK_FIGURES)  # a new figure script is checked too
    for name in BENCHMARK_FIGURES:
        text = (benchmarks / name).read_text()
        assert "from vnetbench.palette import" in text, name
        assert "use_palette()" in text and "prop_cycle" not in text, name
        assert "tab:" not in text, name
        assert not re.search(r"""colou?rs?=["'](red|green|grey|gray|r|C\d)["']""", text), name
        assert not re.search(r"""colou?rs?["']?\s*[=:]\s*["']#""", text), name


def test_the_contrast_formula_matches_published_values() -> None:
    # black on white 21:1, WCAG's own example; #767676 is the lightest grey with 4.5:1 on white
    assert contrast_on_white("#000000") == pytest.approx(21.0)
    assert contrast_on_white("#FFFFFF") == pytest.approx(1.0)
    assert contrast_on_white("#767676") == pytest.approx(4.54, abs=0.01)
    assert contrast_on_white("#F0E442") == pytest.approx(1.32, abs=0.01)  # the old seventh line
    assert contrast_on_white("#E69F00") == pytest.approx(2.25, abs=0.01)  # the old third: orange
    assert contrast_on_white("#56B4E9") == pytest.approx(2.31, abs=0.01)  # the old fourth: sky blue


def test_every_line_can_be_seen_on_white() -> None:
    """Each line colour of the dashboard (and the report's cycle, the same strings) has 3:1 against the
    white of the chart (the lowest, the reddish purple's, 3.06:1; the azure's 3.07:1)."""
    js = _js()
    for colour in js["palette"]:
        assert contrast_on_white(colour) >= GRAPHICS_CONTRAST, (colour, round(contrast_on_white(colour), 2))
    # the reference lines beside them: the dashboard's threshold grey and the report's neutral grey
    assert contrast_on_white(js["threshold"]) >= GRAPHICS_CONTRAST
    assert contrast_on_white(palette.NEUTRAL) >= GRAPHICS_CONTRAST


def test_no_orange_has_3_to_1_and_stays_apart_from_the_failure_red() -> None:
    """Why the third line is no longer an orange. A search of every sRGB colour of CIELAB hue 40-80° and
    chroma ≥ 40 with 3:1 on white (this module's formulas, vectorised) found none at ΔE 30 from the
    failure red in all four visions; the farthest, #DC7D00, is 29.8 from it for a deuteranope. Okabe &
    Ito's orange is farther (lighter) but 2.25:1."""
    assert contrast_on_white("#DC7D00") >= GRAPHICS_CONTRAST
    assert delta_e("#DC7D00", palette.FAILED, DEUTERANOPIA) == pytest.approx(29.8, abs=0.05)
    assert delta_e("#E69F00", palette.FAILED, DEUTERANOPIA) >= CLEARLY_DISTINCT


@pytest.mark.parametrize("vision", VISIONS)
def test_every_line_is_apart_from_the_failure_red(vision: str) -> None:
    js = _js()
    for colour in js["palette"]:
        assert delta_e(colour, js["failed"], VISIONS[vision]) >= CLEARLY_DISTINCT, (colour, vision)


@pytest.mark.parametrize("vision", VISIONS)
def test_every_two_lines_are_apart(vision: str) -> None:
    js = _js()
    for a, b in itertools.combinations(js["palette"], 2):
        assert delta_e(a, b, VISIONS[vision]) >= SIDE_BY_SIDE, (a, b, vision)
    # the thresholds' grey dashed lines (each named in words on the chart), the report's reference
    # lines (palette.NEUTRAL, the same grey) against every line
    for colour in js["palette"]:
        assert delta_e(colour, js["threshold"], VISIONS[vision]) >= SIDE_BY_SIDE, (colour, vision)


@pytest.mark.parametrize("vision", VISIONS)
def test_the_grid_levels_are_apart(vision: str) -> None:
    css = _css()
    for a, b in itertools.combinations(("ok", "warning", "critical"), 2):
        assert delta_e(css[a], css[b], VISIONS[vision]) >= CLEARLY_DISTINCT, (a, b, vision)
    for level in ("ok", "warning", "critical"):
        assert delta_e(css[level], css["none"], VISIONS[vision]) >= SIDE_BY_SIDE, (level, vision)


def test_a_cell_says_its_level_in_words() -> None:
    text = (STATIC / "dashboard.js").read_text()
    assert (
        'el("span", { class: "level-name", text: cell.level === "none" ? "no value" : cell.level })' in text
    )
