"""Diagnosis of the `fair` part's misses at 20 mbit: three cubic TCP flows for 30 s into one shaped
20 mbit link, each flow's share and Jain's index, in three side-by-side comparisons (each alternating
within every repetition, defaults otherwise):

  senders: one iperf3 with three streams (-P 3) vs three iperf3 processes into one node (fan-in
           through a Linux bridge, the shared 20 mbit link being the bridge's port to the receiver);
  queue:   iperf3 -P 3 over a direct 20 mbit link with the default queue (125 KB = 50 ms at 20 mbit)
           vs a 62.5 KB one (25 ms);
  kinds:   the `fair` part's own topology (run.py) with two of its pairs: the direct veth link vs
           the VXLAN link between two hosts, iperf3 -P 3 over each.
  window:  iperf3 -P 3 for 120 s over a direct 20 mbit link (the ONL study's long level; its short
           one was 10 s), each stream's share over the first 10, 30 and 60 s and over all 120 s of
           the same runs: how long three cubic flows take to share the link fairly.

  fair60:  run.py's `fair` part (all ten links: five kinds at 20 and 100 mbit) with 60 s flows
           instead of 30 s; writes fair60.json.

Usage (root):  .venv/bin/python benchmarks/fidelity/fairness.py [--reps 6] [--only NAME] [--reuse DB ...]
NAME: senders, queue, kinds (~7 min each at 6 repetitions; all three without --only), window
(~13 min at 6), fair60 (~25 min at 2). Raw stores in raw/; README.md has the results.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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

WINDOW = """\
name: fidelity-fair-window
topology:
  nodes: [{{name: va}}, {{name: vb}}]
  links: [{{name: direct, endpoints: [va, vb], rate: 20mbit}}]
measurements:
  - {{name: p3, kind: tcp, duration: 120s, omit: 2s, congestion: cubic, streams: 3}}
patterns: [{{kind: pairs, pairs: [[va, vb]], measurements: [p3]}}]
schedule: {{repetitions: {reps}}}
"""
WINDOWS_S = (10, 30, 60, 120)

LABELS = {  # comparison -> the sending node of a measurement -> what it stands for
    "senders": {"a1": "one iperf3 -P 3"},
    "queue": {"va": "default queue, iperf3 -P 3", "qa": "62.5 KB queue, iperf3 -P 3"},
    "kinds": {"va": "direct veth, iperf3 -P 3", "xa": "VXLAN, iperf3 -P 3"},
    "window": {"va": "direct veth, iperf3 -P 3, 120 s"},
}
ALL_PAIRS = "pairs: [[va, vb], [ba, bb], [oa, ob], [xa, xb], [da, db]]"


def kinds_spec(fidelity: Any, reps: int) -> str:
    """run.py's fair part at 20 mbit with the direct veth and VXLAN pairs only."""
    text = fidelity.fair_spec("20mbit", reps)
    assert ALL_PAIRS in text, "run.py's fair topology changed: update kinds_spec"
    return text.replace(ALL_PAIRS, "pairs: [[va, vb], [xa, xb]]")


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def met(share: np.ndarray) -> bool:
    """The issue's criterion for three flows: each 25-42 %, Jain's index >= 0.95."""
    return bool(share.min() >= 0.25 and share.max() <= 0.42 and jain(share) >= 0.95)


def window_shares(store: Any, cid: str, mid: int, seconds: int) -> np.ndarray:
    """Each stream's share of its mean receiver rate over the first `seconds` of the measured
    window (its 1 s intervals after the first, as run.py's stream_shares; all of them but the
    last for the whole run)."""
    samples = store.samples_frame(cid, ["throughput_bps"])
    s = samples[(samples["measurement_id"] == mid) & samples["stream"].notna()]
    rates = []
    for _, g in s.groupby("stream"):
        values = g.sort_values("t_ns")["value"].to_numpy(dtype=float)
        rates.append(values[1:seconds].mean() if seconds < len(values) else values[1:-1].mean())
    x = np.array(rates)
    return x / x.sum()


def run_window(fidelity: Any, text: str, reuse: list[Path]) -> None:
    """The window comparison: run it (or read stored runs, their repetitions one after the other),
    print it, write fair_window.json and fair_window.png."""
    if reuse:
        missing = [str(db) for db in reuse if not db.is_file()]
        if missing:  # Store() would create an empty one
            raise SystemExit(f"--reuse: no such store: {', '.join(missing)}")
        stores = [fidelity.Store(db) for db in reuse]
        runs = [(store, store.campaigns()[-1]["id"]) for store in stores]
    else:
        runs = [fidelity.run_spec(text, "fair-window")]
    reps: list[dict[str, Any]] = []
    for store, cid in runs:
        frame = store.measurements_frame(cid)
        for r in frame[frame["measurement"] == "p3"].sort_values("repetition").itertuples():
            rep: dict[str, Any] = {"campaign": cid, "repetition": int(r.repetition), "windows": {}}
            for w in WINDOWS_S:
                share = window_shares(store, cid, int(r.id), w)
                rep["windows"][str(w)] = {
                    "shares": [round(float(v), 4) for v in share],
                    "jain": round(jain(share), 4),
                    "met": met(share),
                }
            reps.append(rep)
            print(
                f"window {cid[:8]} rep {rep['repetition']}: "
                + "; ".join(f"{w} s: {v['shares']} Jain {v['jain']}" for w, v in rep["windows"].items()),
                flush=True,
            )
        store.close()
    summary = {
        "campaigns": sorted({rep["campaign"] for rep in reps}),
        "link": "direct veth, 20 mbit, default queue; iperf3 -P 3, cubic, omit 2 s",
        "met_of": {str(w): [sum(x["windows"][str(w)]["met"] for x in reps), len(reps)] for w in WINDOWS_S},
        "repetitions": reps,
    }
    for w, (k, n) in summary["met_of"].items():
        print(f"window: first {w} s: criterion met in {k} of {n}")
    (HERE / "fair_window.json").write_text(json.dumps(summary, indent=1) + "\n")
    window_figure(reps, HERE / "fair_window.png")


def window_figure(reps: list[dict[str, Any]], path: Path) -> None:
    """Each repetition's largest and smallest share against the window, with the criterion's band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.palette import BLACK, BLUE, NEUTRAL
    from vnetbench.report.cycle import use_palette

    use_palette()

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.axhspan(25, 42, color=NEUTRAL, alpha=0.15, label="criterion: each flow 25–42 %")
    for i, rep in enumerate(reps):
        hi = [100 * max(rep["windows"][str(w)]["shares"]) for w in WINDOWS_S]
        lo = [100 * min(rep["windows"][str(w)]["shares"]) for w in WINDOWS_S]
        ax.plot(WINDOWS_S, hi, "-^", color=BLACK, alpha=0.6, ms=4, label="largest share" if i == 0 else None)
        ax.plot(WINDOWS_S, lo, "-v", color=BLUE, alpha=0.6, ms=4, label="smallest share" if i == 0 else None)
    ax.axhline(100 / 3, color=NEUTRAL, lw=0.8, ls="--", label="equal share, 33.3 %")
    ax.set_xscale("log")
    ax.set_xticks(WINDOWS_S, [f"{w} s" for w in WINDOWS_S])
    ax.set_xlabel("measured window (first N seconds of one 120 s run)")
    ax.set_ylabel("share of the link, %")
    ax.set_title(f"Three cubic flows into one 20 mbit link: {len(reps)} repetitions", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_fair(fidelity: Any, seconds: int, reps: int) -> None:
    """run.py's fair part with flows of `seconds`: every link's shares per repetition."""
    rows = []
    for rate in ("20mbit", "100mbit"):
        text = fidelity.fair_spec(rate, reps)
        assert f"duration: {fidelity.FAIR_SECONDS}s" in text, "run.py's fair measurement changed"
        text = text.replace(f"duration: {fidelity.FAIR_SECONDS}s", f"duration: {seconds}s")
        store, cid = fidelity.run_spec(text, f"fair{seconds}-{rate}")
        frame = store.measurements_frame(cid)
        shares = fidelity.stream_shares(store, cid, frame)
        kind_of = {src: kind for kind, (src, _) in fidelity.KINDS.items()}
        for r in frame.sort_values(["src", "repetition"]).itertuples():
            x = np.array(shares.get(int(r.id), []))
            share = x / x.sum() if len(x) == 3 else np.array([np.nan] * 3)
            row = {
                "kind": kind_of[r.src],
                "rate": rate,
                "repetition": int(r.repetition),
                "status": r.status,
                "shares": [round(float(v), 4) for v in share],
                "jain": round(jain(share), 4),
                "met": len(x) == 3 and met(share),
            }
            rows.append(row)
            print(f"fair{seconds} {row}", flush=True)
        store.close()
    links = sorted({(row["kind"], row["rate"]) for row in rows})
    all_met = [
        link for link in links if all(row["met"] for row in rows if (row["kind"], row["rate"]) == link)
    ]
    print(f"fair{seconds}: criterion met on {len(all_met)} of {len(links)} links in every repetition")
    summary = {"seconds": seconds, "links_met": [len(all_met), len(links)], "rows": rows}
    (HERE / f"fair{seconds}.json").write_text(json.dumps(summary, indent=1) + "\n")


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
        ok = met(share)
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
    ap.add_argument("--only", choices=[*LABELS, "fair60"])
    ap.add_argument(
        "--reuse",
        type=Path,
        nargs="+",
        default=[],
        help="window: summarise these stored runs instead of running one",
    )
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
    if args.only == "fair60":  # not part of a plain run: ~25 min at 2 repetitions
        run_fair(fidelity, 60, args.reps)
    if args.only == "window":  # not part of a plain run: 2 min per repetition
        run_window(fidelity, WINDOW.format(reps=args.reps), args.reuse)


if __name__ == "__main__":
    main()
