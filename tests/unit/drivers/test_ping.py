"""ping: the command, and parsing of real captured outputs (tests/data/tool_output/ping/*.meta.json)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.helpers.capture import DATA, ping_capture
from vnetbench.drivers import ping
from vnetbench.drivers.base import FlowParams, Output, Parsed
from vnetbench.spec.models import RttMeasurement


def rtt(**kw: object) -> RttMeasurement:
    return RttMeasurement.model_validate({"name": "r", "kind": "rtt", **kw})


FLOW = FlowParams("a", "b", "198.18.0.2", 0, 0)


def parsed(name: str) -> Parsed:
    out, _ = ping_capture(name)
    return ping.parse(out)


def samples(p: Parsed, metric: str) -> list[tuple[int | None, int, float]]:
    return [(s.seq, s.t_ns, s.value) for s in p.samples if s.metric == metric]


def events(p: Parsed, kind: str) -> list[str]:
    return [e.detail for e in p.events if e.kind == kind]


def printed(name: str) -> dict[str, float]:
    """ping's own statistics lines."""
    text = (DATA / "ping" / f"{name}.stdout").read_text()
    out: dict[str, float] = {}
    m = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    if m:
        out["sent"], out["received"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"\+(\d+) duplicates", text)
    out["duplicates"] = float(m.group(1)) if m else 0.0
    m = re.search(r"([\d.]+)% packet loss", text)
    if m:
        out["loss"] = float(m.group(1)) / 100
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", text)
    if m:
        out["min"], out["avg"], out["max"], out["mdev"] = (float(x) * 1e6 for x in m.groups())
    return out


# ------------------------------------------------------------------------------------------- commands


def test_default_command_exact() -> None:
    cmds = ping.commands(rtt(), FLOW, None)
    assert cmds.client == [
        "ping",
        "-D",
        "-n",
        "-O",
        "-c",
        "10",
        "-i",
        "1",
        "-s",
        "56",
        "-W",
        "2",
        "198.18.0.2",
    ]
    assert cmds.server is None


def test_every_option() -> None:
    m = rtt(count=5000, interval="20ms", size=1400, deadline="500ms")
    cmds = ping.commands(m, FlowParams("a", "b", "198.18.3.4", 0, 0), None)
    assert cmds.client == [
        "ping", "-D", "-n", "-O", "-c", "5000", "-i", "0.02", "-s", "1400", "-W", "0.5", "198.18.3.4",
    ]  # fmt: skip


def test_fixture_was_captured_with_the_command_we_build() -> None:
    _, meta = ping_capture("ping_normal")
    assert (
        ping.commands(rtt(count=10, interval="200ms", size=56, deadline="2s"), FLOW, None).client
        == meta["argv"]
    )


def test_interval_lands_on_the_intended_millisecond() -> None:
    # ping computes (int)(strtod(arg) * 1000): "1.001" would give 1000 ms
    assert int(float("1.001") * 1000) == 1000
    assert ping._ms_arg(1_001_000_000) == "1.0010005"
    assert ping._ms_arg(200_000_000) == "0.2"
    assert ping._ms_arg(2_000_000) == "0.002"
    assert ping._ms_arg(60_000_000_000) == "60"
    for ms in range(2, 20_001):
        assert int(float(ping._ms_arg(ms * 1_000_000)) * 1000) == ms


@pytest.mark.parametrize(
    ("m", "needle"),
    [
        (rtt(interval="1ms"), "every 2 ms"),
        (rtt(interval="2500us"), "whole milliseconds"),
        (rtt(deadline="1500us"), "whole milliseconds"),
        (rtt(size=8), "16 to 65507"),
        (rtt(size=70000), "16 to 65507"),
    ],
)
def test_problems(m: RttMeasurement, needle: str) -> None:
    found = ping.problems(m)
    assert len(found) == 1 and needle in found[0] and found[0].startswith("measurement 'r': ")
    with pytest.raises(ValueError, match=re.escape(needle)):
        ping.commands(m, FLOW, None)
    assert ping.problems(rtt(interval="2ms", size=16)) == []


def test_version() -> None:
    assert ping.version((DATA / "ping" / "version.txt").read_text()) == "iputils 20221126"
    assert ping.version("BusyBox v1.36.1 (2023-07-27) multi-call binary.") == "BusyBox v1.36.1"
    assert ping.version("") == "unknown"
    assert ping.version_command() == ["ping", "-V"]


# ------------------------------------------------------------------------------------------- parsing


def test_normal() -> None:
    p = parsed("ping_normal")
    tool = printed("ping_normal")
    s = p.summary
    assert p.error is None
    assert (s["sent_packets"], s["received_packets"], s["loss_ratio"]) == (10, 10, 0)
    got = samples(p, "rtt_ns")
    assert [seq for seq, _, _ in got] == list(range(1, 11))
    rtts = np.array([v for _, _, v in got])
    assert rtts.tolist() == [73e3, 71e3, 67e3, 72e3, 52e3, 63e3, 64e3, 56e3, 63e3, 70e3]
    assert s["rtt_min_ns"] == tool["min"] and s["rtt_max_ns"] == tool["max"]
    assert s["rtt_mean_ns"] == pytest.approx(tool["avg"], abs=500)  # ping rounds to the µs
    assert s["rtt_median_ns"] == np.median(rtts) == 65_500
    assert s["rtt_p95_ns"] == np.percentile(rtts, 95) and s["rtt_p99_ns"] == np.percentile(rtts, 99)
    assert s["rtt_sd_ns"] == pytest.approx(np.std(rtts, ddof=1))
    assert s["rtt_mdev_ns"] == tool["mdev"] == 6000  # ping's own, for reference
    assert np.std(rtts) == pytest.approx(tool["mdev"], abs=1000)  # mdev is a population SD, in whole µs
    assert s["duplicate_replies"] == 0 and s["unreachable_events"] == 0 and s["late_replies"] == 0
    # the time axis starts when request 1 was sent: its reply comes one RTT later (µs resolution)
    assert got[0][1] == 73_000
    assert p.started_utc_ns == 1795374893_619331_000 - 73_000
    assert all(t % 1000 == 0 for _, t, _ in got)
    assert [t for _, t, _ in got] == sorted(t for _, t, _ in got)
    assert p.events == []


def test_loss_with_no_answer_yet() -> None:
    p = parsed("ping_loss")
    tool = printed("ping_loss")
    s = p.summary
    assert (s["sent_packets"], s["received_packets"]) == (tool["sent"], tool["received"]) == (15, 10)
    assert s["loss_ratio"] == pytest.approx(tool["loss"], abs=1e-6) == pytest.approx(1 / 3)
    lost = samples(p, "lost")
    assert [seq for seq, _, _ in lost] == [7, 8, 9, 10, 11] and all(v == 1 for _, _, v in lost)
    # "no answer yet" for 7-11, and no reply to them ever came: never answered, not late
    assert [d.split()[0] for d in events(p, "no_reply")] == [f"icmp_seq={n}" for n in range(7, 12)]
    assert events(p, "late_reply") == [] and events(p, "no_answer") == []
    # a lost request's sample sits at its send time, between its neighbours' (~204 ms apart)
    times = dict((seq, t) for seq, t, _ in samples(p, "rtt_ns"))
    lost_t = dict((seq, t) for seq, t, _ in lost)
    assert times[6] < lost_t[7] < lost_t[8] < lost_t[11] < times[12]
    assert lost_t[8] - lost_t[7] == pytest.approx(204e6, rel=0.01)
    assert s["rtt_max_ns"] == 105_000


def test_late_replies_are_not_loss() -> None:
    p = parsed("ping_late")
    s = p.summary
    # requests 3-6 were reported "no answer yet" and then answered: only 7 and 8 are lost
    # ping printed "no answer yet" for 3-7; 3-6 were answered after that, 7 never (the capture above)
    assert [int(d.split()[0].split("=")[1]) for d in events(p, "late_reply")] == [3, 4, 5, 6]
    # 8 was the last request: ping prints no "no answer yet" for it, the parser tells it from the summary
    assert events(p, "no_reply") == [
        "icmp_seq=7 never answered while ping ran — counted as lost",
        "icmp_seq=8 never answered before ping ended — counted as lost",
    ]
    # ping_late.stdout: "icmp_seq=3 ttl=64 time=204 ms", printed after "no answer yet for icmp_seq=3"
    assert events(p, "late_reply")[0] == (
        "icmp_seq=3 answered late: its reply (RTT 204 ms) came after request 4 was sent — not lost"
    )
    assert not any("unanswered" in d or "lost" in d.split("—")[0] for d in events(p, "late_reply"))
    assert [seq for seq, _, _ in samples(p, "lost")] == [7, 8]
    assert s["late_replies"] == 4
    assert (s["sent_packets"], s["received_packets"], s["loss_ratio"]) == (8, 6, 0.25)
    # above 100 ms ping prints 3 significant figures: time=204 ms
    assert [v for _, _, v in samples(p, "rtt_ns")][2:] == [204e6, 417e6, 658e6, 871e6]


def test_total_loss_is_a_result_not_an_error() -> None:
    out, meta = ping_capture("ping_total_loss")
    assert meta["returncode"] == 1
    p = ping.parse(out)
    s = p.summary
    assert p.error is None
    assert (s["sent_packets"], s["received_packets"], s["loss_ratio"]) == (5, 0, 1.0)
    assert s["rtt_mean_ns"] is None and s["rtt_min_ns"] is None and s["rtt_mdev_ns"] is None
    lost = samples(p, "lost")
    assert [seq for seq, _, _ in lost] == [1, 2, 3, 4, 5]  # 5 has no "no answer yet" line: ping just ended
    assert [t for _, t, _ in lost] == pytest.approx([0, 204e6, 408e6, 612e6, 816e6], abs=1e5)
    assert len(events(p, "no_reply")) == 5 and events(p, "late_reply") == []
    last = next(e for e in p.events if e.kind == "no_reply" and e.detail.startswith("icmp_seq=5 "))
    assert last.detail == "icmp_seq=5 never answered before ping ended — counted as lost"
    assert last.t_ns == lost[-1][1]  # at its request's send time, as its lost sample


@pytest.mark.parametrize("name", ["ping_loss", "ping_late", "ping_total_loss", "ping_unreachable"])
def test_every_lost_request_is_explained_by_an_event(name: str) -> None:
    # "every lost packet accounted for": a no_reply, or the ICMP error that answered instead
    p = parsed(name) if name != "ping_total_loss" else ping.parse(ping_capture(name)[0])
    lost = [seq for seq, _, _ in samples(p, "lost")]
    told = [
        int(e.detail.split()[0].split("=")[1].rstrip(":"))
        for e in p.events
        if e.kind in ("no_reply", "unreachable")
    ]
    assert sorted(set(told)) == lost
    no_reply = [e.detail.split()[0] for e in p.events if e.kind == "no_reply"]
    assert len(no_reply) == len(set(no_reply))  # never told twice


def test_host_unreachable() -> None:
    p = parsed("ping_unreachable")
    s = p.summary
    assert p.error is None
    assert s["unreachable_events"] == 6 and s["loss_ratio"] == 1.0
    got = events(p, "unreachable")
    assert got[0] == "icmp_seq=1: from 198.18.0.1: Destination Host Unreachable"
    assert len(got) == 6 and len(samples(p, "lost")) == 6
    assert all(
        e.t_ns is not None and e.t_ns > 3e9 for e in p.events if e.kind == "unreachable"
    )  # ARP gave up


def test_unreachable_from_a_router_and_ttl_exceeded() -> None:
    p = parsed("ping_unreachable_net")
    assert p.summary["unreachable_events"] == 3  # the router rate-limits its ICMP errors
    assert all("from 198.18.0.2: Destination Host Unreachable" in d for d in events(p, "unreachable"))
    p = parsed("ping_ttl_exceeded")
    assert p.summary["unreachable_events"] == 3
    assert events(p, "unreachable")[0] == "icmp_seq=1: from 198.18.0.2: Time to live exceeded"


def test_duplicates() -> None:
    p = parsed("ping_dup")
    tool = printed("ping_dup")
    s = p.summary
    assert s["duplicate_replies"] == tool["duplicates"] == 12
    assert s["received_packets"] == 5 and s["loss_ratio"] == 0
    # the first reply per request only: ping's own average includes the duplicates
    assert [v for _, _, v in samples(p, "rtt_ns")] == [229e3, 105e3, 92e3, 97e3, 78e3]
    assert s["rtt_mean_ns"] == pytest.approx(120_200)
    assert tool["avg"] == 137_000
    assert events(p, "tool_anomaly") == []


def test_broadcast_duplicates_have_no_dup_mark() -> None:
    text = (DATA / "ping" / "ping_broadcast.stdout").read_text()
    assert "DUP!" not in text
    p = parsed("ping_broadcast")
    assert p.summary["duplicate_replies"] == printed("ping_broadcast")["duplicates"] == 3
    assert events(p, "tool_warning") == ["ping: WARNING: pinging broadcast address"]


def test_exit_2_is_an_error() -> None:
    out, meta = ping_capture("ping_no_route")
    assert meta["returncode"] == 2
    p = ping.parse(out)
    assert p.error == "ping: connect: Network is unreachable — the source node has no route to that address"
    assert p.summary == {} and p.samples == []
    p = parsed("ping_bad_address")
    assert p.error == "ping: 198.18.300.1: Temporary failure in name resolution"


def test_killed_ping_keeps_what_it_printed() -> None:
    out, _ = ping_capture("ping_normal")
    head = "\n".join(out.stdout.splitlines()[:5])
    p = ping.parse(Output(head, "", None))
    assert p.error is not None and "killed" in p.error
    assert p.summary == {}
    assert len(samples(p, "rtt_ns")) == 4


@pytest.mark.parametrize("text", ["", "hello", "[x] 64 bytes from", "64 bytes from 1.2.3.4: icmp_seq=x"])
def test_garbage_never_raises(text: str) -> None:
    p = ping.parse(Output(text, "", 0))
    assert isinstance(p, Parsed) and p.error is not None and "no statistics line" in p.error


def test_sequence_numbers_unwrap_after_65535() -> None:
    unwrap = ping._SeqUnwrapper()
    assert [unwrap(s) for s in (65534, 65535, 0, 1, 65535, 2)] == [65534, 65535, 65536, 65537, 65535, 65538]
    lines = "\n".join(
        f"[1700000000.{i:06d}] 64 bytes from 198.18.0.2: icmp_seq={seq} ttl=64 time=0.050 ms"
        for i, seq in enumerate([65535, 0, 1])
    )
    text = f"{lines}\n\n--- x ---\n3 packets transmitted, 3 received, 0% packet loss, time 2ms\n"
    p = ping.parse(Output(text, "", 0))
    assert [seq for seq, _, _ in samples(p, "rtt_ns")] == [65535, 65536, 65537]
    assert p.summary["duplicate_replies"] == 0
