"""Load a campaign from YAML and turn every problem into one line: file:line: field.path: what and the fix."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from vnetbench.spec.errors import (
    Loc,
    SpecError,
    SpecInvalid,
    dotted,
    load_yaml,
    pydantic_errors,
)
from vnetbench.spec.inventory import inventory_text, load_inventory
from vnetbench.spec.models import Campaign
from vnetbench.spec.paths import PathError, apply_overrides
from vnetbench.spec.references import Problem, check_references


@dataclass(frozen=True)
class LoadedSpec:
    campaign: Campaign
    text: str
    sha256: str
    source: str
    data: dict[str, Any]
    line_of: Callable[[Loc], int] = field(default=lambda loc: 0, compare=False, repr=False)
    stored: bool = False  # a stored campaign's spec: checks added since it ran are skipped (is_stored)

    def error(self, loc: Loc, message: str) -> SpecError:
        """A located error about this spec, for checks made after loading (plan, factors)."""
        return SpecError(self.source, self.line_of(loc), dotted(loc), message)


def load_spec(
    path: Path | str, overrides: dict[str, Any] | None = None, inventory: Path | str | None = None
) -> LoadedSpec:
    """Load and validate a campaign file; SpecInvalid with every located error. An `inventory` file is
    appended to its text and `overrides` (--set) applied before anything is validated, so a value the
    file gets wrong but --set corrects is not refused, and --set can reach the inventory's fields."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise SpecInvalid(
            [
                SpecError(
                    str(path),
                    0,
                    "",
                    "no such file; give the path of a campaign YAML (or see `vnetbench scenarios list`)",
                )
            ]
        ) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as err:
        # was the bare OSError ("[Errno 21] Is a directory: '…'"), with no word of what to give instead
        why = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else err.strerror
        raise SpecInvalid(
            [
                SpecError(
                    str(path), 0, "", f"cannot read the spec ({why}); give the path of a campaign YAML file"
                )
            ]
        ) from None
    if inventory is not None:
        text = with_inventory_text(text, str(path), inventory)
    return parse_spec(text, str(path), overrides=overrides or None)


def parse_spec(
    text: str, source: str = "<spec>", overrides: dict[str, Any] | None = None, stored: bool = False
) -> LoadedSpec:
    """Validate a campaign's YAML text (with --set overrides applied first); SpecInvalid on any problem.
    `stored`: the text of a campaign in the store, which ran when these checks were older; the checks
    that refuse what was once accepted (a forgotten unit, a mesh of one node, …) are skipped, so its
    measurements stay readable (units.is_stored)."""
    data, lines = load_yaml(text, source, Campaign)
    if not isinstance(data, dict):
        raise SpecInvalid([SpecError(source, 1, "", f"{_what_it_is(data)}; {CAMPAIGN_SHAPE}")])
    if lines.duplicates:
        raise SpecInvalid(
            [
                SpecError(source, line, dotted(loc), f"'{key}' appears twice here; keep one")
                for loc, line, key in lines.duplicates
            ]
        )
    if overrides:
        try:
            data = apply_overrides(data, overrides)
        except PathError as err:  # a --set path that names no field or item: one located line, no traceback
            hint = "give the dotted path of a field, list items by name (topology.links.NAME.rate)"
            raise SpecInvalid([SpecError(source, 0, "--set", f"{err}; {hint}")]) from None
    try:
        campaign = validate(data, source, lines.line, stored)
    except SpecInvalid as err:
        if not overrides:
            raise
        # the line is the file's, the value may be the override's: say which overrides were applied
        sets = ", ".join(f"{path}={json.dumps(value)}" for path, value in overrides.items())
        raise SpecInvalid(
            [SpecError(e.file, e.line, e.path, f"{e.message} (with --set {sets})") for e in err.errors]
        ) from None
    if overrides:  # the text kept in the store is what runs: the report shows it, resume plans from it
        text = overridden_text(source, overrides, data)
    return LoadedSpec(
        campaign, text, hashlib.sha256(text.encode()).hexdigest(), source, data, lines.line, stored
    )


CAMPAIGN_SHAPE = (
    "a campaign is a YAML mapping with keys name, topology, measurements, patterns (and optional "
    "schedule): see `vnetbench scenarios show quickstart`"
)


def _what_it_is(data: Any) -> str:
    if data is None:
        return "the file is empty (or only comments)"
    if isinstance(data, list):
        return "the file is a list (its lines start with '- ')"
    return f"the file is a single value ({str(data)[:40]!r})"


def overridden_text(source: str, overrides: dict[str, Any], data: dict[str, Any]) -> str:
    """The spec with its --set values applied, as YAML, headed by the overrides. The file's own text
    was stored before: a campaign run with `--set topology.links.wan.rate=10mbit` kept the file's
    rate in its spec, so its report showed that rate and `resume` ran the rest of it at that rate."""
    sets = "".join(f"#   --set {path}={json.dumps(value)}\n" for path, value in overrides.items())
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110, default_flow_style=None)
    return f"# {source} as run, with:\n{sets}{body}"


def validate(
    data: dict[str, Any], source: str, line_of: Any = lambda loc: 0, stored: bool = False
) -> Campaign:
    """Validate plain data as a Campaign; raise SpecInvalid with located, one-line errors."""
    try:
        campaign = Campaign.model_validate(data, context={"stored": stored})
    except ValidationError as err:
        raise SpecInvalid(pydantic_errors(err, data, source, line_of, Campaign)) from None
    problems: list[Problem] = check_references(campaign, stored)
    if problems:
        raise SpecInvalid([SpecError(source, line_of(p.loc), dotted(p.loc), p.message) for p in problems])
    return campaign


def spec_of(campaign_row: dict[str, Any]) -> Campaign:
    """The stored spec of a campaign row as a validated model (it was valid when the campaign ran)."""
    source = campaign_row.get("spec_source") or "<stored spec>"
    return parse_spec(campaign_row["spec_text"], source, stored=True).campaign


def with_inventory_text(text: str, source: str, path: Path | str) -> str:
    """A campaign's text with an inventory file appended (stored, so resume finds it)."""
    load_inventory(path)  # errors point at the inventory file's own lines
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None  # parse_spec reports the file's own YAML error, located
    if isinstance(data, dict) and "inventory" in data:
        line = next((i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("inventory:")), 0)
        raise SpecInvalid(
            [
                SpecError(
                    source,
                    line,
                    "inventory",
                    "the campaign has an inventory and --inventory was given; keep one",
                )
            ]
        )
    return text.rstrip("\n") + f"\n# appended from --inventory {Path(path).name}\n" + inventory_text(path)
