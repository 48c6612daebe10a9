"""Each figure function writes a PNG and an SVG and returns their paths."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from tests.helpers.stats_app import ONL
from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.reproducibility import reproducibility
from vnetbench.analysis.two_k_r import two_k_r
from vnetbench.report import stats_figures as fig


def written(paths: tuple[Path, Path]) -> bool:
    png, svg = paths
    return (
        png.suffix == ".png" and svg.suffix == ".svg"
        and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg.read_bytes()[:2000]
    )  # fmt: skip


def test_every_figure(tmp_path: Path) -> None:
    a = one_factor_anova(pd.read_csv(ONL), "loss", "receivers")
    assert written(fig.residuals_vs_predicted(a, tmp_path / "residuals"))
    assert written(fig.normal_qq(diagnostics(a), tmp_path / "sub" / "qq.png"))
    assert written(fig.level_means(a, tmp_path / "means", threshold=1.0))
    assert written(fig.effects_chart(a, tmp_path / "alpha"))
    assert written(fig.contrast_intervals(successive_differences(a), tmp_path / "steps"))
    frame = pd.DataFrame({"a": [-1, -1, 1, 1] * 2, "b": [-1, 1] * 4, "y": [2, 3, 6, 11, 4, 5, 8, 13]})
    assert written(fig.effects_chart(two_k_r(frame, "y", ["a", "b"]), tmp_path / "effects"))
    rows = [{"build": 0, "metric": "m", "value": v} for v in (100, 102, 98, 101, 99)]
    rows += [{"build": b, "metric": "m", "value": v} for b, v in enumerate((101, 99, 100, 102, 98), 1)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert written(fig.reproducibility_chart(r, tmp_path / "repro"))
    assert (tmp_path / "sub" / "qq.svg").exists()


def test_the_qq_plot_shows_residuals_in_the_unit_its_title_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # onl-udp-receivers (campaign b0bfad94): titled 'loss (%)', its residuals were ratios (-0.00131 ..)
    a = one_factor_anova(pd.read_csv(ONL), "loss", "receivers")
    shown: dict[str, object] = {}

    def keep(figure: Figure, path: Path) -> tuple[Path, Path]:
        ax = figure.axes[0]
        shown["y"], shown["label"] = ax.collections[0].get_offsets()[:, 1], ax.get_ylabel()
        return path, path

    monkeypatch.setattr(fig, "_save", keep)
    fig.normal_qq(diagnostics(a), tmp_path / "qq", "loss (%)", 0.01, "%")
    d = diagnostics(a)
    assert shown["label"] == "residual quantile (%)"
    assert list(shown["y"]) == [v / 0.01 for v in d.qq_ordered]  # a ratio's residual × 100


def test_effect_bars_name_the_levels_their_sign_compares() -> None:
    """A bar right of zero must say which level is higher: reno's mean (6 + 11 + 8 + 13) / 4 = 9.5
    against cubic's (2 + 3 + 4 + 5) / 4 = 3.5, q_A = (9.5 − 3.5) / 2 = 3 (Jain ch. 17: q = half the
    difference of the +1 and −1 levels' means), so the label reads reno − cubic."""
    frame = pd.DataFrame(
        {"cc": ["cubic", "cubic", "reno", "reno"] * 2, "flows": [1, 4] * 4, "y": [2, 3, 6, 11, 4, 5, 8, 13]}
    )
    result = two_k_r(frame, "y", ["cc", "flows"])
    labels = {e.letters: (fig._effect_label(result, e), e.q) for e in result.effects if e.letters != "I"}
    assert labels == {
        "A": ("A (cc: reno − cubic)", 3.0),
        "B": ("B (flows: 4 − 1)", 1.5),
        "AB": ("AB (cc:flows)", 1.0),
    }
