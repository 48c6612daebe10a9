"""What a hurried user types at each command (the audit of arguments and store states): every case
here printed a traceback-free but wrong answer before, and is now one error line naming the argument
and the fix, with exit 2, and nothing measured is lost or overwritten. Real SQLite stores, no mocks."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.helpers.specs import MONITORED_SPEC
from tests.helpers.specs import TWO_NODE_TCP as SPEC
from tests.helpers.synthetic import write_campaign
from vnetbench.cli import app
from vnetbench.plan import make_plan
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, Sample


def _store(path: Path, *campaigns: tuple[str, str, str, int | None]) -> Path:
    """A store holding campaigns (id, name, status, pid), each of SPEC and with no measurement."""
    store = Store(str(path))
    for cid, name, status, pid in campaigns:
        store.create_campaign(
            id=cid, name=name, status=status, provider="local", spec_text=SPEC.replace("kept", name),
            spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
        )  # fmt: skip
        if pid is not None:
            store.update_campaign(cid, pid=pid)
    return path


def _result(*args: str) -> Result:
    """The command's result, stdout and stderr apart, at a width that wraps no message."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})


def _invoke(*args: str) -> tuple[int, str]:
    res = _result(*args)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output  # no traceback
    return res.exit_code, res.output


@contextlib.contextmanager
def _a_vnetbench_process() -> Iterator[subprocess.Popen]:
    """A live process whose command line says vnetbench (what still_running() looks for)."""
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "vnetbench"])
    try:
        yield alive
    finally:
        alive.kill()
        alive.wait()


def test_resume_refuses_a_campaign_whose_vnetbench_process_still_runs(tmp_path: Path) -> None:
    # a second process resumed it beside the first: the same topology built twice, steps measured twice
    with _a_vnetbench_process() as alive:
        db = _store(tmp_path / "s.db", ("cafe0001", "kept", "running", alive.pid))
        code, output = _invoke("resume", "cafe0001", "--db", str(db), "--no-report")
    assert code == 2
    assert output == (
        f"error: campaign cafe0001 (kept) is still running (its controlling process, pid {alive.pid}); "
        f"wait for it to finish, or stop it (kill -INT {alive.pid}) and then resume\n"
    )
    assert Store(str(db)).campaign("cafe0001")["status"] == "running"  # untouched


def test_compare_refuses_a_campaign_compared_with_itself(tmp_path: Path) -> None:
    # was: exit 0 and a table of 'same' rows, p = 1, whatever the campaign measured
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "finished", None))
    code, output = _invoke("compare", "cafe", f"{db}:kept", "--db", str(db))
    assert code == 2
    assert output == (
        f"error: A 'cafe' and B '{db}:kept' are the same campaign, cafe0001 (kept): it would be 'same' in "
        f"every row; give two different campaigns (`vnetbench campaigns --db {db}` lists them)\n"
    )


@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_compare_with_no_row_in_common_gives_no_verdict(tmp_path: Path, json_output: bool) -> None:
    # was: exit 0, a CI gate passed by a candidate whose measurements had all failed
    db = _store(tmp_path / "s.db", ("aaaa0001", "a", "finished", None), ("bbbb0002", "b", "failed", None))
    args = ["compare", "aaaa0001", "bbbb0002", "--db", str(db), *(["--json"] * json_output)]
    res = _result(*args)
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr == (
        "note: campaign bbbb0002 (b) is failed, not finished: this covers its 0 ok measurements of the 1 "
        f"planned; `vnetbench resume bbbb0002 --db {db}` measures the rest\n"
        "error: no row in common, so no verdict: compare two campaigns of the same spec (the same pairs, "
        "measurements and factors), each with ok measurements (`vnetbench campaigns` counts them)\n"
    )
    if json_output:  # the document is still printed, its rows empty
        assert json.loads(res.stdout)["rows"] == []
    else:
        assert res.stdout.startswith("nothing to compare: no pair · measurement · metric is in both ")


def test_run_refuses_report_and_no_report_together_before_building(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    db = tmp_path / "s.db"
    code, output = _invoke("run", str(spec), "--db", str(db), "--report", "r", "--no-report")
    assert (code, output) == (2, "error: --report r and --no-report together: give one of them\n")
    assert not db.exists()  # refused before the store, let alone the topology


def test_run_refuses_a_report_path_that_is_a_file_before_building(tmp_path: Path) -> None:
    # was: the whole campaign ran, then the report failed and the run exited 2
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    blocker = tmp_path / "notes"
    blocker.write_text("mine")
    db = tmp_path / "s.db"
    code, output = _invoke("run", str(spec), "--db", str(db), "--report", str(blocker))
    assert code == 2
    assert output == (
        f"error: --report {blocker}: is a file, not a directory; give a directory for index.html and figures/\n"
    )
    assert not db.exists() and blocker.read_text() == "mine"


def test_report_does_not_overwrite_another_campaigns_report(tmp_path: Path) -> None:
    # was: index.html and report.json of the other campaign replaced without a word, its figures kept
    db = _store(tmp_path / "s.db", ("aaaa0001", "a", "finished", None), ("bbbb0002", "b", "finished", None))
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.html").write_text("<title>vnetbench · a (aaaa0001)</title> the report of aaaa0001")
    code, output = _invoke("report", "bbbb0002", "--db", str(db), "--out", str(out))
    assert code == 2
    assert output == (
        f"error: cannot write the report into {out}: holds the report of campaign aaaa0001 (a), which this "
        "would overwrite; give another directory, or remove that one; the campaign is stored: "
        f"`vnetbench report bbbb0002 --db {db} --out DIR` writes it\n"
    )
    assert (out / "index.html").read_text().endswith("the report of aaaa0001")
    # a newer run of the same campaign replaces its report, as `make demo` run twice does
    (out / "index.html").write_text("<title>vnetbench · b (cccc0003)</title> an older run of b")
    code, output = _invoke("report", "bbbb0002", "--db", str(db), "--out", str(out))
    assert (code, output) == (0, f"report: {out / 'index.html'}\n")
    assert "<title>vnetbench · b (bbbb0002)</title>" in (out / "index.html").read_text()


def test_report_does_not_overwrite_an_index_html_of_something_else(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.db", ("bbbb0002", "b", "finished", None))
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("my web page")
    code, output = _invoke("report", "bbbb0002", "--db", str(db), "--out", str(out))
    assert code == 2
    assert (
        f"error: cannot write the report into {out}: holds an index.html that is not a vnetbench " in output
    )
    assert (out / "index.html").read_text() == "my web page"


def test_report_takes_report_as_run_and_dashboard_spell_the_directory(tmp_path: Path) -> None:
    # was: `vnetbench report ID --report DIR` (as `run --report DIR` wrote it) -> "No such option"
    db = _store(tmp_path / "s.db", ("bbbb0002", "b", "finished", None))
    out = tmp_path / "rep"
    code, output = _invoke("report", "bbbb0002", "--db", str(db), "--report", str(out))
    assert (code, output) == (0, f"report: {out / 'index.html'}\n")
    assert "<title>vnetbench · b (bbbb0002)</title>" in (out / "index.html").read_text()


def test_an_empty_store_says_so_and_how_to_fill_it(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(str(db))
    said = (
        f"the store {db} holds no campaign yet; check --db (or VNETBENCH_DB), or "
        f"`vnetbench run SPEC --db {db}` measures one\n"
    )
    # was: an empty table with its headers, and "no campaign '' in …; known: none"
    assert _invoke("campaigns", "--db", str(db)) == (0, said)
    assert _invoke("report", "--db", str(db)) == (2, "error: " + said)
    assert _invoke("compare", "x", "y", "--db", str(db)) == (2, "error: x: " + said)


def test_an_unsupported_store_url_says_what_db_takes(tmp_path: Path) -> None:
    # was: "cannot open the store 'mysql://…': No module named 'MySQLdb'", and nothing more
    code, output = _invoke("campaigns", "--db", "mysql://u@127.0.0.1:1/x")
    assert code == 2
    assert output.startswith("error: cannot open the store 'mysql://u@127.0.0.1:1/x': ")
    assert output.endswith("; --db takes a SQLite file that vnetbench wrote, or a postgresql:// URL\n")


def test_dashboard_of_a_file_that_is_no_store_gives_the_common_error(tmp_path: Path) -> None:
    # was: "(sqlite3.DatabaseError) file is not a database" and SQLAlchemy's "(Background on this error …)"
    db = tmp_path / "notes.db"
    db.write_text("not a database")
    code, output = _invoke("dashboard", "--db", str(db), "--port", "0")
    assert code == 2
    assert output == (
        f"error: cannot open the store '{db}': file is not a database; --db takes a SQLite file that "
        "vnetbench wrote, or a postgresql:// URL\n"
    )


def test_dashboard_names_a_host_it_cannot_listen_on_not_the_port(tmp_path: Path) -> None:
    # was: "--host nosuch.invalid --port 0: cannot listen there (…); choose another --port"
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "finished", None))
    code, output = _invoke(
        "dashboard", "--db", str(db), "--host", "nosuch.invalid", "--token", "t", "--port", "0"
    )
    assert code == 2
    assert output.startswith("error: --host nosuch.invalid: the host name could not be resolved (")
    assert output.endswith(
        "); give an address of this machine (e.g. the default 127.0.0.1, or 0.0.0.0 for all of its "
        "addresses) or a name that resolves to one\n"
    )
    assert "--port" not in output
    # a name that resolves, to an address that is not this machine's (TEST-NET-1, RFC 5737)
    code, output = _invoke("dashboard", "--db", str(db), "--host", "192.0.2.1", "--token", "t", "--port", "0")
    assert (code, output.split(" (")[0]) == (2, "error: --host 192.0.2.1: not an address of this machine")


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (
            ["--until", "2001-01-01T00:00:00Z"],
            "error: --until '2001-01-01T00:00:00Z': 2001-01-01T00:00:00+00:00 has passed, so no run would "
            "start; give a later time or a duration from now such as PT24H\n",
        ),
        (
            ["--webhook", "hooks.example.org/x"],
            "error: --webhook 'hooks.example.org/x': not an http:// or https:// URL; give e.g. "
            "https://hooks.example.org/x\n",
        ),
    ],
    ids=["until-passed", "webhook-not-a-url"],
)
def test_monitor_refuses_before_creating_anything(tmp_path: Path, option: list[str], said: str) -> None:
    # was: exit 0 after creating a campaign that measured nothing (--until), or a monitor whose alerts
    # failed to be sent only when the first one fired (--webhook)
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    db = tmp_path / "m.db"
    assert _invoke("monitor", str(spec), "--db", str(db), "--no-dashboard", *option) == (2, said)
    assert not db.exists()


@pytest.mark.parametrize("command", ["analyze", "loss", "export", "report"])
def test_a_campaign_not_finished_is_said_to_cover_only_what_it_measured(tmp_path: Path, command: str) -> None:
    # was: its analysis and report read as complete, the status on one line of the report aside
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "interrupted", None))
    args = [command, "cafe0001", "--db", str(db)] + (["--out", str(tmp_path / "o")] if command in
                                                     ("export", "report") else [])  # fmt: skip
    res = _result(*args)
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        "note: campaign cafe0001 (kept) is interrupted, not finished: this covers its 0 ok measurements of "
        f"the 1 planned; `vnetbench resume cafe0001 --db {db}` measures the rest\n"
    )


def test_a_name_of_several_campaigns_says_which_it_took(tmp_path: Path) -> None:
    # was: the newest of them, without a word of the others
    db = _store(
        tmp_path / "s.db", ("aaaa0001", "kept", "finished", None), ("bbbb0002", "kept", "finished", None)
    )
    res = _result("loss", "kept", "--db", str(db))
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        "note: 2 campaigns are named 'kept'; this is the newest, bbbb0002 (give the id for another: aaaa0001)\n"
    )
    # by id: no note
    res = _result("loss", "aaaa0001", "--db", str(db))
    assert res.exit_code == 0 and res.stderr == ""


def test_loss_of_a_campaign_without_measurements_does_not_say_it_has_no_udp(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "finished", None))
    assert _invoke("loss", "cafe0001", "--db", str(db)) == (
        0,
        "campaign cafe0001 has no measurement stored: nothing to account for\n",
    )


def test_export_into_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "finished", None))
    blocker = tmp_path / "notes"
    blocker.write_text("mine")
    assert _invoke("export", "cafe0001", "--db", str(db), "--out", str(blocker)) == (
        2,
        f"error: --out {blocker}: is a file, not a directory; give a directory to write the tables into\n",
    )


def test_validate_of_a_directory_or_a_binary_file_says_what_to_give(tmp_path: Path) -> None:
    # was: "cannot read the spec: [Errno 21] Is a directory: '…'", or the codec's error, and no fix
    binary = tmp_path / "s.db"
    binary.write_bytes(b"SQLite format 3\x00\xf6\xff")
    assert _invoke("validate", str(tmp_path)) == (
        2,
        f"error: {tmp_path}: cannot read the spec (Is a directory); give the path of a campaign YAML file\n",
    )
    assert _invoke("validate", str(binary)) == (
        2,
        f"error: {binary}: cannot read the spec (not UTF-8 text); give the path of a campaign YAML file\n",
    )


@pytest.mark.parametrize("what", ["binary", "missing", "directory"])
def test_doctor_of_an_unreadable_inventory_says_what_to_give(tmp_path: Path, what: str) -> None:
    # a binary file was a UnicodeDecodeError traceback (exit 1); the others named no fix
    path = {"binary": tmp_path / "s.db", "missing": tmp_path / "typo.yaml", "directory": tmp_path}[what]
    if what == "binary":
        path.write_bytes(b"SQLite format 3\x00\xf6\xff")
    why = {"binary": "not UTF-8 text", "missing": "No such file or directory", "directory": "Is a directory"}
    assert _invoke("doctor", "--inventory", str(path)) == (
        2,
        f"error: {path}: cannot read the inventory ({why[what]}); give the path of an inventory YAML file "
        "(docs/ssh-provider.md)\n",
    )


@pytest.mark.parametrize("command", [["campaigns"], ["report"], ["run", "SPEC"]], ids=lambda c: c[0])
def test_a_sqlite_file_of_something_else_is_left_as_it_is(tmp_path: Path, command: list[str]) -> None:
    # was: even `campaigns` added vnetbench's 17 tables to it, then said it held no campaign
    import sqlite3

    db = tmp_path / "mine.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE readings (t REAL, value REAL)")
    before = db.read_bytes()
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    args = [str(spec) if a == "SPEC" else a for a in command]
    assert _invoke(*args, "--db", str(db)) == (
        2,
        f"error: '{db}' is a SQLite database but not a vnetbench store (its tables: readings); left as it is. "
        "Check --db (or VNETBENCH_DB): give the file `vnetbench run` wrote, or a new path\n",
    )
    assert db.read_bytes() == before


def _run_from(db: Path, cid: str, host: str, pid: int) -> None:
    """The campaign stored as running on the machine `host` by its process `pid` (a shared store)."""
    Store(str(db)).update_campaign(cid, status="running", pid=pid, environment={"hostname": host})


def test_resume_and_clean_leave_a_campaign_run_from_another_machine_alone(tmp_path: Path) -> None:
    # was: its pid looked up on this machine: a local vnetbench of that pid refused resume for a wrong
    # reason, and a pid with no process here made resume run it a second time and clean remove its objects
    here = os.uname().nodename
    with _a_vnetbench_process() as alive:
        db = _store(tmp_path / "s.db", ("cafe0001", "kept", "interrupted", None))
        _run_from(db, "cafe0001", "lab-b", alive.pid)  # the pid of a local vnetbench, by chance
        code, output = _invoke("resume", "cafe0001", "--db", str(db), "--no-report")
    assert code == 2
    assert output == (
        f"error: campaign cafe0001 (kept) is stored as running on lab-b (its controlling process, pid "
        f"{alive.pid}), not on this machine ({here}): whether it still runs cannot be checked from here; run "
        f"`vnetbench resume cafe0001 --db {db}` on lab-b, which checks that process (no option overrides this "
        "check here)\n"
    )
    # a pid with no process here: the same, and clean leaves its recorded objects alone
    _run_from(db, "cafe0001", "lab-b", alive.pid)
    assert _invoke("resume", "cafe0001", "--db", str(db), "--no-report")[0] == 2
    Store(str(db)).record_objects("cafe0001", None, [("netns", "vnb-cafe0001-n1", {})])
    res = _result("clean", "--db", str(db), "--campaign", "cafe0001")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        f"could not remove campaign cafe0001 (kept) is stored as running on lab-b (its controlling process, "
        f"pid {alive.pid}), not on this machine ({here}): whether it still runs cannot be checked from here; "
        f"run `vnetbench clean --campaign cafe0001 --db {db}` on lab-b, which checks that process (no option "
        "overrides this check here)\n"
    )
    assert res.stdout == "nothing removed; left alone (said above why): campaign cafe0001\n"
    assert [o["name"] for o in Store(str(db)).live_objects("cafe0001")] == ["vnb-cafe0001-n1"]
    res = _result("loss", "cafe0001", "--db", str(db))
    assert res.stderr == (  # was: "stored as running, but its process is gone", then "by vnetbench pid N"
        f"note: campaign cafe0001 (kept) is stored as running on lab-b (its controlling process, pid "
        f"{alive.pid}), not on this machine: this covers its 0 ok measurements of the 1 planned; run this again when it has finished\n"
    )
    assert Store(str(db)).campaign("cafe0001")["status"] == "running"  # untouched


def test_the_report_of_a_campaign_not_finished_says_what_it_covers(tmp_path: Path) -> None:
    # was: a page that read as complete, its status in the header aside; the note went to stderr only
    db = _store(
        tmp_path / "s.db", ("cafe0001", "kept", "interrupted", None), ("dddd0002", "done", "finished", None)
    )
    store = Store(str(db))
    store.update_campaign("cafe0001", spec_text=SPEC + "schedule: {repetitions: 4, prime: false}\n")
    plan = make_plan(parse_spec(store.campaign("cafe0001")["spec_text"], "test", stored=True), "cafe0001", 1)
    records = [
        MeasurementRecord(campaign_id="cafe0001", **step.record_fields(step.flows[0], plan.layouts[0]),
                          kind="tcp", status=status, reason=None if status == "ok" else "iperf3: refused")
        for step, status in zip(plan.steps, ("ok", "failed"), strict=False)
    ]  # fmt: skip
    records[0].samples = [Sample(i * 10**9, "throughput_bps", 94e6) for i in (1, 2, 3)]  # the ok one's
    records[0].summary = {"throughput_bps": 94e6}
    store.save_measurements(records)
    res = CliRunner().invoke(app, ["report", "cafe0001", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert res.stderr == (  # the same counts as the page's
        "note: campaign cafe0001 (kept) is interrupted, not finished: this covers its 1 ok measurements of "
        f"the 4 planned; `vnetbench resume cafe0001 --db {db}` measures the rest\n"
    )
    page = (tmp_path / "o" / "index.html").read_text()
    banner = (
        '<p class="unfinished" role="status">Campaign interrupted, not finished. This page covers 1 ok of 4 '
        f"planned measurements: 1 failed, 2 not run — <code>vnetbench resume cafe0001 --db {db}</code> runs "
        "the rest.</p>"
    )
    assert banner in page and page.index(banner) < page.index("<nav>")  # above everything else
    assert json.loads((tmp_path / "o" / "report.json").read_text())["coverage"] == {
        "status": "interrupted", "ok": 1, "failed": 1, "not_run": 2, "planned": 4, "still_running": False,
    }  # fmt: skip
    # a finished campaign: no banner, no coverage
    assert _invoke("report", "dddd0002", "--db", str(db), "--out", str(tmp_path / "f"))[0] == 0
    assert 'class="unfinished"' not in (tmp_path / "f" / "index.html").read_text()
    assert "coverage" not in json.loads((tmp_path / "f" / "report.json").read_text())


SPEC3 = """\
name: three
topology:
  nodes: [{name: n1}, {name: n2}, {name: n3}]
  links:
    - {endpoints: [n1, n2], rate: 100mbit}
    - {endpoints: [n1, n3], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 3s}
patterns:
  - {name: p, kind: pairs, pairs: [[n1, n2], [n2, n1], [n1, n3]], measurements: [tcp]}
schedule: {repetitions: 3, prime: false}
"""


def _compared_store(path: Path) -> Path:
    """aaaa0001 and bbbb0002 of SPEC3 (n1→n3 failed in the first, n2→n1 in the second), cccc0003 of SPEC3
    without n1→n3, all else ok."""
    store = Store(str(path))
    write_campaign(store, 900, "aaaa0001", SPEC3)
    write_campaign(store, 900, "bbbb0002", SPEC3)
    write_campaign(store, 600, "cccc0003", SPEC3.replace(", [n1, n3]", ""))
    with sqlite3.connect(path) as conn:  # as the runner stores a failed attempt: status and reason
        for cid, where in (("aaaa0001", "dst = 'n3'"), ("bbbb0002", "src = 'n2'")):
            conn.execute(
                f"UPDATE measurements SET status = 'failed', reason = 'iperf3: refused' WHERE campaign_id = ? "
                f"AND {where}",
                (cid,),
            )
    return path


def test_compare_lists_the_rows_it_could_not_compare_and_a_failed_candidate_is_a_regression(
    tmp_path: Path,
) -> None:
    # was: exit 0, and 'only in A: n2→n1 · tcp · throughput' without why for a measurement that failed in B
    db = _compared_store(tmp_path / "s.db")
    code, output = _invoke("compare", "aaaa0001", "bbbb0002", "--db", str(db))
    assert code == 1
    assert output.splitlines()[-3:] == [
        "only in A: n2→n1 · tcp · throughput — failed in B (iperf3: refused); ok in A: a regression",
        "only in B: n1→n3 · tcp · throughput — failed in A (iperf3: refused)",
        "1 same, 0 better, 0 worse; 2 rows not compared, 1 of them a regression (ok in A, failed in B)",
    ]
    res = CliRunner().invoke(app, ["compare", "aaaa0001", "bbbb0002", "--db", str(db), "--json"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    key = {"pattern": "p", "measurement": "tcp", "kind": "tcp", "treatment": "—", "metric": "throughput_bps"}
    assert doc["missing"] == [
        key | {"pair": "n2→n1", "in": "A", "reason": "failed in B", "failure": "iperf3: refused", "regression": True},
        key | {"pair": "n1→n3", "in": "B", "reason": "failed in A", "failure": "iperf3: refused", "regression": False},
    ]  # fmt: skip
    assert (doc["regressions"], doc["counts"]) == (1, {"same": 1, "better": 0, "worse": 0})
    # a row the candidate does not plan, and one that failed only in the baseline: listed, no regression
    code, output = _invoke("compare", "bbbb0002", "cccc0003", "--db", str(db))
    assert code == 0
    assert output.splitlines()[-3:] == [
        "only in A: n1→n3 · tcp · throughput — not in B's plan",
        "only in B: n2→n1 · tcp · throughput — failed in A (iperf3: refused)",
        "1 same, 0 better, 0 worse; 2 rows not compared",
    ]
    # the report of the candidate compares it with its previous run (the baseline) and says the same
    store = Store(str(db))
    store.update_campaign("aaaa0001", created_utc_ns=store.campaign("aaaa0001")["created_utc_ns"] - 1)
    assert _invoke("report", "bbbb0002", "--db", str(db), "--out", str(tmp_path / "r"))[0] == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert (
        "row by row as `vnetbench compare aaaa0001 bbbb0002`: 1 same, 0 better, 0 worse; 2 rows not compared, "
        "1 of them a regression (ok in A, failed in B)." in page
    )
    assert (
        "<li>Only in A: n2→n1 · tcp · throughput — failed in B (iperf3: refused); ok in A: a regression</li>"
        in page
    )
    assert "<li>Only in B: n1→n3 · tcp · throughput — failed in A (iperf3: refused)</li>" in page


@pytest.mark.parametrize("command", ["dashboard", "monitor"])
def test_a_reports_directory_that_is_a_file_says_a_directory_is_needed(tmp_path: Path, command: str) -> None:
    # was: "--report notes: no such directory", of a file that is there
    blocker = tmp_path / "notes"
    blocker.write_text("mine")
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "finished", None))
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    option = {"dashboard": "--report", "monitor": "--reports"}[command]
    args = [command, *([str(spec)] if command == "monitor" else []), "--db", str(db), option, str(blocker)]
    assert _invoke(*args, "--port", "0") == (
        2,
        f"error: {option} {blocker}: is a file, not a directory; give the directory that holds the reports "
        f"(`vnetbench report --out DIR` writes one into DIR), or leave {option} out\n",
    )
    assert blocker.read_text() == "mine" and [c["id"] for c in Store(str(db)).campaigns()] == ["cafe0001"]


def test_monitor_with_a_host_that_does_not_resolve_says_so_before_creating_anything(tmp_path: Path) -> None:
    # was: a monitored campaign created, then "cannot serve on nosuch.invalid:0 (see the message above);
    # choose another --port, or --no-dashboard" after uvicorn's own error
    import socket

    with pytest.raises(socket.gaierror) as resolved:
        socket.getaddrinfo("nosuch.invalid", None, type=socket.SOCK_STREAM)
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC)
    db = tmp_path / "m.db"
    args = ["monitor", str(spec), "--db", str(db), "--host", "nosuch.invalid", "--token", "t", "--port", "0"]
    assert _invoke(*args) == (
        2,
        f"error: --host nosuch.invalid: the host name could not be resolved ({resolved.value.strerror}); give "
        "an address of this machine (e.g. the default 127.0.0.1, or 0.0.0.0 for all of its addresses) or a "
        "name that resolves to one\n",
    )
    assert not db.exists()


@pytest.mark.parametrize(
    ("level", "said"),
    [
        (
            "95",
            "error: --confidence 95: give a level above 0.5 and below 1, e.g. 0.95 (95 % is --confidence 0.95)\n",
        ),
        ("0.5", "error: --confidence 0.5: give a level above 0.5 and below 1, e.g. 0.95\n"),
    ],
    ids=["percent", "half"],
)
@pytest.mark.parametrize("command", ["analyze", "compare", "stats"])
def test_confidence_is_checked_as_one_option_by_every_command(
    tmp_path: Path, command: str, level: str, said: str
) -> None:
    # was: stats named a field 'confidence' after the file's name ("s.csv: confidence: 95.0 is not
    # between 0 and 1"), analyze said "between 0.5 and 1" and refused 0.5
    if command == "stats":
        table = tmp_path / "s.csv"
        table.write_text("a,y\n1,2\n2,3\n1,2.5\n2,3.5\n")
        args = ["stats", str(table), "--response", "y", "--factor", "a"]
    else:
        args = [
            "analyze",
            "cafe0001",
            "--db",
            str(_store(tmp_path / "s.db", ("cafe0001", "k", "finished", None))),
        ]
    assert _invoke(*args, "--confidence", level) == (2, said)


def test_a_name_that_also_starts_another_id_is_refused_as_ambiguous(tmp_path: Path) -> None:
    # was: the campaign whose id it starts, without a word of the campaign of that name
    db = _store(
        tmp_path / "s.db", ("cafe0001", "first", "finished", None), ("beef0002", "cafe", "finished", None)
    )
    assert _invoke("loss", "cafe", "--db", str(db)) == (
        2,
        "error: 'cafe' starts the id of campaign cafe0001 (first) and is the name of beef0002: give the id "
        "of the one you mean\n",
    )
    code, output = _invoke("loss", "beef0002", "--db", str(db))
    assert code == 0, output


def test_clean_leaves_the_local_objects_of_a_campaign_another_machine_ran(tmp_path: Path) -> None:
    # was: looked for on this machine, found missing and marked removed in the shared store, so the
    # clean on the machine that holds them found nothing left to remove
    here = os.uname().nodename
    db = _store(tmp_path / "s.db", ("cafe0001", "kept", "interrupted", None))
    Store(str(db)).update_campaign("cafe0001", environment={"hostname": "lab-a"})
    Store(str(db)).record_objects("cafe0001", None, [("netns", "vnbcafe0001-n-vm1", {})])
    res = _result("clean", "--db", str(db), "--campaign", "cafe0001")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        f"could not remove campaign cafe0001: 1 local objects (namespaces, processes, cgroups) were made on "
        f"lab-a, not on this machine ({here}), and are there; run `vnetbench clean --campaign cafe0001 --db {db}` "
        "on lab-a\n"
    )
    assert res.stdout == "nothing removed; left alone (said above why): campaign cafe0001\n"
    assert [o["name"] for o in Store(str(db)).live_objects("cafe0001")] == ["vnbcafe0001-n-vm1"]
    # on the machine that ran it, the same row is looked for (and, not being there, marked removed)
    Store(str(db)).update_campaign("cafe0001", environment={"hostname": here})
    res = _result("clean", "--db", str(db), "--campaign", "cafe0001")
    assert res.exit_code == 0, res.output
    assert Store(str(db)).live_objects("cafe0001") == []


def test_clean_tells_each_objects_machine_in_a_campaign_resumed_on_another(tmp_path: Path) -> None:
    # was: every local object was taken for the machine of the campaign's last process, so a resume
    # here of a campaign lab-a created made lab-a's leftovers ours to look for (and mark removed)
    here = os.uname().nodename
    db = _store(tmp_path / "s.db", ("cafe0002", "moved", "interrupted", None))
    store = Store(str(db))
    store.update_campaign("cafe0002", environment={"hostname": "lab-a", "pid_hostname": here})
    store.record_objects(
        "cafe0002",
        None,
        [
            ("netns", "vnbcafe0002-n-vm1", {"machine": "lab-a"}),
            ("netns", "vnbcafe0002-n-vm2", {"machine": "lab-a"}),
            ("netns", "vnbcafe0002-n-vm3", {"machine": here}),
        ],
    )
    res = _result("clean", "--db", str(db), "--campaign", "cafe0002")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        f"could not remove campaign cafe0002: 2 local objects (namespaces, processes, cgroups) were made on "
        f"lab-a, not on this machine ({here}), and are there; run `vnetbench clean --campaign cafe0002 --db {db}` "
        "on lab-a\n"
    )
    # this machine's own object was looked for here (not being there, marked removed); lab-a's stay
    assert [o["name"] for o in Store(str(db)).live_objects("cafe0002")] == [
        "vnbcafe0002-n-vm1",
        "vnbcafe0002-n-vm2",
    ]
