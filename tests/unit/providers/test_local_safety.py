"""Without root: preflight messages, the /proc readers, the registry, and clean()'s refusals."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.helpers.stores import campaign_store
from vnetbench.layout import build_layout
from vnetbench.layout.link_emulation import realise
from vnetbench.providers import cleanup
from vnetbench.providers.local import features, preflight, procs, runtime
from vnetbench.spec import load_spec, parse_spec
from vnetbench.store.db import Store

FIXTURES = Path(__file__).parents[2] / "integration" / "providers" / "fixtures"


def _layout(name: str, cid: str = "c0ffee00"):
    return build_layout(load_spec(FIXTURES / name).campaign, cid)


def test_preflight_without_root_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    (message,) = preflight.problems(_layout("every_link.yaml"))
    assert "needs root" in message and "sudo" in message


@pytest.fixture
def kernel_without_netem(monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = {k: True for k in (*features.LINK_KINDS, *features.QDISC_KINDS, *features.SHAPING_KINDS)}
    kinds["netem"] = False
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(features, "probe", lambda refresh=False: features.Features(True, None, kinds))


def test_preflight_names_the_link_the_missing_netem_and_the_fix(kernel_without_netem) -> None:
    # only when netem is insisted on (emulator: netem); auto and delay-node use a delay node
    problems = preflight.problems(_layout("delay.yaml", "c0ffee01"), tools=(), emulation={"slow": "netem"})
    assert len(problems) == 1
    message = problems[0]
    assert message.startswith("link slow: delay/loss with `emulator: netem` need the kernel's netem qdisc")
    assert "Fix: set `emulator: auto` or `delay-node` on link slow" in message
    assert (
        preflight.problems(_layout("delay.yaml", "c0ffee01"), tools=(), emulation={"slow": "delay-node"})
        == []
    )


OVERLAY = """
name: v
topology:
  sites: [w, e]
  hosts: [{name: h1, site: w}, {name: h2, site: e}]
  nodes: [{name: a, host: h1}, {name: b, host: h2}]
  switches: [{name: s1, host: h1}, {name: s2, host: h2}]
  links:
    - {endpoints: [a, s1], rate: 1gbit, shaping: sender}
    - {endpoints: [b, s2], rate: 1gbit, shaping: sender}
    - {name: trunk, endpoints: [s1, s2], overlay: vxlan, shaping: sender, LINK}
measurements: [{name: p, kind: rtt}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [p]}]
"""


def test_preflight_refuses_a_held_delay_inside_an_overlay_and_does_not_offer_netem(
    kernel_without_netem,
) -> None:
    # a held delay needs a delay node even where netem exists (layout/link_emulation.choose): netem
    # is no fix for it
    for fields, fix in (
        ("delay_cdf: [[0, 5ms], [1, 45ms]], delay_hold: 1s", "put delay_cdf, delay_hold on a node's link, or "
         "remove delay_hold (netem cannot hold a delay) and use `emulator: netem` where the kernel has netem"),
        ("delay: 9ms, jitter: 1ms", "put delay, jitter on a node's link, or use `emulator: netem` where"),
    ):  # fmt: skip
        campaign = parse_spec(OVERLAY.replace("LINK", fields), "v.yaml").campaign
        layout, emulation = realise(build_layout(campaign, "c0ffee05"), kernel_has_netem=False)
        problems = preflight.problems(layout, tools=(), emulation=emulation)
        (message,) = [p for p in problems if "VXLAN" in p]
        assert message.startswith("link trunk: a delay node cannot sit inside a VXLAN overlay link"), message
        assert fix in message, message


def test_preflight_names_network_shaping_without_ifb_and_the_fix(kernel_without_netem, monkeypatch) -> None:
    kinds = dict(features.probe().kinds, ifb=False, redirect=False)
    monkeypatch.setattr(features, "probe", lambda refresh=False: features.Features(True, None, kinds))
    problems = preflight.problems(
        _layout("delay.yaml", "c0ffee04"), tools=(), emulation={"slow": "delay-node"}
    )
    assert len(problems) == 2
    assert all("a link with `shaping: network` (the default)" in p for p in problems)
    assert all("set `shaping: sender` on the link" in p for p in problems)


def test_preflight_names_missing_tools_and_their_packages(kernel_without_netem, monkeypatch) -> None:
    monkeypatch.setattr(preflight.shutil, "which", lambda tool: None)
    monkeypatch.setattr(preflight.os.path, "exists", lambda path: False)
    problems = preflight.problems(_layout("small_ovs.yaml", "c0ffee02"), tools=("iperf3", "ping"))
    assert "iperf3 is not installed: apt-get install iperf3" in problems
    assert "ping is not installed: apt-get install iputils-ping" in problems
    assert (
        "ovs-vswitchd is not installed: apt-get install openvswitch-switch (userspace Open vSwitch)"
        in problems
    )


def test_preflight_refuses_tbf_above_its_32_bit_rate(kernel_without_netem) -> None:
    from vnetbench.spec import parse_spec

    text = (
        (FIXTURES / "delay.yaml").read_text().replace("rate: 10mbit, delay: 20ms, loss: 0.01", "rate: 40gbit")
    )
    layout = build_layout(parse_spec(text).campaign, "c0ffee03")
    (message,) = preflight.problems(layout, tools=())
    assert "above tbf's limit" in message and "shaper: htb" in message


def test_listening_reads_the_pids_namespace_tables() -> None:
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    try:
        me = os.getpid()
        assert procs.listening(me, tcp.getsockname()[1], "tcp") is True
        assert procs.listening(me, udp.getsockname()[1], "udp") is True
        assert procs.listening(me, udp.getsockname()[1], "tcp") is False
        assert procs.listening(2**22 + 7, 5201, "tcp") is None
    finally:
        tcp.close()
        udp.close()


def test_registry_of_live_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "ACTIVE_DIR", str(tmp_path / "active"))
    assert cleanup.active_campaigns() == []
    runtime.mark_active("ab12cd34", "rel.db")
    runtime.mark_active("ef56", "postgresql://x/y")
    assert cleanup.active_campaigns() == [
        ("ab12cd34", str(Path("rel.db").resolve())),
        ("ef56", "postgresql://x/y"),
    ]
    assert runtime.unmark_active("ab12cd34") and not runtime.unmark_active("ab12cd34")
    with pytest.raises(ValueError):
        runtime.mark_active("../etc", "x.db")


def _gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def test_a_registry_temporary_whose_writer_is_gone_is_removed(tmp_path: Path, monkeypatch) -> None:
    """mark_active writes ID.tmpPID and renames it; a SIGKILL in between left an empty
    /run/vnetbench/active/de57d85c.tmp1884 that nothing removed (unmark_active and clean knew `ID`
    only). A live writer's temporary and other campaigns' stay."""
    active = tmp_path / "active"
    monkeypatch.setattr(runtime, "ACTIVE_DIR", str(active))
    runtime.mark_active("ab12", "s.db")
    dead = _gone_pid()
    odd = ["ab12.tmpx", "ab12.tmp99999999999"]  # not mark_active's: left (and no pid overflows os.kill)
    for name in (f"ab12.tmp{dead}", f"ab12.tmp{os.getpid()}", f"cd34.tmp{dead}", *odd):
        (active / name).write_text("")
    assert runtime.unmark_active("ab12")
    left = sorted([f"ab12.tmp{os.getpid()}", *odd])
    assert sorted(p.name for p in active.iterdir()) == sorted([*left, f"cd34.tmp{dead}"])
    # `vnetbench clean` of a store: its campaigns' leftovers, even one killed before it made anything
    store = _store(tmp_path, "cd34")
    try:
        report = cleanup.clean(store)
    finally:
        store.close()
    assert report.removed == [f"registry temporary {active}/cd34.tmp{dead} (its writer is gone)"]
    assert sorted(p.name for p in active.iterdir()) == left


def _store(tmp_path: Path, cid: str) -> Store:
    return campaign_store(tmp_path / "s.db", cid, status="failed")


def test_clean_never_kills_a_pid_whose_start_time_differs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "ACTIVE_DIR", str(tmp_path / "active"))
    store = _store(tmp_path, "u1")
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        start = procs.starttime(bystander.pid)
        store.record_objects(
            "u1",
            None,
            [
                ("process", "x:sleep", {"pid": bystander.pid, "starttime": start - 1}),  # a reused pid
                ("process", "me", {"pid": os.getpid(), "starttime": 1}),
            ],
        )
        report = cleanup.clean(store)
        assert bystander.poll() is None and report.removed == [] and len(report.ids) == 2
        assert store.live_objects() == []
    finally:
        bystander.kill()
        bystander.wait()
        store.close()


def test_clean_refuses_paths_that_are_not_ours(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "ACTIVE_DIR", str(tmp_path / "active"))
    store = _store(tmp_path, "u2")
    victim = tmp_path / "precious"
    victim.mkdir()
    store.record_objects(
        "u2",
        None,
        [
            ("netns", "vnbu2-n-a", {"path": "/run/netns/../../etc"}),
            ("netns", "other", {"path": "/run/netns/other"}),
            ("cgroup", "vnbu2-h-h1", {"path": str(victim)}),
            ("cgroup", "x", {"path": "/sys/fs/cgroup/cpu/../../../etc"}),
            ("rundir", str(victim), {"path": str(victim)}),
            ("rundir", "/run/vnetbench/active", {"path": "/run/vnetbench/active"}),
            ("mystery", "thing", {}),
        ],
    )
    report = cleanup.clean(store)
    assert victim.is_dir()
    assert report.ids == [] and len(report.problems) == 7
    assert len(store.live_objects("u2")) == 7
    store.close()


def test_clean_marks_objects_that_are_already_gone(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "ACTIVE_DIR", str(tmp_path / "active"))
    store = _store(tmp_path, "u3")
    runtime.mark_active("u3", store.location)
    store.record_objects(
        "u3",
        None,
        [
            ("netns", "vnbu3-n-gone", {"path": "/run/netns/vnbu3-n-gone"}),
            ("cgroup", "vnbu3-h-gone", {"path": "/sys/fs/cgroup/cpu/vnbu3-h-gone"}),
            ("rundir", "/run/vnetbench/u3", {"path": "/run/vnetbench/u3"}),
        ],
    )
    report = cleanup.clean(store, "u3")
    assert report.removed == [] and report.problems == [] and len(report.ids) == 3
    assert cleanup.active_campaigns() == []
    store.close()


class _Stop(Exception):
    pass


def test_deferred_signals_wait_for_the_end_of_the_section() -> None:
    import signal

    from vnetbench.providers.local import signals

    def handler(signum, frame):
        raise _Stop

    previous = signal.signal(signal.SIGUSR2, handler)
    reached = []
    try:
        with pytest.raises(_Stop), signals.deferred():
            os.kill(os.getpid(), signal.SIGUSR2)
            for _ in range(1000):  # plenty of bytecodes at which a handler would run
                pass
            reached.append("end of section")
        assert reached == ["end of section"]
        assert signal.getsignal(signal.SIGUSR2) is handler
        with pytest.raises(_Stop):  # outside a section, delivered at once
            os.kill(os.getpid(), signal.SIGUSR2)
            for _ in range(1000):
                pass
    finally:
        signal.signal(signal.SIGUSR2, previous)
