"""iperf3 (written against 3.12): build the server and client commands, parse the JSON they print.

The client runs with --get-server-output, so its JSON carries the server's JSON (`server_output_json`);
the server's own stdout is the fallback. The parser works from both sides because each side knows
different things: only the sender has TCP's cwnd/RTT/retransmits, only the receiver knows what arrived.
With -R the server is the sender. Pitfalls of iperf3 3.12 this module handles (all seen in captures kept
under tests/data/tool_output/iperf3/, see docs/drivers.md):

- `-t` and `-O` are parsed with atoi (whole seconds; "-t 1.7" runs 1 s); `-O` must be 0–60; `-i` is a float
  in 0.1–60 s. We refuse what iperf3 would silently truncate or reject.
- The server reports on its own interval (default 1 s) unless given `-i` too: it gets the client's.
- With -J, a failed client (e.g. connection refused) still exits 0: failure is the "error" key only.
  Parameter errors are plain text on stderr with an empty stdout, whatever -J says.
- `-b` is per stream: the offered total is divided by -P.
- With -O, the interval that straddles the end of the omit period is reported with a wrong length
  (start≈end, seconds≈2 intervals) and, on the UDP sender, a doubled packet count. We take interval
  boundaries from consecutive `end` values and packet counts from bytes ÷ datagram length.
- UDP loss is not taken on trust: iperf3 counts sequence gaps, so losses at the very end are invisible,
  duplicates are counted as out-of-order and subtracted from loss (it goes negative, or wraps around
  2^64), 32-bit sequence counters wrap on long runs (we always pass --udp-counters-64bit), and with -O
  the client's copy of the receiver summary is wrong. We count datagrams sent (client) against
  datagrams that arrived (server bytes ÷ length) and say so in a `tool_anomaly` event when iperf3 differs.
- Fields iperf3 does not know are printed as 0 (the -R client's view of the sender's RTT and cwnd);
  we read them from the side that measured them and treat 0 RTT/cwnd as missing.
"""

from __future__ import annotations

import json
import math
import re
import signal
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vnetbench.drivers.base import Commands, FlowParams, HandshakeWatch, Parsed, ToolOutput
from vnetbench.spec.models import TcpMeasurement, UdpMeasurement
from vnetbench.spec.units import percent_of
from vnetbench.store.records import Event, Sample

TOOL = "iperf3"
CONNECT_TIMEOUT_MS = 5000  # control connection setup; a dead path fails in 5 s instead of the kernel's ~2 min
# A UDP handshake is lost when no datagram reached the server this long after the client's stream
# socket appeared (iperf3 3.12 itself waits 30 s on it): run/handshake.py, handshake_grace_s below.
HANDSHAKE_GRACE_S = 5.0

# Limits of iperf3 3.12 (iperf.h / iperf_api.c), checked before a campaign starts.
MAX_DURATION_S = 86400
MAX_OMIT_S = 60
MIN_INTERVAL_NS, MAX_INTERVAL_NS = 100_000_000, 60 * 10**9
MAX_STREAMS = 128
MAX_WINDOW_BYTES = 512 * 1024 * 1024
UDP_MIN_LENGTH = 16  # 64-bit counters: 4 + 4 bytes timestamp + 8 bytes sequence number
UDP_MAX_LENGTH = 65507

NS = 10**9

Measurement = TcpMeasurement | UdpMeasurement


# ---------------------------------------------------------------------------------------------- commands


def congestion_note(default: str, available: Iterable[str]) -> str:
    """What a user should know about a machine's TCP congestion control, which a measurement without
    `congestion:` gets (a new namespace inherits the default): nothing when it is cubic, the studies'
    TCP; else that it is used and how to repeat a study. bbr, some distributions' and clouds' default,
    ignores random loss (benchmarks/fidelity/README.md, "TCP over a lossy link")."""
    if default == "cubic":
        return ""
    fix = "set `congestion: cubic` to repeat them" if "cubic" in available else "this kernel has no cubic"
    return f"TCP measurements without `congestion:` use {default}; the studies measured cubic: {fix}"


def _seconds(ns: int) -> str:
    """Nanoseconds as a decimal number of seconds without float noise: 10**9 -> '1', 5*10**8 -> '0.5'."""
    whole, frac = divmod(int(ns), NS)
    return str(whole) if frac == 0 else f"{whole}.{frac:09d}".rstrip("0")


def _cut(ns: int) -> str:
    """' (it would silently cut 1.5 s to 1 s)' for a fraction of a second iperf3 would drop."""
    return f" (it would silently cut {_seconds(ns)} s to {ns // NS} s)" if ns > NS and ns % NS else ""


def _time_problems(duration_ns: int, omit_ns: int, interval_ns: int) -> list[tuple[str, str]]:
    out = []
    if duration_ns % NS or not NS <= duration_ns <= MAX_DURATION_S * NS:
        out.append(
            (
                "duration",
                f"duration {_seconds(duration_ns)} s: iperf3 3.12 takes whole seconds from 1 to "
                f"{MAX_DURATION_S}{_cut(duration_ns)}; use e.g. duration: 2s",
            )
        )
    if omit_ns % NS or not 0 <= omit_ns <= MAX_OMIT_S * NS:
        out.append(
            (
                "omit",
                f"omit {_seconds(omit_ns)} s: iperf3 3.12 takes whole seconds from 0 to {MAX_OMIT_S}; "
                "use e.g. omit: 2s (or drop samples in analysis.omit)",
            )
        )
    if not MIN_INTERVAL_NS <= interval_ns <= MAX_INTERVAL_NS:
        out.append(
            (
                "interval",
                f"interval {_seconds(interval_ns)} s: iperf3 reports every 0.1 to 60 s; "
                "use e.g. interval: 1s",
            )
        )
    return out


def _other_problems(m: Measurement) -> list[tuple[str, str]]:
    out = []
    if m.streams > MAX_STREAMS:
        out.append(("streams", f"streams {m.streams}: iperf3 runs at most {MAX_STREAMS} parallel streams"))
    if isinstance(m, TcpMeasurement) and m.window is not None and not 0 < m.window <= MAX_WINDOW_BYTES:
        out.append(
            ("window", f"window {m.window} bytes: iperf3 accepts up to {MAX_WINDOW_BYTES} bytes (512 MiB)")
        )
    if isinstance(m, UdpMeasurement) and not UDP_MIN_LENGTH <= m.length <= UDP_MAX_LENGTH:
        out.append(
            (
                "length",
                f"length {m.length} bytes: iperf3 UDP datagrams carry {UDP_MIN_LENGTH} to {UDP_MAX_LENGTH} "
                f"payload bytes (its header with 64-bit counters is {UDP_MIN_LENGTH} bytes)",
            )
        )
    return out


def field_problems(m: Measurement) -> list[tuple[str, str]]:
    """(field, message) for what iperf3 3.12 cannot do with this measurement, each with the fix."""
    return _time_problems(m.duration, m.omit, m.interval) + _other_problems(m)


def problems(m: Measurement) -> list[str]:
    """What iperf3 3.12 cannot do with this measurement, each with the fix (empty: fine)."""
    return [f"measurement '{m.name}': {p}" for _, p in field_problems(m)]


def server_command(port: int, interval_ns: int) -> list[str]:
    """iperf3's server for one test on `port`, reporting every `interval_ns` (the receiver's view)."""
    # -1: one test, then exit. -i: the server's interval reports are the receiver-view time series,
    # and the server does not learn the client's -i (it would report every second).
    return [TOOL, "-s", "-1", "-p", str(port), "-J", "-i", _seconds(interval_ns)]


def commands(m: Measurement, flow: FlowParams, offered_bps: float | None) -> Commands:
    """The server and client argv for one flow. Raises ValueError on what iperf3 would reject or truncate."""
    found = _time_problems(flow.duration_ns, flow.omit_ns, m.interval) + _other_problems(m)
    if found:
        raise ValueError("; ".join(f"measurement '{m.name}': {p}" for _, p in found))
    client = [
        TOOL, "-c", flow.dst_address, "-p", str(flow.port), "-J",
        "-t", _seconds(flow.duration_ns), "-O", _seconds(flow.omit_ns), "-i", _seconds(m.interval),
        "--get-server-output", "--connect-timeout", str(CONNECT_TIMEOUT_MS),
        "-P", str(m.streams),
    ]  # fmt: skip
    handshake: HandshakeWatch | None
    if isinstance(m, TcpMeasurement):
        handshake = None
        if m.congestion:
            client += ["-C", m.congestion]
        if m.window is not None:
            client += ["-w", str(int(m.window))]
        if m.reverse:
            client += ["-R"]
    else:
        if offered_bps is None or not offered_bps > 0:
            raise ValueError(
                f"measurement '{m.name}': no offered rate for UDP (got {offered_bps!r}); give a rate, "
                "or a link rate on the path when rate is 'link'"
            )
        # iperf3 paces application payload: it compares bytes written to the socket (UDP payload,
        # its own 16-byte header included) × 8 / elapsed time against -b, per stream
        # (iperf_check_throttle). Measured: -b 10M -l 1000 -P 2 sends 2 × 1249 datagrams of 1000 bytes
        # per second, 20 Mbit/s of payload. So -b is the offered payload rate divided by the streams.
        per_stream = max(1, round(offered_bps / m.streams))  # never 0: -b 0 means unlimited
        client += ["-u", "-b", str(per_stream), "-l", str(int(m.length)), "--udp-counters-64bit"]
        if m.window is not None:  # iperf3 hands -w to the server too: both sockets get this buffer
            client += ["-w", str(int(m.window))]
        grace_s = handshake_grace_s(per_stream, int(m.length), m.streams)
        handshake = HandshakeWatch(flow.port, m.streams, grace_s, int(m.length))
    server = server_command(flow.port, m.interval)
    return Commands(client=client, server=server, server_proto="tcp", handshake=handshake)


def handshake_grace_s(per_stream_bps: float, length: int, streams: int) -> float:
    """How long after the client's first UDP socket appears its data must be reaching the server.
    The base covers the control messages between the handshakes and the first datagram, resent on a
    lossy path (TCP's RTO starts at 200 ms and doubles: four losses in a row of one message take
    3 s); the streams' handshakes follow one another (a round trip each), and a slow flow gets the
    time for three of its datagrams on top."""
    return HANDSHAKE_GRACE_S + 0.25 * (streams - 1) + 3 * length * 8 / max(per_stream_bps, 1.0)


# ---------------------------------------------------------------------------------------------- parsing

_ADDITIVE = {"bytes", "packets", "lost_packets", "retransmits", "out_of_order"}

_ERROR_HINTS = (  # (substring of iperf3's message, what it means for the user); first match wins
    ("timed out", "nothing answered the connection attempt: the path to the server drops packets"),
    ("refused", "nothing listens on that port: the server did not start, or exited"),
    ("unable to connect", "no iperf3 server answered at that address and port"),
    ("control socket has closed unexpectedly", "the server went away mid-test (killed or crashed)"),
    ("client has unexpectedly closed", "the client went away mid-test (killed, e.g. on timeout)"),
    ("server is busy", "another client is using this server: every flow needs its own server and port"),
    ("unable to receive", "the control connection broke: check the path and the server's log"),
)


@dataclass
class _Interval:
    start_s: float  # from the start of the measured period (after omit)
    end_s: float
    sum: dict[str, Any]
    streams: list[dict[str, Any]]
    reported_s: float | None = None

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


@dataclass
class _Side:
    """One side's JSON (client or server) and what we read from it."""

    doc: dict[str, Any]
    intervals: list[_Interval] = field(default_factory=list)
    fixed: int = 0  # intervals whose reported length iperf3 got wrong
    merged_tail: bool = False

    @property
    def end(self) -> dict[str, Any]:
        end = self.doc.get("end")
        return end if isinstance(end, dict) else {}


def _num(d: Any, key: str) -> float | None:
    if not isinstance(d, dict):
        return None
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _load(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(document, None) or (None, why not)."""
    text = (text or "").strip()
    if not text:
        return None, "no output"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"output is not complete JSON ({err.msg} at line {err.lineno}; truncated?)"
    if not isinstance(doc, dict):
        return None, "output is JSON but not an iperf3 report"
    return doc, None


def _stderr_lines(text: str | None) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _with_hint(message: str) -> str:
    low = message.lower()
    for needle, hint in _ERROR_HINTS:
        if needle in low:
            return f"{message} — {hint}"
    return message


def _side_intervals(doc: dict[str, Any]) -> _Side:
    side = _Side(doc)
    raw = doc.get("intervals")
    prev_end = 0.0
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("sum"), dict):
            continue
        s = item["sum"]
        if s.get("omitted"):
            continue
        end = _num(s, "end")
        if end is None or end <= prev_end:
            continue
        streams = [x for x in item.get("streams") or [] if isinstance(x, dict)]
        iv = _Interval(prev_end, end, s, streams, _num(s, "seconds"))
        if iv.reported_s is not None and abs(iv.reported_s - iv.seconds) > max(0.002, 0.05 * iv.seconds):
            side.fixed += 1
        side.intervals.append(iv)
        prev_end = end
    # The receiver's last interval is often a sliver (the few ms between the sender's end and the
    # end message): merge it into the one before, so no sample is a rate over a millisecond.
    ivs = side.intervals
    if len(ivs) >= 2:
        nominal = statistics.median(iv.seconds for iv in ivs[:-1])
        if ivs[-1].seconds < 0.5 * nominal:
            last = ivs.pop()
            prev = ivs[-1]
            prev.end_s = last.end_s
            prev.sum = _merge(prev.sum, last.sum)
            prev.streams = [_merge(a, b) for a, b in zip(prev.streams, last.streams, strict=False)]
            side.merged_tail = True
    return side


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if k in _ADDITIVE and _num(a, k) is not None and _num(b, k) is not None:
            out[k] = a[k] + v
        else:
            out[k] = v  # a state at the end of the interval (cwnd, rtt, jitter): the later one
    return out


def _t_ns(omit_s: float, iv: _Interval) -> int:
    return round((omit_s + iv.start_s) * NS)


def _rate(d: dict[str, Any], seconds: float) -> float | None:
    b = _num(d, "bytes")
    return None if b is None or seconds <= 0 else b * 8 / seconds


def _emit(
    samples: list[Sample], side: _Side, omit_s: float, metric: str, value: Any, *, sum_value: Any = None
) -> None:
    """One sample per interval for the sum (stream None) and one per stream (stream = index, from 0).
    A value iperf3 did not give (or that we do not trust) is left out, not stored as a number."""
    for iv in side.intervals:
        t = _t_ns(omit_s, iv)
        total = sum_value(iv) if sum_value else value(iv.sum, iv)
        if total is not None:
            samples.append(Sample(t, metric, total))
        for i, st in enumerate(iv.streams):
            v = value(st, iv)
            if v is not None:
                samples.append(Sample(t, metric, v, stream=i))


def _positive(d: dict[str, Any], key: str, scale: float = 1.0) -> float | None:
    v = _num(d, key)
    return None if v is None or v <= 0 else v * scale


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def parse(client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
    """Parse a finished client (and its server). Never raises: unreadable output is Parsed.error."""
    try:
        out = _parse(client, server)
        if out.error is not None:
            cdoc = _load(client.stdout)[0]
            sdoc = cdoc.get("server_output_json") if cdoc else None
            if not isinstance(sdoc, dict) and server is not None:
                sdoc = _load(server.stdout)[0]
            out.setup_failed = _is_setup_failure(out.error, cdoc, sdoc)
        return out
    except Exception as err:  # a parser bug must not lose the measurement; the raw output is stored
        return Parsed(error=f"could not read iperf3's output ({type(err).__name__}: {err}); raw output kept")


def _parse(client: ToolOutput, server: ToolOutput | None) -> Parsed:
    out = Parsed()
    for role, proc in (("client", client), ("server", server)):
        for line in _stderr_lines(proc.stderr if proc else None):
            if line.lower().startswith("warning"):
                out.events.append(Event("tool_warning", f"iperf3 {role}: {line}"))
    cdoc, why = _load(client.stdout)
    sdoc = cdoc.get("server_output_json") if cdoc else None
    if not isinstance(sdoc, dict):
        sdoc, _ = _load(server.stdout) if server is not None else (None, None)
    if not _errors(out, client, server, cdoc, sdoc, why):
        return out
    ts = _test_start(out, cdoc, sdoc)
    if ts is None:
        return out
    reverse = bool(ts.get("reverse"))
    omit_s = _num(ts, "omit") or 0.0
    csd = _side_intervals(cdoc) if cdoc else None
    ssd = _side_intervals(sdoc) if sdoc else None
    sender, receiver = (ssd, csd) if reverse else (csd, ssd)
    _interval_anomalies(out, csd, ssd, missing_receiver=receiver is None and cdoc is not None)

    def rate(d: dict[str, Any], iv: _Interval) -> float | None:
        return _rate(d, iv.seconds)

    if receiver:
        _emit(out.samples, receiver, omit_s, "throughput_bps", rate)
    if sender:
        _emit(out.samples, sender, omit_s, "sender_throughput_bps", rate)
    if str(ts.get("protocol", "")).upper() == "UDP":
        _udp(out, ts, cdoc, receiver, sender, omit_s, _num(ts, "blksize"))
    else:
        _tcp(out, cdoc, sender, omit_s)
        _tcp_window(out, receiver, omit_s)
    if out.error is None and cdoc is not None:
        _cpu(out, cdoc, reverse)
    if out.error is not None:
        out.summary.clear()  # a failed test has no summary; its partial samples are kept
    return out


def _errors(
    out: Parsed,
    client: ToolOutput,
    server: ToolOutput | None,
    cdoc: dict[str, Any] | None,
    sdoc: dict[str, Any] | None,
    why: str,
) -> bool:
    """Note the client's or server's error; False when there is no report at all to read."""
    if cdoc is None:
        err = [line for line in _stderr_lines(client.stderr) if not line.lower().startswith("warning")]
        if err:
            out.error = _with_hint(err[-1])
        elif client.returncode is None or client.returncode < 0:
            out.error = (
                "iperf3 client killed before it printed its report (with -J it prints only at the end)"
            )
            if sdoc is not None and isinstance(sdoc.get("error"), str) and sdoc["error"]:
                out.error += f"; iperf3 server: {sdoc['error']}"  # e.g. the results exchange it lost
        else:
            out.error = f"iperf3 client: {why} (exit code {client.returncode})"
        if sdoc is None:
            return False
    elif isinstance(cdoc.get("error"), str) and cdoc["error"]:
        said = _server_said(server, sdoc)
        # the server's own words say why it went away ('control socket has closed unexpectedly' only
        # says that it did); they also tell a lost results exchange (a setup failure, re-run) apart
        out.error = (
            _with_hint(f"iperf3 client: {cdoc['error']}")
            if said is None
            else f"iperf3 client: {cdoc['error']}; {said}"
        )
    if out.error is None and sdoc is not None and isinstance(sdoc.get("error"), str) and sdoc["error"]:
        # A server error with a complete client report (rare) is worth keeping, not failing on.
        out.events.append(Event("tool_warning", f"iperf3 server: {sdoc['error']}"))
    return True


def _server_said(server: ToolOutput | None, sdoc: dict[str, Any] | None) -> str | None:
    """The server's error, or the signal that ended it, for a client error that may be the server's."""
    if sdoc is not None and isinstance(sdoc.get("error"), str) and sdoc["error"]:
        return f"iperf3 server: {sdoc['error']}"
    if server is not None and server.returncode is not None and server.returncode < 0:
        return f"iperf3 server: ended by signal {-server.returncode} ({_signal_name(-server.returncode)})"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _test_start(
    out: Parsed, cdoc: dict[str, Any] | None, sdoc: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The test's parameters (start.test_start) and its start time; None: the test never started."""
    first = cdoc or sdoc or {}
    start = first.get("start") if isinstance(first.get("start"), dict) else {}
    ts = start.get("test_start") if isinstance(start.get("test_start"), dict) else None
    if ts is None and sdoc is not None and isinstance(sdoc.get("start"), dict):
        ts = sdoc["start"].get("test_start")
    if not isinstance(ts, dict):
        if out.error is None:
            out.error = "iperf3's report has no test parameters (start.test_start): the test never started"
        return None
    stamp = _num(start.get("timestamp"), "timesecs")
    if stamp is not None:
        out.started_utc_ns = int(stamp) * NS  # iperf3 gives whole seconds only
    return ts


def _interval_anomalies(out: Parsed, csd: _Side | None, ssd: _Side | None, missing_receiver: bool) -> None:
    for name, side in (("client", csd), ("server", ssd)):
        if side and side.fixed:
            out.events.append(
                Event(
                    "tool_anomaly",
                    f"iperf3 {name}: {side.fixed} interval(s) reported with a wrong length (the interval "
                    "that straddles the end of -O omit); their rates are recomputed from the interval ends",
                )
            )
    if missing_receiver and out.error is None:
        out.events.append(
            Event("tool_anomaly", "no iperf3 server report: the receiver-side time series is missing")
        )


def _cpu(out: Parsed, cdoc: dict[str, Any], reverse: bool) -> None:
    """iperf3's own CPU figures: host = the client, remote = the server; with -R the server sends."""
    end = cdoc.get("end") if isinstance(cdoc.get("end"), dict) else {}
    cpu = end.get("cpu_utilization_percent")
    host, remote = _num(cpu, "host_total"), _num(cpu, "remote_total")
    snd, rcv = (remote, host) if reverse else (host, remote)
    out.summary["sender_cpu_ratio"] = None if snd is None else snd / 100
    out.summary["receiver_cpu_ratio"] = None if rcv is None else rcv / 100


# iperf3 3.12's messages for a handshake that did not complete: the UDP "connect" datagram or its
# answer lost (the client waits 30 s on it, then gives up), the control connection not established;
# and the client's or server's (the client's message then carries the server's) for a setup step
# before TEST_START, when nothing has been measured yet (iperf_error.c: IERECVCOOKIE, IESENDPARAMS,
# IERECVPARAMS, IESTREAMACCEPT, IESTREAMLISTEN). Not "select failed": the 3.12 server's fails when its
# own timer closed the sockets duration + omit + 5 s after TEST_START (data was flowing; docs/drivers.md).
SETUP_ERRORS = (
    "unable to read from stream socket",
    "unable to write to stream socket",
    "unable to connect stream",
    "unable to send cookie",
    "unable to connect to server: connection timed out",
    "unable to receive cookie at server",
    "unable to send parameters to server",
    "unable to receive parameters from client",
    "unable to accept stream connection",
    "unable to start stream listener",
)


# ... and for a results exchange at the end that the path lost (a control message resent past the
# other side's patience): the data was sent, but neither side has the whole result.
EXCHANGE_ERRORS = ("unable to receive results", "unable to send results")


def _is_setup_failure(error: str, cdoc: dict[str, Any] | None, sdoc: dict[str, Any] | None = None) -> bool:
    """The tool, not the test, failed: a setup message with no interval measured on either side (the
    path lost the handshake), or the end-of-test results exchange lost."""
    low = error.lower()
    measured = any(isinstance(doc, dict) and doc.get("intervals") for doc in (cdoc, sdoc))
    lost_exchange = any(msg in low for msg in EXCHANGE_ERRORS)
    return lost_exchange or (not measured and any(msg in low for msg in SETUP_ERRORS))


def _tcp(out: Parsed, cdoc: dict[str, Any] | None, sender: _Side | None, omit_s: float) -> None:
    if sender:

        def retrans(d: dict[str, Any], iv: _Interval) -> float | None:
            return _num(d, "retransmits")

        def cwnd(d: dict[str, Any], iv: _Interval) -> float | None:
            return _positive(d, "snd_cwnd")

        def rtt(d: dict[str, Any], iv: _Interval) -> float | None:
            return _positive(d, "rtt", 1000.0)  # iperf3: microseconds (tcpi_rtt)

        def cwnd_total(iv: _Interval) -> float | None:
            vals = [cwnd(st, iv) for st in iv.streams]
            return sum(v for v in vals if v is not None) if any(v is not None for v in vals) else None

        def rtt_mean(iv: _Interval) -> float | None:
            return _mean(rtt(st, iv) for st in iv.streams)

        _emit(out.samples, sender, omit_s, "retransmits", retrans)
        _emit(out.samples, sender, omit_s, "cwnd_bytes", cwnd, sum_value=cwnd_total)
        _emit(out.samples, sender, omit_s, "rtt_ns", rtt, sum_value=rtt_mean)

    if out.error is not None or cdoc is None:
        return
    end = cdoc.get("end") if isinstance(cdoc.get("end"), dict) else {}
    rx, tx = end.get("sum_received"), end.get("sum_sent")
    s = out.summary
    s["throughput_bps"] = _num(rx, "bits_per_second")
    s["sender_throughput_bps"] = _num(tx, "bits_per_second")
    s["bytes_received"] = _num(rx, "bytes")
    sender_end = sender.end if sender else {}
    s["retransmits"] = _num(sender_end.get("sum_sent"), "retransmits")
    if s["retransmits"] is None:
        s["retransmits"] = _num(tx, "retransmits")
    streams = [st.get("sender") for st in sender_end.get("streams") or [] if isinstance(st, dict)]
    s["mean_rtt_ns"] = _mean(_positive(st, "mean_rtt", 1000.0) for st in streams)
    mins = [v for v in (_positive(st, "min_rtt", 1000.0) for st in streams) if v is not None]
    maxs = [v for v in (_positive(st, "max_rtt", 1000.0) for st in streams) if v is not None]
    cwnds = [v for v in (_positive(st, "max_snd_cwnd") for st in streams) if v is not None]
    s["min_rtt_ns"] = min(mins) if mins else None
    s["max_rtt_ns"] = max(maxs) if maxs else None
    s["max_cwnd_bytes"] = max(cwnds) if cwnds else None
    # The receive window the receiver advertised, as the sender saw it: what `-w` became (Linux
    # doubles the buffer asked for and advertises the share its skbs' overhead leaves).
    wnds = [v for v in (_positive(st, "max_snd_wnd") for st in streams) if v is not None]
    s["max_snd_wnd_bytes"] = max(wnds) if wnds else None


@dataclass
class _UdpCounts:
    """The datagram counts of a UDP test, and whether iperf3's own loss count can be believed."""

    sent: float | None  # the sender's count
    arrived: float | None  # bytes received / datagram size
    expected: float | None  # the receiver's sequence-number range
    claimed: float | None  # iperf3's lost_packets
    plausible: bool


def window_goodput(doc: dict[str, Any], omit_s: float) -> tuple[float, float] | None:
    """(bytes, seconds) the receiver read in the full-length intervals of the measured window.

    Left out: the drain tail (the receiver's last interval, when shorter than half the others: bytes
    that were in the link's queue when the sender stopped) and, after a non-zero omit, the first
    interval — it also holds bytes that arrived before the omit ended but were read after it (TCP's
    out-of-order queue released by a retransmission, or a receiver the CPU kept waiting): measured
    up to 103 % of the overhead model in that interval (docs/fidelity-notes.md). None without two
    intervals.
    """
    rows: list[tuple[float, float]] = []
    prev_end = 0.0
    for item in doc.get("intervals") or []:
        s = item.get("sum") if isinstance(item, dict) else None
        if not isinstance(s, dict) or s.get("omitted"):
            continue
        end, nbytes = _num(s, "end"), _num(s, "bytes")
        if end is None or nbytes is None or end <= prev_end:
            continue
        rows.append((nbytes, end - prev_end))
        prev_end = end
    if len(rows) < 2:
        return None
    nominal = statistics.median(t for _, t in rows)
    full = [(b, t) for b, t in rows if t >= 0.5 * nominal]
    if omit_s > 0 and len(full) >= 2:
        full = full[1:]
    return sum(b for b, _ in full), sum(t for _, t in full)


def _tcp_window(out: Parsed, receiver: _Side | None, omit_s: float) -> None:
    """throughput_bps = the receiver's bytes inside the measured window (window_goodput)."""
    if out.error is not None or "throughput_bps" not in out.summary:
        return
    out.summary["iperf3_throughput_bps"] = out.summary["throughput_bps"]
    window = window_goodput(receiver.doc, omit_s) if receiver else None
    if window is None or window[1] <= 0:
        out.events.append(
            Event(
                "tool_anomaly",
                "TCP goodput from iperf3's own summary: the receiver reported fewer than two intervals",
            )
        )
        return
    nbytes, seconds = window
    out.summary["throughput_bps"] = nbytes * 8 / seconds
    out.summary["window_bytes_received"] = nbytes
    out.summary["window_ns"] = round(seconds * NS)


def _udp(
    out: Parsed,
    ts: dict[str, Any],
    cdoc: dict[str, Any] | None,
    receiver: _Side | None,
    sender: _Side | None,
    omit_s: float,
    blksize: float | None,
) -> None:
    def datagrams(d: dict[str, Any]) -> float | None:
        b = _num(d, "bytes")
        return None if b is None or not blksize else float(round(b / blksize))

    rx_end = receiver.end.get("sum_received") if receiver else None
    cl_end = cdoc.get("end") if cdoc and isinstance(cdoc.get("end"), dict) else {}
    used_client_copy = False
    if not isinstance(rx_end, dict) or not rx_end:
        rx_end, used_client_copy = cl_end.get("sum_received"), True
    tx_end = sender.end.get("sum_sent") if sender else None
    if not isinstance(tx_end, dict) or not tx_end:
        tx_end = cl_end.get("sum_sent")
    sent, expected, claimed = _num(tx_end, "packets"), _num(rx_end, "packets"), _num(rx_end, "lost_packets")
    plausible = (
        claimed is not None
        and expected is not None
        and 0 <= claimed <= expected
        and (sent is None or expected <= 2 * sent + 1000)
    )
    arrived = datagrams(rx_end) if isinstance(rx_end, dict) else None
    counts = _UdpCounts(sent, arrived, expected, claimed, plausible)
    if receiver:
        _udp_samples(out, receiver, omit_s, plausible, datagrams)
    if out.error is not None or rx_end is None:
        return
    s = out.summary
    seconds = _num(rx_end, "seconds")
    rx_bytes = _num(rx_end, "bytes")
    s["throughput_bps"] = rx_bytes * 8 / seconds if rx_bytes is not None and seconds else None
    s["sender_throughput_bps"] = _num(tx_end, "bits_per_second")
    target, nstreams = _num(ts, "target_bitrate"), _num(ts, "num_streams") or 1
    s["offered_bps"] = target * nstreams if target else None  # iperf3's -b is per stream
    s["packets_sent"] = sent
    s["packets_received"] = arrived
    rx_streams = receiver.end.get("streams") or [] if receiver else []
    ooo = [v for v in (_num(st.get("udp"), "out_of_order") for st in rx_streams) if v is not None]
    s["out_of_order_packets"] = sum(ooo) if ooo else None
    s["iperf3_lost_packets"] = claimed
    if omit_s > 0 and sender is not None and receiver is not None:
        s["run_packets_sent"] = _whole_run(sender.doc, datagrams)  # "packets" can be cumulative after -O
        s["run_packets_received"] = _whole_run(receiver.doc, datagrams)
    _udp_loss(out, counts, omit_s)
    _udp_client_copy(out, cl_end, claimed, used_client_copy, receiver is not None)
    jit = [_num(iv.sum, "jitter_ms") for iv in receiver.intervals] if receiver else []
    jit = [v for v in jit if v is not None]
    last = _num(rx_end, "jitter_ms")
    s["jitter_last_ns"] = None if last is None else last * 1e6
    s["jitter_mean_ns"] = sum(jit) / len(jit) * 1e6 if jit else None


def _whole_run(doc: dict[str, Any], count: Callable[[dict[str, Any]], float | None]) -> float | None:
    """A count over every interval of one side, the -O warm-up's included: what the kernel's counters
    saw during the tool's run (loss localization compares with them; the summaries leave it out)."""
    values = [
        count(item["sum"])
        for item in doc.get("intervals") or []
        if isinstance(item, dict) and isinstance(item.get("sum"), dict)
    ]
    return None if not values or any(v is None for v in values) else float(sum(v for v in values if v))


def _udp_samples(
    out: Parsed,
    receiver: _Side,
    omit_s: float,
    plausible: bool,
    datagrams: Callable[[dict[str, Any]], float | None],
) -> None:
    def lost(d: dict[str, Any], iv: _Interval) -> float | None:
        v = _num(d, "lost_packets")
        p = _num(d, "packets")
        return v if plausible and v is not None and p is not None and 0 <= v <= p else None

    def jitter(d: dict[str, Any], iv: _Interval) -> float | None:
        return _num(d, "jitter_ms") * 1e6 if _num(d, "jitter_ms") is not None else None

    def packets(d: dict[str, Any], iv: _Interval) -> float | None:
        return datagrams(d)

    _emit(out.samples, receiver, omit_s, "lost_packets", lost)
    _emit(out.samples, receiver, omit_s, "jitter_ns", jitter)
    _emit(out.samples, receiver, omit_s, "packets", packets)


def _udp_loss(out: Parsed, c: _UdpCounts, omit_s: float) -> None:
    """Loss. Without -O both sides count the whole test: lost = sent − arrived. With -O each side resets
    its counters at its own omit end, and the receiver's window is shifted by the one-way delay (the
    queue), so sender and receiver counts are not comparable: use the receiver's own sequence range."""
    s = out.summary
    sent, arrived, expected, claimed, plausible = c.sent, c.arrived, c.expected, c.claimed, c.plausible
    if omit_s == 0 and sent is not None and arrived is not None:
        lost_n, base, how = sent - arrived, sent, f"{sent:,.0f} sent − {arrived:,.0f} received"
    elif plausible and arrived is not None and expected is not None:
        lost_n, base = expected - arrived, expected
        how = f"{expected:,.0f} expected from sequence numbers − {arrived:,.0f} received (with -O)"
    else:
        lost_n, base, how = None, None, ""
    duplicated = lost_n is not None and lost_n < 0
    if duplicated:
        out.events.append(
            Event(
                "tool_anomaly",
                f"more UDP datagrams arrived than were sent ({how}): the path duplicated at least "
                f"{-lost_n:,.0f}, so loss is stored as 0; iperf3 counted {_fmt(s['out_of_order_packets'])} "
                f"out-of-order and reported {_fmt(claimed)} lost of {_fmt(expected)}"
                + ("" if plausible else "; its per-interval loss counts are not stored"),
            )
        )
        lost_n = 0.0
    s["lost_packets"] = lost_n
    s["loss_ratio"] = lost_n / base if lost_n is not None and base else None
    if lost_n is None:
        out.events.append(
            Event(
                "tool_anomaly",
                f"UDP loss unknown: iperf3's counters are implausible (reported {_fmt(claimed)} lost of "
                f"{_fmt(expected)} for {_fmt(sent)} sent) and -O prevents counting sent against received",
            )
        )
    elif not duplicated and claimed != lost_n:
        why = ""
        if not plausible:
            why = (
                ": its sequence counters are corrupt (duplicates, or 32-bit counters that wrapped); "
                "its per-interval loss counts are not stored"
            )
        elif claimed is not None and claimed < lost_n and omit_s == 0:
            why = ": losses at the very end leave no sequence gap, so iperf3 cannot see them"
        out.events.append(
            Event(
                "tool_anomaly",
                f"iperf3 reported {_fmt(claimed)} UDP datagrams lost of {_fmt(expected)} "
                f"({_pct(claimed, expected)}); counted {lost_n:,.0f} = {how} "
                f"({_pct(lost_n, base)}), which is stored{why}",
            )
        )


def _udp_client_copy(
    out: Parsed, cl_end: dict[str, Any], claimed: float | None, used_client_copy: bool, have_receiver: bool
) -> None:
    """The client's copy of the receiver's summary: noted when it disagrees, or when it is all there is."""
    cl_rx = cl_end.get("sum_received") if isinstance(cl_end.get("sum_received"), dict) else None
    if not used_client_copy and cl_rx is not None and have_receiver:
        cl_claim = _num(cl_rx, "lost_packets")
        if cl_claim is not None and claimed is not None and cl_claim != claimed:
            out.events.append(
                Event(
                    "tool_anomaly",
                    f"iperf3's client summary claims {cl_claim:,.0f} UDP datagrams lost "
                    f"({_fmt(_num(cl_rx, 'lost_percent'), '{:.2f} %')}), its server counted {claimed:,.0f}: "
                    "the client's copy is wrong (seen with -O); not used",
                )
            )
    if used_client_copy:
        out.events.append(
            Event("tool_anomaly", "UDP receiver summary taken from the client's copy (no server report)")
        )


def _fmt(v: float | None, pattern: str = "{:,.0f}") -> str:
    """A count with thousands separators, as the report writes counts (12,182); '?' when unknown."""
    return "?" if v is None else pattern.format(v)


def _pct(n: float | None, d: float | None) -> str:
    """n of d as the report's loss tables write it (`percent_of`: 0.01 %, not 0.012 %); '?' unknown."""
    return "?" if n is None or not d else percent_of(n / d)


# ---------------------------------------------------------------------------------------------- version

_VERSION = re.compile(r"iperf\s+(\d+\.\d+(?:\.\d+)?[^\s(]*)")


def version_command() -> list[str]:
    """The command that prints iperf3's version."""
    return [TOOL, "--version"]


def version(text: str) -> str:
    """'iperf 3.12 (cJSON 1.7.15)\\n...' -> '3.12'; unrecognised: the first line, so nothing is lost."""
    match = _VERSION.search(text or "")
    if match:
        return match.group(1)
    lines = _stderr_lines(text)
    return lines[0][:80] if lines else "unknown"


class Iperf3Driver:
    """The registry's iperf3 driver (tcp and udp measurements)."""

    tool = TOOL

    def problems(self, m: Measurement) -> list[str]:
        return problems(m)

    def spec_problems(self, m: Measurement) -> list[tuple[str, str]]:
        return field_problems(m)

    def commands(self, m: Measurement, flow: FlowParams, offered_bps: float | None) -> Commands:
        return commands(m, flow, offered_bps)

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        return parse(client, server)

    def version_command(self) -> list[str]:
        return version_command()

    def parse_version(self, text: str) -> str:
        return version(text)
