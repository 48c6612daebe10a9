"""The link every flow of a group crosses (a star's uplink, a fan-in's downlink), per treatment.

The sum of simultaneous flows belongs against the overhead-model maximum of the link they share,
not against one flow's own bottleneck: three flows limited to 20 Mbit/s each by their own links but
sharing a 50 Mbit/s uplink fill the uplink (≈100 %), not "250 % of one link". The stored spec is laid
out again (pure data, `plan.make_plan`), so a factor that changes link rates is taken into account.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vnetbench.kinds import PathFacts, kind_of
from vnetbench.layout import Layout
from vnetbench.plan import make_plan, treatments
from vnetbench.report.prepared import treatment_label
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec


@dataclass(frozen=True)
class SharedLink:
    name: str
    rate_bps: int
    model_max_bps: float | None


class SharedLinks:
    """`find(treatment, measurement, flows)` → the slowest shaped link all the flows cross, if any."""

    def __init__(self, campaign: dict[str, Any]) -> None:
        self.layouts: dict[str, tuple[Layout, Any]] = {}
        try:
            self._lay_out(campaign)
        except (SpecInvalid, ValueError, KeyError, TypeError, AttributeError):  # a hand-made campaign row
            self.layouts = {}

    def _lay_out(self, campaign: dict[str, Any]) -> None:
        spec = parse_spec(campaign["spec_text"], campaign.get("spec_source") or "<stored spec>", stored=True)
        plan = make_plan(spec, str(campaign["id"]), int(campaign.get("seed") or 0))
        names = [f.name for f in spec.campaign.factors]
        for combo, variant, layout in zip(treatments(spec), plan.variants, plan.layouts, strict=True):
            self.layouts[treatment_label(combo, names)] = (layout, variant)

    def find(
        self, treatment: str | None, measurement: str, flows: list[tuple[str, str]]
    ) -> SharedLink | None:
        found = self.layouts.get(treatment or "")
        if found is None or not flows:
            return None
        layout, variant = found
        paths = [layout.path_links(src, dst) for src, dst in flows]
        common = [link for link in paths[0] if all(any(link is x for x in p) for p in paths[1:])]
        shaped = [link for link in common if link.rate]
        if not shaped:
            return None
        link = min(shaped, key=lambda x: x.rate)
        m = variant.measurement(measurement)
        mtu = min(layout.path_mtu(src, dst) for src, dst in flows)
        model = kind_of(m.kind).expected_max_bps(m, PathFacts(link.rate, mtu), {})
        return SharedLink(link.label, int(link.rate), model)
