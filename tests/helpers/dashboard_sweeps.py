"""A real SQLite store with results shaped like openstack-bridges (a8dc3539), for the dashboard's sweep
and line tests: a packet-rate sweep of a Linux bridge whose fabric passes 60 K packets/s, measured alone,
beside a background flow (lb-bg) and by two tenants at once (lb-2tenants), three repetitions and the
start of a fourth, and a plain veth swept once. Losses follow from a knee per packet size written here."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from tests.helpers.dashboard_stores import SPEC as PAIRS_SPEC
from tests.helpers.dashboard_stores import record
from tests.helpers.stores import campaign_store

SPEC = """\
name: bridges
topology:
  hosts: [{name: cn}]
  nodes: [{name: lb-s1}, {name: lb-r1}, {name: lb-s2}, {name: lb-r2}, {name: veth-s}, {name: veth-r}]
  switches: [{name: lb-in, kind: linux-bridge}, {name: lb-out, kind: linux-bridge}]
  links:
    - {name: lb-fabric, endpoints: [lb-in, lb-out], pps: 60000}
    - {endpoints: [lb-s1, lb-in]}
    - {endpoints: [lb-out, lb-r1], rate: 1gbit}
    - {endpoints: [lb-s2, lb-in]}
    - {endpoints: [lb-out, lb-r2], rate: 1gbit}
    - {endpoints: [veth-s, veth-r], rate: 1gbit}
measurements:
  - {name: sweep, kind: pps, rates: [1000, 10000, 30000, 60000, 100000, 200000], sizes: [18, 1472], duration: 1s}
  - {name: bg-lb, kind: background, pps: 20000, size: 1472, pairs: [[lb-s2, lb-r2]]}
patterns:
  - {name: alone, kind: pairs, pairs: [[lb-s1, lb-r1], [veth-s, veth-r]], measurements: [sweep]}
  - {name: lb-bg, kind: pairs, pairs: [[lb-s1, lb-r1]], measurements: [sweep], background: [bg-lb]}
  - name: lb-2tenants
    kind: parallel
    pairs: [[lb-s1, lb-r1], [lb-s2, lb-r2]]
    alone: false
    measurements: [sweep]
schedule:
  repetitions: 3
"""
RATES = [1000, 10000, 30000, 60000, 100000, 200000]
SIZES = [18, 1472]
FABRIC_PPS = 60000


def _loss(knee: int, pps: int) -> float:
    """Nothing lost up to the knee; beyond it, what the offered rate exceeds the knee by."""
    return 0.0 if pps <= knee else 1 - knee / pps


BACKGROUND_PPS = 20000  # bg-lb: 20 K pps of 1472 bytes beside lb-bg's points (235.5 Mbit/s)


class SweepWriter:
    def __init__(self, store) -> None:
        self.store, self.seq = store, 0

    def sweep(self, rep: int, pattern: str, src: str, dst: str, knees: dict[int, int], **kw) -> None:
        """One repetition's sweep of a pair, sizes outer and rates ascending as the plan orders them;
        `knees`: the highest rate each size passes. `points` limits it to the first n points; a point's
        step key is the same for every flow of the pattern at that point (tenants share their steps),
        and with `background` a bg-lb flow (lb-s2→lb-r2) runs in each of them."""
        group_kind = kw.get("group_kind", "single")
        fabric = kw.get("fabric", FABRIC_PPS)
        points = [(size, pps) for size in SIZES for pps in RATES][: kw.get("points")]
        for size, pps in points:
            step = f"r{rep:03d}/{pattern}/sweep/s{size}/p{pps}"
            loss = _loss(knees[size], pps)
            summary = {
                "loss_ratio": loss,
                "target_pps": float(pps),
                "achieved_pps": float(pps),
                "received_pps": pps * (1 - loss),
                "throughput_bps": pps * (1 - loss) * size * 8,
            }
            if fabric:
                summary["path_pps_limit"] = float(fabric)
            key = f"r{rep:03d}/{pattern}/sweep/{src}>{dst}/s{size}/p{pps}"
            self._save(rep, "sweep", src, dst, summary, group_kind, step, key, pattern, size, pps)
            if kw.get("background"):
                bg = {"target_pps": float(BACKGROUND_PPS), "loss_ratio": 0.0, "throughput_bps": 235.5e6}
                self._save(rep, "bg-lb", "lb-s2", "lb-r2", bg, "background", step, f"{step}/bg", pattern,
                           1472, BACKGROUND_PPS)  # fmt: skip

    def _save(self, rep, measurement, src, dst, summary, group_kind, step, key, pattern, size, pps) -> None:
        base = record("o1", self.seq, rep, measurement, src, dst, summary, group_kind=group_kind)
        self.store.save_measurements(
            [
                replace(
                    base,
                    key=key,
                    step_key=step,
                    kind="pps" if measurement == "sweep" else "background",
                    pattern=pattern,
                    offered_bps=float(pps * size * 8),
                    expected_max_bps=1e9 * size / (size + 42),  # a 1 gbit link counting L2 frames
                )
            ]
        )
        self.seq += 1


def sweep_store(path: Path) -> None:
    """The campaign 'o1' (running): see the module's docstring."""
    store = campaign_store(path, "o1", "running", spec_text=SPEC)
    w = SweepWriter(store)
    for rep in (1, 2, 3):
        w.sweep(rep, "alone", "lb-s1", "lb-r1", {18: 60000, 1472: 60000})
        # beside the background flow: 30 K pps; in repetition 3 the 1472-byte sweep passes only 10 K
        knees = {18: 30000, 1472: 10000 if rep == 3 else 30000}
        w.sweep(rep, "lb-bg", "lb-s1", "lb-r1", knees, background=True)
        for tenant in ("1", "2"):
            knees = {18: 30000, 1472: 30000}
            w.sweep(rep, "lb-2tenants", f"lb-s{tenant}", f"lb-r{tenant}", knees, group_kind="parallel")
    # repetition 4 has begun: two points of the alone sweep, the first of them lossy
    w.sweep(4, "alone", "lb-s1", "lb-r1", {18: 0, 1472: 0}, points=2)
    # a plain veth swept once (one complete sweep, nothing earlier): no switch, a 1 gbit link
    w.sweep(1, "alone", "veth-s", "veth-r", {18: 200000, 1472: 60000}, fabric=None)
    store.close()


def mixed_patterns_store(path: Path) -> None:
    """The campaign 'c1': a→b tcp measured by two patterns in turn, 20 runs each ('pairs' at 100 Mbit/s,
    80 from its 11th run on; 'slow' at 50 Mbit/s; 0.5 % noise), and by 'rare' in runs 1, 6, 11, 16."""
    rng = np.random.default_rng(5)
    store = campaign_store(path, "c1", "finished", spec_text=PAIRS_SPEC)
    rows, seq = [], 0
    for run in range(20):
        for pattern, level in (("pairs", 100e6 if run < 10 else 80e6), ("slow", 50e6)):
            rows.append((seq, run + 1, pattern, level * (1 + 0.005 * rng.standard_normal())))
            seq += 1
        if run % 5 == 0:
            rows.append((seq, run + 1, "rare", 70e6))
            seq += 1
    store.save_measurements(
        [
            replace(record("c1", s, rep, "tcp", "a", "b", {"throughput_bps": v}), key=f"k{s}", pattern=p)
            for s, rep, p, v in rows
        ]
    )
    store.close()
