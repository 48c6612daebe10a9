"""Load a campaign from YAML and turn every problem into one line: file:line: field.path: what and the fix."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from vnetbench.spec.models import Campaign
from vnetbench.spec.references import Loc, Problem, check_references


@dataclass(frozen=True)
class SpecError:
    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class SpecInvalid(Exception):
    """The spec cannot be used; `errors` holds one located message per problem."""

    def __init__(self, errors: list[SpecError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class LoadedSpec:
    campaign: Campaign
    text: str
    sha256: str
    source: str
    data: dict[str, Any]
    line_of: Callable[[Loc], int] = field(default=lambda loc: 0, compare=False, repr=False)

    def error(self, loc: Loc, message: str) -> SpecError:
        """A located error about this spec, for checks made after loading (plan, factors)."""
        return SpecError(self.source, self.line_of(loc), _dotted(loc), message)


class _LineMap:
    """Maps a location (keys and list indices) to the line it starts on in the YAML text."""

    def __init__(self, text: str, file: str) -> None:
        self.lines: dict[Loc, int] = {}
        self.duplicates: list[tuple[Loc, int, str]] = []
        root = yaml.compose(text)
        if root is not None:
            self._walk(root, ())

    def _walk(self, node: yaml.Node, loc: Loc) -> None:
        self.lines[loc] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = key_node.value
                if key in seen:
                    self.duplicates.append(((*loc, key), key_node.start_mark.line + 1, key))
                seen.add(key)
                self.lines[(*loc, key)] = key_node.start_mark.line + 1
                self._walk(value_node, (*loc, key))
                self.lines[(*loc, key)] = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*loc, index))

    def line(self, loc: Loc) -> int:
        while loc and loc not in self.lines:
            loc = loc[:-1]
        return self.lines.get(loc, 1)


def load_spec(path: Path | str) -> LoadedSpec:
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
        raise SpecInvalid([SpecError(str(path), 0, "", f"cannot read the spec: {err}")]) from None
    return parse_spec(text, str(path))


def parse_spec(text: str, source: str = "<spec>", overrides: dict[str, Any] | None = None) -> LoadedSpec:
    try:
        data = yaml.safe_load(text)
        lines = _LineMap(text, source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SpecInvalid([SpecError(source, line, "", f"not valid YAML: {problem}")]) from None
    if not isinstance(data, dict):
        raise SpecInvalid(
            [
                SpecError(
                    source,
                    1,
                    "",
                    "a campaign is a YAML mapping with keys name, topology, "
                    "measurements, patterns (and optional schedule)",
                )
            ]
        )
    if lines.duplicates:
        raise SpecInvalid(
            [
                SpecError(source, line, _dotted(loc), f"'{key}' appears twice here; keep one")
                for loc, line, key in lines.duplicates
            ]
        )
    if overrides:
        from vnetbench.spec.paths import apply_overrides

        data = apply_overrides(data, overrides)
    campaign = validate(data, source, lines.line)
    return LoadedSpec(campaign, text, hashlib.sha256(text.encode()).hexdigest(), source, data, lines.line)


def validate(data: dict[str, Any], source: str, line_of: Any = lambda loc: 0) -> Campaign:
    """Validate plain data as a Campaign; raise SpecInvalid with located, one-line errors."""
    try:
        campaign = Campaign.model_validate(data)
    except ValidationError as err:
        raise SpecInvalid(_pydantic_errors(err, data, source, line_of)) from None
    problems: list[Problem] = check_references(campaign)
    if problems:
        raise SpecInvalid([SpecError(source, line_of(p.loc), _dotted(p.loc), p.message) for p in problems])
    return campaign


def _pydantic_errors(err: ValidationError, data: Any, source: str, line_of: Any) -> list[SpecError]:
    out: list[SpecError] = []
    seen: set[tuple[str, str]] = set()
    for item in err.errors(include_url=False):
        loc = _real_loc(item["loc"], data)
        message = _explain(item, loc, data)
        key = (_dotted(loc), message)
        if key in seen:  # unions report one problem per member; say it once
            continue
        seen.add(key)
        out.append(SpecError(source, line_of(loc), _dotted(loc), message))
    return out


def _real_loc(loc: tuple[Any, ...], data: Any) -> Loc:
    """Drop pydantic's union-member tags (e.g. 'tcp', 'function-before[...]') from a location."""
    real: list[str | int] = []
    node = data
    for part in loc:
        in_mapping = isinstance(node, dict) and part in node
        in_sequence = isinstance(node, list | tuple) and isinstance(part, int) and part < len(node)
        if in_mapping or in_sequence:
            real.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and not _is_tag(part, node):
            real.append(part)  # a missing or unknown key: keep it, it names the field
            node = None
    return tuple(real)


def _is_tag(part: str, node: dict[str, Any]) -> bool:
    return part == node.get("kind") or "[" in part or part in {"str", "int", "float", "bool"}


def _explain(item: dict[str, Any], loc: Loc, data: Any) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        accepted = _accepted_keys(loc[:-1], data)
        return f"unknown key '{loc[-1]}'" + (f"; accepted here: {', '.join(accepted)}" if accepted else "")
    if kind == "missing":
        return "required field is missing"
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        ctx = item.get("ctx", {})
        return f"'kind' must be one of {ctx.get('expected_tags', '')}"
    message = item["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if kind == "string_pattern_mismatch" and loc and loc[-1] == "name":
        message = "must be 1–31 letters, digits, '-' or '_', starting with a letter"
    return message[0].lower() + message[1:] if message else message


def _accepted_keys(loc: Loc, data: Any) -> list[str]:
    """The field names the model at `loc` accepts (to tell a user what they could have meant)."""
    model: Any = Campaign
    node = data
    for part in loc:
        node = node[part] if isinstance(node, dict | list) else None
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) else None
        if field is None:
            return []
        model = _model_for(field.annotation, node)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(model.model_fields)
    return []


def _model_for(annotation: Any, node: Any) -> Any:
    """Find the BaseModel class inside an annotation (list[X], X | None, a tagged union)."""
    import typing

    candidates = []
    stack = [annotation]
    while stack:
        ann = stack.pop()
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            candidates.append(ann)
        stack.extend(typing.get_args(ann))
    if isinstance(node, list) and node:
        node = node[0]
    if isinstance(node, dict) and "kind" in node:
        for cand in candidates:
            field = cand.model_fields.get("kind")
            if field is not None and node["kind"] in typing.get_args(field.annotation):
                return cand
    return candidates[0] if candidates else None


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
