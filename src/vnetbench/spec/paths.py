"""Dotted paths into a spec (`measurements.tcp.congestion`, `topology.links.uplink.rate`).

Factors set spec fields by path; named list items are addressed by their name, others by index.
"""

from __future__ import annotations

import copy
from typing import Any


class PathError(ValueError):
    pass


def _step(container: Any, part: str, path: str) -> tuple[Any, Any]:
    """Return (container, key) for one path element."""
    if isinstance(container, dict):
        return container, part
    if isinstance(container, list):
        for index, item in enumerate(container):
            if isinstance(item, dict) and _item_name(item) == part:
                return container, index
        if part.isdigit() and int(part) < len(container):
            return container, int(part)
        names = [_item_name(i) for i in container if isinstance(i, dict) and _item_name(i)]
        raise PathError(f"'{path}': no item named '{part}' (known: {', '.join(names) or 'none'})")
    raise PathError(f"'{path}': '{part}' is inside a value that has no fields")


def _item_name(item: dict[str, Any]) -> str | None:
    if "name" in item:
        return str(item["name"])
    if "endpoints" in item and isinstance(item["endpoints"], list):  # links without a name
        return "-".join(str(e) for e in item["endpoints"])
    return None


def get_path(data: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (named list items by name); PathError naming the part not found."""
    node: Any = data
    for part in path.split("."):
        container, key = _step(node, part, path)
        try:
            node = container[key]
        except (KeyError, IndexError):
            return None
    return node


def path_loc(data: dict[str, Any], path: str) -> tuple[str | int, ...]:
    """The location a dotted path names, list items by index, as errors locate fields:
    'measurements.tcp.duration' -> ('measurements', 0, 'duration'); PathError as get_path."""
    loc: list[str | int] = []
    node: Any = data
    for part in path.split("."):
        container, key = _step(node, part, path)
        loc.append(key)
        try:
            node = container[key]
        except (KeyError, IndexError):
            node = {}  # a field not written yet: what is below it has no items to name
    return tuple(loc)


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted path, creating missing mappings on the way."""
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        container, key = _step(node, part, path)
        if isinstance(container, dict) and key not in container:
            container[key] = {}
        node = container[key]
    container, key = _step(node, parts[-1], path)
    container[key] = value


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of the data with every {path: value} set."""
    out = copy.deepcopy(data)
    for path, value in overrides.items():
        set_path(out, path, value)
    return out
