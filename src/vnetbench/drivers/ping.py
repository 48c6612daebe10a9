"""ping (iputils, written against 20221126): build the command, parse every line it prints.

    ping -D -n -O -c COUNT -i INTERVAL -s SIZE -W WAIT ADDRESS

-D prefixes each line with the UNIX time in microseconds; -n prints numeric addresses; -O prints
"no answer yet for icmp_seq=N" when request N is still unanswered as request N+1 goes out. That is not
loss: the reply can still come (it did in tests/data/tool_output/ping/ping_late.stdout). A request is lost
when no reply for it is printed at all. What iputils does that shapes this parser (see docs/drivers.md):

- -i and -W are parsed as `(int)(seconds * 1000)`: whole milliseconds, and some decimal values truncate
  one millisecond low (1.001 -> 1000 ms); we write the value so that it lands on the intended millisecond.
  Below 2 ms ping refuses to run unless it is root (iputils 20221126; older releases: 200 ms).
- -W is not a per-reply deadline: once the last request is sent ping waits max(2 × the largest RTT
  seen by then, the interval) if anything was answered, else -W. A reply later than that is lost.
- RTTs are printed with 3 significant figures above 1 ms (time=204 ms): 1 µs resolution below 1 ms,
  10 µs to 10 ms, 100 µs to 100 ms, 1 ms above. The per-reply samples carry what was printed.
- ping's own avg/mdev include duplicate replies; ours are over the first reply to each request.
- Duplicates to a broadcast address are not marked (DUP!): a repeated icmp_seq is a duplicate too.
- icmp_seq is 16 bits: it wraps after 65535 requests; we unwrap it.
- Exit codes: 0 replies came, 1 nothing came back (a result: 100 % loss), 2 ping could not run.
"""

from __future__ import annotations

import itertools
import re
import statistics
from dataclasses import dataclass, field

import numpy as np

from vnetbench.drivers.base import Commands, FlowParams, Parsed, ToolOutput
from vnetbench.spec.models import RttMeasurement
from vnetbench.store.records import Event, Sample

TOOL = "ping"
DEFAULT_WAIT_NS = 2 * 10**9
MIN_INTERVAL_NS = 2_000_000  # iputils 20221126 refuses shorter intervals to non-root users
MIN_SIZE = 16  # below this the request has no room for the timestamp and ping prints no RTT
MAX_SIZE = 65507
MS = 1_000_000


# ---------------------------------------------------------------------------------------------- commands


def _ms_arg(ns: int) -> str:
    """Seconds for iputils' `(int)(strtod(arg) * 1000)` that land exactly on ns's whole milliseconds."""
    ms = ns // MS
    text = f"{ms // 1000}.{ms % 1000:03d}".rstrip("0").rstrip(".")
    if int(float(text) * 1000) != ms:  # the same double arithmetic as ping: 1.001 * 1000 = 1000.999...
        text = f"{ms // 1000}.{ms % 1000:03d}0005"  # half a microsecond more, never the next millisecond
    return text


def field_problems(m: RttMeasurement) -> list[tuple[str, str]]:
    """(field, message) for what ping cannot do with this measurement, each with the fix (empty: fine)."""
    out = []
    wait = m.deadline if m.deadline is not None else DEFAULT_WAIT_NS
    for name, ns, least in (("interval", m.interval, MIN_INTERVAL_NS), ("deadline", wait, MS)):
        if ns % MS:
            # a whole millisecond the next check accepts too: 1.5 ms said 'use 1ms' beside 'use 2ms or more'
            fix = max(ns // MS, least // MS)
            out.append(
                (name, f"{name} {ns / MS:g} ms: ping counts whole milliseconds; use e.g. {name}: {fix}ms")
            )
    if m.interval < MIN_INTERVAL_NS:
        out.append(
            (
                "interval",
                f"interval {m.interval / MS:g} ms: ping sends at most every 2 ms unless it runs as root; "
                "use 2ms or more",
            )
        )
    if wait < MS:
        out.append(("deadline", "deadline: ping waits at least 1 ms; use e.g. deadline: 2s"))
    if not MIN_SIZE <= m.size <= MAX_SIZE:
        out.append(
            (
                "size",
                f"size {m.size} bytes: ping measures RTT only with {MIN_SIZE} to {MAX_SIZE} payload bytes "
                "(the request carries its send time)",
            )
        )
    return out


def problems(m: RttMeasurement) -> list[str]:
    """What ping cannot do with this measurement, each with the fix (empty: fine)."""
    return [f"measurement '{m.name}': {p}" for _, p in field_problems(m)]


def commands(m: RttMeasurement, flow: FlowParams, offered_bps: float | None = None) -> Commands:
    """The ping argv for one flow (no server). Raises ValueError on what ping would reject or truncate."""
    errors = problems(m)
    if errors:
        raise ValueError("; ".join(errors))
    wait = m.deadline if m.deadline is not None else DEFAULT_WAIT_NS
    client = [
        TOOL, "-D", "-n", "-O",
        "-c", str(m.count), "-i", _ms_arg(m.interval), "-s", str(int(m.size)), "-W", _ms_arg(wait),
        flow.dst_address,
    ]  # fmt: skip
    return Commands(client=client, server=None)


# ---------------------------------------------------------------------------------------------- parsing

_STAMP = re.compile(r"^\[(\d+)\.(\d+)\]\s?(.*)$")
_REPLY = re.compile(r"^(\d+) bytes from (.+?): icmp_seq=(\d+)(?: ttl=(\d+))?(?: time=([\d.]+) ms)?(.*)$")
_NO_ANSWER = re.compile(r"^no answer yet for icmp_seq=(\d+)")
_ICMP_ERROR = re.compile(r"^From (.+?):? icmp_seq=(\d+) (.+)$")
_TRANSMITTED = re.compile(r"(\d+) packets transmitted, (\d+) received")
_DUPLICATES = re.compile(r"\+(\d+) duplicates")
_RTT_LINE = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")


@dataclass
class _Line:
    t_ns: int | None  # absolute UTC from -D
    text: str


class _SeqUnwrapper:
    """icmp_seq is 16 bits; turn it back into the request number (late replies from before a wrap too)."""

    def __init__(self) -> None:
        self.base = 0
        self.last: int | None = None

    def __call__(self, raw: int) -> int:
        if self.last is not None:
            if raw < self.last - 32768:
                self.base += 65536
            elif raw > self.last + 32768:
                return self.base - 65536 + raw  # late reply from before the wrap: keep state
        self.last = raw
        return self.base + raw


def _lines(stdout: str) -> list[_Line]:
    out = []
    for raw in (stdout or "").splitlines():
        raw = raw.rstrip()
        if not raw:
            continue
        m = _STAMP.match(raw)
        if m:
            frac = m.group(2)[:9].ljust(9, "0")
            out.append(_Line(int(m.group(1)) * 10**9 + int(frac), m.group(3)))
        else:
            out.append(_Line(None, raw))
    return out


def parse(client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
    """Parse a finished ping. Never raises: unreadable output is Parsed.error."""
    try:
        return _parse(client)
    except Exception as err:  # a parser bug must not lose the measurement; the raw output is stored
        return Parsed(error=f"could not read ping's output ({type(err).__name__}: {err}); raw output kept")


def _parse(client: ToolOutput) -> Parsed:
    out = Parsed()
    if _failed(client, out):
        return out
    lines = _lines(client.stdout)
    # Times are kept relative to the first stamped line: UTC in ns does not fit a float exactly.
    ref = next((ln.t_ns for ln in lines if ln.t_ns is not None), None)
    seen = _read(lines, ref)
    sends = _SendTimes(seen)
    t0 = sends.at(1) or 0.0  # relative to ref
    out.started_utc_ns = None if ref is None else ref + round(t0)

    def rel(t: float | None) -> int:
        return 0 if t is None else round(t - t0)

    for seq in sorted(seen.rtt):
        t, r = seen.rtt[seq]
        out.samples.append(Sample(rel(t), "rtt_ns", r, seq=seq))
    sent = seen.transmitted
    if sent is None:  # no statistics line: ping did not finish
        numbers = list(seen.rtt) + list(seen.no_answer)
        sent = max(numbers) if numbers else None
        if client.returncode is None or client.returncode < 0:
            out.error = "ping was killed before it finished (timeout?); the replies it printed are kept"
        else:
            out.error = "ping printed no statistics line: its output is incomplete"
    if sent is not None:
        for seq in range(1, sent + 1):
            if seq not in seen.rtt:
                out.samples.append(Sample(rel(sends.at(seq)), "lost", 1.0, seq=seq))
    for t, kind, detail in seen.deferred:
        if kind == NO_ANSWER_YET:
            kind, detail = _late_or_lost(seen, int(detail))
        out.events.append(Event(kind, detail, rel(t) if t is not None else None))
    for seq in _unanswered_at_end(seen, sent):
        detail = f"icmp_seq={seq} never answered before ping ended — counted as lost"
        out.events.append(Event(NO_REPLY, detail, rel(sends.at(seq))))
    out.events += _anomalies(seen)
    if not out.error:  # partial output: samples and events kept, no summary
        _summarize(out.summary, seen, sent)
    return out


# ping's "no answer yet for icmp_seq=N" (-O), printed as request N+1 goes out: a reply may still come.
NO_ANSWER_YET = "no answer yet"
LATE_REPLY = "late_reply"  # answered after the next request was sent: not loss
NO_REPLY = "no_reply"  # never answered while ping ran: counted in loss_ratio


def _late_or_lost(seen: _Seen, seq: int) -> tuple[str, str]:
    """The event for a "no answer yet" line, once all lines are read: answered late, or never."""
    if seq in seen.rtt:
        rtt_ms = seen.rtt[seq][1] / MS
        return LATE_REPLY, (
            f"icmp_seq={seq} answered late: its reply (RTT {rtt_ms:.3g} ms) came after request {seq + 1} "
            "was sent — not lost"
        )
    return NO_REPLY, f"icmp_seq={seq} never answered while ping ran — counted as lost"


def _unanswered_at_end(seen: _Seen, sent: int | None) -> list[int]:
    """Lost requests ping printed no line for: -O reports a missing reply only when the next request
    goes out, so the last ones (and any an ICMP error did not explain) would be lost without an event."""
    if sent is None:
        return []
    told = seen.rtt.keys() | seen.no_answer.keys() | seen.icmp_error
    return [seq for seq in range(1, sent + 1) if seq not in told]


def _failed(client: ToolOutput, out: Parsed) -> bool:
    """Note ping's warnings; True (with out.error) when it exited with an error."""
    stderr = [line.strip() for line in (client.stderr or "").splitlines() if line.strip()]
    for line in stderr:
        if line.lower().startswith("warning"):
            out.events.append(Event("tool_warning", f"ping: {line}"))
    if client.returncode is None or client.returncode < 2:
        return False
    errors = [line for line in stderr if not line.lower().startswith("warning")]
    reason = errors[-1] if errors else f"exit code {client.returncode}"
    out.error = reason if reason.startswith("ping") else f"ping: {reason}"
    if "unreachable" in reason.lower() or "no route" in reason.lower():
        out.error += " — the source node has no route to that address"
    return True


@dataclass
class _Seen:
    """What ping's lines said, times relative to the first stamped line."""

    rtt: dict[int, tuple[int, float]] = field(
        default_factory=dict
    )  # seq -> (reply time, rtt ns): first reply
    no_answer: dict[int, int | None] = field(default_factory=dict)  # seq -> time of its first "no answer yet"
    late: int = 0
    duplicates: int = 0
    unreachable: int = 0
    icmp_error: set[int] = field(default_factory=set)  # seqs an ICMP error answered
    printed_no_rtt: int = 0
    transmitted: int | None = None
    dup_summary: int | None = None
    mdev_ns: float | None = None
    deferred: list[tuple[int | None, str, str]] = field(default_factory=list)  # events, times made relative


def _read(lines: list[_Line], ref: int | None) -> _Seen:
    seen = _Seen()
    unwrap = _SeqUnwrapper()
    for line in lines:
        text, t_line = line.text, None if line.t_ns is None or ref is None else line.t_ns - ref
        if m := _REPLY.match(text):
            seq = unwrap(int(m.group(3)))
            if m.group(5) is None:
                seen.printed_no_rtt += 1
                continue
            if "(DUP!)" in m.group(6) or seq in seen.rtt:
                seen.duplicates += 1
                continue
            if t_line is None:
                continue
            seen.rtt[seq] = (t_line, float(m.group(5)) * MS)
            if seq in seen.no_answer:
                seen.late += 1
        elif m := _NO_ANSWER.match(text):
            seq = unwrap(int(m.group(1)))
            seen.no_answer.setdefault(seq, t_line)
            seen.deferred.append((t_line, NO_ANSWER_YET, str(seq)))  # late or lost: told once all is read
        elif m := _ICMP_ERROR.match(text):
            seq = unwrap(int(m.group(2)))
            kind = "icmp_redirect" if "redirect" in m.group(3).lower() else "unreachable"
            seen.unreachable += kind == "unreachable"
            seen.icmp_error.add(seq)
            seen.deferred.append((t_line, kind, f"icmp_seq={seq}: from {m.group(1)}: {m.group(3)}"))
        elif m := _TRANSMITTED.search(text):
            seen.transmitted = int(m.group(1))
            d = _DUPLICATES.search(text)
            seen.dup_summary = int(d.group(1)) if d else 0
        elif text.startswith("rtt ") and (m := _RTT_LINE.search(text)):
            seen.mdev_ns = float(m.group(4)) * MS
    return seen


class _SendTimes:
    """When was each request sent? A reply gives its request's send time (reply − RTT); a "no answer
    yet for N" line is printed as request N+1 goes out. Unknown ones are interpolated between known
    ones and extrapolated with the median spacing. Request 1's send time is the start (µs resolution)."""

    def __init__(self, seen: _Seen) -> None:
        self.sends = {seq: t - r for seq, (t, r) in seen.rtt.items()}
        for seq, t in seen.no_answer.items():
            if t is not None:
                self.sends.setdefault(seq + 1, t)
        self.known = sorted(self.sends.items())
        steps = [(t2 - t1) / (s2 - s1) for (s1, t1), (s2, t2) in itertools.pairwise(self.known) if s2 > s1]
        self.interval = statistics.median(steps) if steps else 0.0

    def at(self, seq: int) -> float | None:
        if not self.known:
            return None
        if seq in self.sends:
            return self.sends[seq]
        (first_seq, first_t), (last_seq, last_t) = self.known[0], self.known[-1]
        if seq < first_seq:
            return first_t - (first_seq - seq) * self.interval
        if seq > last_seq:
            return last_t + (seq - last_seq) * self.interval
        xs, ys = zip(*self.known, strict=True)
        return float(np.interp(seq, xs, ys))


def _anomalies(seen: _Seen) -> list[Event]:
    out = []
    if seen.dup_summary is not None and seen.dup_summary != seen.duplicates:
        detail = f"ping's summary counts {seen.dup_summary} duplicates, its lines show {seen.duplicates}"
        out.append(Event("tool_anomaly", detail))
    if seen.printed_no_rtt:
        detail = f"{seen.printed_no_rtt} replies without an RTT (payload under {MIN_SIZE} bytes?)"
        out.append(Event("tool_anomaly", detail))
    return out


def _summarize(s: dict[str, float | None], seen: _Seen, sent: int | None) -> None:
    values = np.array([r for _, r in seen.rtt.values()], dtype=float)
    s["sent_packets"] = None if sent is None else float(sent)
    s["received_packets"] = float(len(seen.rtt))
    s["loss_ratio"] = 1 - len(seen.rtt) / sent if sent else None
    s["duplicate_replies"] = float(seen.duplicates)
    s["late_replies"] = float(seen.late)
    s["unreachable_events"] = float(seen.unreachable)
    if values.size:
        s["rtt_min_ns"] = float(values.min())
        s["rtt_mean_ns"] = float(values.mean())
        s["rtt_median_ns"] = float(np.median(values))
        s["rtt_p95_ns"] = float(np.percentile(values, 95))
        s["rtt_p99_ns"] = float(np.percentile(values, 99))
        s["rtt_max_ns"] = float(values.max())
        s["rtt_sd_ns"] = float(values.std(ddof=1)) if values.size > 1 else None
    else:
        for k in ("min", "mean", "median", "p95", "p99", "max", "sd"):
            s[f"rtt_{k}_ns"] = None
    s["rtt_mdev_ns"] = seen.mdev_ns


# ---------------------------------------------------------------------------------------------- version

_VERSION = re.compile(r"(iputils[- ]\S+|BusyBox v\S+)", re.IGNORECASE)


def version_command() -> list[str]:
    """The command that prints ping's version."""
    return [TOOL, "-V"]


def version(text: str) -> str:
    """'ping from iputils 20221126' -> 'iputils 20221126'; unrecognised: the first line."""
    match = _VERSION.search(text or "")
    if match:
        return match.group(1)
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0][:80] if lines else "unknown"


class PingDriver:
    """The registry's ping driver (rtt measurements)."""

    tool = TOOL

    def problems(self, m: RttMeasurement) -> list[str]:
        return problems(m)

    def spec_problems(self, m: RttMeasurement) -> list[tuple[str, str]]:
        return field_problems(m)

    def commands(self, m: RttMeasurement, flow: FlowParams, offered_bps: float | None = None) -> Commands:
        return commands(m, flow, offered_bps)

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        return parse(client, server)

    def version_command(self) -> list[str]:
        return version_command()

    def parse_version(self, text: str) -> str:
        return version(text)
