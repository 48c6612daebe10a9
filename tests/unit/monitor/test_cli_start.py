"""`vnetbench monitor` refusing to start (exit 2, one line naming the fix) without leaving state behind:
no empty store for a bad spec, no campaign left 'waiting' under a process that is gone after a port in
use; and a resumed run that is 'running' again carries no end time or message of its interruption."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from tests.helpers.cli import cli_quick
from tests.helpers.specs import MONITORED_SPEC
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore


def _monitor(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_quick("monitor", *args, timeout=120)


def test_a_bad_spec_is_refused_before_the_store_is_created(tmp_path: Path) -> None:
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC.replace("repeat: PT10M", "repeat: 10 minutes"))
    db = tmp_path / "new.db"
    done = _monitor(str(spec), "--db", str(db), "--no-dashboard")
    assert done.returncode == 2
    assert "monitor.repeat: '10 minutes' is not a duration" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mon.yaml"]  # no new.db, -wal or -shm


def test_a_port_in_use_leaves_the_campaign_stopped_not_waiting(tmp_path: Path) -> None:
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    db = tmp_path / "m.db"
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = _monitor(str(spec), "--db", str(db), "--port", str(port))
    assert done.returncode == 2, done.stderr
    # one line naming the option, the reason and the fix, as `vnetbench dashboard` says it; it was
    # uvicorn's "ERROR:    [Errno 98] error while attempting to bind ..." and then "error: cannot serve
    # on 127.0.0.1:PORT (see the message above); choose another --port, or --no-dashboard"
    assert done.stderr.splitlines() == [
        f"error: --host 127.0.0.1 --port {port}: cannot listen there (Address already in use (while "
        f"attempting to bind on address ('127.0.0.1', {port}))); choose another --port (another "
        f"dashboard or monitor may be serving on {port}), or --no-dashboard"
    ], done.stderr
    store = Store(db)
    try:
        (monitored,) = MonitorStore(store).all_monitored()
        assert monitored["state"] == "stopped" and monitored["pid"] is None
        assert monitored["message"] == f"not started: cannot listen on 127.0.0.1:{port}"
    finally:
        store.close()


def test_a_resumed_run_is_running_again_without_its_interruptions_end(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.db")
    try:
        from vnetbench.monitor.service import prepare
        from vnetbench.spec.loader import parse_spec

        cid = prepare(parse_spec(MONITORED_SPEC, "mon.yaml"), store).campaign_id
        mstore = MonitorStore(store)
        mstore.start_run(cid, 1, 0, 2)
        mstore.finish_run(cid, 1, "interrupted", "stopped by a signal during the run")
        mstore.start_run(cid, 1, 0, 2)  # the next start finishes it
        last = mstore.last_run(cid)
        assert last is not None
        assert (last["status"], last["finished_utc_ns"], last["message"]) == ("running", None, None)
    finally:
        store.close()


def test_a_missing_reports_directory_is_refused_as_the_dashboard_refuses_it(tmp_path: Path) -> None:
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    # `--report` as `vnetbench dashboard` spells it, or `--reports`: the same option
    for option in ("--report", "--reports"):
        done = _monitor(str(spec), "--db", str(tmp_path / "m.db"), option, str(tmp_path / "nope"))
        assert done.returncode == 2, done.stderr
        assert f"--reports {tmp_path / 'nope'}: no such directory" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mon.yaml"]  # refused before the store


def test_monitor_and_dashboard_share_one_loopback_rule(tmp_path: Path) -> None:
    """Any 127.0.0.0/8 address stays on this machine: `monitor` refused 127.0.0.2 without a token
    while `dashboard` served it; both now follow cli.common.is_loopback."""
    from vnetbench.cli.common import is_loopback

    assert [is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost")] == [True] * 4
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "198.18.0.1", "example.org")] == [False] * 4
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC.replace("repeat: PT10M", "repeat: 10 minutes"))  # refused after the host
    local = _monitor(str(spec), "--db", str(tmp_path / "m.db"), "--host", "127.0.0.2")
    assert local.returncode == 2 and "--token" not in local.stderr and "10 minutes" in local.stderr
    wide = _monitor(str(spec), "--db", str(tmp_path / "m.db"), "--host", "0.0.0.0")
    assert wide.returncode == 2 and "--host 0.0.0.0" in wide.stderr and "--token" in wide.stderr


def test_monitor_and_dashboard_read_the_token_from_the_same_variable(tmp_path: Path) -> None:
    """`dashboard` read VNETBENCH_DASHBOARD_TOKEN and `monitor` VNETBENCH_TOKEN: both read both now.
    With the token in the environment the wide --host passes, and each command stops at the next
    check (the bad spec, the missing store) instead of asking for --token."""
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC.replace("repeat: PT10M", "repeat: 10 minutes"))
    for name in ("VNETBENCH_TOKEN", "VNETBENCH_DASHBOARD_TOKEN"):
        env = {name: "s3cret"}
        mon = cli_quick(
            "monitor", str(spec), "--db", str(tmp_path / "m.db"), "--host", "0.0.0.0", extra_env=env
        )
        assert mon.returncode == 2 and "--token" not in mon.stderr and "10 minutes" in mon.stderr, mon.stderr
        dash = cli_quick("dashboard", "--db", str(tmp_path / "none.db"), "--host", "0.0.0.0", extra_env=env)
        assert dash.returncode == 2 and "--token" not in dash.stderr and "no store there" in dash.stderr
    dash = cli_quick("dashboard", "--db", str(tmp_path / "none.db"), "--host", "0.0.0.0")
    assert dash.returncode == 2 and "(or set VNETBENCH_TOKEN)" in dash.stderr  # without it: asked for


def test_an_alert_no_measurement_can_produce_is_refused_by_monitor_and_validate(tmp_path: Path) -> None:
    # it started and said so only after the first run: "can never fire: ... stores no metric"
    spec = tmp_path / "mon.yaml"
    spec.write_text(
        MONITORED_SPEC
        + "alerts:\n  - {name: slow, measurement: tcp, metric: thruput_bps, op: '<', threshold: 1}\n"
    )
    expected = (
        "alerts[0].metric: alert 'slow' can never fire: measurement tcp (kind tcp) cannot produce a "
        "metric 'thruput_bps'; did you mean throughput_bps?"
    )
    done = _monitor(str(spec), "--db", str(tmp_path / "m.db"), "--no-dashboard")
    assert done.returncode == 2 and expected in " ".join(done.stderr.split()), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mon.yaml"]  # before the store, before any run
    checked = cli_quick("validate", str(spec))
    assert checked.returncode == 2 and expected in " ".join(checked.stderr.split()), checked.stderr


def test_an_unexpected_error_exits_3_which_the_systemd_unit_restarts(tmp_path: Path, monkeypatch) -> None:
    # it exited 1 with a traceback, the code of "done with an alert firing", which
    # contrib/systemd/vnetbench-monitor.service does not restart (RestartPreventExitStatus=1 2): the
    # "restarted after a crash" of docs/monitoring.md did not happen
    from typer.testing import CliRunner

    from vnetbench.cli import app
    from vnetbench.monitor import service

    def crash(self: service.Monitor) -> service.Outcome:
        raise RuntimeError("the store's disk is full")

    monkeypatch.setattr(service.Monitor, "run", crash)
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    unit = (Path(__file__).parents[3] / "contrib/systemd/vnetbench-monitor.service").read_text()
    assert "RestartPreventExitStatus=1 2 4\n" in unit and "Restart=on-failure\n" in unit
    result = CliRunner().invoke(
        app, ["monitor", str(spec), "--db", str(tmp_path / "m.db"), "--no-dashboard"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 3
    assert (
        "error: the monitor stopped on an unexpected error (RuntimeError: the store's disk is full); "
        "starting it again continues the campaign from the store"
    ) in result.output
