"""Telemetry and loss localization on real namespaces with real iperf3 (root).

A receiver with a tiny socket buffer must lose its datagrams at the socket (Udp.RcvbufErrors), a
tbf bottleneck at that qdisc on that interface; the per-hop counts must add up to the
application's loss. Each test runs a whole campaign through the runner and checks that nothing of
it is left behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.integration.loss_runs import _children, run_spec
from tests.helpers.integration.requirements import missing
from vnetbench.analysis.loss import NOISE_PACKETS
from vnetbench.analysis.loss import loss_analysis as analysis
from vnetbench.providers.local import LocalProvider
from vnetbench.run.campaign import create_campaign, run_campaign
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store

SKIP = missing(("iperf3",))
pytestmark = [pytest.mark.root, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]


SOCKET_SPEC = """
name: tiny-socket
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b]}]
measurements:
  - {name: udp, kind: udp, duration: 3s, rate: 150mbit, length: 1400, window: 4k}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [udp]}
telemetry: {interval: 500ms}
"""


def test_tiny_socket_buffer_puts_the_loss_at_the_socket(tmp_path: Path) -> None:
    store, cid = run_spec(tmp_path, SOCKET_SPEC)
    data = analysis(store, cid)
    (loc,) = data["loss_localization"]
    assert loc["app_lost"] > 0.05 * loc["sent"], "the tiny buffer should drop datagrams"
    assert loc["hop"] == "accepted by the receiver's socket" and loc["hop_key"] == "socket"
    assert loc["cause"] == "socket buffer full"
    assert loc["counter"] == "Udp.RcvbufErrors on node:b"
    stages = {s["key"]: s for s in loc["stages"]}
    # Every interface on the path saw what the application sent (no loss before the receiver's stack) ...
    for key, stage in stages.items():
        if key.startswith(("tx:", "rx:")):
            assert stage["count"] == pytest.approx(loc["sent"], rel=0.01), key
    # ... and the per-hop losses add up to the application's loss within 1 %.
    hop_losses = sum(max(s["lost"] or 0.0, 0.0) for s in loc["stages"])
    assert hop_losses == pytest.approx(loc["app_lost"], rel=0.01)
    assert stages["socket"]["lost"] == pytest.approx(loc["app_lost"], rel=0.01)
    assert stages["socket"]["explainers"][0]["packets"] == pytest.approx(loc["app_lost"], rel=0.01)
    # The sampler ran: readings every 500 ms, host and tool CPU stored, cost recorded.
    runs = store.table_frame("telemetry_runs", cid)
    assert int(runs["readings"].iloc[0]) >= 6
    cpu = data["cpu_per_measurement"][0]
    assert 0 < cpu["host_busy_ratio"] <= 1
    assert cpu["sender_cpu_ratio"] is not None and 0 < cpu["sender_cpu_ratio"] < 1.5
    store.close()


TBF_SPEC = """
name: tbf-bottleneck
topology:
  nodes: [{name: a}, {name: b}]
  switches: [{name: sw}]
  links:
    - {endpoints: [a, sw]}
    - {endpoints: [sw, b], rate: 20mbit}
measurements:
  - {name: udp, kind: udp, duration: 3s, rate: 60mbit, length: 1400}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [udp]}
telemetry:
  capture: {interfaces: ["b:eth0"], snaplen: 64, packets: 200}
"""


def test_tbf_bottleneck_puts_the_loss_at_that_qdisc(tmp_path: Path) -> None:
    store, cid = run_spec(tmp_path, TBF_SPEC)
    data = analysis(store, cid)
    (loc,) = data["loss_localization"]
    assert loc["app_lost"] > 0.5 * loc["sent"], "offering 3x the link rate should lose ~2/3"
    assert loc["hop_where"] == "host:host/p1x0"  # the switch port towards b, where tbf shapes sw→b
    assert loc["hop"] == "sent by host:host/p1x0 (tbf, network shaping)"
    assert loc["cause"] == "qdisc drop"
    assert loc["counter"] == "tbf drops on host:host/p1x0"
    # the shaper's own counter says what its hop lost, and every lost datagram is found at some hop
    assert loc["counter_packets"] == pytest.approx(loc["hop_lost"], rel=0.02)
    assert loc["explained_packets"] == pytest.approx(loc["hop_lost"], rel=0.02)
    hop_losses = sum(max(s["lost"] or 0.0, 0.0) for s in loc["stages"])
    assert hop_losses == pytest.approx(loc["app_lost"], rel=0.02)
    # nearly all of it at the shaper: a receiver a busy machine kept from its socket loses some there
    # too (327 of 11,258 beside stress-ng --switch 1 --cpu 1, 2026-12-01; it was asserted within 2 %)
    assert loc["hop_lost"] >= 0.9 * loc["app_lost"], (loc["hop_lost"], loc["app_lost"])
    # The capture: tcpdump on b:eth0 stopped at its packet cap, its pcap referenced from the store.
    caps = store.table_frame("captures", cid).to_dict("records")
    assert len(caps) == 1 and caps[0]["node"] == "b" and caps[0]["interface"] == "eth0"
    pcap = Path(caps[0]["file"])
    assert pcap.exists() and pcap.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4")
    assert 24 + 200 * 16 < pcap.stat().st_size <= 24 + 200 * (16 + 64)  # header + 200 capped records
    store.close()


def test_exogeni_report_has_the_tool_cpu_table(tmp_path: Path) -> None:
    """ExoGENI Tables 18–19 in the report of an exogeni-exp* scenario (exp3, shortened: 1 repetition, 2 s)."""
    from vnetbench.report.html import write_report
    from vnetbench.scenarios import get_scenario

    overrides = {
        "schedule.repetitions": 1,
        "measurements.tcp.duration": "2s",
        "measurements.tcp.omit": "0s",
        "measurements.udp.duration": "2s",
        "measurements.rtt.count": 3,
        "patterns.intra-rack.pairs": [["vma", "vmb"]],
    }
    store = Store(tmp_path / "t.db")
    spec = parse_spec(get_scenario("exogeni-exp3").text, "exogeni-exp3.yaml", overrides=overrides)
    started = create_campaign(spec, store)
    cid = started.campaign_id
    summary = run_campaign(
        store, cid, LocalProvider(cid, store.location, tools=("iperf3", "ping")), plan=started.plan
    )
    assert summary.flows_failed == 0, summary.failures
    assert not _children()
    rows = {(r["rate_bps"], r["kind"]): r for r in analysis(store, cid)["tool_cpu"]}
    assert set(rows) == {(100e6, "tcp"), (100e6, "udp")}
    for row in rows.values():  # sampled from /proc/PID/stat, and close to iperf3's own report
        assert 0 <= row["sender_cpu_percent"] < 100
        assert row["sender_cpu_percent"] == pytest.approx(row["tool_sender_cpu_percent"], abs=3)
    # /proc/PID/stat counts in 10 ms ticks: a TCP sender at 100 Mbit/s (ExoGENI: 0.3 %) can show no
    # tick in 2 s, a UDP sender (17 % there, ~5 % here) shows many
    assert rows[(100e6, "udp")]["sender_cpu_percent"] > 1
    assert rows[(100e6, "udp")]["exogeni_sender_cpu_percent"] == 17.0  # the study's Table 19 beside ours
    html = write_report(store, cid, tmp_path / "report").read_text()
    assert "Tool CPU load (%), sender and receiver, per rate (ExoGENI Tables 18–19)" in html
    assert "100 Mbit/s" in html and "Where the packets went" in html
    store.close()


LOSSLESS_SPEC = """
name: lossless
topology:
  nodes: [{name: a}, {name: b}]
  switches: [{name: sw}]
  links: [{endpoints: [a, sw], rate: 100mbit}, {endpoints: [sw, b], rate: 100mbit}]
measurements:
  - {name: udp, kind: udp, duration: 2s, rate: 10mbit, length: 1400, streams: 2}
  - {name: pps, kind: pps, rates: [2000], sizes: [1000], duration: 2s}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [MEASUREMENT]}
"""


@pytest.mark.parametrize("measurement", ["udp", "pps"])
def test_a_lossless_flow_is_counted_the_same_at_every_point(tmp_path: Path, measurement: str) -> None:
    """iperf3 opens each UDP stream with a "connect" datagram and vnb-probe ends a flow with copies
    of its FIN: the tools' own counts leave them out and every kernel counter sees them. Taken out,
    each point of a lossless path counts exactly what the application sent (before, every flow
    showed them "lost" between the socket and the application)."""
    if measurement == "pps" and missing(probe=True):
        pytest.skip(missing(probe=True) or "")
    store, cid = run_spec(tmp_path, LOSSLESS_SPEC.replace("MEASUREMENT", measurement))
    (loc,) = analysis(store, cid)["loss_localization"]
    stages = {s["key"]: s for s in loc["stages"]}
    # A receiver that stops with a datagram still in its socket buffer (iperf3 on a busy machine, a
    # CI run of 2026-11-29) loses it after every kernel counter: the chain must place it there, as
    # unread, and nowhere on the path
    unread = loc["app_lost"]
    assert 0 <= unread <= NOISE_PACKETS, loc
    if unread:
        assert stages["socket-read"]["lost"] == unread, stages["socket-read"]
        assert [e["cause"] for e in stages["socket-read"]["explainers"]] == ["unread"], stages["socket-read"]
    else:
        assert loc["verdict"] == "no loss"
    # UDP's own counters at both ends count exactly the application's datagrams ...
    assert stages["sender-udp"]["count"] == loc["sent"], stages["sender-udp"]
    for key in ("socket-read", "app-received"):
        assert stages[key]["count"] == loc["sent"] - unread, (key, stages[key])
    assert stages["app-received"]["lost"] == 0
    # ... while the points that subtract the control connection's TCP (or count frames) may be off by
    # a packet or two read a moment apart: never a loss above the noise the verdict ignores
    for key, stage in stages.items():
        assert stage["count"] == pytest.approx(loc["sent"], abs=NOISE_PACKETS), (key, stage)
        assert (stage["lost"] or 0) <= NOISE_PACKETS, (key, stage)
    store.close()


OMIT_SPEC = """
name: omit-overload
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 20mbit}]
measurements:
  - {name: udp, kind: udp, duration: 2s, omit: 1s, rate: 30mbit}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [udp]}
"""


def test_a_warm_up_is_counted_on_both_sides_of_the_comparison(tmp_path: Path) -> None:
    """With omit the kernel's counters include the warm-up, so the chain uses the tool's whole-run
    counts: the shaper's drops then explain the loss (comparing the window's counts with them had
    "explained" 128 % of it)."""
    store, cid = run_spec(tmp_path, OMIT_SPEC)
    (m,) = store.measurements_frame(cid).to_dict("records")
    (loc,) = analysis(store, cid)["loss_localization"]
    assert loc["sent"] == m["run_packets_sent"] > m["packets_sent"]  # the warm-up's datagrams are in
    assert loc["app_lost"] == loc["sent"] - m["run_packets_received"]
    assert loc["cause"] == "qdisc drop"
    assert loc["explained_packets"] == pytest.approx(loc["app_lost"], abs=NOISE_PACKETS)
    assert "warm-up (omit) included" in loc["note"] and f"{100 * m['loss_ratio']:.2f} %" in loc["note"]
    store.close()
