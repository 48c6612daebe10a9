"""background: fixed-rate vnb-probe flows between its own pairs, beside a pattern's other measurements.

A pattern's `background:` list names them; the runner starts them with every step of the pattern
(run/background.py) and stores them as measurements of their own (group_kind `background`).
"""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import PROBE
from vnetbench.kinds.probe_flow import ProbeFlowKind
from vnetbench.spec.models import BackgroundMeasurement


class BackgroundKind(ProbeFlowKind):
    name = "background"
    driver = PROBE
    spec = BackgroundMeasurement

    def background_pairs(self, m: Any) -> list[tuple[str, str]]:
        return [(src, dst) for src, dst in m.pairs]


KIND = BackgroundKind()
