#!/usr/bin/env python3
"""Delay nodes (issue 7): accuracy, throughput and the bandwidth-delay product, on this machine.

Everything runs through the local provider with `emulator: delay-node` (this kernel has no netem),
as a campaign would build it. Each part is repeated (--reps) and compared side by side in one run:

1. accuracy: 50 ms each way -> RTT (vnb-probe rtt, 2000 probes; ping 300 probes for its p99);
   `jitter: 10ms normal` (reorder allowed) -> one-way delays of 5000 probes against N(50 ms, 10 ms)
   with a KS test; `loss: 1%` -> loss over 100 000 packets.
2. throughput: constant-rate UDP (vnb-probe send/recv; STREAMS sender processes started together)
   of 1500-byte frames at 90 000 pps (1.08 Gbit/s) and 64-byte frames at 300 000 pps, through a
   delay node adding 10 ms and over a bare veth (the generator alone), alternating; the node's
   throughput as a ratio of the generator's in the same repetition; the node's own report gives
   its drops by cause and CPU per frame (user and system).
   TCP (iperf3, 5 s) through the node and bare for reference.
3. BDP: iperf3 TCP over a 10 Mbit/s link with 25 ms and with 120 ms each way (ExoGENI Table 12:
   BBN-UH 50 ms RTT vs BBN-NICTA 238 ms RTT), windows 160 KB and 256 KB (iperf3 -w) and autotuned;
   the window the receiver advertised (iperf3's max_snd_wnd) is recorded: Linux advertises more
   than -w asks for, and the model's window / RTT uses what it advertised.

Usage (root):  .venv/bin/python benchmarks/delay/run.py [--reps 3] [--parts accuracy,throughput,bdp]
Writes every run with its samples to raw/results.json (git ignores raw/) and the summary without
the samples to summary.json; plot.py draws delay.png from raw/results.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))
sys.path.insert(0, str(HERE.parents[1]))  # tests.helpers (delay_draws, probe_runs)

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from tests.helpers import delay_draws  # noqa: E402
from tests.helpers.integration import probe_runs  # noqa: E402

from vnetbench.layout import build_layout  # noqa: E402
from vnetbench.providers.local import LocalProvider, delaynode  # noqa: E402
from vnetbench.spec import parse_spec  # noqa: E402

PROBE = delaynode.binary() or "vnb-probe"


def spec(links: list[str], nodes: list[str]) -> str:
    return (
        "name: bench\ntopology:\n"
        f"  nodes: [{', '.join('{name: ' + n + '}' for n in nodes)}]\n"
        "  links:\n" + "".join(f"    - {link}\n" for link in links) + "measurements: [{name: p, kind: rtt}]\n"
        f"patterns: [{{kind: pairs, pairs: [[{nodes[0]}, {nodes[1]}]], measurements: [p]}}]\n"
    )


@contextlib.contextmanager
def built(text: str) -> Iterator[tuple[LocalProvider, Any]]:
    cid = "bd" + secrets.token_hex(3)
    layout = build_layout(parse_spec(text, HERE / "bench.yaml").campaign, cid)
    provider = LocalProvider(cid, None, tools=("ping", "iperf3"))
    counter = iter(range(1, 1_000_000))
    provider.build(layout, 1, lambda items: [next(counter) for _ in items])
    try:
        yield provider, layout
    finally:
        provider.teardown()


def run(provider: LocalProvider, node: str, argv: list[str], timeout: float = 120) -> str:
    fin = provider.spawn(node, argv).wait(timeout)
    if fin.returncode != 0:
        raise RuntimeError(f"{argv[0]} on {node} failed: {fin.stderr[-400:]}")
    return fin.stdout


def arp(provider: LocalProvider, src: str, ip: str) -> None:
    provider.spawn(src, ["ping", "-c", "2", "-i", "0.2", "-q", ip]).wait(10)


def accuracy(rep: int) -> dict[str, Any]:
    links = [
        "{name: fixed, endpoints: [a, b], delay: 50ms, emulator: delay-node}",
        "{name: jit, endpoints: [c, d], delay: 50ms, jitter: 10ms, jitter_distribution: normal, "
        "reorder: true, emulator: delay-node}",
        "{name: lossy, endpoints: [e, f], loss: 0.01, emulator: delay-node}",
    ]
    out: dict[str, Any] = {"rep": rep}
    with built(spec(links, ["a", "b", "c", "d", "e", "f"])) as (p, layout):
        ip = layout.address_of("b", "a")
        arp(p, "a", ip)
        rec = probe_runs.rtt_records(p, "a", "b", ip, 7001, 2000, "0.002")
        rtt = np.array([r["rtt_ns"] for r in rec if r["rtt_ns"]]) / 1e6
        text = run(p, "a", ["ping", "-c", "300", "-i", "0.01", ip])
        pings = [float(t.split("=")[1]) for t in text.split() if t.startswith("time=")]
        out["rtt_ms"] = {
            "n": len(rtt),
            "median": float(np.median(rtt)),
            "p99": float(np.percentile(rtt, 99)),
            "min": float(rtt.min()),
            "max": float(rtt.max()),
            "ping_p99_whole_ms": float(np.percentile(pings, 99)),
            "ping_n": len(pings),
        }
        out["rtt_samples_ms"] = [round(float(x), 4) for x in rtt]

        ip = layout.address_of("d", "c")
        arp(p, "c", ip)
        rec = probe_runs.rtt_records(p, "c", "d", ip, 7002, 5000, "0.001")
        owd_all = np.array([np.nan if r["owd_up_ns"] is None else r["owd_up_ns"] for r in rec], dtype=float)
        owd = owd_all[~np.isnan(owd_all)]
        ks = stats.kstest((owd - 50e6) / 10e6, "norm")
        out["jitter"] = {
            "n": len(owd),
            "mean_ms": float(owd.mean() / 1e6),
            "sd_ms": float(owd.std() / 1e6),
            "ks_d": float(ks.statistic),
            "ks_p": float(ks.pvalue),
        }
        out["owd_samples_ms"] = [round(float(x) / 1e6, 4) for x in owd]

        ip = layout.address_of("f", "e")
        arp(p, "e", ip)
        r = probe_runs.loss_run(p, "e", "f", ip, 7003, 40_000, "2.5", 100_000)
        out["loss"] = {
            "expected": r["totals"]["expected_packets"],
            "lost": r["totals"]["lost_packets"],
            "ratio": r["totals"]["loss_ratio"],
            "receiver_kernel_drops": r["kernel_drops_packets"],
        }
    reports = reports_by_link(p)
    # the node's own draws (seed from its report): each probe's lateness and the draws' own KS p
    seed = reports["jit"]["seed"]
    fits = [
        delay_draws.match(
            owd_all, delay_draws.normal_delays_ns(sd, len(owd_all) + 100, 50_000_000, 10_000_000)
        )
        for sd in (seed, seed + 1)
    ]
    res = min(fits, key=lambda r: float(np.nanmedian(np.abs(r))))
    ok = ~np.isnan(res)
    out["jitter"]["seed"] = seed
    out["jitter"]["ks_p_draws_alone"] = float(
        stats.kstest((owd_all[ok] - res[ok] - 50e6) / 10e6, "norm").pvalue
    )
    out["jitter"]["late_us"] = {
        "min": float(res[ok].min() / 1e3),
        "median": float(np.median(res[ok]) / 1e3),
        "p99": float(np.percentile(res[ok], 99) / 1e3),
        "max": float(res[ok].max() / 1e3),
    }
    out["node_release_error_ns"] = {k: v["directions"][0]["release_error"] for k, v in reports.items()}
    out["node_lost_frames"] = {k: v["directions"][0]["lost_frames"] for k, v in reports.items()}
    return out


STREAMS = 2  # sender processes: one vnb-probe send saturates at ~100 kpps of 64-byte frames here


def udp_rate(
    p: LocalProvider, src: str, dst: str, ip: str, port: int, frame: int, pps: int, secs: float
) -> dict:
    """Offer `pps` frames/s from STREAMS sender processes (pps / STREAMS each, started together)."""
    recv = p.spawn(
        dst,
        [
            PROBE,
            "recv",
            "--bind",
            f"{ip}:{port}",
            "--expect-streams",
            str(STREAMS),
            "--duration",
            "60",
            "--trace-bin-us",
            "0",
            "--json",
        ],
    )
    p.wait_listening(recv, port, "udp", 5)
    start = time.time_ns() + 300_000_000
    senders = [
        p.spawn(
            src,
            [
                PROBE,
                "send",
                "--dst",
                f"{ip}:{port}",
                "--frame-size",
                str(frame),
                "--pps",
                str(pps / STREAMS),
                "--duration",
                str(secs),
                "--stream",
                str(i),
                "--start-at-ns",
                str(start),
                "--json",
            ],
        )
        for i in range(STREAMS)
    ]
    sent = [json.loads(s.wait(120).stdout) for s in senders]
    r = json.loads(recv.wait(70).stdout)
    t = r["totals"]
    return {
        "frame_bytes": frame,
        "offered_pps": pps,
        "streams": STREAMS,
        "sent_packets": sum(s["sent_packets"] for s in sent),
        "received_packets": t["unique_packets"],
        "received_pps": t["received_pps"],
        "received_frame_bps": t["received_pps"] * frame * 8,
        "lost_packets": t["lost_packets"],
        "receiver_kernel_drops": r["kernel_drops_packets"],
        "sender": {
            k: sum(s.get(k) or 0 for s in sent)
            for k in ("missed_slots_packets", "cpu_user_ns", "cpu_system_ns")
        },
    }


NODE_LINK = "{name: d10, endpoints: [p, q], delay: 10ms, emulator: delay-node}"
BARE_LINK = "{name: bare, endpoints: [p, q]}"


def p_to_q_paths(rep: int) -> list[tuple[str, str]]:
    """(path, link spec) for p-q through a node adding 10 ms and over a bare veth; the order
    alternates with the repetition."""
    paths = [("node", NODE_LINK), ("bare", BARE_LINK)]
    return paths if rep % 2 == 0 else paths[::-1]


def reports_by_link(pv: LocalProvider) -> dict[str, dict[str, Any]]:
    """The delay nodes' reports by the link they serve (the provider keys them by namespace: a link
    between hosts has a node at each end; every link here is on one host, so one node each)."""
    return {rpt["link"]: rpt for rpt in pv.delay_reports.values()}


def node_summary(pv: LocalProvider, link: str) -> dict[str, Any] | None:
    """The A->B side of a delay node's own report, as kept in results.json."""
    rpt = reports_by_link(pv).get(link)
    if not rpt:
        return None
    d = rpt["directions"][0]
    return {
        "cpu_per_frame_ns": rpt["cpu_per_frame_ns"],
        "cpu_ns": rpt["cpu_user_ns"] + rpt["cpu_system_ns"],
        "cpu_user_ns": rpt["cpu_user_ns"],
        "cpu_system_ns": rpt["cpu_system_ns"],
        "softnet_backlog_drop_frames_machine_wide": rpt.get("softnet_backlog_drop_frames_machine_wide"),
        "elapsed_ns": rpt["elapsed_ns"],
        **{k: v for k, v in d.items() if k.endswith("_frames")},
        "release_error_p50_ns": d["release_error"]["p50_ns"],
        "release_error_p99_ns": d["release_error"]["p99_ns"],
    }


def add_ratios_to_bare(rows: list[dict[str, Any]], same: tuple[str, ...], key: Callable[[dict], str]) -> None:
    """Each node row's rate as a ratio of the bare row with the same `same` fields (one repetition)."""
    for row in rows:
        if row["path"] == "node":
            (bare,) = [r for r in rows if r["path"] == "bare" and all(r[f] == row[f] for f in same)]
            row["ratio_to_bare"] = row[key(row)] / bare[key(row)]


def throughput(rep: int) -> list[dict[str, Any]]:
    rows = []
    cases = [(1500, 90_000, 3.0), (64, 300_000, 2.0), ("tcp", 0, 5.0)]
    for frame, pps, secs in cases:
        for path, link in p_to_q_paths(rep):
            with built(spec([link], ["p", "q"])) as (pv, layout):
                ip = layout.address_of("q", "p")
                arp(pv, "p", ip)
                if frame == "tcp":
                    srv = pv.spawn("q", ["iperf3", "-s", "-1", "-p", "5201", "-J"])
                    pv.wait_listening(srv, 5201, "tcp", 5)
                    j = json.loads(run(pv, "p", ["iperf3", "-c", ip, "-p", "5201", "-t", str(secs), "-J"]))
                    srv.wait(10)
                    row = {
                        "frame_bytes": "tcp",
                        "goodput_bps": j["end"]["sum_received"]["bits_per_second"],
                        "retransmits": j["end"]["sum_sent"].get("retransmits"),
                    }
                else:
                    row = udp_rate(pv, "p", "q", ip, 7010, int(frame), pps, secs)
            row.update({"rep": rep, "path": path})
            if path == "node":
                row["node"] = node_summary(pv, "d10")
            row["loadavg_1min"] = os.getloadavg()[0]
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "sender"}), flush=True)
    # the node's throughput as a ratio of the generator alone over a bare veth, same repetition
    add_ratios_to_bare(
        rows, ("frame_bytes",), lambda r: "goodput_bps" if r["frame_bytes"] == "tcp" else "received_pps"
    )
    return rows


NOBODY_MAC = "02:76:6e:62:00:01"  # locally administered; no interface here has it


def rx_packets(p: LocalProvider, node: str, ifname: str) -> int:
    link = json.loads(run(p, node, ["ip", "-s", "-j", "link", "show", ifname]))[0]
    return int(link["stats64"]["rx"]["packets"])


MARKER_PPS = 1000  # UDP packets/s beside the raw frames whose one-way delay shows the node's delay under load


def raw_rate(p: LocalProvider, layout: Any, pps: int, secs: float, sink: str) -> dict:
    """Offer `pps` 64-byte frames/s from ONE raw-frame generator (`vnb-probe send --raw-iface`,
    AF_PACKET past p's IP stack, as pktgen would) to q. sink "counter": frames carry a MAC nobody
    has, q's interface counts and drops them at once (the cheapest receiver), and a marker stream of
    MARKER_PPS ordinary UDP packets to a receiver on q gives the one-way delay under that load;
    sink "recv": frames carry q's MAC and a vnb-probe receiver counts every sequence number and
    the one-way delay."""
    (seg,) = [s for s in layout.segments if {"p", "q"} <= set(s.ifnames)]
    p_if, q_if = seg.ifnames["p"], seg.ifnames["q"]
    p_ip, q_ip = seg.addresses["p"], seg.addresses["q"]
    q_mac = json.loads(run(p, "q", ["ip", "-j", "link", "show", q_if]))[0]["address"]
    port = 7020 if sink == "recv" else 7022  # the receiver's port: raw frames or the marker stream
    recv_argv = [PROBE, "recv", "--bind", f"{q_ip}:{port}", "--expect-streams", "1", "--duration", "60"]
    recv = p.spawn("q", [*recv_argv, "--trace-bin-us", "0", "--json"])
    p.wait_listening(recv, port, "udp", 5)
    marker = None
    if sink == "counter":
        marker_argv = [
            PROBE,
            "send",
            "--dst",
            f"{q_ip}:{port}",
            "--pps",
            str(MARKER_PPS),
            "--duration",
            str(secs),
        ]
        marker = p.spawn("p", [*marker_argv, "--json"])
    before = rx_packets(p, "q", q_if)
    argv = [PROBE, "send", "--raw-iface", p_if, "--dst-mac", q_mac if sink == "recv" else NOBODY_MAC]
    argv += ["--bind", f"{p_ip}:7021", "--dst", f"{q_ip}:7020", "--frame-size", "64", "--pps", str(pps)]
    argv += ["--duration", str(secs), "--pacing-quantum-us", "200", "--json"]
    sent = json.loads(run(p, "p", argv))
    marker_report = json.loads(marker.wait(30).stdout) if marker else {}
    marker_sent = marker_report.get("sent_packets", 0) + marker_report.get("fin_sent_packets", 0)
    time.sleep(0.1)  # frames still held by a node (10 ms) arrive
    counted = rx_packets(p, "q", q_if) - before - marker_sent
    r = json.loads(recv.wait(70).stdout)
    st = r["streams"][0] if r.get("streams") else {}
    row: dict[str, Any] = {
        "frame_bytes": 64,
        "sink": sink,
        "offered_pps": pps,
        "sent_packets": sent["sent_packets"],
        "generator_achieved_pps": sent["achieved_pps"],
        "generator_missed_slots": sent["missed_slots_packets"],
        "generator_cpu_ns": sent["cpu_user_ns"] + sent["cpu_system_ns"],
        "q_rx_packets": counted,
        # frames per second that reached q, over the generator's send window
        "received_pps": counted * 1e9 / max(sent["send_window_ns"], 1),
        # of the raw frames (sink recv) or of the marker stream (sink counter)
        "owd_ns": {k: st.get("owd", {}).get(k) for k in ("min_ns", "p50_ns", "p99_ns", "max_ns")},
        "owd_of": "raw frames" if sink == "recv" else f"marker stream, {MARKER_PPS} UDP packets/s",
        "owd_stream_lost_packets": r["totals"]["lost_packets"],
    }
    if sink == "recv":
        t = r["totals"]
        row.update(
            {
                "received_packets": t["unique_packets"],
                "lost_packets": t["lost_packets"],
                "receiver_kernel_drops": r["kernel_drops_packets"],
                "received_pps": t["received_pps"],
            }
        )
    return row


RAW_OFFERED = (300_000, 400_000)  # frames/s: the target, and above it to show the headroom


def rawpps(rep: int) -> list[dict[str, Any]]:
    """64-byte frames from a raw-frame generator at RAW_OFFERED rates, through a node adding 10 ms
    and over a bare veth, each sink; the order alternates with the repetition."""
    rows = []
    for offered in RAW_OFFERED:
        for sink in ("counter", "recv"):
            for path, link in p_to_q_paths(rep):
                with built(spec([link], ["p", "q"])) as (pv, layout):
                    arp(pv, "p", layout.address_of("q", "p"))
                    row = raw_rate(pv, layout, offered, 3.0, sink)
                row.update({"rep": rep, "path": path, "loadavg_1min": os.getloadavg()[0]})
                if path == "node":
                    row["node"] = node_summary(pv, "d10")
                rows.append(row)
                print(json.dumps(row), flush=True)
    add_ratios_to_bare(rows, ("sink", "offered_pps"), lambda r: "received_pps")
    return rows


def bdp(rep: int) -> list[dict[str, Any]]:
    links = [
        "{name: short, endpoints: [s1, s2], rate: 10mbit, delay: 25ms, emulator: delay-node}",
        "{name: long, endpoints: [l1, l2], rate: 10mbit, delay: 120ms, emulator: delay-node}",
    ]
    rows = []
    with built(spec(links, ["s1", "s2", "l1", "l2"])) as (p, layout):
        pairs = [("short", "s1", "s2"), ("long", "l1", "l2")]
        for window in ["160K", "256K", None]:
            for name, a, b in pairs if rep % 2 == 0 else list(reversed(pairs)):
                ip = layout.address_of(b, a)
                arp(p, a, ip)
                srv = p.spawn(b, ["iperf3", "-s", "-1", "-p", "5202", "-J"])
                p.wait_listening(srv, 5202, "tcp", 5)
                argv = ["iperf3", "-c", ip, "-p", "5202", "-t", "10", "-O", "2", "-J"]
                if window:
                    argv += ["-w", window]
                j = json.loads(run(p, a, argv))
                srv.wait(10)
                rtt = [s["streams"][0].get("rtt") for s in j["intervals"] if s["streams"][0].get("rtt")]
                row = {
                    "rep": rep,
                    "link": name,
                    "window": window or "auto",
                    "goodput_bps": j["end"]["sum_received"]["bits_per_second"],
                    "mean_rtt_us": j["end"]["streams"][0]["sender"].get("mean_rtt"),
                    "max_snd_cwnd_bytes": j["end"]["streams"][0]["sender"].get("max_snd_cwnd"),
                    "max_snd_wnd_bytes": j["end"]["streams"][0]["sender"].get("max_snd_wnd"),
                    "retransmits": j["end"]["sum_sent"].get("retransmits"),
                    "interval_rtts_us": rtt,
                }
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "interval_rtts_us"}), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--parts", default="accuracy,throughput,rawpps,bdp")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (network namespaces)")
    parts = args.parts.split(",")
    path = HERE / "raw" / "results.json"
    path.parent.mkdir(exist_ok=True)
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    for part in parts:
        fn = {"accuracy": accuracy, "throughput": throughput, "rawpps": rawpps, "bdp": bdp}[part]
        # each part keeps the conditions of its own run (parts may be re-run alone)
        machine = {
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
            "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        out = []
        for rep in range(args.reps):
            r = fn(rep)
            out += r if isinstance(r, list) else [r]
            if part == "accuracy":
                print(json.dumps({k: v for k, v in r.items() if not k.endswith("samples_ms")}), flush=True)
        results[part] = out
        machine["loadavg_at_end"] = os.getloadavg()
        results.setdefault("machine_by_part", {})[part] = machine
        path.write_text(json.dumps(results, indent=1))
        (HERE / "summary.json").write_text(json.dumps(without_samples(results), indent=1) + "\n")
    summarize(results)


SAMPLES = ("rtt_samples_ms", "owd_samples_ms", "interval_rtts_us")  # per-probe raw values: raw/ only


def without_samples(results: dict[str, Any]) -> dict[str, Any]:
    """Every run's summary row, without its per-probe samples (the compact summary kept in git)."""
    out: dict[str, Any] = {}
    for part, rows in results.items():
        out[part] = (
            [{k: v for k, v in r.items() if k not in SAMPLES} for r in rows]
            if isinstance(rows, list)
            else rows
        )
    return out


def summarize(results: dict[str, Any]) -> None:
    med = statistics.median
    if "accuracy" in results:
        acc = results["accuracy"]
        print(
            "RTT median ms:",
            [round(a["rtt_ms"]["median"], 3) for a in acc],
            "p99:",
            [round(a["rtt_ms"]["p99"], 3) for a in acc],
        )
        print(
            "KS p:", [round(a["jitter"]["ks_p"], 3) for a in acc], "loss:", [a["loss"]["ratio"] for a in acc]
        )
    if "throughput" in results:
        for frame in (1500, 64, "tcp"):
            for path in ("node", "bare"):
                rows = [r for r in results["throughput"] if r["frame_bytes"] == frame and r["path"] == path]
                key = "goodput_bps" if frame == "tcp" else "received_pps"
                print(frame, path, key, med([r[key] for r in rows]) if rows else None)
            ratios = [
                r["ratio_to_bare"]
                for r in results["throughput"]
                if r["frame_bytes"] == frame and "ratio_to_bare" in r
            ]
            print(frame, "node/bare", sorted(round(x, 3) for x in ratios))
    if "rawpps" in results:
        for offered in RAW_OFFERED:
            for sink in ("counter", "recv"):
                for path in ("node", "bare"):
                    rows = [
                        r
                        for r in results["rawpps"]
                        if r["sink"] == sink and r["path"] == path and r["offered_pps"] == offered
                    ]
                    got = sorted(round(r["received_pps"]) for r in rows)
                    print("raw 64", offered, sink, path, "received_pps", got)
    if "bdp" in results:
        for w in ("160K", "256K", "auto"):
            for link in ("short", "long"):
                rows = [r for r in results["bdp"] if r["window"] == w and r["link"] == link]
                if not rows:
                    continue
                rtt_s = {"short": 0.05, "long": 0.24}[link]
                adv = med([r["max_snd_wnd_bytes"] or 0 for r in rows])
                model = min(10e6 * 1448 / 1514, adv * 8 / rtt_s) / 1e6
                got = [round(r["goodput_bps"] / 1e6, 2) for r in rows]
                print("bdp", w, link, "goodput", got, "advertised", adv, "model", round(model, 2))


if __name__ == "__main__":
    main()
