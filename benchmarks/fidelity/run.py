#!/usr/bin/env python3
"""Fidelity of emulated links (issue #13): does a link behave like the network it stands for?

Runs real campaigns with vnetbench's defaults (shaping: network, default queue, priming) on the
local provider and checks the issue's "Done when":

  matrix  5 link kinds (direct veth, Linux bridge, userspace OVS, VXLAN across sites, a 10 ms
          delay-node link) x 20 and 100 mbit: UDP offered at 1, 1.5, 2, 3 x the link (loss < 1 %,
          else 1 - 1/k +- 2 pp), TCP cubic alone (within 2 % of the overhead model), three TCP
          flows into the link (each 25-42 %, Jain >= 0.95)
  fair    the same five kinds x 20 and 100 mbit: three TCP flows into the link measured for 30 s
          (each 25-42 %, Jain >= 0.95); the matrix's 10 s three-flow runs are kept beside it, since
          over 10 s the shares of cubic flows in one drop-tail queue still swing (see README)
  lossy   20 UDP measurements in a row over `loss: 0.05` (+- 1 pp) and over `loss: 0.20` (+- 2 pp)
  load    30 TCP measurements (omit 1 s, 5 s) on 100 mbit while another process keeps a core busy:
          all within 2 % of the model, none above 101 %
  rtt     30 pings over 2 x 20 ms: each within 40.0-40.6 ms, mean within 0.3 ms of the median

Beside each number it records what the machine did (the receiver socket's overflows, the sender's
shortfall from the offered rate), from the campaign's own telemetry, so a miss can be told apart
from the link's behaviour. Raw stores go to raw/ (not in git); results.csv (one row per
measurement), summary.json (criteria) and fidelity.png are rewritten in OUT (default: this
directory; another machine's run goes to its own, e.g. --out benchmarks/fidelity/amd-2026-11-30).

Usage (root):  .venv/bin/python benchmarks/fidelity/run.py [--reps N] [--parts matrix,fair,lossy,load,rtt]
`--redraw` draws OUT/fidelity.png again from OUT/results.csv, measuring nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis.loss import loss_analysis
from vnetbench.kinds.overhead import tcp_efficiency
from vnetbench.palette import NEUTRAL
from vnetbench.providers.local import LocalProvider
from vnetbench.run.campaign import create_campaign, run_campaign
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw"
KINDS = {
    "veth": ("va", "vb"),
    "bridge": ("ba", "bb"),
    "ovs": ("oa", "ob"),
    "vxlan": ("xa", "xb"),
    "delay": ("da", "db"),
}
FACTORS = {"udp1": 1.0, "udp15": 1.5, "udp2": 2.0, "udp3": 3.0}

MATRIX = """\
name: fidelity-{rate}
description: the five link kinds at {rate}, defaults (shaping network)
topology:
  sites: [s1, s2]
  hosts: [{{name: h1, site: s1}}, {{name: h2, site: s2}}]
  nodes:
    - {{name: va, host: h1}}
    - {{name: vb, host: h1}}
    - {{name: ba, host: h1}}
    - {{name: bb, host: h1}}
    - {{name: oa, host: h1}}
    - {{name: ob, host: h1}}
    - {{name: xa, host: h1}}
    - {{name: xb, host: h2}}
    - {{name: da, host: h1}}
    - {{name: db, host: h1}}
  switches: [{{name: lsw, host: h1}}, {{name: osw, host: h1, kind: ovs}}]
  links:
    - {{name: veth, endpoints: [va, vb], rate: {rate}}}
    - {{name: bridge-a, endpoints: [ba, lsw], rate: {rate}}}
    - {{name: bridge-b, endpoints: [lsw, bb], rate: {rate}}}
    - {{name: ovs-a, endpoints: [oa, osw], rate: {rate}}}
    - {{name: ovs-b, endpoints: [osw, ob], rate: {rate}}}
    - {{name: vxlan, endpoints: [xa, xb], rate: {rate}, overlay: vxlan}}
    - {{name: delay, endpoints: [da, db], rate: {rate}, delay: 10ms}}
measurements:
  - {{name: udp1, kind: udp, duration: 5s, rate: link}}
  - {{name: udp15, kind: udp, duration: 5s, rate: link, rate_factor: 1.5}}
  - {{name: udp2, kind: udp, duration: 5s, rate: link, rate_factor: 2}}
  - {{name: udp3, kind: udp, duration: 5s, rate: link, rate_factor: 3}}
  - {{name: tcp, kind: tcp, duration: 10s, omit: 2s, congestion: cubic}}
  - {{name: tcp3, kind: tcp, duration: 10s, omit: 2s, congestion: cubic, streams: 3}}
patterns:
  - kind: pairs
    pairs: [[va, vb], [ba, bb], [oa, ob], [xa, xb], [da, db]]
    measurements: [udp1, udp15, udp2, udp3, tcp, tcp3]
schedule: {{repetitions: {reps}}}
"""

FAIR_SECONDS = 30
FAIR_MEASUREMENT = (
    f"  - {{{{name: tcp3, kind: tcp, duration: {FAIR_SECONDS}s, omit: 2s, congestion: cubic, streams: 3}}}}\n"
)


def fair_spec(rate: str, reps: int) -> str:
    """The matrix's topology and pairs with the three-flow measurement alone, measured for 30 s."""
    head, _, rest = MATRIX.partition("measurements:\n")
    _, _, tail = rest.partition("patterns:\n")
    tail = tail.replace("measurements: [udp1, udp15, udp2, udp3, tcp, tcp3]", "measurements: [tcp3]")
    text = head + "measurements:\n" + FAIR_MEASUREMENT + "patterns:\n" + tail
    return text.replace("name: fidelity-{rate}", "name: fidelity-fair-{rate}").format(rate=rate, reps=reps)


LOSSY = """\
name: fidelity-loss-{pct}
description: UDP over a 20 mbit link with a 10 ms delay node losing {pct} % each way
topology:
  nodes: [{{name: a}}, {{name: b}}]
  links: [{{name: lossy, endpoints: [a, b], rate: 20mbit, delay: 10ms, loss: {loss}}}]
measurements:
  # omit: see docs/drivers.md (a resent control message delays iperf3's start; it then bursts)
  - {{name: udp, kind: udp, duration: 5s, omit: 1s, rate: 10mbit}}
patterns: [{{kind: pairs, pairs: [[a, b]], measurements: [udp]}}]
schedule: {{repetitions: 20}}
"""

LOAD = """\
name: fidelity-tcp-load
description: TCP on 100 mbit while another process keeps one core busy
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: link, endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: tcp, kind: tcp, duration: 5s, omit: 1s, congestion: cubic}
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [tcp]}]
schedule: {repetitions: 30}
"""

RTT = """\
name: fidelity-rtt
description: 30 pings over 2 x 20 ms
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: long, endpoints: [a, b], delay: 20ms}]
measurements:
  - {name: rtt, kind: rtt, count: 30, interval: 0.2s}
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [rtt]}]
"""


def run_spec(text: str, name: str) -> tuple[Store, str]:
    RAW.mkdir(exist_ok=True)
    db = RAW / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}.db"
    store = Store(db)
    started = create_campaign(parse_spec(text, f"{name}.yaml"), store)
    cid = started.campaign_id
    provider = LocalProvider(cid, store.location, tools=("iperf3", "ping"))
    summary = run_campaign(store, cid, provider, plan=started.plan)
    if summary.interrupted:
        raise SystemExit(f"{name}: interrupted; what was measured is in {db}")
    retried = summary.setup_failures
    print(f"{name}: {summary.flows_ok} ok, {summary.flows_failed} failed, {retried} setups re-run")
    return store, cid


def machine_notes(store: Store, cid: str) -> dict[int, dict[str, Any]]:
    """Per measurement id: the verdict of loss localization and the receiver socket's overflows."""
    out: dict[int, dict[str, Any]] = {}
    for loc in loss_analysis(store, cid).get("loss_localization", []):
        rcvbuf = 0.0
        shaper = 0.0
        node = 0.0
        for stage in loc["stages"]:
            for e in stage["explainers"]:
                if e["counter"].startswith("Udp.RcvbufErrors"):
                    rcvbuf += e["packets"]
                elif e["cause"] == "qdisc drop":
                    shaper += e["packets"]
                elif e["cause"].startswith("delay node"):
                    node += e["packets"]
        out[int(loc["measurement_id"])] = {
            "cause": loc.get("cause"),
            "rcvbuf_drops": rcvbuf,
            "shaper_drops": shaper,
            "delay_node_drops": node,
        }
    return out


def stream_shares(store: Store, cid: str, frame: pd.DataFrame) -> dict[int, list[float]]:
    """tcp3: each stream's mean receiver rate over the window (intervals after the first)."""
    samples = store.samples_frame(cid, ["throughput_bps"])
    out = {}
    for mid in frame.loc[frame["measurement"] == "tcp3", "id"]:
        s = samples[(samples["measurement_id"] == mid) & samples["stream"].notna()]
        rates = []
        for _, g in s.groupby("stream"):
            g = g.sort_values("t_ns")
            rates.append(float(g["value"].iloc[1:-1].mean()) if len(g) > 3 else float(g["value"].mean()))
        out[int(mid)] = rates
    return out


def base_row(part: str, r: Any, rate_bps: float) -> dict[str, Any]:
    """What every row of the matrix and fair parts says of its measurement."""
    kind_of = {src: k for k, (src, _) in KINDS.items()}
    return {
        "part": part,
        "kind": kind_of[r.src],
        "rate_mbit": rate_bps / 1e6,
        "measurement": r.measurement,
        "repetition": r.repetition,
        "status": r.status,
    }


def part_matrix(reps: int) -> list[dict[str, Any]]:
    rows = []
    for rate in ("20mbit", "100mbit"):
        rate_bps = int(rate.removesuffix("mbit")) * 1e6
        store, cid = run_spec(MATRIX.format(rate=rate, reps=reps), f"matrix-{rate}")
        frame = store.measurements_frame(cid)
        notes = machine_notes(store, cid)
        shares = stream_shares(store, cid, frame)
        for r in frame.itertuples():
            row = base_row("matrix", r, rate_bps)
            if r.measurement in FACTORS:
                k = FACTORS[r.measurement]
                sent_of_offered = r.sender_throughput_bps / r.offered_bps
                row |= {
                    "k": k,
                    "loss": r.loss_ratio,
                    "expected_loss": 1 - 1 / k,
                    # what the link can do with what actually reached it: a sender short of the
                    # offered rate (this machine's CPU) makes 1 - 1/k the wrong yardstick
                    "expected_loss_sent": max(0.0, 1 - 1 / (k * sent_of_offered)),
                    "sent_of_offered": sent_of_offered,
                    **notes.get(int(r.id), {}),
                }
            elif r.measurement == "tcp":
                row["of_model"] = r.throughput_bps / tcp_efficiency(1500).goodput_bps(rate_bps)
            else:
                x = np.array(shares.get(int(r.id), []))
                if len(x) == 3:
                    row |= share_row(x)
                    row["of_model"] = r.throughput_bps / tcp_efficiency(1500).goodput_bps(rate_bps)
            rows.append(row)
        store.close()
    return rows


def share_row(x: np.ndarray) -> dict[str, Any]:
    share = x / x.sum()
    return {
        "shares": json.dumps([round(v, 4) for v in share]),
        "min_share": float(share.min()),
        "max_share": float(share.max()),
        "jain": float(x.sum() ** 2 / (len(x) * (x**2).sum())),
    }


def part_fair(reps: int) -> list[dict[str, Any]]:
    rows = []
    for rate in ("20mbit", "100mbit"):
        rate_bps = int(rate.removesuffix("mbit")) * 1e6
        store, cid = run_spec(fair_spec(rate, reps), f"fair-{rate}")
        frame = store.measurements_frame(cid)
        shares = stream_shares(store, cid, frame)
        for r in frame.itertuples():
            x = np.array(shares.get(int(r.id), []))
            row = base_row("fair", r, rate_bps) | {
                "seconds": FAIR_SECONDS,
                "of_model": r.throughput_bps / tcp_efficiency(1500).goodput_bps(rate_bps),
            }
            if len(x) == 3:
                row |= share_row(x)
            rows.append(row)
        store.close()
    return rows


def part_lossy() -> list[dict[str, Any]]:
    rows = []
    for loss in (0.05, 0.20):
        store, cid = run_spec(LOSSY.format(loss=loss, pct=int(loss * 100)), f"loss-{int(loss * 100)}")
        everything = store.measurements_frame(cid, latest_only=False)
        notes = machine_notes(store, cid)
        for r in store.measurements_frame(cid).itertuples():
            attempts = int((everything["key"] == r.key).sum())
            rows.append(
                {
                    "part": "lossy",
                    "link_loss": loss,
                    "repetition": r.repetition,
                    "status": r.status,
                    "attempts": attempts,
                    "loss": r.loss_ratio,
                    **notes.get(int(r.id), {}),
                }
            )
        store.close()
    return rows


def part_load() -> list[dict[str, Any]]:
    # "another process keeps one core busy": a plain busy loop (no extra package needed)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        store, cid = run_spec(LOAD, "tcp-load")
    finally:
        spinner.kill()
        spinner.wait()
    model = tcp_efficiency(1500).goodput_bps(100e6)
    rows = [
        {
            "part": "load",
            "repetition": r.repetition,
            "status": r.status,
            "of_model": r.throughput_bps / model,
            "iperf3_of_model": r.iperf3_throughput_bps / model,
        }
        for r in store.measurements_frame(cid).itertuples()
    ]
    store.close()
    return rows


def part_rtt() -> list[dict[str, Any]]:
    store, cid = run_spec(RTT, "rtt")
    samples = store.samples_frame(cid, ["rtt_ns"]).sort_values("seq")
    rows = [{"part": "rtt", "seq": int(s.seq), "rtt_ms": s.value / 1e6} for s in samples.itertuples()]
    store.close()
    return rows


def criteria(df: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    m = df[df["part"] == "matrix"]
    if len(m):
        for (kind, rate), g in m.groupby(["kind", "rate_mbit"]):
            udp = g[g["k"].notna()]
            tcp = g[g["measurement"] == "tcp"]
            tcp3 = g[g["measurement"] == "tcp3"]
            at1 = udp[udp["k"] == 1]
            over = udp[udp["k"] > 1]
            out[f"{kind} {rate:.0f} mbit"] = {
                "udp 1x loss max": float(at1["loss"].max()),
                "udp 1x < 1 %": bool((at1["loss"] < 0.01).all()),
                "udp k>1 |loss - (1-1/k)| max pp": float(
                    100 * (over["loss"] - over["expected_loss"]).abs().max()
                ),
                "udp k>1 within 2 pp": bool(((over["loss"] - over["expected_loss"]).abs() <= 0.02).all()),
                "udp k>1 |loss - (1-R/sent)| max pp": float(
                    100 * (over["loss"] - over["expected_loss_sent"]).abs().max()
                ),
                "udp sender < 95 % of offered (runs)": int((udp["sent_of_offered"] < 0.95).sum()),
                "tcp of model [min, max]": [float(tcp["of_model"].min()), float(tcp["of_model"].max())],
                "tcp within 2 %": bool(((tcp["of_model"] - 1).abs() <= 0.02).all()),
                "tcp3 shares [min, max]": [float(tcp3["min_share"].min()), float(tcp3["max_share"].max())],
                "tcp3 jain min": float(tcp3["jain"].min()),
                "tcp3 ok": bool(
                    ((tcp3["min_share"] >= 0.25) & (tcp3["max_share"] <= 0.42) & (tcp3["jain"] >= 0.95)).all()
                ),
            }
    fa = df[df["part"] == "fair"]
    for (kind, rate), g in fa.groupby(["kind", "rate_mbit"]) if len(fa) else ():
        met = (g["min_share"] >= 0.25) & (g["max_share"] <= 0.42) & (g["jain"] >= 0.95)
        out[f"{kind} {rate:.0f} mbit, three TCP flows over {FAIR_SECONDS} s"] = {
            "shares [min, max]": [float(g["min_share"].min()), float(g["max_share"].max())],
            "jain min": float(g["jain"].min()),
            "total of model [min, max]": [float(g["of_model"].min()), float(g["of_model"].max())],
            "ok": bool(met.all()) and len(g) > 0,
        }
    lo = df[df["part"] == "lossy"]
    for loss, tol in ((0.05, 0.01), (0.20, 0.02)) if len(lo) else ():
        g = lo[lo["link_loss"] == loss]
        if len(g):
            out[f"lossy {loss:.2f}"] = {
                "all succeeded": bool((g["status"] == "ok").all()) and len(g) == 20,
                "loss [min, max]": [float(g["loss"].min()), float(g["loss"].max())],
                "within tolerance": bool(((g["loss"] - loss).abs() <= tol).all()),
                "setup retries": int((g["attempts"] - 1).sum()),
                "receiver socket overflows (max per run)": float(g["rcvbuf_drops"].max()),
            }
    ld = df[df["part"] == "load"]
    if len(ld):
        out["tcp under load"] = {
            "of model [min, median, max]": [
                float(ld["of_model"].min()),
                float(ld["of_model"].median()),
                float(ld["of_model"].max()),
            ],
            "all within 2 %": bool(((ld["of_model"] - 1).abs() <= 0.02).all()),
            "none above 101 %": bool((ld["of_model"] <= 1.01).all()),
            "iperf3's own figure [min, max]": [
                float(ld["iperf3_of_model"].min()),
                float(ld["iperf3_of_model"].max()),
            ],
        }
    rt = df[df["part"] == "rtt"]
    if len(rt):
        x = rt["rtt_ms"]
        out["rtt 2 x 20 ms"] = {
            "n": len(x),
            "[min, median, mean, max] ms": [
                float(x.min()),
                float(x.median()),
                float(x.mean()),
                float(x.max()),
            ],
            "every reply within 40.0-40.6 ms": bool(((x >= 40.0) & (x <= 40.6)).all()),
            "mean within 0.3 ms of median": bool(abs(x.mean() - x.median()) <= 0.3),
        }
    return out


def figure(df: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.report.cycle import use_palette

    use_palette()  # the rates in the palette's blue and black; 1 − 1/k grey dashed
    if "k" not in df:
        return
    m = df[(df["part"] == "matrix") & df["k"].notna()]
    fig, axes = plt.subplots(1, len(KINDS), figsize=(3.2 * len(KINDS), 3.2), sharey=True)
    ks = np.linspace(1, 3.2, 50)
    for ax, kind in zip(axes, KINDS, strict=True):
        ax.plot(ks, 100 * (1 - 1 / ks), color=NEUTRAL, ls="--", lw=1, label="1 − 1/k")
        # the rates' points fall on one another: 20 mbit filled circles inside hollow 100 mbit squares
        for rate, marker, size, fill in ((20.0, "o", 4, "full"), (100.0, "s", 8, "none")):
            g = m[(m["kind"] == kind) & (m["rate_mbit"] == rate)]
            ax.plot(
                g["k"], 100 * g["loss"], marker, ms=size, fillstyle=fill, alpha=0.8, label=f"{rate:.0f} mbit"
            )
        ax.set_title(kind)
        ax.set_xlabel("offered / link rate")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("UDP loss (%)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Loss vs offered/link rate, shaping: network (each point one 5 s measurement)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--parts", default="matrix,fair,lossy,load,rtt")
    ap.add_argument("--out", type=Path, default=HERE, help="where results.csv, summary.json, fidelity.png go")
    ap.add_argument(
        "--redraw", action="store_true", help="draw OUT/fidelity.png from OUT/results.csv; measure nothing"
    )
    args = ap.parse_args()
    if args.redraw:
        figure(pd.read_csv(args.out / "results.csv"), args.out / "fidelity.png")
        return 0
    parts = args.parts.split(",")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    rows: list[dict[str, Any]] = []
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "results.csv"
    if csv.exists() and set(parts) != {"matrix", "fair", "lossy", "load", "rtt"}:
        old = pd.read_csv(csv)
        rows += old[~old["part"].isin(parts)].to_dict("records")  # keep the parts not re-run
    for part in parts:
        rows += {
            "matrix": lambda: part_matrix(args.reps),
            "fair": lambda: part_fair(args.reps),
            "lossy": part_lossy,
            "load": part_load,
            "rtt": part_rtt,
        }[part]()
    df = pd.DataFrame(rows)
    df.to_csv(csv, index=False)
    summary = {
        "run": {"started": started, "parts": parts, "loadavg_before": load_before, "reps": args.reps},
        "criteria": criteria(df),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    figure(df, args.out / "fidelity.png")
    print(json.dumps(summary["criteria"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
