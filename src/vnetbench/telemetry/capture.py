"""Packet captures during a measurement (`telemetry.capture` in the spec): tcpdump on chosen interfaces.

A capture that cannot start (no tcpdump, an unknown node) is an event on the flows, never an error.
Files go beside the store: captures/<campaign>/<step>-a<attempt>-<node>-<interface>.pcap.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vnetbench.layout import Layout
from vnetbench.layout.flowpath import FlowPath
from vnetbench.providers.base import Provider, ToolProcess
from vnetbench.spec.models import Telemetry
from vnetbench.store.records import CaptureFile, Event, MeasurementRecord

CAPTURE_READY_S = 2.0


@dataclass
class Capture:
    node: str
    interface: str
    file: Path
    snaplen: int
    packets: int
    proc: ToolProcess | None = None

    def stored(self) -> CaptureFile:
        """What the store keeps of it (after it stopped: its size is final)."""
        size = self.file.stat().st_size if self.file.exists() else None
        return CaptureFile(self.node, self.interface, str(self.file), self.snaplen, self.packets, size)


class CapturedFlow(Protocol):
    """A flow as captures see it: its record, its path and the captures taken on its ends."""

    record: MeasurementRecord
    path: FlowPath
    captures: list[Capture]


def capture_dir(store_location: str | None, campaign_id: str) -> Path:
    """captures/<campaign> beside a SQLite store (else under the working directory)."""
    loc = store_location
    base = Path(loc).expanduser().resolve().parent if loc and "://" not in loc else Path.cwd()
    return base / "captures" / (campaign_id or "campaign")


def start_or_note(
    provider: Provider, directory: Path, config: Telemetry, layout: Layout, flows: list[CapturedFlow]
) -> list[Capture]:
    """Start the captures; one that cannot start (no tcpdump, unknown node) is an event, not an error."""
    assert config.capture is not None
    problems = [
        f"capture: no node '{item.partition(':')[0]}' in the topology (telemetry.capture.interfaces)"
        for item in config.capture.interfaces
        if item.partition(":")[0] not in layout.node_ns
    ]
    captures: list[Capture] = []
    try:
        captures = _start(provider, directory, config, flows)
    except Exception as err:
        problems.append(f"capture not started: {err}")
    for flow in flows:
        flow.record.events.extend(Event("telemetry_error", p) for p in problems)
    return captures


def _wanted(config: Telemetry, flows: list[CapturedFlow]) -> list[tuple[str, str]]:
    """(node, interface) of every capture asked for on the flows' own ends."""
    assert config.capture is not None
    layout_ifs: dict[str, list[str]] = {}
    for flow in flows:
        for node, ns in ((flow.record.src, flow.path.src_ns), (flow.record.dst, flow.path.dst_ns)):
            layout_ifs.setdefault(node, [h.name for h in flow.path.hops if h.ns == ns])
    wanted: list[tuple[str, str]] = []
    for item in config.capture.interfaces:
        node, _, ifname = item.partition(":")
        for name in layout_ifs.get(node, []):
            if (not ifname or ifname == name) and (node, name) not in wanted:
                wanted.append((node, name))
    return wanted


def _start(
    provider: Provider, directory: Path, config: Telemetry, flows: list[CapturedFlow]
) -> list[Capture]:
    assert config.capture is not None
    directory.mkdir(parents=True, exist_ok=True)
    step = re.sub(r"[^A-Za-z0-9_.-]+", "_", flows[0].record.step_key)[:80]
    out: list[Capture] = []
    for node, ifname in _wanted(config, flows):
        cap = Capture(
            node,
            ifname,
            directory / f"{step}-a{flows[0].record.attempt}-{node}-{ifname}.pcap",
            int(config.capture.snaplen),
            config.capture.packets,
        )
        argv = ["tcpdump", "-i", ifname, "-s", str(cap.snaplen), "-c", str(cap.packets)]
        argv += ["-w", str(cap.file), "-U", "-n", "-Z", "root"]
        try:
            cap.proc = provider.spawn(node, argv)
        except BaseException:
            stop(out)
            raise
        out.append(cap)
        for flow in flows:
            if node in (flow.record.src, flow.record.dst):
                flow.captures.append(cap)
    deadline = time.monotonic() + CAPTURE_READY_S
    while any(not c.file.exists() for c in out) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05 if out else 0)  # tcpdump opens the file just before it starts capturing
    return out


def stop(captures: list[Capture]) -> None:
    """SIGTERM every tcpdump (it flushes and exits), then make sure it is gone."""
    for cap in captures:
        if cap.proc is None:
            continue
        if cap.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(cap.proc.pid, signal.SIGTERM)
        cap.proc.wait(2.0)
        cap.proc.kill()
