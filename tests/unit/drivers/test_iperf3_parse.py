"""iperf3 parsing, against real captured outputs (tests/data/tool_output/iperf3/*.meta.json say how).

Every expected number is read from the tool's own JSON in the test (or from what it printed), so a
check says "the driver reports what iperf3 measured", or where iperf3 is wrong, "what it should have".
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from tests.helpers.capture import iperf3_capture, iperf3_json
from vnetbench.drivers import iperf3
from vnetbench.drivers.base import Output, Parsed
from vnetbench.kinds.overhead import tcp_efficiency, udp_efficiency
from vnetbench.providers.base import Finished
from vnetbench.report.format import share


def parsed(name: str) -> Parsed:
    client, server, _ = iperf3_capture(name)
    return iperf3.parse(client, server)


def series(p: Parsed, metric: str, stream: int | None = None) -> list[tuple[int, float]]:
    return [(s.t_ns, s.value) for s in p.samples if s.metric == metric and s.stream == stream]


def values(p: Parsed, metric: str, stream: int | None = None) -> list[float]:
    return [v for _, v in series(p, metric, stream)]


def kinds(p: Parsed, kind: str) -> list[str]:
    return [e.detail for e in p.events if e.kind == kind]


def not_omitted(doc: dict) -> list[dict]:
    return [i for i in doc["intervals"] if not i["sum"]["omitted"]]


def receiver_window_bps(doc: dict, omit: bool) -> float:
    """The stored TCP goodput, computed here from the receiver's JSON: bytes over the intervals that
    are at least half as long as the others (the drain tail is not), without the first after -O."""
    ivs = not_omitted(doc)
    ends = [i["sum"]["end"] for i in ivs]
    lengths = [e - s for s, e in zip([0.0, *ends[:-1]], ends, strict=True)]
    rows = [
        (i["sum"]["bytes"], t) for i, t in zip(ivs, lengths, strict=True) if t >= 0.5 * np.median(lengths)
    ]
    rows = rows[1:] if omit else rows
    return sum(b for b, _ in rows) * 8 / sum(t for _, t in rows)


# ------------------------------------------------------------------------------------------- TCP


def test_tcp_single_summary_is_what_iperf3_measured() -> None:
    p = parsed("tcp_single")
    c = iperf3_json("tcp_single")
    end = c["end"]
    assert p.error is None
    s = p.summary
    assert s["iperf3_throughput_bps"] == end["sum_received"]["bits_per_second"]  # iperf3's own figure
    # stored: the receiver's bytes inside the measured window (-O 1: the first interval left out)
    assert s["throughput_bps"] == pytest.approx(
        receiver_window_bps(iperf3_json("tcp_single", "server"), True)
    )
    assert s["window_ns"] == pytest.approx(3e9, rel=0.01)  # 4 s measured, the first second left out
    assert s["sender_throughput_bps"] == end["sum_sent"]["bits_per_second"]
    assert s["bytes_received"] == end["sum_received"]["bytes"] == 47812960
    assert s["retransmits"] == 0
    assert s["mean_rtt_ns"] == 3335 * 1000  # iperf3 gives microseconds
    assert s["min_rtt_ns"] == 3035 * 1000 and s["max_rtt_ns"] == 3500 * 1000
    assert s["max_cwnd_bytes"] == 52128
    assert s["max_snd_wnd_bytes"] == 570368  # the captured JSON's end.streams[0].sender.max_snd_wnd
    # the client sends: host (client) is the sender, remote (server) the receiver
    assert s["sender_cpu_ratio"] == pytest.approx(end["cpu_utilization_percent"]["host_total"] / 100)
    assert s["receiver_cpu_ratio"] == pytest.approx(end["cpu_utilization_percent"]["remote_total"] / 100)
    assert p.started_utc_ns == c["start"]["timestamp"]["timesecs"] * 10**9
    assert kinds(p, "tool_anomaly") == []


def test_tcp_goodput_over_tbf_100mbit_is_the_overhead_model() -> None:
    s = parsed("tcp_single").summary
    expected = tcp_efficiency(1500).goodput_bps(100e6)  # 100 × 1448/1514 Mbit/s
    assert s["throughput_bps"] / expected == pytest.approx(1.0, abs=0.005)


def test_tcp_single_time_series() -> None:
    p = parsed("tcp_single")
    srv = iperf3_json("tcp_single", "server")
    cli = iperf3_json("tcp_single")
    # -O 1: the omitted first second is left out; the time axis still counts from the first byte
    rx = not_omitted(srv)
    assert len(rx) == 4
    ends = [i["sum"]["end"] for i in rx]
    starts = [0.0, *ends[:-1]]
    assert [t for t, _ in series(p, "throughput_bps")] == [round((1 + a) * 1e9) for a in starts]
    expected = [i["sum"]["bytes"] * 8 / (e - a) for i, a, e in zip(rx, starts, ends, strict=True)]
    assert values(p, "throughput_bps") == pytest.approx(expected)
    assert values(p, "throughput_bps", 0) == values(p, "throughput_bps")  # one stream: stream 0 = sum
    assert np.mean(values(p, "throughput_bps")) == pytest.approx(p.summary["throughput_bps"], rel=0.01)
    tx = not_omitted(cli)
    assert (
        values(p, "rtt_ns", 0)
        == [i["streams"][0]["rtt"] * 1000 for i in tx]
        == [3424e3, 3307e3, 3409e3, 3035e3]
    )
    assert values(p, "cwnd_bytes", 0) == [49232, 49232, 52128, 37648]
    assert values(p, "retransmits") == [i["sum"]["retransmits"] for i in tx]
    assert len(values(p, "sender_throughput_bps")) == 4


def test_tcp_three_streams_sum_to_the_total() -> None:
    p = parsed("tcp_parallel3")
    c = iperf3_json("tcp_parallel3")
    streams = c["end"]["streams"]
    assert len(streams) == 3
    assert p.summary["iperf3_throughput_bps"] == pytest.approx(
        sum(st["receiver"]["bits_per_second"] for st in streams)
    )
    server = iperf3_json("tcp_parallel3", "server")
    assert p.summary["throughput_bps"] == pytest.approx(receiver_window_bps(server, False))
    assert p.summary["max_cwnd_bytes"] == max(st["sender"]["max_snd_cwnd"] for st in streams) == 167968
    assert p.summary["max_snd_wnd_bytes"] == max(st["sender"]["max_snd_wnd"] for st in streams) == 570368
    assert p.summary["mean_rtt_ns"] == pytest.approx(
        np.mean([st["sender"]["mean_rtt"] for st in streams]) * 1000
    )
    for metric in ("throughput_bps", "sender_throughput_bps", "retransmits", "cwnd_bytes"):
        by_t: dict[int, float] = defaultdict(float)
        for s in p.samples:
            if s.metric == metric and s.stream is not None:
                by_t[s.t_ns] += s.value
        total = dict(series(p, metric))
        assert set(by_t) == set(total)
        for t, v in total.items():
            assert v == pytest.approx(by_t[t]), (metric, t)
    # rtt of the sum is the mean over the streams
    for t, v in series(p, "rtt_ns"):
        per = [s.value for s in p.samples if s.metric == "rtt_ns" and s.t_ns == t and s.stream is not None]
        assert v == pytest.approx(np.mean(per))


def test_tcp_receiver_sliver_at_the_end_is_merged() -> None:
    p = parsed("tcp_parallel3")
    rx = iperf3_json("tcp_parallel3", "server")["intervals"]
    assert len(rx) == 7 and rx[-1]["sum"]["end"] - rx[-1]["sum"]["start"] < 0.05  # a 33 ms tail
    got = series(p, "throughput_bps")
    assert len(got) == 6
    last = (
        (rx[-2]["sum"]["bytes"] + rx[-1]["sum"]["bytes"]) * 8 / (rx[-1]["sum"]["end"] - rx[-3]["sum"]["end"])
    )
    assert got[-1][1] == pytest.approx(last)
    # nothing is lost in the merge: rate × length over the intervals gives back every byte received
    ends = [0.0] + [i["sum"]["end"] for i in rx[:-2]] + [rx[-1]["sum"]["end"]]
    total = sum(v * (b - a) / 8 for (_, v), a, b in zip(got, ends[:-1], ends[1:], strict=True))
    assert total == pytest.approx(iperf3_json("tcp_parallel3", "server")["end"]["sum_received"]["bytes"])


def test_tcp_reverse_reads_the_sender_side_from_the_server() -> None:
    p = parsed("tcp_reverse")
    c = iperf3_json("tcp_reverse")
    srv = c["server_output_json"]
    # the pitfall: the -R client prints zeros for what only the sender (the server) knows
    assert c["end"]["streams"][0]["sender"]["mean_rtt"] == 0
    assert c["end"]["streams"][0]["sender"]["max_snd_cwnd"] == 0
    s = p.summary
    assert s["mean_rtt_ns"] == pytest.approx(np.mean([5343, 5342]) * 1000)
    assert s["max_cwnd_bytes"] == 37648
    assert s["iperf3_throughput_bps"] == c["end"]["sum_received"]["bits_per_second"]
    assert s["throughput_bps"] == pytest.approx(receiver_window_bps(c, False))  # -R: the client receives
    assert s["retransmits"] == srv["end"]["sum_sent"]["retransmits"]
    # the server sends: remote (server) CPU is the sender's, host (client) the receiver's
    cpu = c["end"]["cpu_utilization_percent"]
    assert s["sender_cpu_ratio"] == pytest.approx(cpu["remote_total"] / 100)
    assert s["receiver_cpu_ratio"] == pytest.approx(cpu["host_total"] / 100)
    # receiver samples from the client's intervals, sender samples (with rtt/cwnd) from the server's
    assert [t for t, _ in series(p, "throughput_bps")] == [0, 1_000_027_000, 2_000_063_000]
    assert [t for t, _ in series(p, "sender_throughput_bps")] == [0, 1_000_107_000, 2_000_142_000]
    assert values(p, "rtt_ns", 1) == [i["streams"][1]["rtt"] * 1000 for i in srv["intervals"]]
    assert all(v > 0 for v in values(p, "cwnd_bytes", 0))


# ------------------------------------------------------------------------------------------- UDP


def test_udp_without_loss() -> None:
    p = parsed("udp_noloss")
    c = iperf3_json("udp_noloss")
    srv = c["server_output_json"]
    s = p.summary
    assert p.error is None
    assert s["packets_sent"] == s["packets_received"] == 12752
    assert s["lost_packets"] == 0 and s["loss_ratio"] == 0 and s["iperf3_lost_packets"] == 0
    assert s["out_of_order_packets"] == 0
    assert s["offered_bps"] == 2 * 25_000_000  # -b is per stream
    assert s["throughput_bps"] == pytest.approx(srv["end"]["sum_received"]["bits_per_second"])
    assert s["sender_throughput_bps"] == c["end"]["sum_sent"]["bits_per_second"]
    assert s["jitter_last_ns"] == pytest.approx(srv["end"]["sum_received"]["jitter_ms"] * 1e6)
    jitters = [i["sum"]["jitter_ms"] * 1e6 for i in srv["intervals"]]
    assert s["jitter_mean_ns"] == pytest.approx(np.mean(jitters))
    assert values(p, "jitter_ns") == pytest.approx(jitters)
    assert sum(values(p, "packets")) == s["packets_received"]
    assert values(p, "packets", 0) == [i["streams"][0]["bytes"] / 1470 for i in srv["intervals"]]
    assert values(p, "lost_packets") == [0, 0, 0]
    assert kinds(p, "tool_anomaly") == []
    # iperf3 warns about TCP's MSS for a 1470-byte UDP payload that fits a 1500 MTU: kept as a warning
    assert any("exceeds TCP MSS" in d for d in kinds(p, "tool_warning"))


def test_udp_loss_is_counted_not_taken_from_iperf3() -> None:
    p = parsed("udp_loss")
    c = iperf3_json("udp_loss")
    rx = c["server_output_json"]["end"]["sum_received"]
    sent = c["end"]["sum_sent"]["packets"]
    assert rx["bytes"] % 1470 == 0
    received = rx["bytes"] // 1470
    assert (sent, received) == (24795, 12609)
    # iperf3 counts sequence gaps: the 4 datagrams lost at the very end leave none
    assert (rx["lost_packets"], rx["packets"]) == (12182, 24791)
    s = p.summary
    assert s["packets_sent"] == sent and s["packets_received"] == received
    assert s["lost_packets"] == sent - received == 12186
    assert s["loss_ratio"] == pytest.approx(12186 / 24795)
    assert s["iperf3_lost_packets"] == 12182
    (event,) = kinds(p, "tool_anomaly")
    # counts with separators and shares as the report's loss table writes them (two decimals):
    # 12182 / 24791 = 0.49139, 12186 / 24795 = 0.49147 by hand
    assert event == (
        "iperf3 reported 12,182 UDP datagrams lost of 24,791 (49.14 %); counted 12,186 = 24,795 sent − "
        "12,609 received (49.15 %), which is stored: losses at the very end leave no sequence gap, so "
        "iperf3 cannot see them"
    )
    # offered at twice what a tbf 50mbit link carries: half is lost, the rest is the model's maximum
    assert s["offered_bps"] == 97_222_222
    assert s["throughput_bps"] / udp_efficiency(1470).goodput_bps(50e6) == pytest.approx(1.0, abs=0.005)
    assert s["loss_ratio"] == pytest.approx(1 - rx["bytes"] / c["end"]["sum_sent"]["bytes"])
    # per interval: iperf3's own gap counts, and datagrams that arrived (tail sliver merged)
    assert sum(values(p, "lost_packets")) == 12182
    assert sum(values(p, "packets")) == received
    assert len(values(p, "throughput_bps")) == 6


def test_udp_loss_with_omit_distrusts_the_clients_copy() -> None:
    p = parsed("udp_loss_omit")
    c = iperf3_json("udp_loss_omit")
    srv = c["server_output_json"]
    # the pitfall: with -O the client's summary says 65.8 % lost; the server counted 50.0 %
    assert c["end"]["sum_received"]["lost_percent"] == pytest.approx(65.78, abs=0.01)
    assert srv["end"]["sum_received"]["lost_percent"] == pytest.approx(49.99, abs=0.01)
    s = p.summary
    expected, arrived = srv["end"]["sum_received"]["packets"], srv["end"]["sum_received"]["bytes"] / 1470
    assert s["packets_received"] == arrived == 12602
    assert s["lost_packets"] == expected - arrived == 12598
    assert s["loss_ratio"] == pytest.approx(12598 / 25200)
    anomalies = kinds(p, "tool_anomaly")
    assert any("16,315" in e and "client's copy is wrong" in e for e in anomalies)
    assert any("wrong length" in e for e in anomalies)
    assert not any(e.startswith("iperf3 reported") for e in anomalies)


def test_omit_boundary_interval_is_recomputed() -> None:
    p = parsed("udp_loss_omit")
    iv = not_omitted(iperf3_json("udp_loss_omit"))[0]["sum"]
    # iperf3 says: 0.500032 → 0.500003, "seconds" 0.9999, and twice the datagrams its bytes hold
    assert iv["end"] < iv["start"] and iv["seconds"] == pytest.approx(1.0, abs=0.01)
    assert iv["packets"] == 2 * iv["bytes"] / 1470
    assert iv["bits_per_second"] == pytest.approx(48.6e6, rel=0.01)  # half the real rate
    first_t, first_rate = series(p, "sender_throughput_bps")[0]
    assert first_t == 1_000_000_000  # after the 1 s omit
    assert first_rate == pytest.approx(iv["bytes"] * 8 / iv["end"])
    assert first_rate == pytest.approx(97.2e6, rel=0.01)


def test_udp_duplicates_do_not_become_negative_or_huge_loss() -> None:
    p = parsed("udp_duplicates")
    rx = iperf3_json("udp_duplicates")["server_output_json"]
    # what iperf3 made of every datagram arriving 4 times: 1.5 billion "packets", 99.999 % lost,
    # and an interval with 2^64 - n lost (a negative count printed unsigned)
    assert rx["end"]["sum_received"]["packets"] == 1527570889
    assert rx["intervals"][1]["sum"]["lost_packets"] > 1.8e19
    s = p.summary
    assert s["packets_sent"] == 2499
    assert s["packets_received"] == 4 * 2499
    assert s["lost_packets"] == 0 and s["loss_ratio"] == 0
    assert s["out_of_order_packets"] == 9996
    assert s["iperf3_lost_packets"] == 1527560892
    (event,) = kinds(p, "tool_anomaly")
    assert "duplicated at least 7,497" in event and "not stored" in event  # 4 × 2,499 − 2,499
    assert values(p, "lost_packets") == []  # iperf3's per-interval counts are garbage here: not stored
    assert values(p, "packets") == [4996, 5000]


# ------------------------------------------------------------------------------------------- failures


def test_connection_refused_exits_0_but_is_an_error() -> None:
    client, server, meta = iperf3_capture("error_refused")
    assert meta["client_returncode"] == 0  # iperf3 3.12 with -J: exit code 0 on failure
    p = iperf3.parse(client, server)
    assert p.error is not None
    assert p.error.startswith("iperf3 client: unable to connect to server: Connection refused — ")
    assert "nothing listens on that port" in p.error
    assert "\n" not in p.error
    assert p.summary == {} and p.samples == []


def test_a_lost_udp_handshake_is_a_setup_failure_not_a_result() -> None:
    p = parsed("error_udp_setup_lost")
    assert p.error == "iperf3 client: unable to read from stream socket: Resource temporarily unavailable"
    assert p.setup_failed and p.summary == {}
    # failures after the test started, or that the path did not cause, are not setup failures
    assert not parsed("error_refused").setup_failed
    assert not parsed("error_client_killed").setup_failed
    assert not parsed("error_server_killed").setup_failed


def test_a_results_exchange_the_path_lost_is_a_setup_failure_too() -> None:
    # 20 % loss each way: the data went, then the server gave up on the results (its own JSON says so)
    # and the client hung until the runner killed it; the server's numbers are not a whole result
    p = parsed("error_results_exchange_lost")
    server = iperf3_json("error_results_exchange_lost", "server")
    assert server["error"] == "error - unable to receive results: Bad file descriptor"
    assert p.error is not None and p.error.startswith("iperf3 client killed before it printed its report")
    assert p.error.endswith("; iperf3 server: error - unable to receive results: Bad file descriptor")
    assert p.setup_failed


def test_connect_timeout() -> None:
    p = parsed("error_connect_timeout")
    assert p.error is not None and "Connection timed out" in p.error and "drops packets" in p.error


def test_server_killed_mid_test_keeps_partial_samples() -> None:
    p = parsed("error_server_killed")  # the capture's server was killed with SIGKILL (its meta.json)
    assert (
        p.error
        == "iperf3 client: control socket has closed unexpectedly; iperf3 server: ended by signal 9 (SIGKILL)"
    )
    assert not p.setup_failed
    assert p.summary == {}
    assert len(values(p, "sender_throughput_bps")) >= 1
    assert values(p, "throughput_bps") == []  # no receiver report


def test_a_server_gone_mid_test_says_why_and_a_lost_results_exchange_is_re_run() -> None:
    """'control socket has closed unexpectedly' says only that the server went away: its own JSON says
    why. A server that gave up on the results exchange (the words of the captured
    error_results_exchange_lost server) is the tool failing on a lossy path: a setup failure, re-run."""
    client, _, _ = iperf3_capture("error_server_killed")
    gave_up = {"error": iperf3_json("error_results_exchange_lost", "server")["error"]}
    p = iperf3.parse(client, Output(json.dumps(gave_up), "", 1))
    assert p.error == (
        "iperf3 client: control socket has closed unexpectedly; "
        "iperf3 server: error - unable to receive results: Bad file descriptor"
    )
    assert p.setup_failed
    # without the server's words the hint stays, and nothing is re-run
    alone = iperf3.parse(client, None)
    assert alone.error is not None and alone.error.endswith(
        "— the server went away mid-test (killed or crashed)"
    )
    assert not alone.setup_failed


def test_a_server_that_lost_the_parameters_is_a_setup_failure_and_a_mid_test_error_is_not() -> None:
    """A server error of a setup step before TEST_START (the captured error_params_lost: the control
    connection ended after the cookie, no interval on either side) is the tool failing: re-run. The
    words of a server error after data flowed (error_client_killed's server, 5 intervals) are not."""
    _, server, meta = iperf3_capture("error_params_lost")
    assert server is not None and meta["server_returncode"] == 0
    killed = Output("", "", None)  # the client, ended by the runner's timeout before printing
    p = iperf3.parse(killed, server)
    assert p.error == (
        "iperf3 client killed before it printed its report (with -J it prints only at the end); "
        "iperf3 server: error - unable to receive parameters from client: Connection reset by peer"
    )
    assert p.setup_failed
    # the same words from a server that had measured intervals: something was measured, not re-run
    _, measured, _ = iperf3_capture("error_client_killed")
    assert measured is not None
    doc = json.loads(measured.stdout)
    assert len(doc["intervals"]) >= 1
    doc["error"] = "error - unable to receive parameters from client: Connection reset by peer"
    assert not iperf3.parse(killed, Output(json.dumps(doc), "", 0)).setup_failed
    # 'select failed' (esnet/iperf #645, #753: the 3.12 server's own end timer closed its sockets
    # duration + omit + 5 s after TEST_START) stays a failed measurement even with nothing measured
    gone = {"intervals": [], "error": "error - select failed: Bad file descriptor"}
    p = iperf3.parse(killed, Output(json.dumps(gone), "", 0))
    assert p.error is not None and p.error.endswith(
        "iperf3 server: error - select failed: Bad file descriptor"
    )
    assert not p.setup_failed


@pytest.mark.parametrize("returncode", [-9, None])
def test_client_killed_before_printing(returncode: int | None) -> None:
    client, server, _ = iperf3_capture("error_client_killed")
    assert client.stdout == ""
    p = iperf3.parse(Output("", "", returncode), server)
    assert p.error is not None and "killed" in p.error and "only at the end" in p.error
    assert p.summary == {}
    # what the server saw is kept as samples
    assert len(values(p, "throughput_bps")) >= 1


def test_parameter_error_is_plain_text_on_stderr() -> None:
    client, _, meta = iperf3_capture("error_parameter")
    assert client.stdout.startswith("Usage: iperf3") and meta["client_returncode"] == 1  # usage, no JSON
    p = iperf3.parse(client, None)
    assert p.error == "iperf3: parameter error - bogus value for --omit"


def test_truncated_json() -> None:
    client, _, _ = iperf3_capture("tcp_single")
    cut = client.stdout[: len(client.stdout) // 2]
    p = iperf3.parse(Output(cut, "", 0), None)
    assert p.error is not None and "not complete JSON" in p.error and "truncated" in p.error
    assert p.summary == {} and p.samples == []
    # with the server's own report, what it saw is still kept as samples
    _, server, _ = iperf3_capture("tcp_single")
    p = iperf3.parse(Output(cut, "", 0), server)
    assert p.error is not None and len(values(p, "throughput_bps")) == 4


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage\x00\xff not json",
        "[]",
        "{}",
        '{"start": {"test_start": {"protocol": "TCP"}}, "intervals": "x", "end": []}',
        '{"start": {"test_start": {"protocol": "UDP", "blksize": 0}}, "intervals": [{"sum": {"end": "x"}}]}',
        '{"start": {"test_start": {"protocol": "UDP", "reverse": 1}, "timestamp": {"timesecs": "x"}}, "end": {}}',
    ],
)
def test_bad_output_never_raises(text: str) -> None:
    p = iperf3.parse(Output(text, "", 0), Output(text, "", 0))
    assert isinstance(p, Parsed)
    if text in ("", "garbage\x00\xff not json", "[]", "{}"):
        assert p.error is not None and "\n" not in p.error


def test_server_report_from_the_server_when_the_client_lacks_it() -> None:
    client, server, _ = iperf3_capture("udp_loss")
    doc = json.loads(client.stdout)
    embedded = iperf3.parse(client, None)
    del doc["server_output_json"]
    stripped = Output(json.dumps(doc), client.stderr, 0)
    from_server = iperf3.parse(stripped, server)
    assert from_server.summary == embedded.summary
    assert values(from_server, "throughput_bps") == values(embedded, "throughput_bps")
    alone = iperf3.parse(stripped, None)  # no receiver report at all
    assert values(alone, "throughput_bps") == []
    assert any("no iperf3 server report" in e for e in kinds(alone, "tool_anomaly"))


def test_runner_finished_objects_are_accepted() -> None:
    client, server, _ = iperf3_capture("tcp_single")
    fin_c = Finished(0, client.stdout, client.stderr, 1, 2)
    fin_s = Finished(0, server.stdout, server.stderr, 1, 2) if server else None
    assert iperf3.parse(fin_c, fin_s).summary == parsed("tcp_single").summary


def test_a_warning_alone_is_not_the_error() -> None:
    p = iperf3.parse(Output("", "warning: UDP block size 1470 exceeds TCP MSS 1448\n", -9), None)
    assert p.error is not None and "killed" in p.error
    assert [e.kind for e in p.events] == ["tool_warning"]


def test_udp_with_omit_also_keeps_the_whole_runs_counts() -> None:
    """Loss localization compares the tool with kernel counters, which count the -O warm-up too: the
    whole run's datagrams are every interval's bytes / 1470 on each side, the omitted ones included."""
    p = parsed("udp_loss_omit")
    c = iperf3_json("udp_loss_omit")
    srv = c["server_output_json"]
    assert any(i["sum"]["omitted"] for i in c["intervals"]) and any(
        i["sum"]["omitted"] for i in srv["intervals"]
    )
    assert p.summary["run_packets_sent"] == sum(round(i["sum"]["bytes"] / 1470) for i in c["intervals"])
    assert p.summary["run_packets_received"] == sum(round(i["sum"]["bytes"] / 1470) for i in srv["intervals"])
    assert p.summary["run_packets_sent"] > p.summary["packets_sent"]  # the warm-up's datagrams
    assert "run_packets_sent" not in parsed("udp_noloss").summary  # without -O the counts are the run's


def test_the_events_share_is_written_as_the_loss_table_writes_it() -> None:
    # 1 datagram of 8,267 is 0.0121 % by hand: '0.01 %' in the loss table and in the event (it was
    # '0.012 %' there); below 0.01 %, two significant digits in both (1 of 60,000: 0.0017 %)
    assert (iperf3._pct(1, 8267), share(1, 8267)) == ("0.01 %", "0.01 %")
    assert (iperf3._pct(1, 60000), share(1, 60000)) == ("0.0017 %", "0.0017 %")
