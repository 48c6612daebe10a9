"""The chart's line colours against the marks drawn beside them: a line must not be taken for the red ×
of a failed attempt (dashboard.css's failed rows) or a threshold's dashed line, in normal vision or in
the three dichromacies. The second colour was #c62828: CIE76 ΔE 4.7 from the failed red #b71c1c (by the
conversion below), the same red as the critical threshold line.

Distances: sRGB (IEC 61966-2-1) to linear RGB, dichromacy simulated in linear RGB with the severity-1.0
matrices of Machado, Oliveira & Fernandes, "A Physiologically-based Model for Simulation of Color Vision
Deficiency", IEEE TVCG 15(6), 2009; then XYZ (D65) and CIELAB, and the Euclidean ΔE (CIE76). A ΔE of
about 2 is just noticeable; 30 is read at a glance as another colour."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

JS = Path(__file__).parents[3] / "src/vnetbench/dashboard/static/dashboard.js"

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
CLEARLY_DISTINCT = 30.0


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(rgb: np.ndarray) -> np.ndarray:
    xyz = SRGB_TO_XYZ @ rgb / (SRGB_TO_XYZ @ np.ones(3))  # relative to the D65 white
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, vision: np.ndarray) -> float:
    seen = (np.clip(vision @ _linear(c), 0, 1) for c in (a, b))
    return float(np.linalg.norm(_lab(next(seen)) - _lab(next(seen))))


def _js_colours() -> tuple[list[str], str, dict[str, str]]:
    text = JS.read_text()
    palette = re.findall(r"#[0-9a-fA-F]{6}", re.search(r"const PALETTE = \[(.*?)\];", text).group(1))
    failed = re.search(r'const FAILED_COLOUR = "(#[0-9a-fA-F]{6})"', text).group(1)
    levels = dict(re.findall(r'\["(warning|critical)", "(#[0-9a-fA-F]{6})"\]', text))
    return palette, failed, levels


def test_the_conversion_matches_published_values() -> None:
    # CIELAB of sRGB pure red (D65): L* 53.24, a* 80.09, b* 67.20 (Lindbloom's calculator); white 100/0/0
    assert _lab(_linear("#ff0000")) == pytest.approx([53.24, 80.09, 67.20], abs=0.05)
    assert _lab(_linear("#ffffff")) == pytest.approx([100, 0, 0], abs=1e-6)


@pytest.mark.parametrize("vision", VISIONS)
def test_the_second_line_is_not_the_failure_red(vision: str) -> None:
    palette, failed, levels = _js_colours()
    assert set(levels) == {"warning", "critical"}
    second = palette[1]
    for other in (failed, levels["warning"], levels["critical"], palette[0]):
        assert delta_e(second, other, VISIONS[vision]) >= CLEARLY_DISTINCT, (second, other, vision)


def test_no_line_is_the_failure_red_in_normal_vision() -> None:
    palette, failed, _ = _js_colours()
    assert len(palette) == 8 == len(set(palette))  # MAX_LINES lines, each its own colour
    assert min(delta_e(c, failed, NORMAL) for c in palette) >= CLEARLY_DISTINCT
