"""Build every link type for real and read it back; traffic over each; OVS; tbf goodput; gate; CPU."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.integration.topology import Built, need
from tests.helpers.timing import best_of, met_or_machine_bound, wait_until, with_idle
from vnetbench.layout import Interface
from vnetbench.providers.local import cgroups, netns, netshaping, offload
from vnetbench.providers.local.procs import LocalToolProcess

# tbf goodput, CPU quotas, the start gate: precision a busy machine can spoil (make test runs it alone)
pytestmark = pytest.mark.timing

IFF_UP = 0x1


def _links(built: Built, ns: str) -> dict[str, dict]:
    with built.ipr(ns) as ipr:
        return {
            link.get_attr("IFLA_IFNAME"): {
                "index": link["index"],
                "mtu": link.get_attr("IFLA_MTU"),
                "up": bool(link["flags"] & IFF_UP),
                "master": link.get_attr("IFLA_MASTER"),
                "kind": (link.get_attr("IFLA_LINKINFO") or {}).get_attr("IFLA_INFO_KIND")
                if link.get_attr("IFLA_LINKINFO")
                else None,
                "info": link.get_attr("IFLA_LINKINFO"),
                "gro_max_size": link.get_attr("IFLA_GRO_MAX_SIZE"),
            }
            for link in ipr.get_links()
        }


def test_namespaces_exist_and_are_ours(every_link: Built) -> None:
    layout = every_link.layout
    assert len(layout.namespaces) == 7 + 3 + 1  # nodes, hosts, wan
    for ns in layout.namespaces:
        assert ns.startswith(f"vnb{layout.campaign_id}-")
        assert netns.identity(netns.path_of(ns)) is not None, ns
    rows = every_link.store.live_objects(layout.campaign_id)
    assert {r["name"] for r in rows if r["kind"] == "netns"} == set(layout.namespaces)
    assert os.path.exists(f"/run/vnetbench/active/{layout.campaign_id}")


def test_interfaces_addresses_mtus_masters_as_laid_out(every_link: Built) -> None:
    layout = every_link.layout
    by_ns: dict[str, list[Interface]] = {}
    for iface in layout.interfaces():
        by_ns.setdefault(iface.ns, []).append(iface)
    checked = 0
    for ns, ifaces in by_ns.items():
        links = _links(every_link, ns)
        with every_link.ipr(ns) as ipr:
            addrs = {(a["index"], f"{a.get_attr('IFA_ADDRESS')}/{a['prefixlen']}") for a in ipr.get_addr()}
        assert links["lo"]["up"]
        for iface in ifaces:
            link = links[iface.name]
            assert link["mtu"] == iface.mtu, (ns, iface.name)
            assert link["up"], (ns, iface.name)
            if iface.address:
                assert (link["index"], iface.address) in addrs
            else:
                assert not [a for i, a in addrs if i == link["index"]]
            bridge = next((b for b in layout.bridges if b.ns == ns and b.name == iface.master), None)
            if bridge is not None and bridge.kind == "linux-bridge":
                assert link["master"] == links[bridge.name]["index"], (ns, iface.name)
            checked += 1
    assert checked == len(layout.interfaces())
    for bridge in layout.bridges:
        if bridge.kind == "linux-bridge":
            link = _links(every_link, bridge.ns)[bridge.name]
            assert link["kind"] == "bridge" and link["mtu"] == bridge.mtu and link["up"]


def test_vxlan_devices_point_at_the_other_host(every_link: Built) -> None:
    layout = every_link.layout
    assert len(layout.vxlans) == 2
    for vx in layout.vxlans:
        link = _links(every_link, vx.iface.ns)[vx.iface.name]
        data = link["info"].get_attr("IFLA_INFO_DATA")
        assert link["kind"] == "vxlan"
        assert data.get_attr("IFLA_VXLAN_ID") == vx.vni
        assert data.get_attr("IFLA_VXLAN_GROUP") == vx.remote
        assert data.get_attr("IFLA_VXLAN_LOCAL") == vx.local
        assert data.get_attr("IFLA_VXLAN_PORT") == 4789


def test_shapers_are_on_the_right_interfaces_with_the_right_rates(every_link: Built) -> None:
    layout = every_link.layout
    tbf_seen = htb_seen = 0
    for iface in layout.interfaces():
        with every_link.ipr(iface.ns) as ipr:
            index = ipr.link_lookup(ifname=iface.name)[0]
            qdiscs = {q.get_attr("TCA_KIND"): q for q in ipr.get_qdiscs(index)}
            classes = list(ipr.get_classes(index)) if "htb" in qdiscs else []
        if iface.shaper is None:
            assert not {"tbf", "htb"} & set(qdiscs), (iface.ns, iface.name, qdiscs.keys())
        elif iface.shaper.kind == "tbf":
            parms = qdiscs["tbf"].get_attr("TCA_OPTIONS").get_attr("TCA_TBF_PARMS")
            assert parms["rate"] == iface.shaper.rate_bps // 8
            assert parms["limit"] == iface.shaper.queue_bytes
            tbf_seen += 1
        else:
            assert qdiscs["htb"].get_attr("TCA_OPTIONS").get_attr("TCA_HTB_INIT")["defcls"] == 1
            (cls,) = classes
            parms = cls.get_attr("TCA_OPTIONS").get_attr("TCA_HTB_PARMS")
            assert cls["handle"] == 0x10001
            assert parms["rate"] == parms["ceil"] == iface.shaper.rate_bps // 8
            assert qdiscs["bfifo"].get_attr("TCA_OPTIONS")["limit"] == iface.shaper.queue_bytes
            htb_seen += 1
    # direct n1-n2 (2 ends), tunnel (2 node ends), n5-osw (node end + OVS port: OVS must leave the
    # port's qdisc alone), n3-lsw htb (node end + switch port)
    assert (tbf_seen, htb_seen) == (6, 2)
    rates = {
        (i.ns, i.name): i.shaper.rate_bps for i in layout.interfaces() if i.shaper and i.shaper.kind == "tbf"
    }
    assert rates[(layout.node_ns["n1"], "eth0")] == 100_000_000
    assert rates[(layout.node_ns["n1"], "eth2")] == 50_000_000


def test_userspace_ovs_has_its_ports_and_tx_offload_is_off(every_link: Built) -> None:
    layout, provider = every_link.layout, every_link.provider
    (bridge,) = [b for b in layout.bridges if b.kind == "ovs"]
    (instance,) = provider._ovs.values()
    assert instance.rundir == f"/run/vnetbench/{layout.campaign_id}/ovs-h2"
    ports = set(instance.vsctl("list-ports", bridge.name).split())
    assert ports == {i.name for i in layout.interfaces() if i.ns == bridge.ns and i.master == bridge.name}
    assert instance.vsctl("get", "bridge", bridge.name, "datapath_type").strip() == "netdev"
    marked = [i for i in layout.interfaces() if i.tx_offload_off]
    assert len(marked) == 4
    for iface in marked:
        state = offload.tx_checksum_state(provider.namespaces[iface.ns].fd, iface.name)
        assert not any(state.values()), (iface.ns, iface.name, state)
    unmarked = next(i for i in layout.interfaces() if not i.tx_offload_off and i.name == "eth0")
    assert any(offload.tx_checksum_state(provider.namespaces[unmarked.ns].fd, unmarked.name).values())
    daemons = [r for r in every_link.store.live_objects(layout.campaign_id) if r["kind"] == "process"]
    assert {r["details"]["role"] for r in daemons} >= {"ovsdb-server", "ovs-vswitchd"}


def test_cgroups_carry_the_quotas(every_link: Built) -> None:
    layout, provider = every_link.layout, every_link.provider
    controller = cgroups.detect()
    assert controller is not None
    host = os.path.join(controller.root, layout.host_ns["h3"])
    node = os.path.join(host, layout.node_ns["n7"])
    name = "cpu.cfs_quota_us" if controller.version == 1 else "cpu.max"
    assert Path(host, name).read_text().split()[0] == "50000"
    assert Path(node, name).read_text().split()[0] == "25000"
    assert set(provider._cgroup_paths) >= {"host:h3", "node:n7"}


def _ping(built: Built, src: str, dst: str) -> str:
    addr = built.layout.address_of(dst, src)
    fin = built.provider.spawn(src, ["ping", "-c", "3", "-i", "0.2", "-W", "2", addr]).wait(15)
    assert fin.returncode == 0, (src, dst, fin.stdout, fin.stderr)
    assert " 0% packet loss" in fin.stdout
    return fin.stdout


@pytest.mark.parametrize(
    ("src", "dst", "kind"),
    [
        ("n1", "n2", "same-host direct veth"),
        ("n1", "n3", "via Linux bridge"),
        ("n4", "n5", "via userspace OVS"),
        ("n2", "n4", "cross-host wire"),
        ("n1", "n6", "cross-site VXLAN"),
    ],
)
def test_ping_over_every_link_type(every_link: Built, src: str, dst: str, kind: str) -> None:
    _ping(every_link, src, dst)
    assert every_link.layout.placement(src, dst) == (
        "cross-site" if kind == "cross-site VXLAN" else "same-site" if "cross-host" in kind else "same-host"
    )


def _iperf3(built: Built, src: str, dst: str, seconds: int, port: int, omit: int = 0) -> float:
    server = built.provider.spawn(dst, ["iperf3", "-s", "-1", "-p", str(port)])
    assert built.provider.wait_listening(server, port, "tcp", 10)
    addr = built.layout.address_of(dst, src)
    argv = ["iperf3", "-c", addr, "-p", str(port), "-t", str(seconds), "-O", str(omit), "-J"]
    client = built.provider.spawn(src, argv)
    fin = client.wait(seconds + omit + 30)
    server.wait(10)
    assert fin.returncode == 0, fin.stderr
    result = json.loads(fin.stdout)
    return result["end"]["sum_received"]["bits_per_second"]


def test_tcp_through_userspace_ovs(every_link: Built) -> None:
    need("iperf3")
    # What this checks: TCP flows through userspace OVS (with TX offload left on it stalls at ~0)
    # and the OVS port towards n5 shapes at 200 Mbit/s (unshaped, OVS passes ~0.6-1.1 Gbit/s here).
    # Userspace OVS forwards on this machine's CPU, so a busy machine lowers the rate (146-161
    # Mbit/s seen with other builds running): the shaped rate's accuracy is benchmarks/fidelity's
    # claim, not this test's. The shaper's bound holds whatever the load.
    expected = 200e6 * 1448 / 1514
    bps = _iperf3(every_link, "n4", "n5", 3, 5301, omit=1)
    assert 0.25 * expected < bps < 1.02 * expected, (
        f"{bps / 1e6:.0f} Mbit/s through OVS vs {expected / 1e6:.0f}"
    )


def test_tbf_100mbit_gives_the_model_goodput(every_link: Built) -> None:
    need("iperf3")
    expected = 100e6 * 1448 / 1514

    def measure() -> float:
        bps = _iperf3(every_link, "n1", "n2", 5, 5302, omit=1)
        # the shaper's bound holds on every attempt, whatever the load
        assert bps < 1.01 * expected, f"{bps / 1e6:.2f} Mbit/s: above the model's {expected / 1e6:.2f}"
        return bps

    # A descheduled sender or receiver can only lower the rate, so the bound above is the behaviour;
    # below, best of 3 at ≥ 90 % of the model says the shaper is at the right rate (a unit error is
    # 8× or 1,000× off). How close TCP gets to the model is a performance claim: benchmarks/fidelity
    # (TCP alone within 2 % on every link kind). A tally run's timing phase saw 96.5–97.3 % three
    # times here against an earlier 98 % floor. With no CPU to spare on any attempt, half the model
    # still tells a right rate from a unit error (the suite's rule, tests/helpers/timing.py).
    met, attempts = best_of(lambda: with_idle(measure), lambda m: m.value >= 0.90 * expected)
    met_or_machine_bound(
        met,
        attempts,
        idle=lambda m: m.idle,
        floor=lambda m: m.value >= 0.5 * expected,
        numbers=lambda ms: f"{[round(m.value / 1e6, 2) for m in ms]} Mbit/s vs {expected / 1e6:.2f}",
    )


def test_udp_and_tcp_listening_is_seen_without_connecting(every_link: Built) -> None:
    provider = every_link.provider
    code = "import socket,time; s=socket.socket(2,2); s.bind(('0.0.0.0',7777)); time.sleep(30)"
    proc = provider.spawn("n2", ["python3", "-c", code])
    try:
        assert provider.wait_listening(proc, 7777, "udp", 10)
        assert not provider.wait_listening(proc, 7778, "udp", 0.2)
        assert not provider.wait_listening(proc, 7777, "tcp", 0.2)
    finally:
        proc.kill()
    dead = provider.spawn("n2", ["true"])
    dead.wait(5)
    assert not provider.wait_listening(dead, 7777, "udp", 1)


def test_gate_starts_processes_together(every_link: Built) -> None:
    provider = every_link.provider
    gate = provider.gate()
    procs = [provider.spawn(node, ["sleep", "0.3"], gate=gate) for node in ("n1", "n2", "n3")]
    time.sleep(0.3)
    for proc in procs:  # held at the gate: not exec'd yet, still a fork of python
        assert proc.poll() is None
        assert os.readlink(f"/proc/{proc.pid}/exe") != "/usr/bin/sleep"
    before = time.time_ns()
    stamps = gate.release()
    after = time.time_ns()
    assert len(stamps) == 3
    skew_ms = (max(stamps) - min(stamps)) / 1e6
    # together: released in one go, not one after another (each sleeps 0.3 s). The bound is not the
    # gate's precision (µs on a quiet machine): a child descheduled on a busy 2-core machine starts
    # tens of ms late (20.6 ms seen in a tally run against an earlier 20 ms bound).
    assert skew_ms < 100, stamps
    assert all(before - 1_000_000 <= s <= after for s in stamps)
    for proc, stamp in zip(procs, stamps, strict=True):
        fin = proc.wait(5)
        assert fin.returncode == 0 and fin.started_utc_ns == stamp


def test_closed_gate_never_runs_its_processes(every_link: Built, tmp_path) -> None:
    provider = every_link.provider
    marker = tmp_path / "ran"
    gate = provider.gate()
    proc = provider.spawn("n1", ["sh", "-c", f"touch {marker}"], gate=gate)
    gate.close()
    fin = proc.wait(5)
    assert fin.returncode == 125 and not marker.exists()


def test_wait_kills_the_whole_process_group_on_timeout(every_link: Built, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    proc = every_link.provider.spawn("n1", ["sh", "-c", f"sleep 100 & echo $! > {pidfile}; wait"])
    # the shell has forked its child once the pid is written (a loaded machine may take a while)
    text = wait_until(lambda: pidfile.read_text() if pidfile.exists() else "", str.strip, timeout=10)
    assert text.strip(), "the shell never started its child"
    child = int(text)
    fin = proc.wait(0.5)
    assert fin.timed_out and fin.returncode is None
    stat = Path(f"/proc/{child}/stat")

    def gone() -> bool:
        return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"

    assert wait_until(gone, bool, timeout=5), f"the shell's child {child} outlived its group's kill"


def test_output_goes_to_files_not_pipes(every_link: Built) -> None:
    # 4 MB on stdout would fill a pipe and block a child nobody reads while it runs.
    proc = every_link.provider.spawn(
        "n1", ["sh", "-c", "head -c 4000000 /dev/zero | tr '\\0' x; echo done >&2"]
    )
    fin = proc.wait(20)
    assert fin.returncode == 0 and len(fin.stdout) == 4_000_000 and fin.stderr.strip() == "done"


def test_missing_tool_names_its_package(every_link: Built) -> None:
    from vnetbench.providers.base import ProviderError

    with pytest.raises(ProviderError, match="not found"):
        every_link.provider.spawn("n1", ["no-such-tool-vnb"])


def _cpu_share(built: Built, node: str, seconds: float = 2.0) -> float:
    proc: LocalToolProcess = built.provider.spawn(node, ["sh", "-c", "while :; do :; done"])  # type: ignore[assignment]
    started = time.monotonic()
    time.sleep(seconds)
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    wall = time.monotonic() - started
    proc.kill()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") / wall


def _cpu_share_unloaded(built: Built, node: str, low: float) -> float:
    """Other work on a shared machine can only lower a capped spinner's share, never raise it: measure up
    to three times and keep the highest (every measurement must stay under the cap)."""
    shares = []
    for _ in range(3):
        shares.append(_cpu_share(built, node))
        if shares[-1] >= low:
            break
    return max(shares)


def test_host_cpu_quota_gives_half_a_core(every_link: Built) -> None:
    share = _cpu_share_unloaded(every_link, "n6", 0.4)  # h3 has cpu: 0.5
    assert 0.4 <= share <= 0.6, share


def test_node_cpu_quota_nested_in_its_host(every_link: Built) -> None:
    share = _cpu_share_unloaded(every_link, "n7", 0.18)  # n7 has cpu: 0.25 inside h3's 0.5
    assert 0.18 <= share <= 0.32, share


def test_unquoted_node_runs_outside_any_cgroup_of_ours(every_link: Built) -> None:
    proc = every_link.provider.spawn("n1", ["sleep", "5"])
    try:
        with open(f"/proc/{proc.pid}/cgroup") as f:
            assert "vnb" not in f.read()
    finally:
        proc.kill()


def test_processes_run_in_their_node_namespace(every_link: Built) -> None:
    layout = every_link.layout
    proc = every_link.provider.spawn("n3", ["sleep", "5"])
    try:
        # the fork joins the node's namespace before it execs sleep: wait for the exec
        wait_until(lambda: os.readlink(f"/proc/{proc.pid}/exe"), lambda exe: exe.endswith("/sleep"), 10)
        st = os.stat(f"/proc/{proc.pid}/ns/net")
        assert (st.st_dev, st.st_ino) == netns.identity(netns.path_of(layout.node_ns["n3"]))
        out = subprocess.run(
            ["ip", "-n", layout.node_ns["n3"], "-br", "addr", "show", "eth0"], capture_output=True, text=True
        ).stdout
        assert layout.address_of("n3", "n1") in out
    finally:
        proc.kill()


def test_many_spawns_leak_no_fds_and_are_forgotten_once_reaped(every_link: Built) -> None:
    provider = every_link.provider
    before = len(os.listdir("/proc/self/fd"))
    tracked = len(provider._procs)
    for i in range(100):
        fin = provider.spawn("n1", ["sh", "-c", f"echo {i}"]).wait(5)
        assert fin.returncode == 0 and fin.stdout == f"{i}\n"
    assert len(os.listdir("/proc/self/fd")) <= before + 1
    assert len(provider._procs) == tracked


def _ethtool_k(ns: str, ifname: str) -> dict[str, str]:
    out = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-k", ifname], capture_output=True, text=True)
    return dict(line.strip().split(": ", 1)[:2] for line in out.stdout.splitlines()[1:] if ": " in line)


def test_a_network_shaped_bridge_port_hands_its_output_to_a_queue_of_the_peers_own(every_link: Built) -> None:
    # n3-lsw (htb): lsw's port towards n3 forwards frames, so n3's eth0 receives the shaper's output
    # in its own NAPI queue (GRO on, aggregating as a VM's NIC does: GRO's default size 65,536) and
    # the port has TSO off (without it veth gives forwarded frames to the CPU's backlog); a chosen
    # peer that forwards again gets GRO size 0; n1-n2's node ends are left as they were.
    layout = every_link.layout
    need("ethtool")
    (port,) = [
        i for i in layout.interfaces() if i.master and i.ns == layout.host_ns["h1"] and i.shaper is not None
    ]
    n3, n1 = layout.node_ns["n3"], layout.node_ns["n1"]
    port_k = _ethtool_k(port.ns, port.name)  # ETHTOOL_STSO: NETIF_F_ALL_TSO (AccECN's TSO is not in it)
    assert port_k["tx-tcp-segmentation"].startswith("off") and port_k["tx-tcp6-segmentation"].startswith(
        "off"
    )
    assert _ethtool_k(n3, "eth0")["generic-receive-offload"].startswith("on")
    assert _links(every_link, n3)["eth0"]["gro_max_size"] == 65536
    for _, peer in netshaping.own_receive_queue(layout):
        expected = 65536 if netshaping.aggregates(layout, peer) else 0
        assert _links(every_link, peer.ns)[peer.name]["gro_max_size"] == expected, (peer.ns, peer.name)
    assert _ethtool_k(n1, "eth0")["generic-receive-offload"].startswith("off")
    assert _ethtool_k(n1, "eth0")["tx-tcp-segmentation"].startswith("on")
