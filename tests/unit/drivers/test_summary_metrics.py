"""Each kind's `summary_metrics` (what an alert rule may name) holds every summary metric its driver
parses out of real tool output: every capture in tests/data/tool_output, parsed by the kind's driver.
A metric added to a driver's parse without adding it to its kind's list fails here (and the stored
names of a real run are checked against the same lists in tests/e2e/test_monitor.py)."""

from __future__ import annotations

import pytest

from tests.helpers.capture import DATA, iperf3_capture, ping_capture, probe_capture
from vnetbench.kinds import kind_of


def _captures(tool: str) -> list[str]:
    return sorted(p.name.removesuffix(".meta.json") for p in (DATA / tool).glob("*.meta.json"))


def _iperf3_kind(name: str) -> str:
    return "udp" if name.startswith("udp") or "udp" in name else "tcp"


def _probe_kinds(name: str) -> list[str]:
    if name.startswith("cpushare"):
        return ["cpushare"]
    if name.startswith("rtt"):
        return ["probe-rtt"]
    return ["pps", "trace", "background"]  # one driver (ProbeFlowDriver), one list (ProbeFlowKind)


@pytest.mark.parametrize("name", _captures("iperf3"))
def test_every_iperf3_summary_metric_is_in_its_kinds_list(name: str) -> None:
    client, server, _ = iperf3_capture(name)
    kind = kind_of(_iperf3_kind(name))
    parsed = kind.driver.parse(client, server)
    assert set(parsed.summary) <= kind.summary_metrics, set(parsed.summary) - kind.summary_metrics


@pytest.mark.parametrize("name", _captures("ping"))
def test_every_ping_summary_metric_is_in_the_rtt_kinds_list(name: str) -> None:
    out, _ = ping_capture(name)
    kind = kind_of("rtt")
    parsed = kind.driver.parse(out)
    assert set(parsed.summary) <= kind.summary_metrics, set(parsed.summary) - kind.summary_metrics


@pytest.mark.parametrize("name", _captures("vnb-probe"))
def test_every_vnb_probe_summary_metric_is_in_its_kinds_list(name: str) -> None:
    client, server, _ = probe_capture(name)
    for kind in map(kind_of, _probe_kinds(name)):
        parsed = kind.driver.parse(client, server)
        assert set(parsed.summary) <= kind.summary_metrics, set(parsed.summary) - kind.summary_metrics


def test_the_captures_reach_the_lists_largest_parts() -> None:
    """The captures are not all errors: a TCP, a UDP (with -O), a ping, a probe flow without FIN and
    each other probe kind store summaries, so the checks above compare real names."""
    seen: dict[str, set[str]] = {}
    for name in _captures("iperf3"):
        client, server, _ = iperf3_capture(name)
        seen.setdefault(_iperf3_kind(name), set()).update(kind_of("tcp").driver.parse(client, server).summary)
    for name in _captures("vnb-probe"):
        client, server, _ = probe_capture(name)
        kind = _probe_kinds(name)[0]
        seen.setdefault(kind, set()).update(kind_of(kind).driver.parse(client, server).summary)
    out, _ = ping_capture("ping_normal")
    seen["rtt"] = set(kind_of("rtt").driver.parse(out).summary)
    assert {"window_ns", "max_snd_wnd_bytes"} <= seen["tcp"]
    assert {"run_packets_sent", "jitter_mean_ns", "loss_ratio"} <= seen["udp"]
    assert {"loss_from_sender_count", "wake_lateness_p99_ns", "owd_p50_ns"} <= seen["pps"]
    assert {"out_of_range_packets", "truncated_packets", "jitter_rfc3550_last_ns"} <= seen["pps"]
    assert {"server_processing_p50_ns", "rtt_p99_ns", "foreign_packets"} <= seen["probe-rtt"]
    assert {"echo_foreign_packets", "echo_send_errors", "owd_up_p50_ns"} <= seen["probe-rtt"]
    assert "owd_down_p50_ns" in seen["probe-rtt"]
    assert {"cpu_share_ratio", "steal_ratio"} <= seen["cpushare"]
    assert {"rtt_p95_ns", "rtt_mdev_ns"} <= seen["rtt"]
