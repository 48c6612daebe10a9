"""Located errors of a spec or inventory file: file:line: field.path: what is wrong and the fix.

`LineMap` finds the line a location (keys and list indices) starts on in the YAML text;
`pydantic_errors` turns pydantic's errors into one located line each, naming accepted keys for a
misspelt one. Used by the campaign loader and the inventory loader alike.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

Loc = tuple[str | int, ...]


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


# libyaml's parser where PyYAML was built with it: a 1,000-node campaign file parses ~10x faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LineMap:
    """Maps a location (keys and list indices) to the line it starts on in the YAML text."""

    def __init__(self, text: str, file: str) -> None:
        self.lines: dict[Loc, int] = {}
        self.duplicates: list[tuple[Loc, int, str]] = []
        root = yaml.compose(text, Loader=SAFE_LOADER)
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


DATETIME_HELP = "expected an ISO-8601 time like 2026-12-11T00:00:00Z (UTC if no zone is given)"


def pydantic_errors(
    err: ValidationError, data: Any, source: str, line_of: Any, root: type[BaseModel]
) -> list[SpecError]:
    """One located error per problem pydantic found validating `data` as `root`."""
    out: list[SpecError] = []
    seen: set[tuple[str, str]] = set()
    for item in err.errors(include_url=False):
        loc = _real_loc(item["loc"], data)
        message = _explain(item, loc, data, root)
        key = (dotted(loc), message)
        if key in seen:  # unions report one problem per member; say it once
            continue
        seen.add(key)
        out.append(SpecError(source, line_of(loc), dotted(loc), message))
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


def _explain(item: dict[str, Any], loc: Loc, data: Any, root: type[BaseModel]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        accepted = _accepted_keys(loc[:-1], data, root)
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
    if kind.startswith("datetime"):  # 'input is too short' alone does not say what a time looks like
        given = f"{item.get('input')!r} is not a time: " if isinstance(item.get("input"), str) else ""
        message = f"{given}{message[0].lower()}{message[1:]}; {DATETIME_HELP}"
    return message[0].lower() + message[1:] if message else message


def _accepted_keys(loc: Loc, data: Any, root: type[BaseModel]) -> list[str]:
    """The field names the model at `loc` accepts (to tell a user what they could have meant)."""
    model: Any = root
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


def dotted(loc: Loc) -> str:
    """A location as the user writes it: topology.links[2].rate."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
