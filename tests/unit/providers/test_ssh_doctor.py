"""What `vnetbench doctor --inventory` says of a host's privileges: on existing hosts nothing is shaped
or pinned, so root matters only where the inventory asks for `sudo: true` (tools run under `sudo -n`)."""

from __future__ import annotations

from vnetbench.providers.ssh.doctor import HostCheck, problems_of, ready, summary

TOOLS = {"iperf3": "3.12", "ping": "iputils 20221126", "vnb-probe": "vnb-probe 0.1"}


def _host(sudo_wanted: bool, sudo: bool | None) -> HostCheck:
    """A reached host whose checks ran as `bench`, not root (the values FACTS gives such a host)."""
    return HostCheck(
        "vm1", reachable=True, user="bench", sudo=sudo, sudo_wanted=sudo_wanted, tools=dict(TOOLS)
    )


def test_a_user_without_sudo_is_ready_when_the_inventory_does_not_ask_for_it() -> None:
    # was: "measurements that shape or pin need it" for every such host, though none does over SSH
    check = _host(sudo_wanted=False, sudo=False)
    assert ready(check)
    assert problems_of(check) == []


def test_sudo_true_with_a_sudo_that_asks_for_a_password_is_not_ready() -> None:
    # was: ready (exit 0), and then every tool of the run failed under `sudo -n`
    check = _host(sudo_wanted=True, sudo=False)
    assert not ready(check)
    assert problems_of(check) == [
        "vm1: the inventory says `sudo: true`, but `sudo -n` asks bench for a password: every tool would "
        "fail; allow password-less sudo for the user, or set `sudo: false`"
    ]
    assert ready(_host(sudo_wanted=True, sudo=True)) and problems_of(_host(sudo_wanted=True, sudo=True)) == []


def test_a_host_whose_tool_check_did_not_run_is_not_ready() -> None:
    # was: ready, since no tool was reported missing
    check = HostCheck("vm1", reachable=True, reason="host vm1: no answer within 20 s")
    assert not ready(check)
    assert problems_of(check) == ["vm1: host vm1: no answer within 20 s"]


def test_the_last_line_says_why_doctor_fails_when_every_host_is_ready() -> None:
    # was: "2/2 hosts ready" and exit 1, with nothing on the line saying why (a path MTU check that
    # lost its connection sets the host's reason, listed above the line, but leaves it ready)
    fine = _host(sudo_wanted=False, sudo=None)
    mtu_failed = HostCheck(
        "vm2", reachable=True, user="bench", tools=dict(TOOLS), reason="host vm2: connection lost"
    )
    assert ready(mtu_failed)
    assert summary([fine, mtu_failed], 1.234) == (
        "2/2 hosts ready, but a check failed on vm2 (said above); checked in 1.23 s"
    )
    assert summary([fine], 0.5) == "1/1 hosts ready; checked in 0.50 s"
    unreachable = HostCheck("vm3", reason="connection refused")
    assert summary([fine, unreachable], 2.0) == "1/2 hosts ready; checked in 2.00 s"
