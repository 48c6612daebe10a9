"""Report sections contributed by feature modules (probe sweeps, designed experiments, telemetry, ...).

Each module in this package defines

    ORDER: int                      # where the section goes; the built-in ones use 1 and 55..85
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

from vnetbench.analysis.campaign_analysis import CampaignAnalysis, analyze_campaign
from vnetbench.analysis.campaign_data import SampleSource, StoredSamples, load_campaign_frames
from vnetbench.analysis.cpu import cpu_frame
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.loss import Localization, NotAccounted, campaign_accounting
from vnetbench.report.prepared import Prepared, prepare
from vnetbench.spec.loader import spec_of
from vnetbench.store.db import Store


@dataclass
class ReportContext:
    store: Store
    campaign: dict[str, Any]  # the campaign row
    frame: pd.DataFrame  # store.measurements_frame(campaign id): one row per measurement
    fig_dir: Path  # where figures go (PNG + SVG)
    analysis_error: str = ""  # why `analysis` is None

    @property
    def campaign_id(self) -> str:
        return str(self.campaign["id"])

    @cached_property
    def samples(self) -> SampleSource:
        """The campaign's samples, left in the store: it aggregates them in SQL, and a section loads
        one metric of the measurements it shows (`values`), in bounded memory at any size."""
        return StoredSamples(self.store, self.campaign_id)

    @cached_property
    def prepared(self) -> Prepared:
        """The ok measurements with their treatments, after transient removal and outliers."""
        return prepare(self.campaign, self.frame, self.samples, self.store.builds_frame(self.campaign_id))

    @cached_property
    def analysis(self) -> CampaignAnalysis | None:
        """`vnetbench analyze`'s result, computed once for every section (None when the data cannot
        be analysed as the spec asks: `analysis_error` says why)."""
        try:
            return analyze_campaign(load_campaign_frames(self.store, self.campaign_id))
        except DataError as exc:
            self.analysis_error = str(exc)
            return None

    @cached_property
    def cpu(self) -> pd.DataFrame:
        """Host and tool CPU per measurement with telemetry (analysis.cpu.cpu_frame)."""
        return cpu_frame(self.store, self.campaign_id, self.frame)

    @cached_property
    def losses(self) -> list[Localization]:
        """Loss localization of every packet flow that has counters."""
        return self.accounting[0]

    @cached_property
    def accounting(self) -> tuple[list[Localization], list[NotAccounted]]:
        return campaign_accounting(self.store, self.campaign_id, self.frame)

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
