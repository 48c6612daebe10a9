"""`vnetbench monitor --set PATH=VALUE`, as `run` and `validate` have it: the override is applied before
the spec is checked, the stored spec records it (a `# --set` header, the overridden value), and a
restart with another --set of a measured field is refused as a changed spec (exit 2, naming both sets)
while the same --set continues the campaign. Real monitor processes on a real SQLite store; each waits
for a slot next January, so nothing is built."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.helpers.cli import cli_quick
from tests.helpers.monitor_procs import WAITING_SPEC, start_monitor, stop, wait_for_state


def _spec_body(text: str) -> dict:
    return yaml.safe_load(text)


def test_set_is_stored_and_a_restart_with_another_set_is_a_changed_spec(tmp_path: Path) -> None:
    spec = tmp_path / "waits.yaml"
    spec.write_text(WAITING_SPEC)
    db = str(tmp_path / "m.db")
    log = tmp_path / "monitor.log"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(start_monitor(spec, db, "--set", "topology.links.ab.rate=50mbit", log=log))
        row = wait_for_state(db, "waits", procs[-1], "waiting", log)
        cid = row["campaign_id"]
        # the campaign's spec and the monitor's current spec: both are what runs, override included
        for text in (row["campaign_spec_text"], row["spec_text"]):
            assert text.splitlines()[:2] == [
                f"# {spec} as run, with:",
                '#   --set topology.links.ab.rate="50mbit"',
            ]
            assert _spec_body(text)["topology"]["links"][0]["rate"] == "50mbit"
        assert stop(procs[-1]) == 0, log.read_text()

        # the file as it is, without the --set: the link's rate is another one (100mbit): refused
        refused = cli_quick("monitor", str(spec), "--db", db, "--no-dashboard")
        assert refused.returncode == 2, refused.stderr
        assert " ".join(refused.stderr.split()) == (
            f"error: campaign 'waits' ({cid}) in {db} was started from a different spec (topology changed; "
            'only monitor, alerts and description may); it was started with --set topology.links.ab.rate="50mbit", '
            "this start gives no --set (give the same --set to continue), so its runs would not be one time "
            "series; restore the spec, or pass --new-campaign to start a new series"
        )
        other = cli_quick(
            "monitor", str(spec), "--db", db, "--no-dashboard", "--set", "topology.links.ab.rate=20mbit"
        )
        assert other.returncode == 2, other.stderr
        assert (
            'it was started with --set topology.links.ab.rate="50mbit", this start gives --set '
            'topology.links.ab.rate="20mbit"'
        ) in " ".join(other.stderr.split())

        # the same --set, and one on the schedule (which may change): the same campaign continues
        procs.append(
            start_monitor(
                spec, db, "--set", "topology.links.ab.rate=50mbit", "--set", "monitor.slip=PT1M", log=log
            )
        )
        row = wait_for_state(db, "waits", procs[-1], "waiting", log)
        assert row["campaign_id"] == cid
        assert f"continuing campaign waits id {cid}" in " ".join(log.read_text().split())
        assert _spec_body(row["spec_text"])["monitor"]["slip"] == "PT1M"  # the current spec records it
        assert _spec_body(row["campaign_spec_text"])["monitor"] == {"cron": "0 0 1 1 *"}  # as created
        assert stop(procs[-1]) == 0, log.read_text()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_a_bad_set_is_a_usage_error_before_the_store_is_created(tmp_path: Path) -> None:
    spec = tmp_path / "waits.yaml"
    spec.write_text(WAITING_SPEC)
    done = cli_quick(
        "monitor",
        str(spec),
        "--db",
        str(tmp_path / "m.db"),
        "--no-dashboard",
        "--set",
        "topology.links.nope.rate=1mbit",
    )
    assert done.returncode == 2, done.stderr
    assert "'topology.links.nope.rate': no item named 'nope' (known: ab)" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["waits.yaml"]
