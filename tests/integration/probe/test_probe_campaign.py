"""vnb-probe through the whole chain (CLI → plan → local provider → drivers → store → report), as root.

One campaign (module fixture, ~40 s) on a Linux bridge:
  a ──┐                       (unshaped)
      sw ──tbf 100 mbit── b   (the switch port shapes towards b: downstream of the sender's socket)
  c ──┘ ── d                  (c→d: background, 1000 pps, during every step of the sweep)
  half (cpu: 0.5), free       (cpushare, each in a network namespace and a cgroup of its own)
The sweep offers 2000 pps and twice the tbf link's packet rate (100e6 / (1514 × 8) = 8256 pps) of
1472-byte payloads.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.integration.requirements import missing
from tests.helpers.timing import cpu_idle_ns
from vnetbench.store.db import Store

# timing: its link-rate and CPU-share precision holds only on a machine with CPU to spare, and beside
# make test's other workers it often had none (quiet CIs of 2026-11-30: idle CPUs 0.00-0.21, the
# strict parts skipped); run alone, after the rest, they are checked whenever the machine is quiet
pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=40), pytest.mark.timing]

LINK_PPS = 100e6 / (1514 * 8)
MODEL_BPS = 100e6 * 1472 / 1514  # UDP payload bits/s through the 100 mbit link
RATES = [2000, round(2 * LINK_PPS)]
FLOW_FIELDS = [
    "achieved_pps",
    "achieved_bps",
    "send_lateness_p50_ns",
    "send_lateness_p99_ns",
    "send_lateness_max_ns",
    "received_pps",
    "loss_ratio",
]

SPEC = f"""
name: probe-it
topology:
  nodes:
    - {{name: a}}
    - {{name: b}}
    - {{name: c}}
    - {{name: d}}
    - {{name: half, cpu: 0.5}}
    - {{name: free}}
  switches: [{{name: sw}}]
  links:
    - {{endpoints: [a, sw]}}
    - {{endpoints: [sw, b], rate: 100mbit}}
    - {{endpoints: [c, sw]}}
    - {{endpoints: [d, sw]}}
    - {{endpoints: [half, free]}}
measurements:
  - {{name: sweep, kind: pps, rates: {RATES}, sizes: [1472], duration: 3s}}
  - {{name: bg, kind: background, pps: 1000, size: 64, pairs: [[c, d]]}}
  - {{name: cs, kind: cpushare, duration: 3s}}
patterns:
  - {{name: p, kind: pairs, pairs: [[a, b]], measurements: [sweep], background: [bg]}}
  - {{name: n, kind: nodes, nodes: [half, free], measurements: [cs]}}
schedule: {{repetitions: 2}}
"""


SKIP = missing(cpu_quota=True, probe=True)


class IdleSampler:
    """Samples the machine's idle CPU time (`cpu_idle_ns`: iowait left out) with its CLOCK_REALTIME
    instant, as stored measurements are timed, every 0.25 s while the campaign runs."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((cpu_idle_ns(), time.time_ns()))
            self._stop.wait(0.25)

    def __enter__(self) -> IdleSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def idle_cores(self, start_ns: int, end_ns: int) -> float | None:
        """Mean idle CPUs between two CLOCK_REALTIME instants (None without two samples inside)."""
        inside = [s for s in self.samples if start_ns <= s[1] <= end_ns]
        if len(inside) < 2:
            return None
        (i0, t0), (i1, t1) = inside[0], inside[-1]
        return (i1 - i0) / (t1 - t0)


class Run:
    def __init__(self, db: Path, campaign_id: str, frame: pd.DataFrame, idle: IdleSampler) -> None:
        self.db, self.campaign_id, self.frame, self.idle = db, campaign_id, frame, idle


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if SKIP:
        pytest.skip(SKIP)
    tmp = tmp_path_factory.mktemp("probe")
    spec, db = tmp / "probe.yaml", tmp / "probe.db"
    spec.write_text(SPEC)
    vnetbench = str(Path(sys.executable).parent / "vnetbench")
    with IdleSampler() as idle:
        done = subprocess.run(
            [vnetbench, "run", str(spec), "--db", str(db), "--no-report"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    store = Store(db)
    try:
        campaign = store.campaigns()[-1]
        frame = store.measurements_frame(campaign["id"])
        live = store.live_objects(campaign["id"])
    finally:
        store.close()
    yield Run(db, campaign["id"], frame, idle)
    assert live == [], f"the campaign left objects it recorded: {live}"
    with open("/proc/mounts") as f:
        assert f"vnb{campaign['id']}" not in f.read()
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"vnb{campaign['id']}" not in names


def test_sweep_stores_one_measurement_per_step_with_the_fields(run: Run) -> None:
    sweep = run.frame[run.frame["measurement"] == "sweep"]
    assert (sweep["status"] == "ok").all(), sweep[["key", "reason"]].to_string()
    assert sorted(sweep["key"]) == sorted(
        f"r00{rep}/p/sweep/a>b/s1472/p{rate}" for rep in (1, 2) for rate in RATES
    )
    assert sweep[FLOW_FIELDS].notna().all().all()
    assert (sweep["target_pps"].astype(int).sort_values().tolist()) == sorted(RATES * 2)
    assert (sweep["offered_bps"] == sweep["target_pps"] * 1472 * 8).all()
    assert (sweep["link_rate_bps"] == 100e6).all()
    assert sweep["expected_max_bps"].iloc[0] == pytest.approx(MODEL_BPS)
    assert (sweep["tool"] == "vnb-probe").all() and (sweep["exact_loss"] == 1).all()


def test_every_slot_is_accounted_for(run: Run) -> None:
    """Sent + skipped = the schedule; received + lost = sent (exact, whatever the machine's load).
    How close the achieved rate comes to the target is timing: benchmarks/probe measures it."""
    sweep = run.frame[run.frame["measurement"] == "sweep"]
    slots = (sweep["target_pps"] * 3).round()
    assert ((sweep["sent_packets"] + sweep["missed_slots_packets"]) == slots).all()
    assert ((sweep["received_packets"] + sweep["lost_packets"]) == sweep["sent_packets"]).all()
    ratio = (sweep["achieved_pps"] / sweep["target_pps"]).tolist()
    assert sweep["achieved_to_target_ratio"].tolist() == pytest.approx(ratio, rel=1e-9)
    assert all(0.2 < r <= 1.001 for r in ratio), ratio


def test_offering_twice_a_tbf_link_loses_half(run: Run) -> None:
    """What passes the link is at most its rate; loss is the rest of what was offered, every lost
    packet found in a kernel counter (`vnetbench loss`); a link overloaded ≥ 1.2x passes at least 85 %
    of its rate. Checked on every run, however busy the machine.

    That the link passes its full rate (within 3 %) and loses 1 − link/offered (± 2 pp; 50 % on runs
    that offered ≥ 98 % of twice the link's rate) is the link's property only while the machine could
    serve it: on a machine with no idle CPU the sender, the shaper's dequeue and the receiver all wait
    for one (the official CI of 2026-11-30 received 94.2 Mbit/s, 3.1 % under the model, in a run
    whose cpushare steps found 0.00 CPUs idle; on a quiet machine every run is within 0.3 %). Those
    checks run on the runs during which the machine had at least a quarter CPU idle; with none such,
    or no run overloading the link (≥ 1.2x), skip, saying why."""
    sweep = run.frame[run.frame["measurement"] == "sweep"]
    over = sweep[sweep["target_pps"] == RATES[1]]
    under = sweep[sweep["target_pps"] == RATES[0]]
    assert len(over) == 2
    assert (under["loss_ratio"] < 0.01).all()
    explained = _explained_by_counters(run)
    checked = []
    for _, row in over.iterrows():
        expected = max(0.0, 1 - LINK_PPS / row["achieved_pps"])
        facts = (row["key"], row["received_bps"], row["loss_ratio"], row["achieved_pps"])
        assert row["received_bps"] <= MODEL_BPS * 1.03, facts  # never more than the link's rate
        if row["achieved_pps"] >= 1.2 * LINK_PPS:  # and, busy or not, not grossly less (a wrong rate)
            assert row["received_bps"] >= MODEL_BPS * 0.85, facts
        assert row["loss_ratio"] >= expected - 0.02, facts
        assert explained[int(row["id"])] == pytest.approx(row["lost_packets"], abs=2), facts
        idle = _idle_during(run, over[over["id"] == row["id"]])
        if not idle or idle[0] < 0.25 or row["achieved_pps"] < 1.2 * LINK_PPS:
            continue
        assert row["loss_ratio"] == pytest.approx(expected, abs=0.02), (facts, idle)
        if row["achieved_pps"] >= 0.98 * RATES[1]:
            assert row["loss_ratio"] == pytest.approx(0.5, abs=0.02), (facts, idle)
        # what arrived is the link's rate, whatever more was offered
        assert row["received_bps"] == pytest.approx(MODEL_BPS, rel=0.03), (facts, idle)
        checked.append(row["key"])
    if not checked:
        rows = "; ".join(
            f"{r['achieved_pps']:.0f} pps offered, {r['received_bps'] / 1e6:.2f} Mbit/s received, "
            f"idle CPUs {', '.join(f'{x:.2f}' for x in _idle_during(run, over[over['id'] == r['id']]))}"
            for _, r in over.iterrows()
        )
        pytest.skip(f"no run overloaded the link on a machine with a quarter CPU idle: {rows}")


def _explained_by_counters(run: Run) -> dict[int, float]:
    """Measurement id → lost packets that `vnetbench loss` finds in a kernel counter (any stage)."""
    vnetbench = str(Path(sys.executable).parent / "vnetbench")
    done = subprocess.run(
        [vnetbench, "loss", run.campaign_id, "--db", str(run.db), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    flows = json.loads(done.stdout)["loss_localization"]
    return {int(f["measurement_id"]): f["explained_packets"] for f in flows}


def test_background_runs_during_every_step(run: Run) -> None:
    bg = run.frame[run.frame["group_kind"] == "background"]
    sweep = run.frame[run.frame["measurement"] == "sweep"]
    assert sorted(bg["key"]) == sorted(f"{k}/bg/bg/c>d" for k in sweep["key"])
    assert (bg["status"] == "ok").all()
    assert bg[FLOW_FIELDS].notna().all().all()
    assert (bg["loss_ratio"] < 0.01).all()
    for _, row in sweep.iterrows():
        mate = bg[bg["step_key"] == row["step_key"]].iloc[0]
        # started behind the same barrier: one gate's skew recorded for both, their starts within it
        # (a bound in ms failed on a busy machine: 80 ms between releases at load 7 on 2 cores)
        skew = int(row["start_skew_ns"])
        assert int(mate["start_skew_ns"]) == skew
        assert sorted([int(mate["start_offset_ns"]), int(row["start_offset_ns"])]) == [0, skew]
        assert abs(int(mate["started_utc_ns"]) - int(row["started_utc_ns"])) == skew
        # and lasting past the measured flow's end
        assert mate["sent_packets"] >= 0.99 * 1000 * 3


def _idle_during(run: Run, rows: pd.DataFrame) -> list[float]:
    """Idle CPUs while each row ran (its wall time: cpushare's loop; else the flow's duration)."""
    length = rows["wall_ns"].fillna(rows["duration_ns"])
    spans = [(int(t), int(t + n)) for t, n in zip(rows["started_utc_ns"], length, strict=True)]
    return [x for a, b in spans if (x := run.idle.idle_cores(a, b)) is not None]


def test_cpushare_half_a_core(run: Run) -> None:
    """0.45–0.55 under a half-core quota. Above 0.55 always fails (the quota leaked); below 0.45 is
    skipped only when the machine had less than a quarter CPU idle while the loop ran (others took
    the half core the quota allows)."""
    half = run.frame[(run.frame["measurement"] == "cs") & (run.frame["src"] == "half")]
    assert len(half) == 2 and (half["status"] == "ok").all()
    shares = half["cpu_share_ratio"].tolist()
    share = statistics.median(shares)
    assert share <= 0.55, shares
    idle = _idle_during(run, half)
    if share < 0.45 and idle and max(idle) < 0.25:
        pytest.skip(
            f"the machine had no spare half CPU while the loop ran (idle CPUs {', '.join(f'{x:.2f}' for x in idle)}"
            f"): cpushare under the half-core quota measured {', '.join(f'{x:.3f}' for x in shares)}"
        )
    assert share >= 0.45, (shares, idle)


def test_cpushare_unlimited(run: Run) -> None:
    """No quota: a whole core when the machine has one free, and never capped at a quota's share.
    The loop holds one CPU. With at least 0.9 of the other CPU idle while it ran, nothing competed:
    ≥ 0.95. With less, other processes' wake-ups land on its core too (this stop's run beside other
    tests: 0.93 with 0.55 idle): it must still get more than the half-core quota allows (> 0.55);
    skipped, saying so, only when the machine had under a quarter CPU idle during every run."""
    free = run.frame[(run.frame["measurement"] == "cs") & (run.frame["src"] == "free")]
    assert len(free) == 2 and (free["status"] == "ok").all()
    shares = free["cpu_share_ratio"].tolist()
    best = max(shares)
    idle = _idle_during(run, free)
    if best >= 0.95:
        return
    assert idle and max(idle) < 0.9, (shares, idle)  # a free core, and the loop did not get it
    if max(idle) < 0.25:
        pytest.skip(
            f"no spare CPU on this shared machine while the loop ran (idle CPUs {', '.join(f'{x:.2f}' for x in idle)}"
            f"): unlimited cpushare measured {', '.join(f'{x:.3f}' for x in shares)}"
        )
    assert best > 0.55, (shares, idle)  # above what the half-core quota allows: not capped


def test_report_has_the_probe_section(run: Run, tmp_path: Path) -> None:
    vnetbench = str(Path(sys.executable).parent / "vnetbench")
    out = tmp_path / "report"
    done = subprocess.run(
        [vnetbench, "report", run.campaign_id, "--db", str(run.db), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    sweep = next(s for s in report["sections"] if s["title"] == "Packet rate: received vs offered")
    table = sweep["tables"][0]
    row = dict(zip(table["columns"], table["rows"][0], strict=True))
    # The knee is the highest rate whose mean over repetitions lost < 1 % and was sent at ≥ 95 % of
    # the offered rate (the report's table note; docs/dashboard.md). 16512 pps loses half at the tbf
    # link; 2000 pps passes, in K pps with the Findings' 4 significant digits (format.metric) —
    # unless the sender, starved of CPU, sent under 95 % of it (beside disk load, 2026-11-30): then
    # no rate passed, and the report says the sender, i.e. this machine, limited that point.
    under = run.frame[(run.frame["measurement"] == "sweep") & (run.frame["target_pps"] == RATES[0])]
    if under["achieved_pps"].mean() >= 0.95 * RATES[0]:
        assert row["knee (K pps)"] == "2.000", row
    else:
        assert row["knee (K pps)"] == "none passed", row
        assert row["points limited by the sender"].endswith("(the sender, i.e. this machine)"), row
        assert not row["points limited by the sender"].startswith("0 of"), row
    assert row["link limit (K pps)"] == "8.256"  # the tbf link's: 100e6 / (1514 * 8) = 8256.1 packets/s
    assert "probe_pps_1472.png" in sweep["figures"]
    titles = [s["title"] for s in report["sections"]]
    assert "CPU share" in titles and "Throughput traces" in titles
