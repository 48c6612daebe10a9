"""What a new user meets at the command line: help that reads as written, errors that show what was
typed (no rich markup, no emoji, no traceback) and say what to do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import vnetbench
from tests.helpers.specs import MONITORED_SPEC
from vnetbench.cli import app
from vnetbench.observers.base import RunSummary
from vnetbench.store.db import Store

SPEC = """\
name: usability
topology:
  nodes: [{name: n1}, {name: n2}]
  links:
    - {endpoints: [n1, n2], rate: RATE}
measurements:
  - {name: tcp, kind: tcp, duration: 3s}
patterns:
  - {name: p, kind: pairs, pairs: [[n1, n2]], measurements: [tcp]}
"""

WIDE = {"COLUMNS": "250"}  # no line of these helps needs wrapping at this width


def _line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def test_top_level_help_keeps_each_command_summary_on_one_line() -> None:
    res = CliRunner().invoke(app, ["--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    # the docstrings' hard line breaks used to split these sentences over two lines
    assert "fairness, UDP effective throughput" in _line_with(res.output, "│ analyze ")
    assert "a verdict (same / better / worse)" in _line_with(res.output, "│ compare ")
    assert "only objects recorded as ours" in _line_with(res.output, "│ clean ")
    assert "path MTU. Without --inventory" in _line_with(res.output, "│ doctor ")


def test_an_on_off_option_shows_no_type_in_help() -> None:
    # typer's rich help wrote '--json <bool>', as if it took a value: `campaigns --json true` then
    # failed with "Got unexpected extra argument(s) (true)"
    res = CliRunner().invoke(app, ["campaigns", "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    cells = [
        re.split(r"\s{2,}", _line_with(res.output, f"│ {o} ").strip("│ "))
        for o in ("--json", "--help", "--db")
    ]
    assert cells[0] == [
        "--json",
        "print one JSON array, an object per row, instead of the table (SI base units)",
    ]
    assert cells[1] == ["--help", "Show this message and exit."]
    assert cells[2][:2] == ["--db", "<str>"]  # an option that takes a value keeps its type
    assert "<bool>" not in res.output


def test_a_command_help_joins_the_lines_of_each_paragraph() -> None:
    res = CliRunner().invoke(app, ["monitor", "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    assert "a random `slip`, `max_runs`, `until`." in _line_with(res.output, "block says when")
    assert "a monitor killed and started again" in _line_with(res.output, "ONE campaign")
    # Ctrl-C stops it as SIGTERM does (exit 0); the help named only SIGTERM
    assert "Exit: 0 done or stopped (SIGTERM, or Ctrl-C / SIGINT), 1 done with an alert firing" in _line_with(
        res.output, "Exit:"
    )


@pytest.mark.parametrize("rate", ["5[x]", "5[/x]", "5:abc:"])
def test_a_spec_error_shows_the_value_as_written(tmp_path: Path, rate: str) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC.replace("RATE", f'"{rate}"'))
    res = CliRunner().invoke(app, ["validate", str(spec)])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no MarkupError traceback
    assert f"c.yaml:5: topology.links[0].rate: '{rate}' is not a rate" in res.output


def test_an_unknown_campaign_is_named_as_typed(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)  # not empty: an empty store says so (test_cli_arguments)
    res = CliRunner().invoke(app, ["report", ":abc:", "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert "no campaign ':abc:' in" in res.output  # not '🔤'


def _store_with_campaign(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    Store(str(db)).create_campaign(
        id="cafe0001", name="kept", status="finished", provider="local", spec_text="name: kept\n",
        spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
    )  # fmt: skip
    return db


@pytest.mark.parametrize("command", ["export", "report"])
def test_an_unwritable_out_directory_is_a_usage_error(tmp_path: Path, command: str) -> None:
    db = _store_with_campaign(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    res = CliRunner().invoke(app, [command, "cafe0001", "--db", str(db), "--out", str(blocker / "sub")])
    assert res.exit_code == 2, res.output  # was a FileExistsError / NotADirectoryError traceback
    assert isinstance(res.exception, SystemExit)
    assert f"{blocker / 'sub'}" in res.output and "Not a directory" in res.output


def test_clean_refuses_a_store_that_does_not_exist(tmp_path: Path) -> None:
    db = tmp_path / "typo.db"
    res = CliRunner().invoke(app, ["clean", "--db", str(db)])
    assert res.exit_code == 2, res.output  # said "nothing of ours was left behind", exit 0
    assert f"no store at '{db}'" in res.output and "check --db" in res.output
    assert "nothing of ours" not in res.output
    assert not db.exists()


def test_clean_finds_the_campaign_in_whichever_registered_store_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two live builds registered on this machine, each in its own store; the wanted one sorts second
    stores = {}
    for cid, sub in (("aaaa0001", "a"), ("bbbb0002", "b")):
        (tmp_path / sub).mkdir()
        stores[cid] = str(tmp_path / sub / "s.db")
        Store(stores[cid]).create_campaign(
            id=cid, name="x", status="finished", provider="local", spec_text="name: x\n",
            spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
        )  # fmt: skip
    monkeypatch.setattr("vnetbench.providers.cleanup.active_campaigns", lambda: sorted(stores.items()))
    monkeypatch.chdir(tmp_path)  # no ./vnetbench.db
    seen: list[tuple[str, str | None]] = []

    def fake_clean(store: Store, cid: str | None) -> SimpleNamespace:
        seen.append((str(store.location), cid))
        return SimpleNamespace(removed=[], problems=[], skipped=[])

    monkeypatch.setattr("vnetbench.providers.cleanup.clean", fake_clean)
    res = CliRunner().invoke(app, ["clean", "--campaign", "bbbb0002"])
    # was: exit 2, "no campaign 'bbbb0002' in …/a/s.db" (the first registered store), nothing cleaned
    assert res.exit_code == 0, res.output
    assert [cid for _, cid in seen] == ["bbbb0002"] and seen[0][0].endswith("b/s.db")
    # a campaign registered nowhere: searched every known store, then one error naming them
    monkeypatch.setattr(
        "vnetbench.providers.cleanup.active_campaigns", lambda: [("aaaa0001", stores["aaaa0001"])]
    )
    res = CliRunner().invoke(app, ["clean", "--campaign", "bbbb0002"])
    assert res.exit_code == 2, res.output
    assert "no campaign 'bbbb0002' in any store this machine knows of" in res.output
    assert "give its store with --db" in res.output


def test_compare_names_a_missing_store_of_a_db_id_ref(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)
    missing = tmp_path / "typo.db"
    res = CliRunner().invoke(app, ["compare", f"{missing}:cafe0001", "cafe0001", "--db", str(db)])
    assert res.exit_code == 2, res.output
    # was: "no campaign '/…/typo.db:cafe0001' in /…/s.db", as if the whole ref were an id
    assert f"no store at '{missing}'" in res.output
    assert not missing.exists()


def _resume_with_the_run_replaced(
    monkeypatch: pytest.MonkeyPatch, db: Path, status: str, run: Any, env: dict[str, str] | None = None
) -> Any:
    """`vnetbench resume` of a stored campaign cafe0001 ('kept') whose run is `run`: the run machinery
    is not what these tests test, the CLI's words around it are."""
    Store(str(db)).create_campaign(
        id="cafe0001", name="kept", status=status, provider="local", spec_text="name: kept\n",
        spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
    )  # fmt: skip
    monkeypatch.setattr("vnetbench.providers.cleanup.clean", lambda store, cid: SimpleNamespace(removed=[]))
    monkeypatch.setattr("vnetbench.run.campaign.load_plan", lambda store, cid: SimpleNamespace(refused={}))
    monkeypatch.setattr("vnetbench.providers.registry.make_provider", lambda *args: None)
    monkeypatch.setattr("vnetbench.run.campaign.run_campaign", run)
    return CliRunner().invoke(app, ["resume", "cafe0001", "--db", str(db)], env=env)


def test_an_interrupted_run_prints_the_resume_command_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / ("long-directory-" * 12) / "store.db"  # wider than any terminal the test runs in
    db.parent.mkdir()
    res = _resume_with_the_run_replaced(
        monkeypatch, db, "interrupted", lambda *a, **k: RunSummary(flows_ok=3, interrupted=True)
    )
    assert res.exit_code == 130, res.output
    # rich wrapped it at the console's width, inside the command and the path: not copyable
    assert f"continue with `vnetbench resume cafe0001 --db {db}`\n" in res.output


def test_a_build_refusal_says_resume_fixes_the_machine_and_run_fixes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider's refusal (`emulator: netem` on a kernel without it, a delay node inside a VXLAN
    between switches) said "fix the above and run `vnetbench resume ID`"; resume runs the stored
    campaign, so a fixed file never reached it and the same error came back (found by the docs audit)."""
    from vnetbench.providers.base import ProviderError

    def refuse(*args: object, **kwargs: object) -> RunSummary:
        raise ProviderError("link slow: delay with `emulator: netem` need the kernel's netem qdisc")

    db = tmp_path / "store.db"
    res = _resume_with_the_run_replaced(monkeypatch, db, "created", refuse, env=WIDE)
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "link slow: delay with `emulator: netem`" in text
    assert (
        "What this machine or the hosts lack (a tool, a kernel feature): install it and run "
        f"`vnetbench resume cafe0001 --db {db}`" in text
    )
    # an inventory's address, port, key or tools path is stored with the campaign: resume runs it as stored
    assert (
        "What the campaign file or its inventory says (a field, an address, a port, a key, a tools path): "
        "change it and `vnetbench run` it again (resume runs the campaign and inventory as stored)" in text
    )


def test_validate_says_what_this_machine_cannot_build_and_run_refuses_it_before_storing(
    tmp_path: Path,
) -> None:
    """`validate` said "valid" for a campaign the local provider refuses (here a rate above tbf's 32-bit
    byte rate, 2^32 B/s = 34.36 Gbit/s, on any kernel), and `run` stored it before refusing, leaving a
    failed campaign that resume could never fix (found by the docs audit)."""
    spec = tmp_path / "fast.yaml"
    spec.write_text(SPEC.replace("RATE", "40gbit"))
    why = "link n1-n2: rate 40 Gbit/s is above tbf's limit of 34.3597 Gbit/s"
    res = CliRunner().invoke(app, ["validate", str(spec)], env=WIDE)
    assert res.exit_code == 1, res.output
    assert "valid — 1 step" in res.output and "but this machine cannot build it" in res.output
    assert why in " ".join(res.output.split())
    as_json = CliRunner().invoke(app, ["validate", str(spec), "--json"], env=WIDE)
    assert as_json.exit_code == 1
    problems = json.loads(as_json.stdout)["machine_problems"]
    assert len(problems) == 1 and problems[0].startswith(why)

    db = tmp_path / "store.db"
    res = CliRunner().invoke(app, ["run", str(spec), "--db", str(db), "--no-report"], env=WIDE)
    assert res.exit_code == 2, res.output
    assert why in " ".join(res.output.split()) and "nothing was stored or built" in res.output
    assert not db.exists() or Store(str(db)).campaigns() == []

    spec.write_text(SPEC.replace("RATE", "30gbit"))  # under the limit: buildable
    ok = CliRunner().invoke(app, ["validate", str(spec), "--json"], env=WIDE)
    assert ok.exit_code == 0 and json.loads(ok.stdout)["machine_problems"] == []


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    if hasattr(command, "commands"):  # a group (typer's own click: not a click.Group)
        return [c for name, sub in command.commands.items() for c in _commands(sub, (*path, name))]
    return [(" ".join(path), command)]


def test_every_argument_and_option_says_what_it_is() -> None:
    # `resume --no-report`, `scenarios run --no-report/--seed` and the scenario NAME had no help
    missing = [
        f"{name} {param.name}"
        for name, command in _commands(typer.main.get_command(app))
        for param in command.params
        if not getattr(param, "help", None) and not getattr(param, "hidden", False)
    ]
    assert len(_commands(typer.main.get_command(app))) > 15  # every command was looked at
    assert missing == []


def test_python_dash_m_vnetbench_is_the_command_line() -> None:
    # `python -m vnetbench` said "'vnetbench' is a package and cannot be directly executed"
    src = Path(vnetbench.__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "250"}
    res = subprocess.run(
        [sys.executable, "-m", "vnetbench", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert res.returncode == 0, res.stderr
    assert "Usage: python -m vnetbench [OPTIONS] COMMAND" in res.stdout
    assert "│ validate " in res.stdout


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "topology.links.nolink.rate=1mbit",  # was a PathError traceback
            "c.yaml: --set: 'topology.links.nolink.rate': no item named 'nolink' (known: n1-n2); give the "
            "dotted path of a field",
        ),
        (
            "measurements.tcp.duration=[1",  # was a yaml ParserError traceback
            "--set 'measurements.tcp.duration=[1': the value is not valid YAML",
        ),
        (
            "monitor.until=2026-02-30",  # was a ValueError traceback from YAML's date constructor
            "--set 'monitor.until=2026-02-30': YAML reads the value as a date, which does not exist (day is "
            "out of range for month); write a real date, e.g. 2026-12-11T00:00:00Z, or quote it if it is text",
        ),
    ],
)
def test_a_bad_set_is_a_usage_error(tmp_path: Path, override: str, message: str) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC.replace("RATE", "10mbit"))
    db = tmp_path / "s.db"
    res = CliRunner().invoke(app, ["run", str(spec), "--db", str(db), "--set", override])
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)
    assert message in res.output
    assert not db.exists()  # refused before anything was created


def test_a_file_that_is_not_a_store_is_named_with_the_fix(tmp_path: Path) -> None:
    not_a_store = tmp_path / "campaign.yaml"  # a spec given as --db by mistake
    not_a_store.write_text(SPEC)
    res = CliRunner().invoke(app, ["campaigns", "--db", str(not_a_store)])
    assert res.exit_code == 2, res.output
    assert f"cannot open the store '{not_a_store}': file is not a database; --db takes a SQLite file" in (
        res.output
    )
    assert "sqlalche.me" not in res.output and "sqlite3.DatabaseError" not in res.output
    assert len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("command", "verb"),
    [(["analyze", "cafe0001"], "analyse"), (["compare", "cafe0001", "cafe0002"], "analyse"),
     (["resume", "cafe0002"], "resume")],
    ids=["analyze", "compare", "resume"],
)  # fmt: skip
def test_a_stored_spec_this_version_rejects_is_a_usage_error(
    tmp_path: Path, command: list[str], verb: str
) -> None:
    # a campaign run by an older vnetbench whose spec no longer validates: was a SpecInvalid traceback
    db = _store_with_campaign(tmp_path)  # its spec is "name: kept" only
    Store(str(db)).create_campaign(
        id="cafe0002", name="halfway", status="interrupted", provider="local", spec_text="name: halfway\n",
        spec_sha256="-", spec_source="old.yaml", seed=1, environment={}, tool_versions={},
    )  # fmt: skip
    res = CliRunner().invoke(app, [*command, "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)
    ident = command[1]
    assert f"error: campaign {ident} (" in res.output
    assert "its stored spec is not valid for this version of vnetbench" in res.output
    assert "topology: required field is missing" in res.output
    assert f"{verb} it with the version that ran it, or `vnetbench export {ident}` its data" in res.output


def test_validate_takes_the_overrides_run_takes(tmp_path: Path) -> None:
    # `vnetbench run --set` could not be checked first: validate had no --set
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC.replace("RATE", "10mbit"))
    res = CliRunner().invoke(app, ["validate", str(spec), "--set", "schedule.repetitions=3"])
    assert res.exit_code == 0, res.output
    assert "valid — 3 steps, 3 measurements" in res.output
    res = CliRunner().invoke(app, ["validate", str(spec), "--set", "topology.links.n1-n2.rate=10mbits"])
    assert res.exit_code == 2, res.output
    assert "'10mbits' is not a rate" in res.output and "(with --set" in res.output


@pytest.mark.parametrize("command", ["validate", "run"])
def test_set_corrects_a_value_the_file_gets_wrong(tmp_path: Path, command: str) -> None:
    """--set is applied before the file is validated: the file's own '10mbits' was refused although
    --set replaced it (the file was validated alone first)."""
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC.replace("RATE", "10mbits"))
    alone = CliRunner().invoke(app, ["validate", str(spec)])
    assert alone.exit_code == 2 and "'10mbits' is not a rate" in alone.output
    # run stops at its store (a directory, refused after the spec is read): nothing is built
    store = ["--db", str(tmp_path), "--no-report"] if command == "run" else []
    res = CliRunner().invoke(app, [command, str(spec), "--set", "topology.links.n1-n2.rate=10mbit", *store])
    assert "is not a rate" not in res.output, res.output
    if command == "validate":
        assert res.exit_code in (0, 1), res.output  # 1: valid, but this machine cannot build it
        assert "valid — 1 step" in res.output
    else:
        assert res.exit_code == 2 and "cannot open the store" in res.output, res.output


@pytest.mark.parametrize("command", [["report", "ab"], ["loss", "ab"], ["compare", "ab", "ab12"]])
def test_an_id_prefix_of_several_campaigns_is_refused(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "s.db"
    for cid in ("ab12", "ab34"):
        Store(str(db)).create_campaign(
            id=cid, name="n", status="finished", provider="local", spec_text="name: n\n",
            spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
        )  # fmt: skip
    res = CliRunner().invoke(app, [*command, "--db", str(db)])
    assert res.exit_code == 2, res.output  # picked the newest of the two without a word
    assert "'ab' starts the ids of 2 campaigns (ab12, ab34); give more of the id" in res.output


def test_validate_checks_a_monitored_spec_as_the_monitor_will(tmp_path: Path) -> None:
    """A file with a monitor: block is for `vnetbench monitor`, which refuses schedule.repetitions
    (its runs are the repetitions): validate said 'valid' and the monitor then refused it."""
    spec = tmp_path / "mon.yaml"
    spec.write_text(MONITORED_SPEC.replace("monitor:", "schedule: {repetitions: 2}\nmonitor:"))
    res = CliRunner().invoke(app, ["validate", str(spec)], env=WIDE)
    assert res.exit_code == 2
    assert "schedule.repetitions: a monitored campaign's runs are its repetitions" in res.output
    spec.write_text(MONITORED_SPEC)
    res = CliRunner().invoke(app, ["validate", str(spec)], env=WIDE)
    assert res.exit_code == 0, res.output
    assert "valid" in res.output


def test_export_help_names_the_readme_it_writes(tmp_path: Path) -> None:
    # quickstart (efd6a61d): `export --help` promised 'CAMPAIGN-README.md'; exported by its name
    # ('kept' here) the files are named by the full id, efd6a61d-README.md
    db = _store_with_campaign(tmp_path)
    res = CliRunner().invoke(app, ["export", "kept", "--db", str(db), "--out", str(tmp_path / "x")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "x" / "cafe0001-README.md").exists()
    helped = CliRunner().invoke(app, ["export", "--help"], env={"COLUMNS": "200"})
    assert "ID-README.md" in helped.output and "CAMPAIGN-README" not in helped.output
    # every file it writes is named in --help (it named 4 of the 10 tables: "measurements with
    # summaries, samples, events, builds"; found by the docs audit exporting a lossy campaign)
    tables = sorted(p.name.removeprefix("cafe0001-").split(".")[0] for p in (tmp_path / "x").glob("*.csv"))
    assert len(tables) == 10
    help_text = " ".join(helped.output.replace("│", " ").split())
    for table in tables:
        assert f" {table}" in help_text, table
