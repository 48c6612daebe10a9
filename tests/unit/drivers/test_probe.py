"""The vnb-probe drivers: exact commands, and parsing real output captured in namespaces."""

from __future__ import annotations

import json
import statistics
import subprocess

import pytest

from tests.helpers.capture import DATA, probe_capture
from vnetbench.drivers.base import FlowParams, Output
from vnetbench.drivers.probe import probe_path, sender_summary, version
from vnetbench.kinds import driver_for
from vnetbench.spec.models import Campaign

CAPTURES = DATA / "vnb-probe"
FLOW_KEYS = {"achieved_pps", "send_lateness_p50_ns", "send_lateness_p99_ns", "send_lateness_max_ns"}


def measurement(**fields: object) -> object:
    campaign = Campaign.model_validate(
        {
            "name": "t",
            "topology": {"nodes": [{"name": "a"}, {"name": "b"}], "links": [{"endpoints": ["a", "b"]}]},
            "measurements": [{"name": "m", **fields}],
            "patterns": [{"kind": "pairs", "pairs": [["a", "b"]], "measurements": ["m"]}],
        }
    )
    return campaign.measurements[0]


def flow(duration_s: float = 5, **params: int) -> FlowParams:
    return FlowParams("a", "b", "198.18.0.2", 5300, int(duration_s * 1e9), 0, params)


def test_pps_step_commands_take_the_sweep_point() -> None:
    m = measurement(kind="pps", rates=[1000, 2000], sizes=[18, 1472], duration="2s", busy_poll=True)
    cmds = driver_for("pps").commands(m, flow(2, pps=2000, size=1472), 2000 * 1472 * 8)
    probe = probe_path()
    assert cmds.client == [
        probe, "send", "--dst", "198.18.0.2:5300", "--pps", "2000", "--size", "1472", "--duration", "2", "--json",
    ]  # fmt: skip
    assert cmds.server == [
        probe, "recv", "--bind", "198.18.0.2:5300", "--expect-streams", "1", "--duration", "17",
        "--idle-timeout", "3", "--trace-bin-us", "0", "--json", "--busy-poll",
    ]  # fmt: skip
    assert (cmds.server_proto, cmds.port) == ("udp", 5300)


def test_trace_and_background_commands() -> None:
    trace = measurement(kind="trace", rate="20mbit", size=1000, duration="1.5s", bin="500us")
    cmds = driver_for("trace").commands(trace, flow(1.5), 20e6)
    assert cmds.client[3:] == [
        "198.18.0.2:5300",
        "--rate",
        "20000000",
        "--size",
        "1000",
        "--duration",
        "1.5",
        "--json",
    ]
    assert cmds.server[cmds.server.index("--trace-bin-us") + 1] == "500"
    bg = measurement(kind="background", pps=3000, size=64, pairs=[["a", "b"]])
    cmds = driver_for("background").commands(bg, flow(4.5), None)
    assert cmds.client[4:8] == ["--pps", "3000", "--size", "64"]
    assert cmds.server[cmds.server.index("--trace-bin-us") + 1] == "100000"


def test_rtt_and_cpushare_commands() -> None:
    rtt = measurement(kind="probe-rtt", count=50, interval="10ms", size=64, wait="500ms")
    cmds = driver_for("probe-rtt").commands(rtt, flow(), None)
    assert cmds.client[1:] == [
        "rtt", "--dst", "198.18.0.2:5300", "--interval", "0.01", "--count", "50", "--size", "64", "--wait", "0.5",
        "--json",
    ]  # fmt: skip
    # the echo outlives the probes (0.5 s) and the wait (0.5 s) by 2 s, then prints its report
    assert cmds.server[1:] == ["echo", "--bind", "198.18.0.2:5300", "--duration", "3", "--json"]
    cs = measurement(kind="cpushare", duration="3s", threshold="50us")
    cmds = driver_for("cpushare").commands(cs, FlowParams("a", "a", "", 0, 0), None)
    assert cmds.server is None
    assert cmds.client[1:] == [
        "cpushare",
        "--duration",
        "3",
        "--threshold-us",
        "50",
        "--max-gaps",
        "5000",
        "--json",
    ]


def test_probe_flow_summary_carries_rate_and_lateness() -> None:
    client, server, _ = probe_capture("pps_bg")
    parsed = driver_for("pps").parse(client, server)
    send = json.loads(client.stdout)
    recv = json.loads(server.stdout)
    assert parsed.error is None
    s = parsed.summary
    assert {k for k, v in s.items() if v is not None} >= FLOW_KEYS
    assert s["achieved_pps"] == send["achieved_pps"]
    assert s["send_lateness_p99_ns"] == send["send_lateness"]["p99_ns"]
    assert s["send_lateness_max_ns"] == send["send_lateness"]["max_ns"]
    assert s["target_pps"] == 1000 and s["payload_bytes"] == 18
    assert s["received_packets"] == recv["totals"]["unique_packets"] == s["sent_packets"]
    assert s["loss_ratio"] == 0 and s["exact_loss"] == 1
    assert parsed.started_utc_ns == send["first_send_realtime_ns"]
    assert parsed.samples == []  # a sweep step stores no trace


def test_without_a_fin_loss_and_rate_come_from_the_senders_count() -> None:
    """A receiver that saw no FIN counts loss only inside the sequence range it got (here 0) and its
    rate over its own arrivals; the flow sent 2000 and 799 arrived (the capture's meta.json)."""
    client, server, _ = probe_capture("nofin")
    recv = json.loads(server.stdout)
    assert recv["streams"][0]["expected_source"] == "seq_range" and recv["totals"]["loss_ratio"] == 0
    s = driver_for("pps").parse(client, server).summary
    assert s["sent_packets"] == 2000 and s["received_packets"] == 799
    assert s["lost_packets"] == 1201 and s["loss_ratio"] == pytest.approx(1201 / 2000)
    # the delivered share of the sender's achieved rate (about 2000 pps), not the receiver's 2000
    assert s["received_pps"] == pytest.approx(799, rel=0.01)
    assert s["received_bps"] == pytest.approx(799 * 18 * 8, rel=0.01)
    assert s["exact_loss"] == 0 and s["loss_from_sender_count"] == 1


def test_trace_over_a_tbf_link_twice_its_rate_loses_half() -> None:
    client, server, _meta = probe_capture("trace_tbf_loss")
    parsed = driver_for("trace").parse(client, server)
    recv = json.loads(server.stdout)
    s = parsed.summary
    assert s["loss_ratio"] == pytest.approx(0.5, abs=0.02)
    assert s["lost_packets"] + s["received_packets"] == s["sent_packets"]
    assert s["received_bps"] == pytest.approx(10e6 * 1472 / 1514, rel=0.03)  # tbf counts L2 frames
    rates = [x for x in parsed.samples if x.metric == "throughput_bps"]
    packets = [x for x in parsed.samples if x.metric == "packets"]
    assert len(rates) == len(packets) == len(recv["trace"]["bytes"])
    assert sum(p.value for p in packets) == recv["totals"]["received_packets"]
    assert rates[1].t_ns - rates[0].t_ns == 10_000_000
    assert sum(r.value for r in rates) * 0.01 / 8 == pytest.approx(recv["totals"]["received_bytes"])


def test_rtt_statistics_come_from_every_probe() -> None:
    client, server, _ = probe_capture("rtt")
    parsed = driver_for("probe-rtt").parse(client, server)
    doc = json.loads(client.stdout)
    rtts = [r["rtt_ns"] for r in doc["records"] if not r["lost"]]
    s = parsed.summary
    assert s["rtt_min_ns"] == min(rtts) and s["rtt_max_ns"] == max(rtts)
    assert s["rtt_median_ns"] == statistics.median(rtts)
    assert s["rtt_mean_ns"] == pytest.approx(statistics.fmean(rtts))
    assert s["rtt_sd_ns"] == pytest.approx(statistics.stdev(rtts))
    assert s["sent_packets"] == 50 and s["loss_ratio"] == 0
    assert s["target_pps"] == pytest.approx(100) and s["achieved_pps"] == pytest.approx(100, rel=0.01)
    assert [x.seq for x in parsed.samples if x.metric == "rtt_ns"] == list(range(50))


def test_rtt_to_a_port_without_echo_is_total_loss_with_its_icmp_errors() -> None:
    """A real run to a closed loopback port: vnb-probe exited 1 ("recvmmsg: Connection refused") and
    the measurement failed; now every probe is lost and the ICMP errors are counted."""
    client, _, _ = probe_capture("rtt_closed_port")
    parsed = driver_for("probe-rtt").parse(client, None)
    s = parsed.summary
    assert parsed.error is None
    assert (s["sent_packets"], s["received_packets"], s["lost_packets"], s["loss_ratio"]) == (5, 0, 5, 1.0)
    assert s["unreachable_events"] == json.loads(client.stdout)["unreachable_events"] == 5
    assert s["rtt_median_ns"] is None
    assert [x.metric for x in parsed.samples] == ["lost"] * 5


def test_cpushare_summary_and_gaps() -> None:
    client, _, _ = probe_capture("cpushare_half")
    parsed = driver_for("cpushare").parse(client, None)
    doc = json.loads(client.stdout)
    assert parsed.summary["cpu_share_ratio"] == doc["cpu_share_ratio"]
    assert 0.3 < parsed.summary["cpu_share_ratio"] < 0.6  # captured in a cgroup with half a core
    assert len(parsed.samples) == len(doc["gaps"]) == doc["gaps_count"]
    assert sum(x.value for x in parsed.samples) == doc["gaps_sum_ns"]


def test_failures_are_one_line_errors_never_exceptions() -> None:
    d = driver_for("pps")
    _, server, _ = probe_capture("error_bind")
    client, _, _ = probe_capture("pps_bg")
    parsed = d.parse(client, server)
    assert parsed.error is not None and "cannot bind 198.18.255.1:5000" in parsed.error
    assert parsed.summary == {}
    killed = d.parse(Output("", "", None), server)
    assert "killed" in (killed.error or "")
    for junk in ("", "{", "[1]", '{"tool": "iperf3"}', "\x00\xff"):
        got = d.parse(Output(junk), Output(junk))
        assert got.error
        assert driver_for("probe-rtt").parse(Output(junk)).error
        assert driver_for("cpushare").parse(Output(junk)).error


def test_version() -> None:
    assert version("vnb-probe 0.1.0\n") == "0.1.0"
    assert version("vnb-probe 0.1.0 (debug build)\n") == "0.1.0 (debug build)"
    assert driver_for("pps").version_command()[1:] == ["--version"]


def test_the_installed_probe_is_the_optimised_build() -> None:
    """`make setup` is an editable install, which setuptools-rust builds unoptimised unless told
    (pyproject: debug = false); a debug probe does its user-space work slower."""
    done = subprocess.run([probe_path(), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("vnb-probe ") and "debug" not in done.stdout, done.stdout


def test_sender_summary_keeps_the_burst_the_pacing_produced() -> None:
    """A real `vnb-probe send --rate 1M --size 1000` report (125 pps): each wake-up sends one packet."""
    send = json.loads((DATA / "vnb-probe" / "send_bursts.client.stdout").read_text())
    s = sender_summary(send)
    assert s["burst_max_packets"] == send["burst_packets"]["max_packets"] == 1
    assert s["burst_p99_packets"] == send["burst_packets"]["p99_packets"]
    assert s["wake_lateness_p99_ns"] == send["wake_lateness"]["p99_ns"]
    assert s["pacing_quantum_ns"] == send["pacing_quantum_ns"]
    # a report from before the burst fields parses, with them missing
    old = {k: v for k, v in send.items() if k not in ("burst_packets", "wake_lateness")}
    assert sender_summary(old)["burst_max_packets"] is None


def test_a_truncated_trace_is_an_event_from_the_real_receiver() -> None:
    """The receiver keeps 3.6M trace bins (3.6 s of 1 µs bins) and sets `trace.truncated` for later
    packets; the driver ignored the flag, so a trace that stopped early looked complete. Two packets
    5 s apart (0.2 packets/s for 10 s: 2 slots) through the real binary on loopback: the second is past
    the last bin. `--catch-up 2`: on a loaded machine a wake-up more than the 5 ms stall threshold late
    skipped its slot by default (counted in missed_slots_packets), and with one packet sent nothing
    was truncated (failed three times beside helpers and stress-ng this stop)."""
    recv = subprocess.Popen(
        [probe_path(), "recv", "--bind", "127.0.0.1:0", "--expect-streams", "1", "--duration", "20",
         "--trace-bin-us", "1", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert recv.stderr is not None
        ready = recv.stderr.readline().split()
        assert ready[0] == "READY", ready
        send = subprocess.run(
            [probe_path(), "send", "--dst", ready[1], "--pps", "0.2", "--duration", "10", "--catch-up", "2", "--json"],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        out, err = recv.communicate(timeout=30)
    finally:
        recv.kill()
    assert json.loads(send.stdout)["sent_packets"] == 2, send.stdout
    trace = json.loads(out)["trace"]
    assert trace["truncated"] is True and trace["packets"] == [1]
    parsed = driver_for("trace").parse(Output(send.stdout, "", 0), Output(out, err, 0))
    assert parsed.error is None and parsed.summary["received_packets"] == 2
    # (a sender whose last FIN copies met the receiver gone also warns of its failed sends: not this test's)
    warnings = [e.detail for e in parsed.events if e.kind == "tool_warning" and "trace" in e.detail]
    assert warnings == [
        "the receiver's trace stopped after 1 bins (it keeps at most 3,600,000): later packets are in "
        "the totals but not in the trace samples"
    ]
