"""matplotlib's colour cycle set to vnetbench's palette (src/vnetbench/palette.py): the one place that
does it, for the report's figures (figures.py calls it at import) and the benchmarks' figure scripts.

Only matplotlib itself is imported (not pyplot, no backend chosen), so a benchmark script may call this
before or after it picks its backend, at no more cost than matplotlib's own import."""

from __future__ import annotations

import matplotlib

from vnetbench.palette import SERIES


def use_palette() -> None:
    """Lines, bars and markers drawn without a colour of their own take the palette's, in its order
    ("C0" is its blue, "C1" its black), not matplotlib's default cycle (its orange and green are below 3:1 on
    white, its red beside its green is one colour to a red-green colour-blind reader)."""
    matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=list(SERIES))
