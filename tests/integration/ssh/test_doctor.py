"""`vnetbench doctor` against real sshd servers in namespaces: facts, host key policy, probe install."""

from __future__ import annotations

import pwd
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.integration.sshnet import SshNet, checks_for
from vnetbench.providers.ssh.doctor import notes_of, problems_of, ready


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


def _login_as(sshnet: SshNet, user: str, **defaults: object) -> dict[str, object]:
    """The test hosts' inventory with another login user (their sshd takes our key for any user)."""
    inventory = sshnet.inventory()
    inventory["defaults"] = {**inventory["defaults"], "user": user, **defaults}  # type: ignore[dict-item]
    return inventory


def test_doctor_names_a_key_file_it_cannot_use_and_the_fix(sshnet: SshNet, tmp_path: Path) -> None:
    # was: "198.18.K.1:2222: No such file or directory" (which file?), and a traceback (KeyImportError)
    # for an encrypted key or a .pub file given as the key
    encrypted = tmp_path / "encrypted"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(encrypted)], check=True)
    missing, public = tmp_path / "nope", f"{encrypted}.pub"
    said = {
        str(missing): f"key file {missing} cannot be read (No such file or directory): give the path of a "
        "private key in the inventory's `key`, or remove `key` to use the SSH agent",
        str(encrypted): f"key file {encrypted} is encrypted with a passphrase: add it to the SSH agent "
        f"(`ssh-add {encrypted}`) and remove `key` from the inventory",
        public: f"key file {public} is not a private key (Invalid private key): give the private key's path "
        "in the inventory's `key` (not the .pub file)",
    }
    for key, reason in said.items():
        checks = checks_for(_login_as(sshnet, "root", key=key))
        bastion, behind = sshnet.hosts[0].name, sshnet.hosts[-1].name
        assert not any(c.reachable for c in checks.values())
        assert checks[bastion].reason == reason
        assert checks[behind].reason == f"via jump host {bastion}: {reason}"
        assert problems_of(checks[bastion]) == [f"{bastion}: unreachable — {reason}"]


def test_a_user_whose_login_shell_runs_no_commands_is_not_ready(sshnet: SshNet) -> None:
    # was: reachable, no tool reported missing, so "ready" and exit 0, with every column empty
    nobody = pwd.getpwnam("nobody")
    shell = subprocess.run([nobody.pw_shell, "-c", "true"], capture_output=True, text=True)
    assert shell.returncode != 0, f"{nobody.pw_shell} runs commands: this test needs a nologin shell"
    first = (shell.stdout.strip() or shell.stderr.strip()).splitlines()[0]  # what the shell itself says
    checks = checks_for(_login_as(sshnet, "nobody"))
    for c in checks.values():
        assert c.reachable and not ready(c)
        assert c.reason == (
            f"logged in as nobody, but commands do not run (exit {shell.returncode}: {first!r}); log in as "
            "a user whose login shell runs commands (e.g. /bin/sh)"
        )
        assert problems_of(c) == [f"{c.name}: {c.reason}"]  # not "missing" tools: they were not looked for
