"""vnb-probe (probe/ in this repository): build its commands, parse the JSON it prints.

Three drivers, one binary:

- `ProbeFlowDriver` — kinds `pps`, `trace`, `background`: `recv` on the destination (the server,
  started first; it prints `READY addr:port` when bound), `send` on the source behind the start
  barrier. The receiver stops 0.2 s after the sender's FIN, so loss is exact (FIN carries the count).
- `ProbeRttDriver` — kind `probe-rtt`: `echo` on the destination, `rtt` on the source.
- `CpushareDriver` — kind `cpushare`: the timestamp loop on one node, no server.

The binary is the one installed next to this Python (`.venv/bin/vnb-probe`, built by
`pip install .`), so it runs the same under sudo, whose PATH lacks the venv. Over SSH the provider
runs the host's own copy instead (inventory `tools` path, else the login PATH; docs/ssh-provider.md).
Every flow's summary carries the sender's own timing error: achieved rate and lateness p50/p99/max.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from vnetbench.drivers.base import Commands, FlowParams, Parsed, ToolOutput
from vnetbench.store.records import Event, Sample

TOOL = "vnb-probe"
NS = 10**9
RECV_GRACE_NS = 15 * NS  # the receiver's own deadline beyond the send duration (FIN normally stops it)
RECV_IDLE_S = "3"  # stop when nothing arrived for 3 s after the first packet (sender died)
ECHO_MARGIN_NS = 2 * NS  # the echo outlives the probes by this much, then prints its report
BACKGROUND_TRACE_BIN_US = 100_000
TRACE_MAX_BINS = 3_600_000  # the receiver keeps at most this many trace bins (probe/src/trace.rs MAX_BINS)
MAX_GAPS = 5000


def probe_path() -> str:
    """The vnb-probe built with this package (next to the interpreter), else the one on PATH."""
    beside = Path(sys.executable).parent / TOOL
    if beside.is_file():
        return str(beside)
    return shutil.which(TOOL) or TOOL


def _seconds(ns: int) -> str:
    whole, frac = divmod(int(ns), NS)
    return str(whole) if frac == 0 else f"{whole}.{frac:09d}".rstrip("0")


def _missing_binary() -> list[str]:
    path = probe_path()
    if Path(path).is_file() or shutil.which(path):
        return []
    return [f"{TOOL} is not built: run `pip install -e .` (or `make setup`) in the vnetbench checkout"]


# ---------------------------------------------------------------------------------------------- fields
# vnb-probe reads every time as seconds > 0 and at most MAX_SECONDS (units.rs parse_secs), and its
# trace bins and the cpushare threshold in whole microseconds (at least 1); the Python side would pass
# a 0 through and the run would fail at the tool, or round a 0.5 µs bin up to 1 µs without a word.
MAX_SECONDS = 10_000_000
US = 1000


def _time_problem(name: str, ns: int, example: str, extra_ns: int = 0) -> list[tuple[str, str]]:
    """(name, message) when vnb-probe cannot take `ns` (+ `extra_ns` it adds itself) as seconds."""
    if ns <= 0:
        return [
            (
                name,
                f"{name} {_seconds(ns)} s: vnb-probe needs a time longer than 0; use e.g. {name}: {example}",
            )
        ]
    if ns + extra_ns > MAX_SECONDS * NS:
        return [
            (
                name,
                f"{name} {_seconds(ns)} s: vnb-probe takes at most {MAX_SECONDS:,} s; "
                f"use e.g. {name}: {example}",
            )
        ]
    return []


def _micros_problem(name: str, ns: int, example: str) -> list[tuple[str, str]]:
    """(name, message) when `ns` is not a whole number of microseconds, at least 1."""
    if ns >= US and ns % US == 0:
        return []
    return [
        (
            name,
            f"{name} {ns:,} ns: vnb-probe takes whole microseconds, at least 1 µs (this would run as "
            f"{max(1, ns // US)} µs); use e.g. {name}: {example}",
        )
    ]


def flow_pps(m: Any) -> float:
    """The lowest packet rate a probe flow measurement offers: its pps, rate / payload bits, the
    lowest of a sweep's rates."""
    if m.kind == "pps":
        return float(min(m.rates))
    if getattr(m, "pps", None):
        return float(m.pps)
    return float(m.rate) / (int(m.size) * 8)


def flow_field_problems(m: Any) -> list[tuple[str, str]]:
    """(field, message) for what vnb-probe send/recv cannot do with a pps, trace or background
    measurement, each with the fix."""
    out = _time_problem("duration", m.duration, "5s", RECV_GRACE_NS)
    pps = flow_pps(m)
    sends = math.floor(pps * m.duration / NS + 0.5)  # the sender's packets: Rust's round, half away from 0
    if not out and m.kind != "background" and sends < 1:
        least = math.ceil(NS / 2 / pps / 10**6) * 10**6  # round(pps × duration) >= 1 from half a packet
        which = "the lowest of rates" if m.kind == "pps" else ("pps" if getattr(m, "pps", None) else "rate")
        out.append(
            (
                "duration",
                f"duration {_seconds(m.duration)} s at {pps:g} packets/s ({which}) sends no packet "
                f"(vnb-probe sends round(packets/s × duration)); give at least {_seconds(least)}s",
            )
        )
    if m.kind == "trace":
        bin_problem = _micros_problem("bin", m.bin, "1ms")
        out += bin_problem
        if not bin_problem and m.duration // m.bin > TRACE_MAX_BINS:
            least = math.ceil(m.duration / TRACE_MAX_BINS / US) * US
            out.append(
                (
                    "bin",
                    f"bin {m.bin / US:g} µs over {_seconds(m.duration)} s is {m.duration // m.bin:,} bins; "
                    f"vnb-probe keeps at most {TRACE_MAX_BINS:,} and leaves later packets out of the trace: "
                    f"give a bin of at least {least // US} µs, e.g. bin: 1ms",
                )
            )
        if m.bin > m.duration > 0:
            out.append(
                (
                    "bin",
                    f"bin {_seconds(m.bin)} s is longer than the duration ({_seconds(m.duration)} s): the "
                    "trace would have one partial bin; give a bin a small part of the duration, "
                    "e.g. bin: 10ms",
                )
            )
    return out


def rtt_field_problems(m: Any) -> list[tuple[str, str]]:
    """(field, message) for what vnb-probe rtt/echo cannot do with a probe-rtt measurement."""
    lasts = m.count * m.interval + m.wait + ECHO_MARGIN_NS  # the echo's --duration
    return _time_problem("interval", m.interval, "10ms", lasts - m.interval) + _time_problem(
        "wait", m.wait, "1s", lasts - m.wait
    )


def cpushare_field_problems(m: Any) -> list[tuple[str, str]]:
    """(field, message) for what vnb-probe cpushare cannot do with a cpushare measurement."""
    out = _time_problem("duration", m.duration, "5s") + _micros_problem("threshold", m.threshold, "100us")
    if not out and m.threshold >= m.duration:
        out.append(
            (
                "threshold",
                f"threshold {_seconds(m.threshold)} s is not shorter than the duration "
                f"({_seconds(m.duration)} s): no time off the CPU could be counted; "
                "use e.g. threshold: 100us",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- parsing


def _num(d: Any, *keys: str) -> float | None:
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    if isinstance(d, bool) or not isinstance(d, int | float) or not math.isfinite(d):
        return None
    return float(d)


def _int(d: Any, *keys: str) -> int | None:
    """An integer field exactly (ns timestamps exceed a float's 53-bit mantissa)."""
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def _load(out: ToolOutput | None, role: str) -> tuple[dict[str, Any] | None, str | None]:
    """(report, None) or (None, one line saying why there is none)."""
    if out is None:
        return None, f"no {role} process"
    for line in (out.stderr or "").splitlines():
        if line.startswith("vnb-probe: error:") or line.startswith("error:"):
            return None, f"{TOOL} {role}: {line.split('error:', 1)[1].strip()}"
    text = (out.stdout or "").strip()
    if not text:
        if out.returncode is None:
            return None, f"the {TOOL} {role} was killed before it printed its report (timeout)"
        last = [x for x in (out.stderr or "").splitlines() if x.strip()]
        why = last[-1].strip() if last else f"exit code {out.returncode}"
        return None, f"the {TOOL} {role} printed no report ({why})"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"the {TOOL} {role} report is not JSON ({err.msg}; truncated?)"
    if not isinstance(doc, dict) or doc.get("tool") != TOOL:
        return None, f"the {role} output is not a {TOOL} report"
    return doc, None


def _distribution(summary: dict[str, float | None], prefix: str, dist: Any) -> None:
    for q in ("min", "p50", "p99", "max", "mean"):
        summary[f"{prefix}_{q}_ns"] = _num(dist, f"{q}_ns")


def _cpu_ratio(doc: dict[str, Any], wall_ns: float | None) -> float | None:
    user, system = _num(doc, "cpu_user_ns"), _num(doc, "cpu_system_ns")
    if user is None or system is None or not wall_ns:
        return None
    return (user + system) / wall_ns


SAME_CLOCK_NS = 1_000_000  # two reports whose CLOCK_REALTIME − CLOCK_MONOTONIC agree this closely


def shared_clock(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """True when two reports were stamped by one kernel's CLOCK_REALTIME (one machine: namespaces
    share it), so a one-way delay between them is a delay, not a clock offset. Each report's clock
    block has both clocks read at its start: on one machine REALTIME − MONOTONIC is the same number
    (the captures here agree within 11 ns; NTP slews both clocks alike), on two machines it differs
    by the gap between their boots. `clock.synchronized` (the kernel's NTP flag) says neither: it is
    false on a machine without NTP, and NTP's milliseconds would swamp a path's microseconds."""
    offsets = []
    for doc in (a, b):
        rt, mono = _int(doc, "clock", "start_realtime_ns"), _int(doc, "clock", "start_monotonic_ns")
        if rt is None or mono is None:
            return False
        offsets.append(rt - mono)
    return abs(offsets[0] - offsets[1]) <= SAME_CLOCK_NS


def sender_summary(send: dict[str, Any]) -> dict[str, float | None]:
    """What the sender knows: target, achieved rate, its own lateness, its CPU."""
    s: dict[str, float | None] = {
        "target_pps": _num(send, "target_pps"),
        "target_bps": _num(send, "target_bps"),
        "payload_bytes": _num(send, "payload_bytes"),
        "frame_bytes": _num(send, "frame_bytes"),
        "sent_packets": _num(send, "sent_packets"),
        "fin_sent_packets": _num(send, "fin_sent_packets"),  # the end-of-flow count, outside sent_packets
        "missed_slots_packets": _num(send, "missed_slots_packets"),
        "send_errors": _num(send, "send_errors"),
        "achieved_pps": _num(send, "achieved_pps"),
        "achieved_bps": _num(send, "achieved_bps"),
        "achieved_l2_bps": _num(send, "achieved_l2_bps"),
        "achieved_to_target_ratio": _num(send, "achieved_to_target_ratio"),
        "mean_batch_packets": _num(send, "mean_batch_packets"),
    }
    _distribution(s, "send_lateness", send.get("send_lateness"))
    # the burst the pacing produced: packets sent back to back per wake-up, and how late the wake-ups were
    for q in ("mean", "p50", "p99", "max"):
        s[f"burst_{q}_packets"] = _num(send, "burst_packets", f"{q}_packets")
    _distribution(s, "wake_lateness", send.get("wake_lateness"))
    s["pacing_quantum_ns"] = _num(send, "pacing_quantum_ns")
    s["sendmmsg_batch_messages"] = _num(send, "sendmmsg_batch_messages")
    s["sender_cpu_ratio"] = _cpu_ratio(send, _num(send, "duration_ns"))
    return s


def receiver_summary(recv: dict[str, Any], stream: dict[str, Any] | None) -> dict[str, float | None]:
    """What arrived. `stream` is the flow's own stream (the receiver has one sender)."""
    totals = recv.get("totals") if isinstance(recv.get("totals"), dict) else {}
    st = stream or {}
    out_of_range = _num(st, "out_of_range_packets")
    unique = _num(totals, "unique_packets")
    s: dict[str, float | None] = {
        # the flow's own packets: not those outside the FIN's sequence range (another run's)
        "received_packets": unique - (out_of_range or 0) if unique is not None else None,
        "out_of_range_packets": out_of_range,
        "duplicate_packets": _num(totals, "duplicate_packets"),
        "late_packets": _num(totals, "late_packets"),
        "lost_packets": _num(totals, "lost_packets"),
        "loss_ratio": _num(totals, "loss_ratio"),
        "reordered_packets": _num(totals, "reordered_packets"),
        "received_pps": _num(totals, "received_pps"),
        "received_bps": _num(totals, "received_bps"),
        "throughput_bps": _num(totals, "received_bps"),
        "received_l2_bps": _num(st, "received_l2_bps"),
        "jitter_rfc3550_mean_ns": _num(st, "jitter_rfc3550_mean_ns"),
        "jitter_rfc3550_last_ns": _num(st, "jitter_rfc3550_ns"),  # the estimator's end value, as iperf3's
        "ipdv_p99_ns": _num(st, "ipdv", "p99_ns"),
        "pdv_p99_ns": _num(st, "pdv", "p99_ns"),
        "owd_p50_ns": _num(st, "owd", "p50_ns"),  # dropped by parse unless both ends share one clock
        "kernel_drops_packets": _num(recv, "kernel_drops_packets"),
        "foreign_packets": _num(recv, "foreign_packets"),
        "truncated_packets": _num(recv, "truncated_packets"),
        "exact_loss": 1.0 if st.get("expected_source") == "fin" else 0.0,
    }
    s["receiver_cpu_ratio"] = _cpu_ratio(recv, _num(recv, "elapsed_ns"))
    return s


def count_from_the_sender(s: dict[str, float | None]) -> None:
    """No FIN arrived (every copy lost, or the receiver stopped first): the receiver counted loss
    only inside the sequence range it saw and its rate over its own arrivals, so a flow that lost
    its tail read as lossless and, when only a first burst arrived, faster than it was sent (a
    4-tenant sweep stored 268K packets/s received of 49K sent, loss 0). The sender's own report has
    the exact count and the send window: loss is sent - received, rates are the delivered share of
    what was sent over that window. exact_loss stays 0: the sender's count is exact, but packets
    still in flight when the receiver stopped count as lost."""
    sent, got = s.get("sent_packets"), s.get("received_packets")
    if not sent or got is None:
        return
    lost = sent - min(got, sent)
    s["lost_packets"], s["loss_ratio"] = lost, lost / sent
    share = 1 - lost / sent
    for received, achieved in (
        ("received_pps", "achieved_pps"),
        ("received_bps", "achieved_bps"),
        ("throughput_bps", "achieved_bps"),
        ("received_l2_bps", "achieved_l2_bps"),
    ):
        rate = s.get(achieved)
        s[received] = rate * share if rate is not None else None
    s["loss_from_sender_count"] = 1.0


def trace_samples(recv: dict[str, Any], origin_ns: int | None) -> list[Sample]:
    """The receiver's trace bins as throughput_bps and packets samples, t_ns from the first send."""
    trace = recv.get("trace")
    if not isinstance(trace, dict):
        return []
    bin_ns = int(_num(trace, "bin_ns") or 0)
    t0 = _int(trace, "origin_realtime_ns") or 0
    if bin_ns <= 0 or not t0:
        return []
    shift = t0 - origin_ns if origin_ns else 0
    out: list[Sample] = []
    nbytes, npackets = trace.get("bytes") or [], trace.get("packets") or []
    for i, (b, p) in enumerate(zip(nbytes, npackets, strict=False)):
        t = shift + i * bin_ns
        out.append(Sample(t, "throughput_bps", b * 8 * NS / bin_ns))
        out.append(Sample(t, "packets", float(p)))
    return out


def _flow_events(send: dict[str, Any] | None, recv: dict[str, Any] | None) -> list[Event]:
    events: list[Event] = []
    if send and (skipped := int(_num(send, "missed_slots_packets") or 0)) > 0:
        events.append(
            Event(
                "sender_stall",
                f"the sender skipped {skipped} overdue slot{'s' if skipped != 1 else ''} after "
                f"stalls (longest lateness {(_num(send, 'send_lateness', 'max_ns') or 0) / 1e6:.1f} ms): "
                "the achieved rate is below the target",
            )
        )
    if send and (errors := int(_num(send, "send_errors") or 0)) > 0:
        # the sender cannot tell which; both change what its counts mean, so neither is silent
        events.append(
            Event(
                "tool_warning",
                f"{errors:,} send call{'s' if errors != 1 else ''} of the sender failed: an ICMP port "
                "unreachable that an earlier datagram drew (nothing listening at the destination; that call "
                "is retried once) or the sending host's own queue full (ENOBUFS); sent_packets counts only "
                "the packets the kernel took",
            )
        )
    if recv:
        events += _receiver_events(recv)
    return events


# why the receiver stopped, when it was not the FIN (recv `stop_reason`)
STOPPED_BY = {
    "idle_timeout": f"its idle timeout (no packet for --idle-timeout, {RECV_IDLE_S} s as the driver runs it) "
    "after {elapsed:.1f} s: the sender never finished or every FIN copy was lost",
    "duration": "its own deadline, after {elapsed:.1f} s",
    "signal": "a signal after {elapsed:.1f} s (killed before the flow ended)",
}


def _receiver_events(recv: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    streams = [x for x in recv.get("streams") or [] if isinstance(x, dict)]
    stop = recv.get("stop_reason")
    elapsed = (_num(recv, "elapsed_ns") or 0) / NS
    why = (
        f"; the receiver stopped by {STOPPED_BY[stop].format(elapsed=elapsed)}" if stop in STOPPED_BY else ""
    )
    if streams and any(x.get("expected_source") != "fin" for x in streams):
        events.append(
            Event(
                "tool_anomaly",
                "no FIN arrived: loss and received rate are counted from the sender's report "
                f"(sent - received), not the receiver's sequence range{why}",
            )
        )
    elif why:
        events.append(Event("tool_anomaly", f"the FIN arrived{why} before the 0.2 s it waits for stragglers"))
    for st in streams:
        if (n := int(_num(st, "out_of_range_packets") or 0)) > 0:
            first, sent = _int(st, "first_seq") or 0, _int(st, "sent_packets") or 0
            events.append(
                Event(
                    "tool_anomaly",
                    f"{n:,} packets from the flow's source and stream id had sequence numbers outside "
                    f"the range its FIN announced ({first}..{first + sent - 1}): not this run's packets "
                    "(another sender on that port, or one restarted on it); left out of received_packets "
                    "and loss, but in the receiver's rates and delay statistics",
                )
            )
    if (n := int(_num(recv, "truncated_packets") or 0)) > 0:
        events.append(
            Event(
                "tool_anomaly",
                f"{n:,} datagrams were longer than the receiver's 64 KiB buffer and arrived cut short "
                "(MSG_TRUNC): their bytes are undercounted",
            )
        )
    if (_num(recv, "kernel_drops_packets") or 0) > 0:
        events.append(
            Event(
                "receiver_drops",
                f"the receiving socket's queue overflowed: {int(_num(recv, 'kernel_drops_packets') or 0)}"
                " datagrams dropped inside the receiving host (SO_RXQ_OVFL)",
            )
        )
    trace = recv.get("trace")
    if isinstance(trace, dict) and trace.get("truncated") is True:
        bins = len(trace.get("packets") or [])
        events.append(
            Event(
                "tool_warning",
                f"the receiver's trace stopped after {bins:,} bins (it keeps at most "
                f"{TRACE_MAX_BINS:,}): later packets are in the totals but not in the trace samples",
            )
        )
    if len(streams) > 1:
        events.append(Event("tool_anomaly", f"the receiver saw {len(streams)} streams where one was sent"))
    return events


# ---------------------------------------------------------------------------------------------- flows


def flow_rate(m: Any, flow: FlowParams) -> tuple[int | None, float | None, int]:
    """(pps, payload bit/s, size) of a flow: a sweep point, or the measurement's pps/rate and size."""
    if "pps" in flow.params:
        return int(flow.params["pps"]), None, int(flow.params["size"])
    size = int(getattr(m, "size", 1472))
    if getattr(m, "pps", None):
        return int(m.pps), None, size
    return None, float(m.rate), size


def trace_bin_us(m: Any) -> int:
    """The receiver's trace bin (µs): the trace's own, background flows' fixed one, none for pps steps."""
    if m.kind == "trace":
        return max(1, int(m.bin) // 1000)
    if m.kind == "background":
        return BACKGROUND_TRACE_BIN_US
    return 0  # a pps step: the summary is what counts


class ProbeFlowDriver:
    tool = TOOL

    def problems(self, m: Any) -> list[str]:
        return [f"measurement '{m.name}': {p}" for p in _missing_binary()]

    def spec_problems(self, m: Any) -> list[tuple[str, str]]:
        return flow_field_problems(m)

    def commands(self, m: Any, flow: FlowParams, offered_bps: float | None) -> Commands:
        probe = probe_path()
        target = f"{flow.dst_address}:{flow.port}"
        server = [
            probe, "recv", "--bind", target, "--expect-streams", "1",
            "--duration", _seconds(flow.duration_ns + RECV_GRACE_NS), "--idle-timeout", RECV_IDLE_S,
            "--trace-bin-us", str(trace_bin_us(m)), "--json",
        ]  # fmt: skip
        if getattr(m, "busy_poll", False):
            server.append("--busy-poll")
        pps, rate, size = flow_rate(m, flow)
        client = [probe, "send", "--dst", target]
        client += ["--pps", str(pps)] if pps else ["--rate", str(round(rate or 0))]
        client += ["--size", str(size), "--duration", _seconds(flow.duration_ns), "--json"]
        return Commands(client=client, server=server, server_proto="udp", port=flow.port)

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        send, send_err = _load(client, "sender")
        recv, recv_err = _load(server, "receiver")
        parsed = Parsed(events=_flow_events(send, recv))
        if send:
            parsed.summary.update(sender_summary(send))
            parsed.started_utc_ns = _int(send, "first_send_realtime_ns")
        if recv:
            streams = [x for x in recv.get("streams") or [] if isinstance(x, dict)]
            parsed.summary.update(receiver_summary(recv, streams[0] if streams else None))
            parsed.samples = trace_samples(recv, parsed.started_utc_ns)
            if send and parsed.summary.get("exact_loss") == 0.0:
                count_from_the_sender(parsed.summary)
            if not shared_clock(send, recv):  # one-way delay between two machines' clocks: an offset
                parsed.summary.pop("owd_p50_ns", None)
        parsed.error = send_err or recv_err
        if parsed.error:
            parsed.summary = {}
        return parsed

    def version_command(self) -> list[str]:
        return [probe_path(), "--version"]

    def parse_version(self, text: str) -> str:
        return version(text)


def version(text: str) -> str:
    """vnb-probe's version from `vnb-probe --version` ("0.1.0", or "0.1.0 (debug build)")."""
    words = text.split()
    return " ".join(words[1:]) if len(words) >= 2 and words[0] == TOOL else (text.strip() or "unknown")


# ---------------------------------------------------------------------------------------------- rtt


class ProbeRttDriver:
    tool = TOOL

    def problems(self, m: Any) -> list[str]:
        return [f"measurement '{m.name}': {p}" for p in _missing_binary()]

    def spec_problems(self, m: Any) -> list[tuple[str, str]]:
        return rtt_field_problems(m)

    def commands(self, m: Any, flow: FlowParams, offered_bps: float | None) -> Commands:
        probe = probe_path()
        target = f"{flow.dst_address}:{flow.port}"
        lasts = int(m.count * m.interval + m.wait + ECHO_MARGIN_NS)
        server = [probe, "echo", "--bind", target, "--duration", _seconds(lasts), "--json"]
        client = [
            probe, "rtt", "--dst", target, "--interval", _seconds(m.interval), "--count", str(m.count),
            "--size", str(int(m.size)), "--wait", _seconds(m.wait), "--json",
        ]  # fmt: skip
        return Commands(client=client, server=server, server_proto="udp", port=flow.port)

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        doc, err = _load(client, "rtt client")
        if doc is None:
            return Parsed(error=err)
        records = [r for r in doc.get("records") or [] if isinstance(r, dict)]
        rtts = [float(r["rtt_ns"]) for r in records if not r.get("lost") and _num(r, "rtt_ns") is not None]
        sent = _num(doc, "sent_packets")
        s: dict[str, float | None] = {
            "sent_packets": sent,
            "received_packets": _num(doc, "received_packets"),
            "lost_packets": _num(doc, "lost_packets"),
            "loss_ratio": _num(doc, "loss_ratio"),
            "duplicate_replies": _num(doc, "duplicate_packets"),
            "unreachable_events": _num(doc, "unreachable_events"),  # ICMP: no echo at the port
            "foreign_packets": _num(doc, "foreign_packets"),  # from the echo's address, not replies
            "rtt_min_ns": min(rtts) if rtts else None,
            "rtt_mean_ns": statistics.fmean(rtts) if rtts else None,
            "rtt_median_ns": statistics.median(rtts) if rtts else None,
            "rtt_p99_ns": _num(doc, "rtt", "p99_ns"),
            "rtt_max_ns": max(rtts) if rtts else None,
            "rtt_sd_ns": statistics.stdev(rtts) if len(rtts) >= 2 else None,
            "server_processing_p50_ns": _num(doc, "server_processing", "p50_ns"),
        }
        _distribution(s, "send_lateness", doc.get("send_lateness"))
        times = [t for r in records if (t := _int(r, "send_realtime_ns"))]
        if len(times) >= 2 and times[-1] > times[0]:
            s["achieved_pps"] = (len(times) - 1) * NS / (times[-1] - times[0])
            s["target_pps"] = NS / float(_num(doc, "interval_ns") or 1)
        s["sender_cpu_ratio"] = _cpu_ratio(doc, (times[-1] - times[0]) if len(times) >= 2 else None)
        t0 = times[0] if times else 0
        samples: list[Sample] = []
        for r in records:
            t = int(r.get("send_realtime_ns") or t0) - t0
            seq = int(r.get("seq") or 0)
            if r.get("lost"):
                samples.append(Sample(t, "lost", 1.0, seq=seq))
            elif _num(r, "rtt_ns") is not None:
                samples.append(Sample(t, "rtt_ns", float(r["rtt_ns"]), seq=seq))
        echo, _ = _load(server, "echo") if server is not None else (None, None)
        s.update(echo_summary(doc, echo))
        return Parsed(summary=s, samples=samples, events=rtt_events(doc, echo), started_utc_ns=t0 or None)

    def version_command(self) -> list[str]:
        return [probe_path(), "--version"]

    def parse_version(self, text: str) -> str:
        return version(text)


def echo_summary(doc: dict[str, Any], echo: dict[str, Any] | None) -> dict[str, float | None]:
    """What the echo's report adds: its foreign datagrams and refused replies, and the one-way delays
    each way, stored only when the client and the echo share one clock (`shared_clock`)."""
    s: dict[str, float | None] = {}
    if echo is not None:
        s["echo_foreign_packets"] = _num(echo, "foreign_packets")
        s["echo_send_errors"] = _num(echo, "send_errors")
        if shared_clock(doc, echo):
            s["owd_up_p50_ns"] = _num(doc, "owd_up", "p50_ns")
            s["owd_down_p50_ns"] = _num(doc, "owd_down", "p50_ns")
    return s


def rtt_events(doc: dict[str, Any], echo: dict[str, Any] | None) -> list[Event]:
    """Datagrams neither end could attribute, and replies the echo's kernel refused."""
    events: list[Event] = []
    if (n := int(_num(doc, "foreign_packets") or 0)) > 0:
        events.append(
            Event(
                "tool_anomaly",
                f"the rtt client got {n:,} datagrams from the echo's address that were not replies to its "
                "probes (another program at that port?): not counted as replies",
            )
        )
    if echo and (n := int(_num(echo, "foreign_packets") or 0)) > 0:
        events.append(
            Event(
                "tool_warning",
                f"the echo got {n:,} datagrams that were not RTT requests (another flow sent to its port): "
                "never answered, but they shared the echo's socket with the probes",
            )
        )
    if echo and (n := int(_num(echo, "send_errors") or 0)) > 0:
        events.append(
            Event(
                "tool_anomaly",
                f"the echo's kernel refused {n:,} replies: those probes count as lost though the path "
                "may not have lost them",
            )
        )
    return events


# ---------------------------------------------------------------------------------------------- cpushare


class CpushareDriver:
    tool = TOOL

    def problems(self, m: Any) -> list[str]:
        return [f"measurement '{m.name}': {p}" for p in _missing_binary()]

    def spec_problems(self, m: Any) -> list[tuple[str, str]]:
        return cpushare_field_problems(m)

    def commands(self, m: Any, flow: FlowParams, offered_bps: float | None) -> Commands:
        client = [
            probe_path(), "cpushare", "--duration", _seconds(m.duration),
            "--threshold-us", str(max(1, int(m.threshold) // 1000)), "--max-gaps", str(MAX_GAPS), "--json",
        ]  # fmt: skip
        return Commands(client=client)

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        doc, err = _load(client, "cpushare loop")
        if doc is None:
            return Parsed(error=err)
        s: dict[str, float | None] = {
            "cpu_share_ratio": _num(doc, "cpu_share_ratio"),
            "rusage_cpu_ratio": _num(doc, "rusage_cpu_ratio"),
            "steal_ratio": _num(doc, "steal", "steal_ratio"),
            "gaps_count": _num(doc, "gaps_count"),
            "gaps_sum_ns": _num(doc, "gaps_sum_ns"),
            "gap_p50_ns": _num(doc, "gap", "p50_ns"),
            "gap_p99_ns": _num(doc, "gap", "p99_ns"),
            "gap_max_ns": _num(doc, "gap", "max_ns"),
            "mean_iteration_ns": _num(doc, "mean_iteration_ns"),
            "wall_ns": _num(doc, "wall_ns"),
            "threshold_ns": _num(doc, "threshold_ns"),
        }
        samples = [
            Sample(int(g["at_ns"]), "gap_ns", float(g["gap_ns"]))
            for g in doc.get("gaps") or []
            if isinstance(g, dict) and _num(g, "at_ns") is not None and _num(g, "gap_ns") is not None
        ]
        events = []
        if doc.get("gaps_truncated"):
            events.append(Event("tool_warning", f"more than {len(samples)} gaps: only the first are stored"))
        start = _int(doc, "clock", "start_realtime_ns")
        return Parsed(summary=s, samples=samples, events=events, started_utc_ns=start)

    def version_command(self) -> list[str]:
        return [probe_path(), "--version"]

    def parse_version(self, text: str) -> str:
        return version(text)
