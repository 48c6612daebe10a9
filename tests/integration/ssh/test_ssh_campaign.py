"""Campaigns over SSH against real sshd servers in namespaces: one host behind a jump host, one sshd
killed mid-campaign, hostile names and labels. Runs the real CLI / runner, real iperf3 and ping."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.integration.sshnet import SshNet, leftovers
from vnetbench.layout import build_layout
from vnetbench.providers.base import ProviderError
from vnetbench.providers.registry import make_provider
from vnetbench.providers.ssh.provider import HOST_STATE_EVENT
from vnetbench.report.html import write_report
from vnetbench.run.campaign import create_campaign
from vnetbench.run.runner import Runner
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store

NODES = ("a", "b", "c", "d")


def campaign(pairs: list[list[str]], repetitions: int = 1, retries: int = 0) -> dict[str, Any]:
    return {
        "name": "sshit",
        "topology": {
            "switches": [{"name": "lan"}],
            "nodes": [{"name": n} for n in NODES],
            "links": [{"endpoints": [n, "lan"]} for n in NODES],
        },
        "measurements": [
            {"name": "tcp", "kind": "tcp", "duration": "1s"},
            {"name": "rtt", "kind": "rtt", "count": 3, "interval": "0.05s"},
        ],
        "patterns": [{"kind": "pairs", "pairs": pairs, "measurements": ["tcp", "rtt"]}],
        "schedule": {"repetitions": repetitions, "retries": retries},
    }


def mapping(net: SshNet) -> dict[str, str]:
    return {n: h.name for n, h in zip(NODES, net.hosts, strict=True)}


def test_cli_campaign_over_ssh_with_a_jump_host(sshnet: SshNet, tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(yaml.safe_dump(campaign([["a", "b"], ["d", "a"], ["c", "d"]])))
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump({**sshnet.inventory(), "nodes": mapping(sshnet)}))
    db = tmp_path / "s.db"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "vnetbench.cli",
            "run",
            str(spec),
            "--inventory",
            str(inventory),
            "--db",
            str(db),
            "--no-report",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    store = Store(str(db))
    row = store.campaign(None)
    assert row["provider"] == "ssh"
    frame = store.measurements_frame(row["id"])
    assert list(frame["status"]) == ["ok"] * 6, frame["reason"].tolist()
    tcp = frame[frame["kind"] == "tcp"]
    assert (tcp["throughput_bps"] > 1e8).all()  # veths through a bridge: Gbit/s
    rtt = frame[frame["kind"] == "rtt"]
    assert (rtt["rtt_mean_ns"] < 20e6).all()
    # d sits behind the jump host h0, and its data address is the bridge one
    d_rows = frame[(frame["src"] == "d") | (frame["dst"] == "d")]
    assert len(d_rows) == 4
    placement = {(r.src, r.dst): r.placement for r in frame.itertuples()}
    # labels: h0,h1 on ph0 (site-a); h2,h3 on ph1 (site-b)
    assert placement[("a", "b")] == "same-host"
    assert placement[("d", "a")] == "cross-site"
    assert placement[("c", "d")] == "same-host"
    assert set(tcp["dst_host"]) == {"ph0", "ph1"}
    # the commands ran the drivers' argv with the inventory's data address
    cmds = [json.loads(c) if isinstance(c, str) else c for c in frame["command"]]
    assert any(sshnet.hosts[1].address in c["client"] for c in cmds)
    assert store.live_objects(row["id"]) == []
    # the hosts' own tool versions are kept with the campaign
    events = store.events_frame(row["id"])
    tools = [json.loads(d) for d in events[events["kind"] == "host_tools"]["detail"]]
    assert {t["host"] for t in tools} == {h.name for h in sshnet.hosts}
    iperf3 = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.split()[1]
    assert all(t["versions"]["iperf3"] == iperf3 and "iputils" in t["versions"]["ping"] for t in tools)
    assert leftovers(sshnet) == []
    # the key's path is in the stored spec; the key itself is nowhere in the store or the output
    secret = "".join(sshnet.user_key.read_text().splitlines()[1:-1])
    assert secret[:40] not in db.read_bytes().decode("latin-1")
    assert secret[:40] not in run.stdout + run.stderr


def test_a_killed_sshd_fails_its_measurements_and_the_campaign_goes_on(
    sshnet: SshNet, tmp_path: Path
) -> None:
    spec = campaign([["a", "b"], ["a", "c"], ["b", "a"]], repetitions=2, retries=1)
    spec["inventory"] = {**sshnet.inventory(keepalive="1s", connect_timeout="2s"), "nodes": mapping(sshnet)}
    loaded = parse_spec(yaml.safe_dump(spec), "kill.yaml")
    store = Store(str(tmp_path / "s.db"))
    started = create_campaign(loaded, store, provider="ssh")
    provider = make_provider("ssh", started.campaign_id, store)
    victim = sshnet.hosts[2]  # node c
    steps = []

    def on_step(step: Any, records: list[Any]) -> None:
        steps.append(step)
        if len(steps) == 2:  # after a->b tcp, a->b rtt of the first repetition
            sshnet.kill_sshd(victim)

    runner = Runner(store, started.campaign_id, started.plan, provider, {}, on_step=on_step)
    try:
        row = store.campaign(started.campaign_id)
        summary = runner.run(row["created_utc_ns"])
    finally:
        sshnet.start_sshd(victim)
        sshnet._wait_port(victim)
    assert not summary.interrupted
    assert store.campaign(started.campaign_id)["status"] == "finished"
    # 12 planned: the two tcp a->c failed after 2 attempts each; each counts once (they counted as 4)
    assert (summary.flows_ok, summary.flows_failed, summary.reruns) == (10, 2, 2), summary.failures
    assert len(summary.failures) == 2 and all(" (attempt 2): host " in f for f in summary.failures)
    frame = store.measurements_frame(started.campaign_id)
    # tcp needs an iperf3 server started on c over SSH: it fails; ping from a needs nothing on c
    needs_c = frame[frame["dst"] == "c"]
    tcp_c, rtt_c = needs_c[needs_c["kind"] == "tcp"], needs_c[needs_c["kind"] == "rtt"]
    others = frame[frame["dst"] != "c"]
    assert len(tcp_c) == 2 and (tcp_c["status"] == "failed").all()
    assert all(f"host {victim.name} unreachable" in r for r in tcp_c["reason"]), tcp_c["reason"].tolist()
    assert (tcp_c["attempt"] == 2).all()  # retried once, per the schedule
    assert (rtt_c["status"] == "ok").all()
    # telemetry does not wait on the dead host: the echoes to it say so (and have no other problem)
    events = store.events_frame(started.campaign_id)
    tel = events[events["kind"] == "telemetry_error"]
    assert sorted(tel["measurement_id"].astype(int)) == sorted(rtt_c["id"].astype(int))
    assert (tel["detail"] == f"host {victim.name} unreachable: no telemetry from it").all()
    assert len(others) == 8 and (others["status"] == "ok").all(), others["reason"].tolist()
    events = store.events_frame(started.campaign_id)
    states = [json.loads(d) for d in events[events["kind"] == "host_state"]["detail"]]
    down = [s for s in states if s["host"] == victim.name and not s["up"]]
    assert down and any("refused" in s["reason"] or "lost" in s["reason"] for s in down)
    assert next(s["up"] for s in states if s["host"] == victim.name) is True
    # what was committed before the kill is still there
    assert len(frame) == 12
    html = write_report(store, started.campaign_id, tmp_path / "report").read_text()
    assert "Host availability" in html and ("✗ down" in html or "◐ partly" in html)
    live = store.live_objects(started.campaign_id)
    assert all(o["details"]["host"] == victim.name for o in live)  # only the dead host kept its rundir
    assert leftovers(sshnet) == []


HOSTILE = [
    "$(touch {m}1)",
    "`touch {m}2`",
    "x; touch {m}3; #",
    "'\"; touch {m}4 '",
    "h\\ $HOME && touch {m}5",
    "<b>ünïcødé ✓ | touch {m}6</b>",
]


def test_hostile_names_and_labels_never_reach_a_shell(sshnet: SshNet, tmp_path: Path) -> None:
    marker = str(tmp_path / "pwned")
    names = {h.name: HOSTILE[i].format(m=marker) for i, h in enumerate(sshnet.hosts)}
    inventory = sshnet.inventory(names=names)
    for i, host in enumerate(inventory["hosts"]):  # type: ignore[union-attr]
        host["site"] = HOSTILE[(i + 1) % len(HOSTILE)].format(m=marker)
        host["physical_host"] = HOSTILE[(i + 2) % len(HOSTILE)].format(m=marker)
    spec = campaign([["a", "b"], ["c", "d"]])
    spec["measurements"] = [spec["measurements"][1]]
    spec["patterns"][0]["measurements"] = ["rtt"]
    spec["inventory"] = {**inventory, "nodes": {n: names[h] for n, h in mapping(sshnet).items()}}
    loaded = parse_spec(yaml.safe_dump(spec), "hostile.yaml")
    store = Store(str(tmp_path / "s.db"))
    started = create_campaign(loaded, store, provider="ssh")
    provider = make_provider("ssh", started.campaign_id, store)
    runner = Runner(store, started.campaign_id, started.plan, provider, {})
    summary = runner.run(store.campaign(started.campaign_id)["created_utc_ns"])
    assert summary.flows_ok == 2, summary.failures
    assert not any(p.startswith("pwned") for p in os.listdir(tmp_path))
    frame = store.measurements_frame(started.campaign_id)
    assert set(frame["src_host"]) == {
        inventory["hosts"][0]["physical_host"],
        inventory["hosts"][2]["physical_host"],
    }  # type: ignore[index]
    events = store.events_frame(started.campaign_id)
    states = events[events["kind"] == HOST_STATE_EVENT]  # (priming and others have their own events)
    hosts = {json.loads(d)["host"] for d in states["detail"]}
    assert hosts == set(names.values())
    html = write_report(store, started.campaign_id, tmp_path / "report").read_text()
    assert "Host availability" in html and "&lt;b&gt;" in html  # labels escaped, never markup
    assert store.live_objects(started.campaign_id) == []
    assert leftovers(sshnet) == []


def test_clean_removes_what_a_killed_run_left_on_remote_hosts(sshnet: SshNet, tmp_path: Path) -> None:
    from vnetbench.layout import build_layout
    from vnetbench.providers.cleanup import clean

    spec = campaign([["a", "b"]])
    spec["inventory"] = {**sshnet.inventory(), "nodes": mapping(sshnet)}
    loaded = parse_spec(yaml.safe_dump(spec), "crash.yaml")
    store = Store(str(tmp_path / "s.db"))
    started = create_campaign(loaded, store, provider="ssh")
    cid = started.campaign_id
    provider = make_provider("ssh", cid, store)
    build_id = store.start_build(cid, "t", {})
    provider.build(
        build_layout(loaded.campaign, cid), build_id, lambda items: store.record_objects(cid, build_id, items)
    )
    proc = provider.spawn("b", ["sleep", "300"])
    assert proc.poll() is None
    # Until the wrapper has exec'd the tool it still writes to the channel: closing the connection
    # before then kills it with SIGPIPE, and nothing would be left for clean() to find. (The "remote"
    # hosts are namespaces here, so their /proc is ours.)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "sleep" and time.monotonic() < deadline:
        time.sleep(0.01)
    # the controller "dies" here: no teardown. What it recorded is enough to clean up.
    provider.pool._closing = True
    provider.loop.run(provider.pool.close())
    live = {o["kind"] for o in store.live_objects(cid)}
    assert live == {"ssh-process", "ssh-rundir"}
    assert proc.pid in sshnet.processes_in_our_namespaces()
    report = clean(store, cid)
    assert not report.problems, report.problems
    assert any(f"process {proc.pid} on h1" in line for line in report.removed)
    assert store.live_objects(cid) == []
    assert leftovers(sshnet) == []


def test_more_simultaneous_tools_than_sshd_sessions_open_more_connections(
    sshnet: SshNet, tmp_path: Path
) -> None:
    source = sshnet.hosts[0]
    sshnet.restart_sshd(source, max_sessions=2)  # sshd refuses a third channel on one connection
    try:
        spec = campaign([["a", "b"]])
        spec["measurements"] = [{"name": "tcp", "kind": "tcp", "duration": "1s"}]
        spec["patterns"] = [
            {
                "kind": "star",
                "source": "a",
                "destinations": ["b", "c", "d"],
                "measurements": ["tcp"],
                "alone": False,
            }
        ]
        spec["inventory"] = {**sshnet.inventory(max_sessions=2), "nodes": mapping(sshnet)}
        loaded = parse_spec(yaml.safe_dump(spec), "star.yaml")
        store = Store(str(tmp_path / "s.db"))
        started = create_campaign(loaded, store, provider="ssh")
        provider = make_provider("ssh", started.campaign_id, store)
        connections: list[int] = []

        def on_step(step: Any, records: list[Any]) -> None:
            pool = provider.pool  # type: ignore[attr-defined]
            connections.append(1 + len(pool._extra.get(source.name, [])))

        runner = Runner(store, started.campaign_id, started.plan, provider, {}, on_step=on_step)
        summary = runner.run(store.campaign(started.campaign_id)["created_utc_ns"])
    finally:
        sshnet.restart_sshd(source, max_sessions=64)
    assert summary.flows_ok == 3, summary.failures
    frame = store.measurements_frame(started.campaign_id)
    assert (frame["throughput_bps"] > 1e8).all()
    assert (frame["start_skew_ns"] < 1e9).all()  # the three clients started together
    assert connections == [2]  # three clients at once on a host allowing two channels per connection
    assert leftovers(sshnet) == []


def test_an_interrupted_ssh_campaign_resumes_from_the_store(sshnet: SshNet, tmp_path: Path) -> None:
    import signal
    import time

    spec = tmp_path / "c.yaml"
    spec.write_text(yaml.safe_dump(campaign([["a", "b"], ["c", "d"], ["b", "c"]], repetitions=2)))
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump({**sshnet.inventory(), "nodes": mapping(sshnet)}))
    db = tmp_path / "s.db"
    cmd = [sys.executable, "-m", "vnetbench.cli"]
    proc = subprocess.Popen(
        [*cmd, "run", str(spec), "--inventory", str(inventory), "--db", str(db), "--no-report"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        done = 0
        while done < 2 and time.monotonic() < deadline:  # let two measurements commit
            time.sleep(0.2)
            # read-only: opening a Store here would race the CLI creating the schema
            with (
                contextlib.suppress(sqlite3.Error),
                contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as ro,
            ):
                done = ro.execute("SELECT count(*) FROM measurements").fetchone()[0]
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    store = Store(str(db))
    row = store.campaign(None)
    kept = store.measurements_frame(row["id"])
    assert 2 <= len(kept) < 12 and (kept["status"] == "ok").all()
    assert store.live_objects(row["id"]) == []  # the interrupted run tore its remote side down
    resumed = subprocess.run(
        [*cmd, "resume", row["id"], "--db", str(db), "--no-report"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert resumed.returncode == 0, resumed.stderr
    frame = store.measurements_frame(row["id"])
    assert len(frame) == 12 and (frame["status"] == "ok").all()
    assert set(kept["key"]) <= set(frame["key"])
    assert (
        frame.set_index("key").loc[kept["key"], "id"].to_numpy() == kept["id"].to_numpy()
    ).all()  # not redone
    assert store.campaign(row["id"])["status"] == "finished"
    assert leftovers(sshnet) == []


def _build_error(net: SshNet, tmp_path: Path, inventory: dict[str, Any]) -> str:
    """The error building the four-node campaign (a-d on hosts 0-3) on these hosts ends with."""
    spec = {**campaign([["a", "b"]]), "inventory": {**inventory, "nodes": mapping(net)}}
    loaded = parse_spec(yaml.safe_dump(spec), "c.yaml")
    store = Store(str(tmp_path / "build.db"))
    cid = create_campaign(loaded, store, provider="ssh").campaign_id
    provider = make_provider("ssh", cid, store)
    build_id = store.start_build(cid, "t", {})
    try:
        provider.build(
            build_layout(loaded.campaign, cid), build_id, lambda i: store.record_objects(cid, build_id, i)
        )
    except ProviderError as err:
        return str(err)
    finally:
        store.mark_removed(provider.teardown())
        provider.close()
    raise AssertionError("the build did not fail")


def test_a_build_names_a_wrong_tools_path_and_a_shell_that_runs_no_commands(
    sshnet: SshNet, tmp_path: Path
) -> None:
    # was: "lacks /opt/none/iperf3 — install with: /opt/none/iperf3: apt-get install -y iperf3 …" (the
    # path came from the inventory: installing the package does not put it there), and for a nologin
    # user only sshd's stderr ("Could not chdir to home directory"), not what the shell said
    inventory = sshnet.inventory()
    inventory["hosts"][1]["tools"] = {"iperf3": "/opt/none/iperf3"}  # type: ignore[index]
    h1 = sshnet.hosts[1].name
    assert _build_error(sshnet, tmp_path / "tools", inventory) == (
        f"host {h1} lacks iperf3 at /opt/none/iperf3 (its hosts[].tools path): install it there, or correct "
        "the path in the inventory and run the campaign again"
    )
    nobody = pwd.getpwnam("nobody")
    shell = subprocess.run([nobody.pw_shell, "-c", "true"], capture_output=True, text=True)
    assert shell.returncode != 0, f"{nobody.pw_shell} runs commands: this part needs a nologin shell"
    said = (shell.stdout or shell.stderr).strip()  # what the shell itself says
    inventory = sshnet.inventory()
    inventory["defaults"]["user"] = "nobody"  # type: ignore[index]
    lines = _build_error(sshnet, tmp_path / "nobody", inventory).splitlines()
    assert len(lines) == len(sshnet.hosts)  # one per host, each with what its shell said, where to check
    for line in lines:
        assert line.startswith("host h") and ": cannot make /tmp/vnb-" in line
        assert line.endswith(
            f"{said}); `vnetbench doctor --inventory FILE` checks that commands run as the login user"
        ), line
