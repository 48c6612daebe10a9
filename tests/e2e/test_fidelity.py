"""Issue #13 through the real CLI: network shaping, the measured TCP window, UDP setup retries on a
lossy link, and path priming. Real namespaces, iperf3, ping and delay nodes; root.

The machine is shared and often busy, so each assertion is about behaviour with a stated tolerance:
what the link does (drop vs push back), where a count comes from, which attempt is stored — not how
fast this machine happens to be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.integration.cli import clean_up, leftovers, measurements_with_host_cpu, only_campaign, vnb
from tests.helpers.timing import met_or_machine_bound, row_idle_cpus
from vnetbench.kinds.overhead import tcp_efficiency, udp_efficiency
from vnetbench.store.db import Store

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=200)]

SHAPING = """\
name: e2e-shaping
description: the same 20 mbit link shaped the network's way and the NIC's way, offered 3x; TCP with omit
topology:
  nodes: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f}]
  links:
    - {name: net, endpoints: [a, b], rate: 20mbit}
    - {name: nic, endpoints: [c, d], rate: 20mbit, shaping: sender}
    - {name: fast, endpoints: [e, f], rate: 100mbit}
measurements:
  - {name: udp3x, kind: udp, duration: 3s, rate: link, rate_factor: 3}
  - {name: tcp, kind: tcp, duration: 4s, omit: 1s, congestion: cubic}
patterns:
  - {name: udp, kind: pairs, pairs: [[a, b], [c, d]], measurements: [udp3x]}
  - {name: tcp, kind: pairs, pairs: [[e, f]], measurements: [tcp]}
schedule: {repetitions: 2}
"""

LOSSY = """\
name: e2e-lossy
description: UDP over a link that loses 10 % of the frames each way, iperf3's handshake included
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: lossy, endpoints: [a, b], rate: 20mbit, delay: 5ms, loss: 0.1}]
measurements:
  # omit: a control message lost and resent (TCP RTO >= 200 ms) delays iperf3's start, and it then
  # sends the delay's worth at once (docs/drivers.md); the warm-up second keeps that burst out
  - {name: udp, kind: udp, duration: 2s, omit: 1s, rate: 10mbit}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [udp]}
schedule: {repetitions: 6}
"""

PRIMING = """\
name: e2e-priming
description: 30 pings over 2 x 20 ms (a delay node each way), 0.1 s apart
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], delay: 20ms}]
measurements:
  - {name: rtt, kind: rtt, count: 30, interval: 0.1s}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [rtt]}
"""

UDP_MAX_20 = udp_efficiency(1470, 1500).goodput_bps(20e6)
TCP_MAX_100 = tcp_efficiency(1500).goodput_bps(100e6)


@dataclass
class Ran:
    tmp: Path
    db: Path
    report: Path
    campaign: dict
    all_attempts: pd.DataFrame
    frame: pd.DataFrame
    events: pd.DataFrame
    layout: dict
    stdout: str


def run(tmp: Path, name: str, text: str, *extra: str, report: bool = False) -> Iterator[Ran]:
    """`vnetbench run` of a campaign file; the HTML report only when a test reads it (it costs a
    small campaign ~10 s of figures)."""
    spec, db, report_dir = tmp / f"{name}.yaml", tmp / f"{name}.db", tmp / f"{name}-report"
    spec.write_text(text)
    writes = ("--report", str(report_dir)) if report else ("--no-report",)
    try:
        proc = vnb("run", str(spec), "--db", str(db), *writes, *extra, cwd=tmp, timeout=900)
        assert proc.returncode == 0, f"vnetbench run exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        campaign = only_campaign(db)
        store = Store(db)
        cid = campaign["id"]
        ran = Ran(
            tmp,
            db,
            report_dir,
            campaign,
            store.measurements_frame(cid, latest_only=False),
            store.measurements_frame(cid),
            store.events_frame(cid),
            store.builds_frame(cid).iloc[-1]["layout"],
            proc.stderr,
        )
        store.close()
        yield ran
    finally:
        left = leftovers(db) if db.exists() else []
        if left:
            clean_up(db, tmp)
    assert left == [], f"the campaign left these behind: {left}"


@pytest.fixture(scope="module")
def shaping(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    yield from run(tmp_path_factory.mktemp("shaping"), "shaping", SHAPING, report=True)


def _due(row: pd.Series) -> float:
    """The loss a 20 mbit link must cause: it passes its rate, whatever the sender managed to send."""
    return 1 - UDP_MAX_20 / row["sender_throughput_bps"]


def test_network_shaping_drops_at_the_shaper_and_never_blocks_the_sender(shaping: Ran) -> None:
    frame = measurements_with_host_cpu(shaping.db, shaping.campaign["id"])
    rows = frame[(frame["measurement"] == "udp3x") & (frame["src"] == "a")]
    assert len(rows) == 2 and (rows["status"] == "ok").all()
    for _, row in rows.iterrows():
        # the sender sent what it was asked (a blocked socket would send ~1/3): wide, the CPU is shared
        assert row["sender_throughput_bps"] / row["offered_bps"] > 0.75
        # never less loss than the link must cause, however busy the machine
        assert row["loss_ratio"] >= _due(row) - 0.03, (row["loss_ratio"], _due(row))
    # `vnetbench loss` finds the drops at the link's shaper, counted by its qdisc
    proc = vnb("loss", "--db", str(shaping.db), "--json", cwd=shaping.tmp)
    assert proc.returncode == 0, proc.stderr
    found = [loc for loc in json.loads(proc.stdout)["loss_localization"] if loc["src"] == "a"]
    assert len(found) == 2
    for loc in found:
        assert loc["hop"] == "sent by node:a/eth0 (tbf, network shaping)" and loc["cause"] == "qdisc drop"
        assert loc["counter_packets"] == pytest.approx(loc["app_lost"], rel=0.05)
    # and no more than that (within 3 pp) where the machine served the shaper: a shaper whose output
    # stalled drops more (beside a disk writer, 2026-11-30: 72.5 % lost where 66.7 % was due, the host
    # CPU saturated). On either repetition; excused only on a machine with no CPU to spare.
    runs = [row for _, row in rows.iterrows()]
    met_or_machine_bound(
        any(abs(r["loss_ratio"] - _due(r)) <= 0.03 for r in runs),
        runs,
        idle=row_idle_cpus,
        floor=lambda r: r["loss_ratio"] <= _due(r) + 0.10,
        numbers=lambda rs: "; ".join(f"loss {r['loss_ratio']:.2%} where {_due(r):.2%} was due" for r in rs),
    )


def test_sender_shaping_pushes_back_instead_of_dropping(shaping: Ran) -> None:
    frame = measurements_with_host_cpu(shaping.db, shaping.campaign["id"])
    rows = frame[(frame["measurement"] == "udp3x") & (frame["src"] == "c")]
    assert len(rows) == 2 and (rows["status"] == "ok").all()
    runs = [row for _, row in rows.iterrows()]
    for row in runs:
        assert row["sender_throughput_bps"] / row["offered_bps"] < 0.45  # the socket blocked: ~1/3 went out
    # the shaper dropped nothing, however busy the machine: what was lost, `vnetbench loss` finds elsewhere
    proc = vnb("loss", "--db", str(shaping.db), "--json", cwd=shaping.tmp)
    assert proc.returncode == 0, proc.stderr
    found = [loc for loc in json.loads(proc.stdout)["loss_localization"] if loc["src"] == "c"]
    assert len(found) == 2
    for loc in found:
        assert loc["cause"] != "qdisc drop" and "tbf" not in str(loc["hop"]), loc
    # and next to nothing was lost (< 2 %) on either repetition. A receiver the machine kept from its
    # socket loses some (3.14 % beside stress-ng --switch 1 --cpu 1 and the suite's other workers,
    # 2026-12-01): excused only with no CPU to spare, and never a shaper's share (2/3 at 3x)
    met_or_machine_bound(
        any(r["loss_ratio"] < 0.02 for r in runs),
        runs,
        idle=row_idle_cpus,
        floor=lambda r: r["loss_ratio"] < 0.10,
        numbers=lambda rs: "; ".join(
            f"loss {r['loss_ratio']:.2%}, sender {r['sender_throughput_bps'] / r['offered_bps']:.1%} of offered"
            for r in rs
        ),
    )


def test_store_and_report_say_how_each_link_was_shaped(shaping: Ran) -> None:
    links = {link["link"]: link["shaping"] for link in shaping.layout["links"]}
    assert links == {"net": "network", "nic": "sender", "fast": "network"}
    html = (shaping.report / "index.html").read_text()
    assert "Link shaping network" in html and "net, fast" in html
    assert "Link shaping sender" in html and "Paths primed" in html


def test_tcp_goodput_counts_only_the_measured_window(shaping: Ran) -> None:
    rows = shaping.frame[shaping.frame["measurement"] == "tcp"]
    assert len(rows) == 2 and (rows["status"] == "ok").all()
    for row in rows.itertuples():
        # Never above the link: bytes queued before the omit ended are not counted (the property
        # under test). Below it, the machine's load takes its share: beside two other test workers a
        # flow measured 96.75 % and, in another run, 87.2 % (make test-stress, 2026-11-26), the
        # fidelity benchmark's TCP beside a busy core 96.3 % at worst; how close to the model TCP
        # gets is benchmarks/fidelity's claim. Under half would be the link or the accounting.
        assert 0.5 < row.throughput_bps / TCP_MAX_100 <= 1.005
        # 4 s measured after 1 s omit; the first interval after the omit end is left out
        assert row.window_ns == pytest.approx(3e9, rel=0.05)
        assert row.iperf3_throughput_bps > 0


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    yield from run(tmp_path_factory.mktemp("lossy"), "lossy", LOSSY)


def test_udp_over_a_lossy_link_survives_lost_handshakes(lossy: Ran) -> None:
    # every repetition ends with a measurement: a lost handshake was retried, never stored as a result
    assert len(lossy.frame) == 6 and (lossy.frame["status"] == "ok").all(), lossy.frame["reason"].tolist()
    # every attempt is in the store; a setup failure is its own attempt, followed by a later one
    attempts = lossy.all_attempts
    setup = attempts[attempts["status"] == "setup_failed"]
    for row in setup.itertuples():
        later = attempts[(attempts["key"] == row.key) & (attempts["attempt"] > row.attempt)]
        assert len(later), f"{row.key} attempt {row.attempt} failed setup and was not re-run"
        # iperf3's own message, or the watchdog's (run/handshake.py), which ends the client long
        # before iperf3's 30 s wait on the lost datagram, or a start so late its catch-up overflowed
        known = ("unable to", "UDP handshake lost", "iperf3 started sending")
        assert any(k in row.reason for k in known), row.reason
        if "UDP handshake lost" in row.reason:
            assert row.duration_ns < 25e9, row.duration_ns
    assert (lossy.events["kind"] == "setup_failed").sum() == len(setup)


def test_every_datagram_lost_on_a_lossy_link_is_accounted_for(lossy: Ran) -> None:
    proc = vnb("loss", "--db", str(lossy.db), "--json", cwd=lossy.tmp)
    assert proc.returncode == 0, proc.stderr
    locs = json.loads(proc.stdout)["loss_localization"]
    assert len(locs) == 6
    for loc in locs:
        stages = {s["key"]: s for s in loc["stages"]}
        (node,) = [
            e for e in stages["tx:delay:lossy/db"]["explainers"] if e["cause"].startswith("delay node")
        ]
        # the link's emulated loss, over every frame the node received in the run (±3 pp: ~2 500
        # frames, sd 0.6 pp)
        assert node["packets"] / stages["rx:delay:lossy/da"]["count"] == pytest.approx(0.10, abs=0.03)
        # and what the application lost beyond it is found too (a receiver the busy machine kept
        # waiting: Udp.RcvbufErrors; a start burst: the shaper's drops); counters span the warm-up
        assert loc["app_lost"] >= 0.06 * loc["sent"]
        assert loc["explained_packets"] >= 0.9 * loc["app_lost"]


@pytest.mark.parametrize("prime", [True, False])
def test_priming_keeps_path_setup_out_of_the_samples(tmp_path: Path, prime: bool) -> None:
    extra = () if prime else ("--set", "schedule.prime=false")
    for ran in run(tmp_path, "priming", PRIMING, *extra):
        store = Store(ran.db)
        samples = store.samples_frame(ran.campaign["id"])
        store.close()
        rtts = samples[samples["metric"] == "rtt_ns"].sort_values("seq")["value"].to_numpy() / 1e6
        assert len(rtts) == 30
        primed = ran.events[ran.events["kind"] == "path_primed"]
        if prime:
            assert len(primed) == 1
            # 2 x 20 ms through a delay node: never early, and the first reply pays no path set-up
            # (ARP through the node would add a whole round trip, 40 ms). A busy machine holds
            # replies a few ms (CI runs beside other tests: up to 5 ms, a quarter above 41 ms), so
            # precision is claimed on the median only; benchmarks/fidelity measures all 30 replies
            median = float(np.median(rtts))
            assert rtts.min() >= 40.0 and 40.0 <= median < 40.6, rtts
            assert rtts[0] < median + 20.0, rtts
        else:
            assert len(primed) == 0
            assert rtts[0] > 60, "without priming the first ping pays ARP through the delay node"
