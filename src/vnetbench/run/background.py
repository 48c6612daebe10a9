"""Background flows: a pattern's `background:` measurements, run beside every step of the pattern.

`background_plans` turns them into extra flows of the step: their receivers start with the step's
servers and their senders behind the same start barrier, so they run for the whole measured period
(they last the step's planned time plus a short tail). They are stored as measurements of their own
(group_kind `background`, key `STEP/bg/NAME/SRC>DST`). Which flows a measurement adds is its kind's
to say (`Kind.background_pairs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from vnetbench.drivers.base import Commands, FlowParams
from vnetbench.kinds import kind_of
from vnetbench.layout import Layout
from vnetbench.plan import Step, path_facts
from vnetbench.plan.patterns import pattern_of
from vnetbench.spec.models import Campaign
from vnetbench.store.records import MeasurementRecord

BACKGROUND_TAIL_NS = 500_000_000  # background senders stop this long after the measured flows


def background_plans(
    step: Step,
    campaign: Campaign,
    layout: Layout,
    base: MeasurementRecord,
    next_port: Callable[[], int],
    address_of: Callable[[str, str], str] | None = None,
) -> list[tuple[MeasurementRecord, Commands]]:
    """One (record, commands) per background flow of the step's pattern ([] when it has none).
    `address_of(dst, seen_from)` is the provider's (over SSH a host's real address, not the
    layout's); default: the layout's."""
    address = address_of or layout.address_of
    pattern = pattern_of(campaign, step.pattern)
    if pattern is None or not pattern.background:
        return []
    out: list[tuple[MeasurementRecord, Commands]] = []
    for name in pattern.background:
        m = campaign.measurement(name)
        kind = kind_of(m.kind)
        for src, dst in kind.background_pairs(m):
            path = path_facts(layout, src, dst)
            offered = kind.offered(m, path, {})
            rec = replace(
                base,
                key=f"{step.key}/bg/{name}/{src}>{dst}",
                group_kind="background",
                measurement=name,
                kind=m.kind,
                src=src,
                dst=dst,
                placement=layout.placement(src, dst),
                src_host=layout.node_host[src],
                dst_host=layout.node_host[dst],
                link_rate_bps=path.rate_bps,
                path_mtu=path.mtu,
                tool=kind.driver.tool,
                offered_bps=None if offered is None else offered.bps,
                expected_max_bps=kind.expected_max_bps(m, path, {}),
                summary={},
                samples=[],
                events=[],
                raw={},
                command=None,
            )
            flow = FlowParams(src, dst, address(dst, src), next_port(), step.planned_ns + BACKGROUND_TAIL_NS)
            cmds = kind.driver.commands(m, flow, rec.offered_bps)
            rec.command = {"client": cmds.client, "server": cmds.server or []}
            out.append((rec, cmds))
    return out
