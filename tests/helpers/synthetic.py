"""A synthetic campaign written through the store's own API: the quickstart's plan, made-up samples.

Every planned flow becomes one ok `MeasurementRecord` saved with `Store.save_measurements`, as the
runner saves a step: RTT flows get `rtt_ns` replies, TCP and UDP flows `throughput_bps` intervals
(UDP also `packets` and `lost_packets`), and each record's summary is computed from its own samples,
so the stored summaries and the samples agree. `samples` is the total over the campaign, shared
evenly among its flows. Values are drawn from a seeded generator, so two stores built with the same
arguments hold the same numbers.

Used by the bounded-memory tests (a few thousand samples) and by benchmarks/scale (10 million).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from vnetbench.layout import Layout, build_layout
from vnetbench.layout.summary import layout_summary
from vnetbench.plan import make_plan
from vnetbench.plan.steps import Step
from vnetbench.scenarios import get_scenario
from vnetbench.spec import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, Sample

SECOND_NS = 10**9
RTT_INTERVAL_NS = 50_000_000  # ping -i 0.05, as the quickstart's rtt measurement
# RTT by placement: a microsecond-scale bridge, a VXLAN hop, a shaped cross-site link (ns)
RTT_BASE_NS = {"same-host": 60_000, "same-site": 120_000, "cross-site": 2_500_000}
STARTED_UTC_NS = 1_764_000_000 * SECOND_NS


def quickstart_text() -> str:
    return get_scenario("quickstart").text


def write_campaign(
    store: Store,
    samples: int,
    campaign_id: str = "synthetic",
    spec_text: str | None = None,
    seed: int = 1,
) -> str:
    """Write one finished campaign with `samples` samples in all; returns its id."""
    spec = parse_spec(spec_text or quickstart_text(), "quickstart.yaml")
    plan = make_plan(spec, campaign_id, seed)
    layout = build_layout(spec.campaign, campaign_id)
    store.create_campaign(
        id=campaign_id,
        name=spec.campaign.name,
        status="finished",
        provider="local",
        spec_text=spec.text,
        spec_sha256=hashlib.sha256(spec.text.encode()).hexdigest(),
        spec_source="tests/helpers/synthetic.py",
        seed=seed,
        environment={"kernel": "synthetic", "cpu_count": 2},
        tool_versions={"iperf3": "3.12", "ping": "iputils 20221126"},
        created_utc_ns=STARTED_UTC_NS,
    )
    build_id = store.start_build(campaign_id, "synthetic", layout_summary(layout))
    store.finish_build(build_id, build_ns=100_000_000, teardown_ns=10_000_000)
    flows = [(step, flow) for step in plan.steps for flow in step.flows]
    rng = np.random.default_rng(seed)
    per_flow, extra = divmod(samples, len(flows))
    for step, records in _steps(campaign_id, flows, layout):
        for rec in records:
            index = flows.index((step, _flow_of(step, rec)))
            _fill(rec, per_flow + (1 if index < extra else 0), rng)
            rec.build_id = build_id
        store.save_measurements(records)
    return campaign_id


def _flow_of(step: Step, rec: MeasurementRecord) -> Any:
    return next(f for f in step.flows if f.key == rec.key)


def _steps(
    campaign_id: str, flows: list[tuple[Step, Any]], layout: Layout
) -> Iterator[tuple[Step, list[MeasurementRecord]]]:
    """Each step's flows as records without samples (one transaction per step, as the runner)."""
    done: set[str] = set()
    for step, _ in flows:
        if step.key in done:
            continue
        done.add(step.key)
        records = [
            MeasurementRecord(
                campaign_id=campaign_id,
                **step.record_fields(flow, layout),
                kind=step.kind,
                link_rate_bps=100_000_000,
                path_mtu=1500,
                expected_max_bps=95_700_000.0 if step.kind in ("tcp", "udp") else None,
                offered_bps=100_000_000.0 if step.kind == "udp" else None,
                tool="ping" if step.kind == "rtt" else "iperf3",
                started_utc_ns=STARTED_UTC_NS + step.seq * 60 * SECOND_NS,
                start_skew_ns=1000 if len(step.flows) > 1 else 0,
                start_offset_ns=offset * 500,
            )
            for offset, flow in enumerate(step.flows)
        ]
        yield step, records


def _fill(rec: MeasurementRecord, n: int, rng: np.random.Generator) -> None:
    """n samples and the summary they give (a UDP flow's n are its three metrics' intervals)."""
    if rec.kind == "rtt":
        base = RTT_BASE_NS[rec.placement]
        rtt = base + rng.gamma(2.0, base / 8, n)
        spikes = rng.random(n) < 0.002  # a few late replies, for the outlier policy to judge
        rtt[spikes] *= 20
        t = np.arange(n, dtype=np.int64) * RTT_INTERVAL_NS
        rec.samples = [
            Sample(int(ti), "rtt_ns", float(v), seq=i + 1)
            for i, (ti, v) in enumerate(zip(t, rtt, strict=True))
        ]
        rec.summary = {
            "rtt_mean_ns": float(rtt.mean()) if n else None,
            "sent_packets": float(n),
            "received_packets": float(n),
        }
        rec.duration_ns = int(n * RTT_INTERVAL_NS)
        return
    share = 95.0e6 / max(1, rec.group_size)
    n = n // 3 if rec.kind == "udp" else n
    tput = rng.normal(share, share * 0.02, n)
    t = np.arange(1, n + 1, dtype=np.int64) * SECOND_NS  # iperf3's interval ends
    rec.samples = [Sample(int(ti), "throughput_bps", float(v)) for ti, v in zip(t, tput, strict=True)]
    rec.summary = {"throughput_bps": float(tput.mean()) if n else None}
    rec.duration_ns = int(n * SECOND_NS)
    if rec.kind == "udp":
        packets = np.round(tput / (1470 * 8)).astype(np.int64)
        lost = rng.binomial(packets, 0.001)
        rec.samples += [Sample(int(ti), "packets", float(p)) for ti, p in zip(t, packets - lost, strict=True)]
        rec.samples += [Sample(int(ti), "lost_packets", float(x)) for ti, x in zip(t, lost, strict=True)]
        total = float(packets.sum())
        rec.summary |= {"loss_ratio": float(lost.sum()) / total if total else None}
