"""What every command shares: the consoles, the exit codes, opening the store, finding a campaign,
reporting a usage error, and the `--db` / CAMPAIGN / `--set` arguments.

Exit codes: 0 success, 1 a run with failed measurements (or a failed build), 2 a usage error
(bad spec, unknown campaign, missing kernel feature or tool), 130 interrupted (resume it).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.text import Text

from vnetbench.report.rich_view import TerminalConsole
from vnetbench.spec.errors import SpecInvalid
from vnetbench.store.db import Store, foreign_tables

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# emoji off: a path or id such as 'a.db:abc:' must not print as 'a.db🔤'; a line never ends between a
# number and its unit (TerminalConsole)
out = TerminalConsole(emoji=False)
err = TerminalConsole(stderr=True, emoji=False)

DbOption = Annotated[
    str,
    typer.Option("--db", envvar="VNETBENCH_DB", help="store: a SQLite file path or a SQLAlchemy URL"),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="print one JSON object instead of tables (SI base units)")
]
JsonListOption = Annotated[  # the commands whose --json prints a list, one object per row
    bool,
    typer.Option(
        "--json", help="print one JSON array, an object per row, instead of the table (SI base units)"
    ),
]
ReportOption = Annotated[
    Path | None, typer.Option("--report", help="write the report here (default: reports/NAME-ID)")
]
NoReportOption = Annotated[bool, typer.Option("--no-report", help="do not write a report at the end")]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="override a spec field: PATH=VALUE (repeatable)")
]
SeedOption = Annotated[int | None, typer.Option(help="seed for randomised order (default: recorded random)")]
CAMPAIGN_HELP = (
    "campaign id, id prefix or name (a name: its newest campaign; default: the newest in the store)"
)
CampaignArg = Annotated[str | None, typer.Argument(help=CAMPAIGN_HELP)]


def error_line(message: object) -> None:
    """'error: MESSAGE' on stderr, the message as plain text: what the user wrote ('5[x]', '[/x]')
    is shown as written, not read as rich markup (which dropped it or raised MarkupError)."""
    err.print(Text.assemble(("error:", "red"), " ", str(message)), soft_wrap=True)


def fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    """Print one error line; return the Exit to raise."""
    error_line(message)
    return typer.Exit(code)


def confidence_level(value: float) -> float:
    """A --confidence option's level, or a usage error that says what it takes (95 reads as 95 %)."""
    if 0.5 < value < 1:
        return value
    hint = f" ({value:g} % is --confidence {value / 100:g})" if 50 < value < 100 else ""
    raise fail(f"--confidence {value:g}: give a level above 0.5 and below 1, e.g. 0.95{hint}")


def spec_errors(exc: SpecInvalid) -> typer.Exit:
    """Print every located spec error (file:line: field: message); return the Exit to raise."""
    for e in exc.errors:
        error_line(e)
    return typer.Exit(EXIT_USAGE)


def sqlite_path(db: str) -> Path | None:
    """The file behind a SQLite store (a plain path or a sqlite:/// URL); None for a server's URL."""
    if db.startswith("sqlite:///"):
        return Path(db.removeprefix("sqlite:///"))
    return None if "://" in db else Path(db).expanduser()


def open_store(db: str, create: bool = False) -> Store:
    """The store at a path or URL; a usage error (exit 2) when it cannot be opened.

    Only the commands that write a campaign (run, monitor) create a SQLite file; the others refuse a
    path with nothing there, so a mistyped --db is an error instead of a new empty store.
    """
    path = sqlite_path(db)
    if not create and path is not None and not path.exists():
        raise fail(
            f"no store at '{db}': nothing has been run into it. Check --db (or VNETBENCH_DB); "
            f"`vnetbench run SPEC --db {db}` creates it"
        )
    others = path is not None and foreign_tables(path)
    if others:  # Store() would have added its tables to someone else's database, even to list it
        shown = ", ".join(others[:5]) + (", …" if len(others) > 5 else "")
        raise fail(
            f"'{db}' is a SQLite database but not a vnetbench store (its tables: {shown}); left as it is. "
            "Check --db (or VNETBENCH_DB): give the file `vnetbench run` wrote, or a new path"
        )
    try:
        return Store(db)
    except Exception as exc:  # a bad URL or an unwritable path is a usage error
        # the driver's own message, without SQLAlchemy's wrapper and its "(Background on this error …)"
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())  # one line
        postgres = db.startswith(("postgresql", "postgres:"))  # its reason says what (refused, no such role)
        hint = "" if postgres else "; --db takes a SQLite file that vnetbench wrote, or a postgresql:// URL"
        raise fail(f"cannot open the store '{db}': {reason}{hint}") from None


def find_campaign(store: Store, ident: str | None) -> dict[str, Any]:
    """The campaign row by id, id prefix or name (None: the newest); a usage error if there is none,
    or if the prefix starts more than one id (it picked the newest of them without a word)."""
    ambiguous = ambiguous_prefix(store, ident)
    if ambiguous:
        raise fail(ambiguous)
    row = store.campaign(ident)
    if row is None:
        campaigns = store.campaigns()
        if not campaigns:  # said "no campaign '' in …; known: none"
            raise fail(empty_store(store))
        known = ", ".join(f"{c['id']} ({c['name']})" for c in campaigns[-5:])
        raise fail(f"no campaign '{ident or ''}' in {store.location}; known: {known}")
    if ident == row["id"]:
        return row
    if ident != row["name"]:  # found by an id prefix: which may also be another campaign's name
        named = [c["id"] for c in store.campaigns() if c["name"] == ident]
        if named:
            raise fail(
                f"'{ident}' starts the id of campaign {row['id']} ({row['name']}) and is the name of "
                f"{', '.join(named)}: give the id of the one you mean"
            )
        return row
    named = [c["id"] for c in store.campaigns() if c["name"] == ident]
    if ident != row["id"] and len(named) > 1:  # it picked the newest of them without a word
        others = ", ".join(i for i in named if i != row["id"])
        err.print(
            f"note: {len(named)} campaigns are named '{ident}'; this is the newest, {row['id']} "
            f"(give the id for another: {others})",
            highlight=False,
            soft_wrap=True,
        )
    return row


def unfinished_note(store: Store, row: dict[str, Any]) -> None:
    """On stderr, for a campaign that is not finished: what is shown covers only what it measured so
    far (the report and analysis read as complete, their status line aside), and how to get the rest.
    The report's banner says the same (analysis/coverage.py)."""
    from vnetbench.analysis.coverage import coverage  # the plan of the stored spec: only for such a campaign

    cov = coverage(store, row)
    if cov is None:
        return
    of = "" if cov.planned is None else f" of the {cov.planned} planned"
    err.print(
        Text.assemble(("note:", "yellow"), f" campaign {cov.campaign_id} ({cov.name}) is {cov.state}: this "
                      f"covers its {cov.ok} ok measurements{of}; {cov.rest(store.location)}"),
        soft_wrap=True,
    )  # fmt: skip


def empty_store(store: Store) -> str:
    """What to say of a store that holds no campaign."""
    return (
        f"the store {store.location} holds no campaign yet; check --db (or VNETBENCH_DB), or "
        f"`vnetbench run SPEC --db {store.location}` measures one"
    )


def ambiguous_prefix(store: Store, ident: str | None) -> str | None:
    """What is wrong with an id prefix that starts several ids (and is no id itself); None if fine."""
    if not ident:
        return None
    ids = [c["id"] for c in store.campaigns()]
    starting = [i for i in ids if i.startswith(ident)]
    if ident in ids or len(starting) < 2:
        return None
    shown = ", ".join(starting[:5]) + (", …" if len(starting) > 5 else "")
    return f"'{ident}' starts the ids of {len(starting)} campaigns ({shown}); give more of the id"


def stored_spec_error(row: dict[str, Any], exc: SpecInvalid, verb: str = "analyse") -> typer.Exit:
    """A campaign whose stored spec this version of vnetbench no longer accepts (a field renamed since
    it ran): one error line naming the campaign and the first problems, instead of a traceback."""
    problems = "; ".join(str(e) for e in exc.errors[:3]) + ("; …" if len(exc.errors) > 3 else "")
    return fail(
        f"campaign {row['id']} ({row['name']}): its stored spec is not valid for this version of vnetbench "
        f"({problems}); {verb} it with the version that ran it, or `vnetbench export {row['id']}` its data"
    )


def parse_sets(values: list[str] | None) -> dict[str, Any]:
    """`--set PATH=VALUE` items as {path: YAML value}."""
    overrides = {}
    for item in values or []:
        if "=" not in item:
            raise fail(f"--set {item!r}: expected PATH=VALUE, e.g. --set schedule.repetitions=3")
        path, value = item.split("=", 1)
        try:
            overrides[path.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:  # e.g. an unclosed '[': a usage error, not a traceback
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise fail(
                f"--set {item!r}: the value is not valid YAML ({problem}); quote it or close its brackets"
            ) from None
        except ValueError as exc:  # YAML read a date that does not exist (2026-02-30): was a traceback
            raise fail(
                f"--set {item!r}: YAML reads the value as a date, which does not exist ({exc}); write a real "
                "date, e.g. 2026-12-11T00:00:00Z, or quote it if it is text"
            ) from None
    return overrides


# `monitor` and `dashboard` read the same variable; the second name is what `dashboard` read before.
TOKEN_ENV = ["VNETBENCH_TOKEN", "VNETBENCH_DASHBOARD_TOKEN"]


def is_loopback(host: str) -> bool:
    """Whether serving on `host` stays on this machine (127.0.0.0/8, ::1, localhost): `dashboard` and
    `monitor` need a token for anything else, by this one rule."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reports_dir_problem(option: str, path: Path | None) -> str | None:
    """What is wrong with `dashboard --report` / `monitor --reports` (the directory of the reports it
    serves): no such directory, or a file (said "no such directory" of a file that is there). None if fine."""
    if path is None or path.is_dir():
        return None
    if path.exists():
        return (
            f"{option} {path}: is a file, not a directory; give the directory that holds the reports "
            f"(`vnetbench report --out DIR` writes one into DIR), or leave {option} out"
        )
    return (
        f"{option} {path}: no such directory; write a report first (vnetbench report --out DIR) or leave "
        f"{option} out"
    )


def unresolved_host(host: str) -> str | None:
    """What to say of a --host whose name does not resolve (was: the server's error after the banner,
    with 'choose another --port'); None if it resolves (whether it is this machine's: the bind says)."""
    import socket

    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return (
            f"--host {host}: the host name could not be resolved ({exc.strerror or exc}); give an address of "
            "this machine (e.g. the default 127.0.0.1, or 0.0.0.0 for all of its addresses) or a name that "
            "resolves to one"
        )
    return None
