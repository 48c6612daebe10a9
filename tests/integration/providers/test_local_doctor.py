"""`vnetbench doctor` without an inventory checks this machine for the local provider. Its answers
are compared with the machine itself, found independently: a netem and an htb qdisc tried with `tc`
in a namespace of the test's own, iperf3's version from `iperf3 --version`, the descriptor limit
from getrlimit."""

from __future__ import annotations

import json
import re
import resource
import secrets
import subprocess
import sys
from collections.abc import Iterator

import pytest

VNB = [sys.executable, "-m", "vnetbench.cli"]


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VNB, "doctor", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report() -> dict:
    done = _doctor("--json")
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)
    assert done.returncode == (0 if found["ready"] else 1)
    return found


@pytest.fixture
def veth_ns() -> Iterator[str]:
    """A namespace of the test's own (a unique name, deleted by that name) with a veth vnbd0."""
    name = f"vnbtest-doctor-{secrets.token_hex(3)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(
            ["ip", "-n", name, "link", "add", "vnbd0", "type", "veth", "peer", "name", "vnbd1"], check=True
        )
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=True)


def _check(report: dict, what: str) -> dict:
    (found,) = [c for c in report["checks"] if c["what"] == what]
    return found


def test_this_machine_can_run_the_default_campaigns(report: dict) -> None:
    """make test installs everything a default campaign needs, so every needed check passes."""
    failed = [c["what"] for c in report["checks"] if c["needed"] and not c["ok"]]
    assert failed == [] and report["ready"] is True


@pytest.mark.parametrize(("kind", "qdisc"), [("netem", ["netem", "delay", "1ms"]), ("htb", ["htb"])])
def test_a_qdisc_kind_is_reported_as_tc_finds_it(
    report: dict, veth_ns: str, kind: str, qdisc: list[str]
) -> None:
    tried = subprocess.run(
        ["tc", "-n", veth_ns, "qdisc", "add", "dev", "vnbd0", "root", *qdisc], capture_output=True, text=True
    )
    check = _check(report, f"kernel: {kind}")
    assert check["ok"] is (tried.returncode == 0), tried.stderr
    if not check["ok"]:
        assert check["without"] and "CONFIG_NET_SCH" in check["detail"]


def test_iperf3_is_reported_with_its_version(report: dict) -> None:
    text = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout
    match = re.search(r"iperf (\d+\.\d+(?:\.\d+)?)", text)
    assert match, text
    check = _check(report, "iperf3")
    assert check["ok"] is True and check["detail"] == match.group(1)


def test_the_descriptor_limit_is_this_process_limit(report: dict) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # the doctor inherits the same limit
    detail = _check(report, "open descriptors")["detail"]
    assert detail.startswith(f"hard limit {hard} (≈ {(hard - 512) // 2:,} namespaces)"), detail


def test_ssh_options_without_an_inventory_are_a_usage_error() -> None:
    done = _doctor("--install-probe")
    assert done.returncode == 2
    assert "--install-probe" in done.stderr and "need --inventory" in done.stderr


def test_the_tcp_congestion_control_is_the_one_a_new_namespace_gets(veth_ns: str) -> None:
    # read in a namespace of the test's own: what a node's TCP inherits
    inherited = subprocess.run(
        ["ip", "netns", "exec", veth_ns, "sysctl", "-n", "net.ipv4.tcp_congestion_control"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    done = _doctor("--json")
    check = _check(json.loads(done.stdout), "TCP congestion control")
    assert check["ok"] is True and check["detail"].startswith(f"{inherited} (available: ")
    assert ("`congestion: cubic`" in check["note"]) is (inherited != "cubic")
    if inherited != "cubic":  # the table's reader is told below it
        bullet = f"• TCP congestion control: TCP measurements without `congestion:` use {inherited}; "
        assert bullet in _doctor().stdout
