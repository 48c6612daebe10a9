"""`vnetbench compare A B [--db] [--json] [--tolerance 5%]`: two campaigns, row by row, with a verdict.

A and B are campaign ids (or id prefixes, or names) in the store of `--db`, or `DB:ID` for a
campaign in another store (a SQLite path or a SQLAlchemy URL, then `:` and the id). A row only one
campaign has is listed with why (failed in the other, not in its plan, not run in it, or no value in
it: e.g. every sample before its analysis.omit). Exit code 1
when any row is worse beyond the tolerance, or ok in A and failed in B (in every run, or in a larger
share of its runs than in A: a CI gate), 2 for a usage
error (a campaign compared with itself, or two with no row in common and nothing failed in B: no
verdict), 0 otherwise.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.table import Table

from vnetbench.cli.common import (
    EXIT_FAILED,
    DbOption,
    ambiguous_prefix,
    confidence_level,
    empty_store,
    fail,
    open_store,
    out,
    sqlite_path,
    stored_spec_error,
    unfinished_note,
)
from vnetbench.cli.output import print_table
from vnetbench.spec.errors import SpecInvalid


def compare_command(
    a: Annotated[str, typer.Argument(metavar="A", help="baseline: campaign id, prefix or name, or DB:ID")],
    b: Annotated[str, typer.Argument(metavar="B", help="candidate: campaign id, prefix or name, or DB:ID")],
    db: DbOption = "vnetbench.db",
    tolerance: Annotated[
        str,
        typer.Option(
            "--tolerance",
            help="a change within ± this share of A, or within an absolute floor if larger (0.1 "
            "percentage point of loss, 50 µs of RTT and jitter), is 'same' (5% or 0.05; from 0 up to, "
            "not including, 100 %)",
        ),
    ] = "5%",
    confidence: Annotated[float, typer.Option("--confidence", help="of intervals and Holm's test")] = 0.95,
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of tables")
    ] = False,
) -> None:
    """Compare two campaigns: difference, interval, relative change, Holm-corrected test and a verdict
    (same / better / worse) per pair, measurement, treatment and metric. Rows only one campaign has
    are listed with why: failed in it, not in its plan, not run in it, or no value in it (e.g. no
    sample at or after its analysis.omit).

    Exit status: 1 if any row is worse, or ok in A and failed in B, or failed in a larger share of
    its runs in B than in A (regressions too); 2 for a usage
    error, or no row in common and nothing failed in B (no verdict); 0 otherwise. Rows only in B
    are no regression."""
    # the statistics stack: imported when the command runs, for start-up time
    from vnetbench.analysis.compare import compare, explain_missing
    from vnetbench.analysis.inputs import DataError

    share = tolerance_share(tolerance)
    confidence = confidence_level(confidence)
    side_a, side_b = find_side(a, db), find_side(b, db)
    if side_a[1] == side_b[1]:  # every row 'same', p = 1: a verdict about nothing
        raise fail(
            f"A '{a}' and B '{b}' are the same campaign, {side_b[3]}: it would be 'same' in every row; "
            f"give two different campaigns (`vnetbench campaigns --db {side_a[0].location}` lists them)"
        )
    label_a, obs_a = load_side(*side_a)
    label_b, obs_b = load_side(*side_b)
    try:
        result = compare(obs_a, obs_b, share, confidence, (label_a, label_b))
    except DataError as exc:
        raise fail(str(exc)) from None
    result = explain_missing(result, side_units(*side_a), side_units(*side_b))
    note = omit_note(side_a[2], side_b[2])
    if note:
        result = replace(result, notes=(*result.notes, note))
    if json_output:
        sys.stdout.write(json.dumps(result.to_dict(), allow_nan=False) + "\n")
    else:
        print_tables(result)
    if not result.rows and not result.regressions:  # exit 0 passed a CI gate on nothing compared
        raise fail(
            "no row in common, so no verdict: compare two campaigns of the same spec (the same pairs, "
            "measurements and factors), each with ok measurements (`vnetbench campaigns` counts them)"
        )
    # ok in A and failed in B (in every run, or in a larger share of its runs): it exited 0
    if result.worse or result.regressions or result.more_failed_runs:
        raise typer.Exit(EXIT_FAILED)


def tolerance_share(text: str) -> float:
    """'5%' → 0.05, '0.05' → 0.05, any spelling of 0 → 0; a usage error with the valid range otherwise
    (200% was refused with only "give a share such as 5% or 0.05")."""
    raw = text.strip()
    try:
        share = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        share = float("nan")
    if not 0 <= share < 1:  # also nan
        raise fail(f"--tolerance {text}: give a share from 0 up to, not including, 100 %, such as 5% or 0.05")
    return share


def split_ref(ref: str, db: str) -> tuple[str, str]:
    """(store, campaign) of `DB:ID` (a path or a URL, then the id) or of a bare id in `db`. Campaign
    ids and names never hold a ':', so a ref with one names its store, even one that does not exist
    (said "no campaign '/typo.db:ID' in DB" instead of "no store at '/typo.db'")."""
    store, sep, ident = ref.rpartition(":")
    if sep and store and ident:
        return store, ident
    return db, ref


def find_side(ref: str, db: str) -> tuple[Any, str, dict[str, Any], str]:
    """(store, 'STORE:ID', campaign row, label) of one side; a usage error naming `ref` otherwise."""
    location, ident = split_ref(ref, db)
    path = sqlite_path(location)
    if path is not None and not path.exists():
        raise fail(
            f"{ref}: no store at '{location}'; give --db or DB:ID with an existing store "
            f"(`vnetbench run SPEC --db {location}` creates one)"
        )
    store = open_store(location)
    ambiguous = ambiguous_prefix(store, ident)
    if ambiguous:
        raise fail(f"{ref}: {ambiguous}")
    row = store.campaign(ident)
    if row is None and not store.campaigns():
        raise fail(f"{ref}: {empty_store(store)}")
    if row is None:
        known = ", ".join(f"{c['id']} ({c['name']})" for c in store.campaigns()[-5:])
        raise fail(f"{ref}: no campaign '{ident}' in {location}; known: {known}")
    unfinished_note(store, row)
    label = row["id"] if location == db else f"{location}:{row['id']}"
    path = sqlite_path(location)
    where = f"{path.resolve() if path is not None else location}:{row['id']}"  # one name per campaign
    return store, where, row, f"{label} ({row['name']})"


def load_side(store: Any, where: str, row: dict[str, Any], label: str) -> tuple[str, Any]:
    """(label, observations) of one side of the comparison."""
    from vnetbench.analysis.compare import campaign_observations  # the statistics stack, as above

    try:
        return label, campaign_observations(store, row)
    except SpecInvalid as exc:
        raise stored_spec_error(row, exc) from None


def side_units(store: Any, where: str, row: dict[str, Any], label: str) -> Any:
    """What one side planned and stored (analysis.compare.Units), to say why a row is missing."""
    from vnetbench.analysis.compare import campaign_units  # the statistics stack, as above

    try:
        return campaign_units(store, row)
    except SpecInvalid as exc:
        raise stored_spec_error(row, exc) from None


def omit_note(row_a: dict[str, Any], row_b: dict[str, Any]) -> str | None:
    """A note when A and B drop different warm-ups: each side is read after its own spec's
    `analysis.omit`, so B's throughput after 1 s against A's whole run differs by the method too
    (it was compared without a word). None when they drop the same, or a spec cannot be read."""
    from vnetbench.spec.loader import spec_of

    try:
        omit_a, omit_b = (int(spec_of(row).analysis.omit) for row in (row_a, row_b))
    except SpecInvalid:
        return None
    if omit_a == omit_b:
        return None
    return (
        f"A drops each flow's first {omit_a / 1e9:g} s and B its first {omit_b / 1e9:g} s (their specs' "
        "analysis.omit): each side is read after its own warm-up removal, so a change can be the "
        "method's, not the network's; compare campaigns with the same analysis.omit"
    )


def print_tables(result: Any) -> None:
    """The comparison as a rich table (verdicts coloured), what only one side has, and the counts."""
    from vnetbench.analysis.compare import counts  # the statistics stack, as above
    from vnetbench.report.comparison_tables import (
        COLUMNS,
        caption,
        display_rows,
        key_label,
        not_compared,
        why_missing,
    )

    if not result.rows:  # an empty table and 'Holm over all 0 rows' said nothing
        out.print(
            f"nothing to compare: no pair · measurement · metric is in both {result.a} and {result.b}",
            highlight=False,
        )
    else:
        table = Table(title=f"B = {result.b} against A = {result.a}", caption=caption(result))
        for i, col in enumerate(COLUMNS):
            table.add_column(col, justify="left" if i == 0 else "right")
        style = {"worse": "bold red", "better": "green", "same": ""}
        for row in display_rows(result):
            verdict = row[-1]
            table.add_row(*row[:-1], f"[{style[verdict]}]{verdict}[/]" if style[verdict] else verdict)
        print_table(out, table)
    why = {(m.side, tuple(m.key.items())): m for m in result.missing}
    for side, keys in (("A", result.only_in_a), ("B", result.only_in_b)):
        for k in keys:  # named as the table names its rows: 'throughput', not 'throughput_bps'
            out.print(
                f"only in {side}: {key_label(k)}{why_missing(why.get((side, tuple(k.items()))))}",
                highlight=False,
                soft_wrap=True,
            )
    for note in result.notes:
        out.print(f"note: {note}", highlight=False)
    n = counts(result)
    out.print(
        f"{n['same']} same, {n['better']} better, {n['worse']} worse{not_compared(result)}",
        highlight=False,
        soft_wrap=True,
    )
