"""What the vnb-probe reports say about a measurement not being what it seems, from real captures on
loopback (tests/data/tool_output/vnb-probe/*.meta.json say how each was made): packets the receiver
could not attribute, a receiver stopped by its idle timeout, datagrams the rtt client or the echo could
not attribute, and one-way delays only where both ends share a clock."""

from __future__ import annotations

import json

from tests.helpers.capture import probe_capture
from vnetbench.drivers.base import Output
from vnetbench.kinds import driver_for, kind_of


def _events(parsed: object, kind: str) -> list[str]:
    return [e.detail for e in parsed.events if e.kind == kind]  # type: ignore[attr-defined]


def _reports(name: str) -> tuple[dict, dict | None, dict]:
    client, server, meta = probe_capture(name)
    return json.loads(client.stdout), json.loads(server.stdout) if server else None, meta


def test_packets_outside_the_fins_range_are_not_received_and_are_an_event() -> None:
    """A sender restarted on its source port: the receiver put the first run's packets (249, the first
    run's own report in meta.json) in the same stream, outside the second run's FIN range; they were
    counted as received (742 of 493 sent)."""
    client, server, meta = probe_capture("recv_out_of_range")
    first = json.loads(meta["how"].split("The first run's report: ", 1)[1])
    send, recv = json.loads(client.stdout), json.loads(server.stdout)  # type: ignore[union-attr]
    assert recv["totals"]["unique_packets"] == first["sent_packets"] + send["sent_packets"] == 249 + 493
    parsed = driver_for("pps").parse(client, server)
    s = parsed.summary
    assert s["out_of_range_packets"] == first["sent_packets"] == 249
    assert s["received_packets"] == send["sent_packets"] == 493
    assert s["lost_packets"] == 0 and s["exact_loss"] == 1
    (anomaly,) = _events(parsed, "tool_anomaly")
    assert anomaly.startswith(
        "249 packets from the flow's source and stream id had sequence numbers outside the range its FIN "
        "announced (1000000..1000492): not this run's packets"
    )
    assert "out_of_range_packets" in kind_of("pps").summary_metrics


def test_a_receiver_stopped_by_its_idle_timeout_says_so() -> None:
    """No FIN (`--fin-count 0`): the receiver stopped by its 1 s idle timeout, 1.5 s after READY."""
    client, server, _ = probe_capture("recv_idle_timeout")
    send, recv, _ = _reports("recv_idle_timeout")
    assert recv is not None and recv["stop_reason"] == "idle_timeout"
    parsed = driver_for("trace").parse(client, server)
    assert parsed.summary["lost_packets"] == send["sent_packets"] - recv["totals"]["unique_packets"] == 0
    (anomaly,) = _events(parsed, "tool_anomaly")
    elapsed = recv["elapsed_ns"] / 1e9
    assert anomaly.endswith(
        f"the receiver stopped by its idle timeout (no packet for --idle-timeout, 3 s as the driver runs it) "
        f"after {elapsed:.1f} s: the sender never finished or every FIN copy was lost"
    )
    assert anomaly.startswith("no FIN arrived")


def test_a_receiver_stopped_by_its_deadline_says_so() -> None:
    client, server, _ = probe_capture("nofin")
    (anomaly,) = _events(driver_for("pps").parse(client, server), "tool_anomaly")
    assert anomaly.endswith("; the receiver stopped by its own deadline, after 0.6 s")


def test_truncated_datagrams_and_the_final_jitter() -> None:
    """The receiver's buffer (64 KiB) holds any UDP payload (at most 65,507 bytes over IPv4), so no
    real run truncates: the real pps_bg receiver report with truncated_packets set to 3 stands in."""
    client, server, _ = probe_capture("pps_bg")
    recv = json.loads(server.stdout)  # type: ignore[union-attr]
    clean = driver_for("pps").parse(client, server)
    assert clean.summary["truncated_packets"] == 0 and _events(clean, "tool_anomaly") == []
    assert (
        clean.summary["jitter_rfc3550_last_ns"]
        == recv["streams"][0]["jitter_rfc3550_ns"]
        == 2788.2675288543896
    )
    cut = driver_for("pps").parse(client, Output(json.dumps({**recv, "truncated_packets": 3})))
    assert cut.summary["truncated_packets"] == 3
    assert _events(cut, "tool_anomaly") == [
        "3 datagrams were longer than the receiver's 64 KiB buffer and arrived cut short (MSG_TRUNC): "
        "their bytes are undercounted"
    ]


def test_datagrams_at_the_rtt_client_that_are_not_replies() -> None:
    """A sender at the echo's address sent 11 datagrams the rtt client received (its count)."""
    client, _, _ = probe_capture("rtt_foreign")
    parsed = driver_for("probe-rtt").parse(client, None)
    assert parsed.summary["foreign_packets"] == json.loads(client.stdout)["foreign_packets"] == 11
    assert parsed.summary["received_packets"] == 0
    assert _events(parsed, "tool_anomaly") == [
        "the rtt client got 11 datagrams from the echo's address that were not replies to its probes "
        "(another program at that port?): not counted as replies"
    ]


def test_datagrams_at_the_echo_that_are_not_requests() -> None:
    """Another flow sent its data packets and FINs to the echo's port (its report in meta.json)."""
    client, server, meta = probe_capture("rtt_echo_foreign")
    intruder = json.loads(meta["how"].split("The sender's report: ", 1)[1])
    parsed = driver_for("probe-rtt").parse(client, server)
    s = parsed.summary
    assert s["echo_foreign_packets"] == intruder["sent_packets"] + intruder["fin_sent_packets"] == 34
    assert s["echo_send_errors"] == 0 and s["loss_ratio"] == 0
    assert _events(parsed, "tool_warning") == [
        "the echo got 34 datagrams that were not RTT requests (another flow sent to its port): never "
        "answered, but they shared the echo's socket with the probes"
    ]
    assert {"echo_foreign_packets", "foreign_packets"} <= kind_of("probe-rtt").summary_metrics


def test_one_way_delays_only_with_one_clock() -> None:
    """Client and echo in namespaces of one machine: one CLOCK_REALTIME, so the one-way delays are
    delays (`clock.synchronized` is false there: no NTP). The same reports with the echo's clock block
    as a second machine's (booted 1 s later) store none, and neither does a probe flow's receiver."""
    client, server, _ = probe_capture("rtt")
    doc = json.loads(client.stdout)
    assert doc["clock"]["synchronized"] is False
    s = driver_for("probe-rtt").parse(client, server).summary
    assert (s["owd_up_p50_ns"], s["owd_down_p50_ns"]) == (doc["owd_up"]["p50_ns"], doc["owd_down"]["p50_ns"])
    assert (s["owd_up_p50_ns"], s["owd_down_p50_ns"]) == (16071, 15871)
    echo = json.loads(server.stdout)  # type: ignore[union-attr]
    other = Output(
        json.dumps(
            {
                **echo,
                "clock": {**echo["clock"], "start_monotonic_ns": echo["clock"]["start_monotonic_ns"] - 10**9},
            }
        )
    )
    apart = driver_for("probe-rtt").parse(client, other).summary
    assert "owd_up_p50_ns" not in apart and "owd_down_p50_ns" not in apart
    assert apart["rtt_median_ns"] == s["rtt_median_ns"]
    assert "owd_up_p50_ns" not in driver_for("probe-rtt").parse(client, None).summary  # no echo report
    fc, fs, _ = probe_capture("pps_bg")
    recv = json.loads(fs.stdout)  # type: ignore[union-attr]
    assert driver_for("pps").parse(fc, fs).summary["owd_p50_ns"] == recv["streams"][0]["owd"]["p50_ns"]
    far = {
        **recv,
        "clock": {**recv["clock"], "start_monotonic_ns": recv["clock"]["start_monotonic_ns"] - 10**9},
    }
    assert "owd_p50_ns" not in driver_for("pps").parse(fc, Output(json.dumps(far))).summary


def test_failed_send_calls_are_a_warning() -> None:
    """The `nofin` capture's receiver stopped after 0.6 s of the sender's 1 s: each datagram to its
    closed port drew an ICMP port unreachable that the next send call reported (ECONNREFUSED) and
    retried, so the sender's own report counts 1188 failed calls (meta.json says how it was made).
    A clean capture (`pps_bg`) has none and no such warning."""
    client, server, _ = probe_capture("nofin")
    assert json.loads(client.stdout)["send_errors"] == 1188
    (warning,) = [w for w in _events(driver_for("pps").parse(client, server), "tool_warning") if "send" in w]
    assert warning.startswith("1,188 send calls of the sender failed: an ICMP port unreachable")
    clean_client, clean_server, _ = probe_capture("pps_bg")
    assert json.loads(clean_client.stdout)["send_errors"] == 0
    assert _events(driver_for("pps").parse(clean_client, clean_server), "tool_warning") == []
