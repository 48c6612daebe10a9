"""Located errors of a spec or inventory file: file:line: field.path: what is wrong and the fix.

`LineMap` finds the line a location (keys and list indices) starts on in the YAML text;
`pydantic_errors` turns pydantic's errors into one located line each, naming accepted keys for a
misspelt one. Used by the campaign loader and the inventory loader alike.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import re
import typing
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from vnetbench.spec.units import format_duration, parse_duration_ns

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


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_STR_TAG = "tag:yaml.org,2002:str"
_TIMES = yaml.constructor.SafeConstructor()  # its construct_yaml_timestamp keeps nothing


@dataclass(frozen=True)
class ImpossibleTime:
    """A value YAML reads as a date or time (2026-02-30, unquoted) that does not exist."""

    loc: Loc
    line: int
    text: str
    why: str  # Python's reason: 'day is out of range for month'


def _scalar(node: yaml.ScalarNode) -> Any:
    """A scalar node's value as YAML loads it (a constructor of its own: they cache what they built)."""
    return yaml.constructor.SafeConstructor().construct_object(node)


class LineMap:
    """Maps a location (keys and list indices) to the line it starts on in the YAML text."""

    def __init__(self, text: str, file: str) -> None:
        self.lines: dict[Loc, int] = {}
        self.duplicates: list[tuple[Loc, int, str]] = []
        self.impossible_times: list[ImpossibleTime] = []  # found before loading: YAML raises on the first
        root = yaml.compose(text, Loader=SAFE_LOADER)
        if root is not None:
            self._walk(root, ())

    def _walk(self, node: yaml.Node, loc: Loc) -> None:
        self.lines[loc] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode) and node.tag == _TIMESTAMP_TAG:
            try:
                _TIMES.construct_yaml_timestamp(node)
            except ValueError as err:
                self.impossible_times.append(
                    ImpossibleTime(loc, node.start_mark.line + 1, node.value, str(err))
                )
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                key = key_node.value
                if key in seen:
                    self.duplicates.append(((*loc, key), key_node.start_mark.line + 1, key))
                seen.add(key)
                self.lines[(*loc, key)] = key_node.start_mark.line + 1
                if key_node.tag != _STR_TAG and isinstance(key_node, yaml.ScalarNode):
                    # `5:` or `on:` is the key 5 or True in the data (and in pydantic's location)
                    with contextlib.suppress(ValueError, yaml.YAMLError):
                        self.lines[(*loc, _scalar(key_node))] = key_node.start_mark.line + 1
                self._walk(value_node, (*loc, key))
                self.lines[(*loc, key)] = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*loc, index))

    def line(self, loc: Loc) -> int:
        while loc and loc not in self.lines:
            loc = loc[:-1]
        return self.lines.get(loc, 1)


_OPENERS = {"flow sequence": "'['", "flow mapping": "'{'", "quoted scalar": "quote"}


def yaml_error(err: yaml.YAMLError, text: str, source: str) -> SpecError:
    """A YAML syntax error as one located line that says what to change: a tab that indents, a Markdown
    fence copied with the example, a bracket or quote left open (and where it was opened)."""
    mark = getattr(err, "problem_mark", None)
    line = mark.line + 1 if mark else 0
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    lines = text.splitlines()
    here = lines[mark.line] if mark and mark.line < len(lines) else ""
    char = here[mark.column] if mark and mark.column < len(here) else ""
    column = f" (column {mark.column + 1})" if mark else ""
    if "cannot start any token" in problem and char == "\t":
        return SpecError(
            source, line, "", f"not valid YAML: a tab{column}; YAML indents with spaces only: replace the tab"
        )
    if "cannot start any token" in problem and char == "`":
        return SpecError(
            source,
            line,
            "",
            f"not valid YAML: '`'{column} cannot start a value; a Markdown fence (```) copied with an "
            "example? remove it, or quote the value",
        )
    if "cannot start any token" in problem and char:
        return SpecError(
            source, line, "", f"not valid YAML: {char!r}{column} cannot start a value; quote the value"
        )
    context, opened = getattr(err, "context", None) or "", getattr(err, "context_mark", None)
    what = next((sign for name, sign in _OPENERS.items() if name in context), None)
    if what and opened is not None:
        where = "line" if opened.line + 1 != line else "this line"
        where += f" {opened.line + 1}" if opened.line + 1 != line else ""
        return SpecError(
            source,
            line,
            "",
            f"not valid YAML: {problem}{column}: the {what} opened on {where} (column {opened.column + 1}) "
            "is not closed; close it",
        )
    return SpecError(source, line, "", f"not valid YAML: {problem}{column}")


DATETIME_HELP = "expected an ISO-8601 time like 2026-12-11T00:00:00Z (UTC if no zone is given)"


def load_yaml(text: str, source: str, root: type[BaseModel] | None = None) -> tuple[Any, LineMap]:
    """The data of a YAML text and its line map; SpecInvalid, located, for a syntax error or a date
    that does not exist (YAML's date constructor raised ValueError: a traceback before). `root`: the
    model the data is for, to tell a field that takes a time from one where a date-like text was meant."""
    try:
        lines = LineMap(text, source)
        return yaml.load(text, Loader=SAFE_LOADER), lines  # safe: CSafeLoader or SafeLoader
    except yaml.YAMLError as err:
        raise SpecInvalid([yaml_error(err, text, source)]) from None
    except ValueError as err:
        found = [_time_error(t, source, root) for t in lines.impossible_times]
        raise SpecInvalid(found or [SpecError(source, 0, "", f"not valid YAML: {err}")]) from None


def _time_error(t: ImpossibleTime, source: str, root: type[BaseModel] | None) -> SpecError:
    if root is not None and _takes_time(_annotation_at(t.loc, None, root)[0]):
        message = (
            f"{t.text} is not a real date or time ({t.why}); write one that exists, e.g. 2026-12-11T00:00:00Z"
        )
    else:
        message = (
            f"YAML reads {t.text} as a date, which does not exist ({t.why}); write a real date, "
            f"or quote it ('{t.text}') if it is text"
        )
    return SpecError(source, t.line, dotted(t.loc), message)


def _takes_time(annotation: Any) -> bool:
    return annotation is dt.datetime or any(_takes_time(a) for a in typing.get_args(annotation))


def pydantic_errors(
    err: ValidationError, data: Any, source: str, line_of: Any, root: type[BaseModel]
) -> list[SpecError]:
    """One located error per problem pydantic found validating `data` as `root`."""
    items = [(_real_loc(item["loc"], data), item) for item in err.errors(include_url=False)]
    items = [(loc, item) for loc, item in items if not _misspelt(loc, item, items)]
    messages: dict[Loc, list[str]] = {}
    keys: set[Loc] = set()  # `5:` where a text key goes: on the key's line, at the mapping's path
    for loc, item in items:
        if loc and (item["type"] == "invalid_key" or item["loc"][-1] == "[key]"):
            key = item.get("input", loc[-1])  # the key as read (pydantic's location has True as 1)
            loc, message = (*loc[:-1], key), _key_error(loc[:-1], key, data, root)
            keys.add(loc)
        else:
            loc, message = _explain(item, loc, data, root)
        said = messages.setdefault(loc, [])
        if message not in said:  # unions report one problem per member; say it once
            said.append(message)
    out: list[SpecError] = []
    for loc, said in messages.items():
        for message in _union_alternatives(said):
            out.append(SpecError(source, line_of(loc), dotted(loc[:-1] if loc in keys else loc), message))
    return out


def _key_kind(key: Any) -> str:
    if isinstance(key, bool):
        return "a yes/no value (YAML reads on, off, yes, no, true and false so)"
    if isinstance(key, int | float):
        return "a number"
    if key is None:
        return "empty (null)"
    return f"a {type(key).__name__}"  # a date (2026-01-01:)


def _key_error(parent: Loc, key: Any, data: Any, root: type[BaseModel]) -> str:
    """A key that YAML read as a number, a yes/no value, … where a text key is needed."""
    text = str(key).lower() if isinstance(key, bool) else ("null" if key is None else str(key))
    said = f"the key {text} is {_key_kind(key)}"
    annotation = _annotation_at(parent, data, root)[0]
    accepted = _accepted_keys(parent, data, root)
    if accepted and not _is_dict(annotation):
        return f"{said}, not a field name; accepted here: {', '.join(accepted)}"
    return f"{said}; keys here are names: quote it ('{text}') if it is one"


def _is_dict(annotation: Any) -> bool:
    """A mapping of names (dict[str, …]), through Annotated and unions."""
    if typing.get_origin(annotation) is dict:
        return True
    if (
        typing.get_origin(annotation) in (typing.Union, typing.Annotated)
        or type(annotation).__name__ == "UnionType"
    ):
        return any(_is_dict(a) for a in typing.get_args(annotation))
    return False


def _misspelt(loc: Loc, item: dict[str, Any], items: list[tuple[Loc, dict[str, Any]]]) -> bool:
    """A required field reported missing beside an unknown key that is its misspelling
    (`measurments:`): the unknown key's error says it all ("did you mean 'measurements'?")."""
    if item["type"] != "missing" or not loc or not isinstance(loc[-1], str):
        return False
    unknown = [
        other[-1]
        for other, it in items
        if it["type"] == "extra_forbidden" and other[:-1] == loc[:-1] and isinstance(other[-1], str)
    ]
    return any(loc[-1] in _close(key, [loc[-1]]) for key in unknown)


def _close(word: str, choices: list[str]) -> list[str]:
    return difflib.get_close_matches(word, choices, n=1, cutoff=0.6)


def _did_you_mean(word: str, choices: list[str]) -> str:
    """ "; did you mean 'rate'?" for the choice closest to word, or "" when none is close."""
    near = _close(word, choices)
    return f"; did you mean '{near[0]}'?" if near else ""


def _union_alternatives(messages: list[str]) -> list[str]:
    """A value refused by every member of a union (a rate, or the word 'link') in one message:
    "'fast' is not a rate; expected …, or 'link'" rather than two lines that each forget the other."""
    literals = [m for m in messages if m.startswith(_LITERAL)]
    others = [m for m in messages if not m.startswith(_LITERAL)]
    if not literals or not others:
        return messages
    words = " or ".join(m.removeprefix(_LITERAL).split(", got ")[0] for m in literals)
    return [f"{others[0]}, or {words}", *others[1:]]


_LITERAL = "input should be "


def _real_loc(loc: tuple[Any, ...], data: Any) -> Loc:
    """Drop pydantic's union-member tags (e.g. 'tcp', 'function-before[...]') from a location."""
    real: list[str | int] = []
    node = data
    tagged = None  # the mapping whose union tag was skipped: `kind: pairs` tags 'pairs' before its `pairs:`
    for part in loc:
        if isinstance(node, dict) and part == node.get("kind") and tagged is not node:
            tagged = node
            continue
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


def _explain(item: dict[str, Any], loc: Loc, data: Any, root: type[BaseModel]) -> tuple[Loc, str]:
    """The location to report and the message: what is wrong, and what to write instead."""
    kind = item["type"]
    given = item.get("input")
    if kind == "extra_forbidden":
        accepted = _accepted_keys(loc[:-1], data, root)
        hint = _did_you_mean(str(loc[-1]), accepted)
        listed = f"{' ' if hint else '; '}accepted here: {', '.join(accepted)}" if accepted else ""
        return loc, f"unknown key '{loc[-1]}'{hint}{listed}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return _kind_error(item, loc, data, root)
    if kind == "missing" and isinstance(item["loc"][-1], int) and isinstance(given, list | tuple):
        # a fixed-length list (a link's endpoints, a [source, destination] pair) given too few items
        return loc, (
            f"has {len(given)} item{'s' if len(given) != 1 else ''}, needs {item['loc'][-1] + 1}: "
            f"give every one, e.g. [{', '.join(chr(ord('a') + k) for k in range(item['loc'][-1] + 1))}]"
        )
    if kind == "missing":
        return loc, "required field is missing"
    if kind in _EXPECTED:
        return loc, _type_error(kind, given, loc, data) + _field_help(loc, data, root)
    message = item["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = re.sub(r"^(List|Tuple) should have", "must have", message.replace(" after validation", ""))
    if kind == "string_pattern_mismatch" and loc and loc[-1] == "name":
        message = "must be 1–31 letters, digits, '-' or '_', starting with a letter"
        message += f", got {given!r}" if isinstance(given, str) else ""
    elif kind.startswith("datetime"):  # 'input is too short' alone does not say what a time looks like
        given_text = f"{given!r} is not a time: " if isinstance(given, str) else ""
        message = f"{given_text}{message[0].lower()}{message[1:]}; {DATETIME_HELP}"
    elif kind == "literal_error":
        choices = re.findall(r"'([^']*)'", item.get("ctx", {}).get("expected", ""))
        message += f", got {given!r}" + _did_you_mean(str(given), choices)
    elif kind in _BOUNDS and not isinstance(given, dict | list):
        message = _duration_bound(kind, item, loc, data, root) or message + f", got {given!r}"
        message += _field_help(loc, data, root)
    return loc, message[0].lower() + message[1:] if message else message


_BOUNDS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
_BOUND_WORDS = {
    "greater_than": "more than",
    "greater_than_equal": "at least",
    "less_than": "less than",
    "less_than_equal": "at most",
}


def _duration_bound(
    kind: str, item: dict[str, Any], loc: Loc, data: Any, root: type[BaseModel]
) -> str | None:
    """'must be at least 50 ms, got 40 ms' for a duration field: pydantic checks the bound on the
    parsed nanoseconds and would say 'greater than or equal to 50000000, got 40000000'."""
    model = _model_for(*_annotation_at(loc[:-1], data, root)) if loc and isinstance(loc[-1], str) else None
    field = model.model_fields.get(loc[-1]) if isinstance(model, type) else None
    limit = next(iter(item.get("ctx", {}).values()), None)
    takes_duration = field is not None and any(
        getattr(m, "func", None) is parse_duration_ns for m in field.metadata
    )
    if not takes_duration or not isinstance(limit, int | float):
        return None
    given = item.get("input")
    got = format_duration(given) if isinstance(given, int | float) else repr(given)
    return f"must be {_BOUND_WORDS[kind]} {format_duration(limit)}, got {got}"


_EXPECTED = {  # pydantic's type errors, as what the field needs
    "model_type": "a mapping of keys (key: value lines, or {key: value})",
    "model_attributes_type": "a mapping of keys (key: value lines, or {key: value})",
    "dict_type": "a mapping of keys (key: value lines, or {key: value})",
    "list_type": "a list ('- item' lines, or [a, b])",
    "tuple_type": "a list like [a, b]",
    "string_type": "a text value",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def _type_error(kind: str, given: Any, loc: Loc, data: Any) -> str:
    """'expected a list …, got a mapping' — with the usual way the value was meant to be written."""
    message = f"expected {_EXPECTED[kind]}, got {_describe(given)}"
    if (
        isinstance(given, str)
        and re.fullmatch(r"[A-Za-z_][\w-]*:\S.*", given)
        and "mapping" in _EXPECTED[kind]
    ):
        key, value = given.split(":", 1)
        message += f"; YAML needs a space after a key's colon: write '{key}: {value}'"
    odd = [k for k in given if not isinstance(k, str)] if isinstance(given, dict) else []
    if kind == "list_type" and odd:  # `links: {1: …, 2: …}`: a numbered list written as keys
        message += (
            f" whose keys are like {odd[0]!r} ({_key_kind(odd[0])}); write each item on a line of its own "
            f"starting with '- ', instead of '{odd[0]}:'"
        )
    parent = _node_at(loc[:-1], data) if loc and isinstance(loc[-1], int) else None
    if kind == "tuple_type" and isinstance(parent, list) and all(isinstance(x, str) for x in parent):
        message += (
            f"; each item is itself a list: write [[{', '.join(parent[:2])}]], not [{', '.join(parent[:2])}]"
        )
    return message


def _field_help(loc: Loc, data: Any, root: type[BaseModel]) -> str:
    """'; cpu: CPU quota as a fraction of one core …': the field's own description, where it has one."""
    if not loc or not isinstance(loc[-1], str):
        return ""
    model = _model_for(*_annotation_at(loc[:-1], data, root))
    field = model.model_fields.get(loc[-1]) if isinstance(model, type) else None
    return f"; {loc[-1]}: {field.description}" if field is not None and field.description else ""


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (the value is empty)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a yes/no value)"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, dict):
        return "a mapping (key: value)"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    return repr(value)


def _node_at(loc: Loc, data: Any) -> Any:
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _kind_error(item: dict[str, Any], loc: Loc, data: Any, root: type[BaseModel]) -> tuple[Loc, str]:
    """A tagged union's `kind` that is missing or not one of its kinds, located at the `kind` key."""
    tags = _kind_tags(_annotation_at(loc, data, root)[0])
    one_of = f"'kind' must be one of {', '.join(repr(t) for t in tags)}"
    given = item.get("input")
    if isinstance(given, dict) and "kind" in given:
        hint = _did_you_mean(str(given["kind"]), tags)
        return (*loc, "kind"), f"{one_of}, got {given['kind']!r}{hint}"
    return (*loc, "kind"), f"required field is missing: {one_of}"


def _kind_tags(annotation: Any) -> list[str]:
    tags: list[str] = []
    for model in _models_in(annotation):
        field = model.model_fields.get("kind")
        if field is not None:
            tags += [t for t in typing.get_args(field.annotation) if isinstance(t, str) and t not in tags]
    return tags


def _accepted_keys(loc: Loc, data: Any, root: type[BaseModel]) -> list[str]:
    """The field names the model at `loc` accepts (to tell a user what they could have meant)."""
    model = _model_for(*_annotation_at(loc, data, root))
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(model.model_fields)
    return []


def _annotation_at(loc: Loc, data: Any, root: type[BaseModel]) -> tuple[Any, Any]:
    """The type annotation of the value at `loc`, and that value (None where the data has none).
    Each list item picks its own member of a tagged union (measurements[1] may be udp, [0] tcp)."""
    annotation: Any = root
    node = data
    for part in loc:
        if isinstance(part, str):
            model = _model_for(annotation, node)
            field = model.model_fields.get(part) if isinstance(model, type) else None
            if field is None:
                return None, None
            annotation = field.annotation
        node = _node_at((part,), node)
    return annotation, node


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Every BaseModel class inside an annotation (list[X], X | None, a tagged union)."""
    candidates = []
    stack = [annotation]
    while stack:
        ann = stack.pop(0)  # in the order written: a union's kinds as the models list them
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            candidates.append(ann)
        stack.extend(typing.get_args(ann))
    return candidates


def _model_for(annotation: Any, node: Any) -> Any:
    """The BaseModel class inside an annotation that describes `node` (by its `kind` in a union)."""
    candidates = _models_in(annotation)
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
