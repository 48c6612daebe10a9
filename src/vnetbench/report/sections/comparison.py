"""Report section: this campaign against the previous run of the same campaign (same name) in the
same store — a campaign compared with its own past (`vnetbench compare PREVIOUS THIS` as a table).
Without an earlier run of that name there is no section."""

from __future__ import annotations

from typing import Any

from vnetbench.analysis.compare import campaign_observations, campaign_units, compare, counts, explain_missing
from vnetbench.analysis.inputs import DataError
from vnetbench.report.comparison_tables import comparison_table, key_label, not_compared, why_missing
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Section

ORDER = 75


def previous_run(ctx: ReportContext) -> dict[str, Any] | None:
    """The newest campaign of this name created before this one (finished or interrupted)."""
    me = ctx.campaign
    earlier = [
        c for c in ctx.store.campaigns()
        if c["name"] == me["name"] and c["id"] != me["id"] and c["created_utc_ns"] < me["created_utc_ns"]
    ]  # fmt: skip
    return earlier[-1] if earlier else None


def build(ctx: ReportContext) -> list[Section]:
    if ctx.spec is None or ctx.frame.empty or not hasattr(ctx.store, "campaigns"):
        return []
    before = previous_run(ctx)
    if before is None:
        return []
    try:
        sides = [campaign_observations(ctx.store, row) for row in (before, ctx.campaign)]
        result = compare(sides[0], sides[1], confidence=ctx.spec.analysis.confidence,
                         labels=(before["id"], ctx.campaign_id))  # fmt: skip
        result = explain_missing(result, *(campaign_units(ctx.store, row) for row in (before, ctx.campaign)))
    except (DataError, ValueError) as exc:
        return [Section("Compared with the previous run", "comparison", items=[f"Not compared: {exc}"])]
    if not result.rows:
        return []
    n = counts(result)
    section = Section(
        "Compared with the previous run",
        "comparison",
        intro=f"This campaign (B = {ctx.campaign_id}) against the previous run of {ctx.campaign['name']} in "
        f"this store (A = {before['id']}), row by row as "
        f"`vnetbench compare {before['id']} {ctx.campaign_id}`: "
        f"{n['same']} same, {n['better']} better, {n['worse']} worse{not_compared(result)}.",
        tables=[comparison_table(result)],
    )
    section.items += [
        f"Worse: {r.key['pair']} · {r.key['measurement']} · {r.key['metric']}" for r in result.worse
    ]
    section.items += [  # items are text (html.item_html escapes them): a stored failure's too
        f"Only in {m.side}: {key_label(m.key)}{why_missing(m)}" for m in result.missing
    ]
    section.items += list(result.notes)
    return [section]
