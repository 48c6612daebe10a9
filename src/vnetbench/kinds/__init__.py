"""Measurement kinds: one module per kind, each defining `KIND`, an instance of `base.Kind`.

    kind = kind_of("udp")
    kind.driver                          # the tool (drivers/): commands and parsing
    kind.planned_ns(m)                   # how long it runs
    kind.sweep(m)                        # the steps one pattern step becomes (pps: sizes × rates)
    kind.offered(m, path, params)        # payload rate offered (udp, probe flows)
    kind.expected_max_bps(m, path, params)  # overhead-model maximum (overhead.py)
    kind.path_problem(m, path, src, dst) # plan-time check (udp `rate: link` needs a shaped link)
    kind.unfragmented_sizes(m)           # probe sizes the path's MTU must carry whole (plan check)
    kind.datagram_bytes(m)               # telemetry's fragments per datagram
    kind.background_pairs(m)             # flows it adds beside a pattern's steps (background)

A module in this package with a `KIND` is a kind: adding one never edits the plan, the runner or
this file (docs/architecture.md has a worked example). Its spec model goes in spec/models.py.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

from vnetbench.drivers.base import Driver
from vnetbench.kinds.base import Kind, Offered, Params, PathFacts, SweepPoint


def _discover() -> dict[str, Kind]:
    found: dict[str, Kind] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if isinstance(kind, Kind):
            found[kind.name] = kind
    return found


KINDS: dict[str, Kind] = _discover()
DRIVERS: dict[str, Driver] = {name: kind.driver for name, kind in KINDS.items()}  # kind -> its tool


def kind_of(name: str) -> Kind:
    """The measurement kind named so; KeyError listing the known ones otherwise."""
    try:
        return KINDS[name]
    except KeyError:
        raise KeyError(f"no measurement kind '{name}' (known: {', '.join(sorted(KINDS))})") from None


def driver_for(kind: str) -> Driver:
    """The driver (tool) of a measurement kind."""
    try:
        return DRIVERS[kind]
    except KeyError:
        raise KeyError(
            f"no tool driver for measurement kind '{kind}' (known: {', '.join(sorted(DRIVERS))})"
        ) from None


def offered(m: Any, params: Mapping[str, Any] | None = None, path: PathFacts | None = None) -> Offered | None:
    """(offered payload bit/s, payload bytes) of a measurement at a sweep point, on a path if known."""
    return kind_of(m.kind).offered(m, path, params or {})


__all__ = [
    "DRIVERS",
    "KINDS",
    "Kind",
    "Offered",
    "Params",
    "PathFacts",
    "SweepPoint",
    "driver_for",
    "kind_of",
    "offered",
]
