"""What the runner needs for vnb-probe steps beyond a plain flow: rates of a sweep point and background flows.

- `annotate` fills a record's offered rate and overhead-model maximum for `pps`, `trace` and
  `background` (the generic code knows only UDP's `rate`/`length`).
- `background_plans` turns a pattern's `background:` list into extra flows of the step: their
  receivers start with the step's servers and their senders behind the same start barrier, so they
  run for the whole measured period (they last the step's planned time plus a short tail). They are
  stored as measurements of their own (group_kind `background`, key `STEP/bg/NAME/SRC>DST`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from vnetbench.drivers import driver_for
from vnetbench.drivers.base import Commands, FlowParams
from vnetbench.layout import Layout
from vnetbench.model import expected_max_bps
from vnetbench.spec.models import BackgroundMeasurement, Campaign
from vnetbench.store.db import MeasurementRecord

BACKGROUND_TAIL_NS = 500_000_000  # background senders stop this long after the measured flows


def offered(m: Any, params: Mapping[str, Any]) -> tuple[float, int] | None:
    """(offered UDP payload bit/s, payload bytes) of a probe flow; None for other kinds."""
    if m.kind == "pps":
        return float(params["pps"]) * params["size"] * 8, int(params["size"])
    if m.kind in {"trace", "background"}:
        rate = float(m.pps) * m.size * 8 if m.pps else float(m.rate)
        return rate, int(m.size)
    return None


def annotate(rec: MeasurementRecord, m: Any, params: Mapping[str, Any]) -> None:
    found = offered(m, params)
    if found is None:
        return
    rec.offered_bps, size = found
    rec.expected_max_bps = expected_max_bps("udp", rec.link_rate_bps, rec.path_mtu or 1500, size)


def pattern_of(campaign: Campaign, label: str) -> Any:
    for index, pattern in enumerate(campaign.patterns):
        if (pattern.name or f"{pattern.kind}{index + 1}") == label:
            return pattern
    return None


def background_plans(
    step: Any,
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
        if not isinstance(m, BackgroundMeasurement):
            continue
        driver = driver_for(m.kind)
        for src, dst in m.pairs:
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
                link_rate_bps=layout.bottleneck_rate(src, dst),
                path_mtu=layout.path_mtu(src, dst),
                tool=driver.tool,
                summary={},
                samples=[],
                events=[],
                raw={},
                command=None,
            )
            annotate(rec, m, {})
            flow = FlowParams(src, dst, address(dst, src), next_port(), step.planned_ns + BACKGROUND_TAIL_NS)
            cmds = driver.commands(m, flow, rec.offered_bps)
            rec.command = {"client": cmds.client, "server": cmds.server or []}
            out.append((rec, cmds))
    return out
