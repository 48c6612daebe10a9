"""Diagnosis of the `fair` part's misses at 20 mbit: three cubic TCP flows for 30 s into one shaped
20 mbit link, each flow's share and Jain's index, in three side-by-side comparisons (each alternating
within every repetition, defaults otherwise):

  senders: one iperf3 with three streams (-P 3) vs three iperf3 processes into one node (fan-in
           through a Linux bridge, the shared 20 mbit link being the bridge's port to the receiver);
  queue:   iperf3 -P 3 over a direct 20 mbit link with the default queue (125 KB = 50 ms at 20 mbit)
           vs a 62.5 KB one (25 ms);
  kinds:   the `fair` part's own topology (run.py) with two of its pairs: the direct veth link vs
           the VXLAN link between two hosts, iperf3 -P 3 over each.

Usage (root):  .venv/bin/python benchmarks/fidelity/fairness.py [--reps 6] [--only senders|queue|kinds]
~7 min per comparison at 6 repetitions; raw stores in raw/. README.md has the results.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
FLOW = "kind: tcp, duration: 30s, omit: 2s, congestion: cubic"

SENDERS = """\
name: fidelity-fair-senders
topology:
  nodes: [{{name: a1}}, {{name: a2}}, {{name: a3}}, {{name: b}}]
  switches: [{{name: sw}}]
  links:
    - {{endpoints: [a1, sw], rate: 1gbit}}
    - {{endpoints: [a2, sw], rate: 1gbit}}
    - {{endpoints: [a3, sw], rate: 1gbit}}
    - {{name: shared, endpoints: [sw, b], rate: 20mbit}}
measurements:
  - {{name: p3, {flow}, streams: 3}}
  - {{name: one, {flow}}}
patterns:
  - {{kind: pairs, pairs: [[a1, b]], measurements: [p3]}}
  - {{kind: fan-in, sources: [a1, a2, a3], destination: b, alone: false, measurements: [one]}}
schedule: {{repetitions: {reps}}}
"""

QUEUE = """\
name: fidelity-fair-queue
topology:
  nodes: [{{name: va}}, {{name: vb}}, {{name: qa}}, {{name: qb}}]
  links:
    - {{name: default-queue, endpoints: [va, vb], rate: 20mbit}}
    - {{name: short-queue, endpoints: [qa, qb], rate: 20mbit, queue: 62500}}
measurements:
  - {{name: p3, {flow}, streams: 3}}
patterns:
  - {{kind: pairs, pairs: [[va, vb], [qa, qb]], measurements: [p3]}}
schedule: {{repetitions: {reps}}}
"""


LABELS = {  # comparison -> the sending node of a measurement -> what it stands for
    "senders": {"a1": "one iperf3 -P 3"},
    "queue": {"va": "default queue, iperf3 -P 3", "qa": "62.5 KB queue, iperf3 -P 3"},
    "kinds": {"va": "direct veth, iperf3 -P 3", "xa": "VXLAN, iperf3 -P 3"},
}
ALL_PAIRS = "pairs: [[va, vb], [ba, bb], [oa, ob], [xa, xb], [da, db]]"


def kinds_spec(fidelity: Any, reps: int) -> str:
    """run.py's fair part at 20 mbit with the direct veth and VXLAN pairs only."""
    text = fidelity.fair_spec("20mbit", reps)
    assert ALL_PAIRS in text, "run.py's fair topology changed: update kinds_spec"
    return text.replace(ALL_PAIRS, "pairs: [[va, vb], [xa, xb]]")


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def run(fidelity: Any, name: str, text: str) -> None:
    store, cid = fidelity.run_spec(text, f"fair-{name}")
    frame = store.measurements_frame(cid)
    as_tcp3 = frame.assign(measurement=frame["measurement"].replace({"p3": "tcp3"}))
    streams = fidelity.stream_shares(store, cid, as_tcp3)  # one iperf3's streams, after the first interval
    # (repetition, label, per-flow rates): one iperf3's three streams, or the fan-in's three processes
    groups = [
        (r.repetition, LABELS[name][r.src], np.array(streams[int(r.id)]))
        for r in frame[frame["measurement"] == "p3"].itertuples()
    ] + [
        (rep, "three iperf3 processes", g["throughput_bps"].to_numpy(dtype=float))
        for rep, g in frame[frame["measurement"] == "one"].groupby("repetition")
    ]
    met: dict[str, list[bool]] = {}
    for rep, label, x in sorted(groups, key=lambda group: (group[0], group[1])):
        share = x / x.sum()
        ok = bool(share.min() >= 0.25 and share.max() <= 0.42 and jain(share) >= 0.95)
        met.setdefault(label, []).append(ok)
        print(
            f"{name} rep {rep} {label}: {np.round(100 * share, 1).tolist()} % Jain {jain(share):.3f} "
            f"{'met' if ok else 'MISSED'}",
            flush=True,
        )
    for label, oks in met.items():
        print(f"{name}: {label}: criterion met in {sum(oks)} of {len(oks)}")
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--only", choices=list(LABELS))
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("fidelity_run", HERE / "run.py")
    assert spec is not None and spec.loader is not None
    fidelity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fidelity)
    specs = {
        "senders": SENDERS.format(flow=FLOW, reps=args.reps),
        "queue": QUEUE.format(flow=FLOW, reps=args.reps),
        "kinds": kinds_spec(fidelity, args.reps),
    }
    for name, text in specs.items():
        if args.only in (None, name):
            run(fidelity, name, text)


if __name__ == "__main__":
    main()
