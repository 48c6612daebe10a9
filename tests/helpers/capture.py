"""Real tool outputs captured for these tests live in tests/data/tool_output/ (see each *.meta.json)."""

from __future__ import annotations

import json
from pathlib import Path

from vnetbench.drivers.base import Output

DATA = Path(__file__).resolve().parents[1] / "data" / "tool_output"


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def iperf3_capture(name: str) -> tuple[Output, Output | None, dict]:
    """(client, server or None, meta) of a captured iperf3 run."""
    d = DATA / "iperf3"
    meta = json.loads((d / f"{name}.meta.json").read_text())
    client = Output(
        _text(d / f"{name}.client.json"), _text(d / f"{name}.client.stderr"), meta["client_returncode"]
    )
    server = None
    if meta["server_argv"]:
        server = Output(
            _text(d / f"{name}.server.json"), _text(d / f"{name}.server.stderr"), meta["server_returncode"]
        )
    return client, server, meta


def iperf3_json(name: str, role: str = "client") -> dict:
    return json.loads((DATA / "iperf3" / f"{name}.{role}.json").read_text())


def ping_capture(name: str) -> tuple[Output, dict]:
    d = DATA / "ping"
    meta = json.loads((d / f"{name}.meta.json").read_text())
    return Output(_text(d / f"{name}.stdout"), _text(d / f"{name}.stderr"), meta["returncode"]), meta


def probe_capture(name: str) -> tuple[Output, Output | None, dict]:
    """(client, server or None, meta) of a captured vnb-probe run (tests/data/tool_output/vnb-probe)."""
    d = DATA / "vnb-probe"
    meta = json.loads((d / f"{name}.meta.json").read_text())
    client = Output(_text(d / f"{name}.client.stdout"), _text(d / f"{name}.client.stderr"), 0)
    server = None
    if meta.get("server_argv"):
        server = Output(
            _text(d / f"{name}.server.stdout"),
            _text(d / f"{name}.server.stderr"),
            meta.get("server_returncode", 0),
        )
    return client, server, meta
