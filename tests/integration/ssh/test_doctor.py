"""`vnetbench doctor` against real sshd servers in namespaces: facts, host key policy, probe install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers.integration.sshnet import SshNet, checks_for
from vnetbench.providers.ssh.doctor import notes_of


def local_version(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]


def test_doctor_reports_tools_clock_and_mtu_of_every_host(sshnet: SshNet) -> None:
    checks = checks_for(sshnet.inventory())
    assert set(checks) == {h.name for h in sshnet.hosts}
    iperf3 = local_version(["iperf3", "--version"]).split()[1]
    for c in checks.values():
        assert c.reachable, c.reason
        assert c.root and c.user == "root"
        assert c.tools["iperf3"] == iperf3
        assert c.tools["ping"].startswith("iputils")
        assert "vnb-probe" in c.missing  # not on the login PATH
        # same machine, same clock: the offset is within its own error bound (+ exec latency)
        assert c.clock_offset_ns is not None and c.clock_error_ns is not None
        assert abs(c.clock_offset_ns) < c.clock_error_ns + 20_000_000
        assert c.path_mtu == 1500
        # the hosts are this machine's namespaces: the congestion control a new one inherits
        assert c.congestion == Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
        assert "cubic" in c.congestion_available
        said = f"{c.name}: TCP measurements without `congestion:` use {c.congestion}; the studies measured "
        expected = [] if c.congestion == "cubic" else [said + "cubic: set `congestion: cubic` to repeat them"]
        assert notes_of(c) == expected
    assert checks[sshnet.hosts[-1].name].reachable  # the jump-only host, through the bastion


def test_unknown_host_keys_are_refused_unless_the_insecure_option_is_set(
    sshnet: SshNet, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    inventory = {**sshnet.inventory(), "known_hosts": str(known)}
    refused = checks_for(inventory)
    assert not any(c.reachable for c in refused.values())
    assert all("host key not verified" in c.reason for c in refused.values())
    assert not known.exists()

    trusted = checks_for({**inventory, "insecure_accept_new_host_keys": True})
    assert all(c.reachable for c in trusted.values()), [c.reason for c in trusted.values()]
    assert len(known.read_text().splitlines()) == len(sshnet.hosts)
    again = checks_for(inventory)  # now known: the default, verifying, policy connects
    assert all(c.reachable for c in again.values())

    # a key that differs from the known one is refused even with the insecure option
    wrong = sshnet.known_hosts.read_text().splitlines()
    other = [
        line.split()[0] + " " + " ".join(wrong[(i + 1) % len(wrong)].split()[1:])
        for i, line in enumerate(wrong)
    ]
    known.write_text("\n".join(other) + "\n")
    changed = checks_for({**inventory, "insecure_accept_new_host_keys": True})
    assert not any(c.reachable for c in changed.values())
    assert len(known.read_text().splitlines()) == len(sshnet.hosts)  # nothing appended


def test_install_probe_copies_vnb_probe_where_it_is_missing(sshnet: SshNet, tmp_path: Path) -> None:
    probe = Path(sys.executable).parent / "vnb-probe"
    if not probe.exists():
        import pytest

        pytest.skip("vnb-probe is not built in this environment (make setup)")
    # the test hosts share this machine's filesystem: one destination per host, as real hosts have
    dest = {h.name: tmp_path / h.name / "vnb-probe" for h in sshnet.hosts}
    inventory = sshnet.inventory()
    for host in inventory["hosts"]:  # type: ignore[union-attr]
        host["tools"] = {"vnb-probe": str(dest[host["name"]])}
    before = checks_for(inventory, install=True)
    assert all(c.installed == f"installed {dest[c.name]}" for c in before.values()), [
        c.installed for c in before.values()
    ]
    after = checks_for(inventory)
    version = local_version([str(probe), "--version"])
    assert all(c.tools.get("vnb-probe") == version for c in after.values())


def test_cli_doctor_names_an_unreachable_host_and_exits_1(sshnet: SshNet, tmp_path: Path) -> None:
    inventory = sshnet.inventory(connect_timeout="1s")
    dead = f"198.18.{sshnet.octet}.200"  # in our test subnet, nothing there
    inventory["hosts"].append({"name": "ghost", "address": dead})  # type: ignore[union-attr]
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(inventory))
    run = subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", "doctor", "--inventory", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 1
    assert "ghost: unreachable" in run.stdout
    assert f"{len(sshnet.hosts)}/{len(sshnet.hosts) + 1} hosts ready" in run.stdout
