"""Checks on a table before a model is fitted: every problem names the column and says how to fix it."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import pandas as pd

Level = Hashable  # a factor level as found in the data: int, float or str


class DataError(ValueError):
    """The data cannot be analysed as asked. `field` is the column (or parameter) at fault."""

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{field}: {problem}; {fix}")


def require_columns(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    """DataError naming the first missing column and the columns there are."""
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns)) or "none"
            raise DataError(f"column '{col}'", "not found", f"use one of the columns present: {have}")


def numeric_column(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column as floats; a non-number or an empty cell is an error naming its row."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() | ~np.isfinite(values.astype(float))
    if bad.any():
        row = bad.to_numpy().nonzero()[0][0]
        cell = raw.iloc[row]
        what = "is empty" if pd.isna(cell) else f"holds '{cell}', not a finite number"
        raise DataError(
            f"column '{column}'",
            f"row {row + 1} of the data {what}",
            "the response must be numeric: fix or remove that row, or pick another column",
        )
    return values.astype(float)


def ordered_levels(values: pd.Series, levels: Sequence[Level] | None = None) -> list[Level]:
    """Levels in a meaningful order: as given, else a categorical's own order, else numeric order if all
    numeric, else first appearance.

    Order matters for successive differences (level 1, 2, … 10, never 1, 10, 2)."""
    if levels is not None:
        return list(levels)
    if isinstance(values.dtype, pd.CategoricalDtype):  # an order chosen upstream (the spec's list)
        return [c for c in values.cat.categories if (values == c).any()]
    present = list(pd.unique(values.dropna()))
    if all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool) for v in present
    ):
        return sorted(present)
    return present


def factor_column(frame: pd.DataFrame, factor: str, levels: Sequence[Level] | None = None) -> pd.Series:
    """The factor as an ordered categorical; rows whose level is not in `levels` are left as NaN."""
    raw = frame[factor]
    if raw.isna().any():
        row = raw.isna().to_numpy().nonzero()[0][0]
        raise DataError(f"column '{factor}'", f"row {row + 1} has no level", "fill in the factor's level")
    order = ordered_levels(raw, levels)
    if levels is not None:
        missing = [lv for lv in order if not (raw == lv).any()]
        if missing:
            raise DataError(
                f"column '{factor}'",
                f"level(s) {missing} asked for but absent from the data",
                f"choose among {ordered_levels(raw)}",
            )
    # levels outside an explicit list become NaN, dropped later
    kept = raw.astype(object).where(raw.isin(order))
    return pd.Series(pd.Categorical(kept, categories=order, ordered=True), index=frame.index, name=factor)


def design_frame(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    levels: dict[str, Sequence[Level]] | None = None,
) -> pd.DataFrame:
    """A clean copy with the response as float and each factor as an ordered categorical.

    Rows whose level is outside an explicit `levels` list are dropped (that is how a model is
    restricted to a range of levels). Every factor must keep at least two levels."""
    if not factors:
        raise DataError("factor", "no factor given", "name at least one factor column")
    require_columns(frame, [response, *factors])
    if len(set(factors)) != len(factors) or response in factors:
        raise DataError("factor", "a column is used twice", "give each factor once, and not the response")
    levels = levels or {}
    out = pd.DataFrame({response: numeric_column(frame, response)}, index=frame.index)
    for f in factors:
        out[f] = factor_column(frame, f, levels.get(f))
    out = out.dropna(subset=list(factors)).reset_index(drop=True)
    for f in factors:
        out[f] = out[f].cat.remove_unused_categories()
        if len(out[f].cat.categories) < 2:
            found = list(out[f].cat.categories)
            raise DataError(
                f"column '{f}'",
                f"only one level ({found[0] if found else 'none'}) — a factor needs at least two to compare",
                "add observations at another level, or analyse a different factor",
            )
    return out


def check_confidence(confidence: float) -> None:
    """DataError unless 0 < confidence < 1."""
    if not 0 < confidence < 1:
        raise DataError(
            "confidence", f"{confidence} is not between 0 and 1", "give a level such as 0.90, 0.95 or 0.99"
        )


def brief(levels: Sequence[Level], most: int = 6) -> str:
    """A list of levels short enough for a one-line error."""
    shown = ", ".join(map(str, levels[:most]))
    return f"[{shown}, … ({len(levels)} in all)]" if len(levels) > most else f"[{shown}]"
