"""report/figures.py `save`: a figure whose labels are too long for tight_layout (a user's long node
names) is still written whole, without matplotlib's "Tight layout not applied" warning on the
user's terminal (seen in CI's hostile-names campaign)."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from PIL import Image

from vnetbench.report.figures import save


def _long_label_figure() -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.barh(["n" * 300, "b"], [1, 2])
    return fig


def test_matplotlib_itself_warns_on_this_figure() -> None:
    # the premise: without save's filter, tight_layout gives up on these margins and says so
    fig = _long_label_figure()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.tight_layout()
    plt.close(fig)
    assert any("Tight layout not applied" in str(w.message) for w in caught)


def test_save_writes_the_whole_figure_quietly(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = save(_long_label_figure(), tmp_path / "long.png")
    assert [str(w.message) for w in caught] == []
    assert png.exists() and png.with_suffix(".svg").exists()
    # the tight bounding box widened the image to hold the 300-character label (4 in × 110 dpi = 440)
    assert Image.open(png).size[0] > 440 * 2
