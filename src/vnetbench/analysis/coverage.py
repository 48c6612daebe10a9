"""What a campaign that is not finished covers: its ok and failed measurements against its plan, and
whether its vnetbench still runs. One computation for the note `analyze`, `loss`, `export`, `compare`
and `report` print on stderr (cli/common.unfinished_note) and the banner at the top of its HTML report
(report/html.py), so the two never disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Coverage:
    campaign_id: str
    name: str
    status: str
    ok: int
    failed: int  # measurements whose latest attempt is not ok
    planned: int | None  # None: its stored spec no longer gives a plan (said elsewhere, with the fix)
    pid: int | None = None  # its controlling process, alive on this machine
    elsewhere: tuple[str, int] | None = None  # (host, pid) of a run from another machine

    @property
    def not_run(self) -> int | None:
        """Planned measurements with no attempt stored yet."""
        return None if self.planned is None else max(0, self.planned - self.ok - self.failed)

    @property
    def state(self) -> str:
        """'interrupted, not finished', 'still running (its controlling process, pid 42)', …"""
        if self.pid is not None:
            return f"still running (its controlling process, pid {self.pid})"
        if self.elsewhere:  # its pid is another machine's: it said "its process is gone"
            host, pid = self.elsewhere
            return f"stored as running on {host} (its controlling process, pid {pid}), not on this machine"
        if self.status == "running":  # killed with SIGKILL, or the machine rebooted
            return "stored as running, but its process is gone"
        return f"{self.status}, not finished"

    @property
    def runs(self) -> bool:
        """Whether a vnetbench may still be measuring it (here or on another machine)."""
        return self.pid is not None or self.elsewhere is not None

    def rest(self, location: str, what: str = "measures the rest") -> str:
        """How to get the rest: resume it, or (while it runs) wait."""
        if self.runs:
            return "run this again when it has finished"
        return f"`vnetbench resume {self.campaign_id} --db {location}` {what}"

    def counts_text(self) -> str:
        """'14 ok of 26 planned measurements: 3 failed, 9 not run' (without a plan: '14 ok measurements,
        3 failed')."""
        if self.planned is None:
            return f"{self.ok} ok measurements, {self.failed} failed"
        of = f"{self.ok} ok of {self.planned} planned measurements"
        return f"{of}: {self.failed} failed, {self.not_run} not run"


def coverage(store: Any, row: dict[str, Any], frame: pd.DataFrame | None = None) -> Coverage | None:
    """The coverage of a campaign that is not finished; None for a finished one, or a monitor's (never
    done). `frame`: its measurements_frame, if already read."""
    # the plan of the stored spec and the process checks: only for such a campaign
    from vnetbench.plan import make_plan
    from vnetbench.providers.cleanup import running_elsewhere, still_running
    from vnetbench.spec.errors import SpecInvalid
    from vnetbench.spec.loader import parse_spec
    from vnetbench.store.monitoring import MonitorStore

    if row["status"] == "finished" or MonitorStore(store).is_monitored(row["id"]):
        return None
    frame = store.measurements_frame(row["id"]) if frame is None else frame
    ok = int((frame["status"] == "ok").sum()) if not frame.empty else 0
    failed = int((frame["status"] != "ok").sum()) if not frame.empty else 0
    try:
        spec = parse_spec(row["spec_text"], row["spec_source"], stored=True)
        planned: int | None = make_plan(spec, row["id"], row["seed"]).measurement_count
    except SpecInvalid:
        planned = None
    return Coverage(
        row["id"], row["name"], row["status"], ok, failed, planned,
        still_running(store, row["id"]), running_elsewhere(row),
    )  # fmt: skip
