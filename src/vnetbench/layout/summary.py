"""A layout as JSON, kept with every build in the store (what was built: provenance)."""

from __future__ import annotations

from typing import Any

from vnetbench.layout.objects import Layout


def layout_summary(layout: Layout) -> dict[str, Any]:
    """What was built, in a JSON-able form kept with the build (provenance)."""
    return {
        "namespaces": layout.namespaces,
        "segments": [
            {"subnet": s.subnet, "label": s.label, "addresses": s.addresses, "ifnames": s.ifnames}
            for s in layout.segments
        ],
        "bridges": [{"ns": b.ns, "name": b.name, "kind": b.kind, "label": b.label} for b in layout.bridges],
        "interfaces": [
            {
                "ns": i.ns,
                "name": i.name,
                "mtu": i.mtu,
                "address": i.address,
                "master": i.master,
                "shaper": i.shaper
                and {
                    "kind": i.shaper.kind,
                    "rate_bps": i.shaper.rate_bps,
                    "queue_bytes": i.shaper.queue_bytes,
                    "burst_bytes": i.shaper.burst_bytes,
                    "placement": i.shaper.placement,
                },
            }
            for i in layout.interfaces()
        ],
        # per link: how its rate is enforced (network: the link's queue drops; sender: back-pressure)
        "links": [
            {
                "link": link.label,
                "rate_bps": link.rate,
                "shaping": link.shaping if link.rate or link.pps else None,
            }
            for link in layout.links
        ],
        "node_host": layout.node_host,
        "host_site": layout.host_site,
        "cpu_quota": layout.cpu_quota,
    }
