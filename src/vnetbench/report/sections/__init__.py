"""Report sections contributed by feature modules (probe sweeps, designed experiments, telemetry, ...).

Each module in this package defines

    ORDER: int                      # where the section goes; the built-in ones use 10..90
    def build(ctx: ReportContext) -> list[Section]

and is found by its presence here: adding a section never edits html.py. A builder returns [] when
the campaign has nothing for it (no such measurements), so every report shows only what applies.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from vnetbench.spec.loader import spec_of
from vnetbench.store.db import Store


@dataclass
class ReportContext:
    store: Store
    campaign: dict[str, Any]  # the campaign row
    frame: pd.DataFrame  # store.measurements_frame(campaign id): one row per measurement
    fig_dir: Path  # where figures go (PNG + SVG)

    @property
    def campaign_id(self) -> str:
        return str(self.campaign["id"])

    @cached_property
    def spec(self) -> Any:
        """The stored spec as a model, parsed once for every section; None if this version cannot
        read it (a section then shows nothing rather than breaking the report)."""
        try:
            return spec_of(self.campaign)
        except Exception:
            return None


def builders() -> list[tuple[int, Callable[[ReportContext], list[Any]]]]:
    """(order, build) of every section module in this package, in order."""
    found: list[tuple[int, str, ModuleType]] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "build"):
            found.append((int(getattr(module, "ORDER", 100)), info.name, module))
    return [(order, module.build) for order, _, module in sorted(found, key=lambda f: (f[0], f[1]))]
