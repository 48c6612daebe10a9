"""`vnetbench analyze --json` on real campaigns run in network namespaces: its numbers must equal a
direct computation from the stored samples (plain SQL + numpy here, none of the analysis library).

Two small campaigns (≈ 15 s each): a 2^2·2 TCP design (congestion control × number of flows, with
transient removal) and a one-factor UDP design (receivers on a CPU-limited host).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tests.helpers.integration.requirements import missing

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=35)]

VNB = [sys.executable, "-m", "vnetbench.cli"]


if (reason := missing(("iperf3",))) is not None:
    pytest.skip(reason, allow_module_level=True)

TCP_SPEC = """
name: it-analyze-tcp
topology:
  hosts: [{name: h1}]
  nodes: [{name: src}, {name: dst1}, {name: dst2}]
  switches: [{name: sw}]
  links:
    - {endpoints: [src, sw], rate: 40mbit}
    - {endpoints: [dst1, sw]}
    - {endpoints: [dst2, sw]}
measurements:
  - {name: tcp, kind: tcp, duration: 1s, congestion: cubic, interval: 0.25s}
patterns:
  - {name: star, kind: star, source: src, destinations: [dst1, dst2], alone: false, measurements: [tcp]}
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [cubic, reno]}
  - {name: flows, path: patterns.star.count, levels: [1, 2]}
design: {kind: 2k-r, replications: 2}
analysis: {omit: 0.5s, confidence: 0.90}
"""

UDP_SPEC = """
name: it-analyze-udp
topology:
  hosts: [{name: snd}, {name: rcv, cpu: 0.03}]
  nodes: [{name: src, host: snd}, {name: r1, host: rcv}, {name: r2, host: rcv}, {name: r3, host: rcv}]
  switches: [{name: sw, host: rcv}]
  links:
    - {endpoints: [src, sw]}
    - {endpoints: [r1, sw]}
    - {endpoints: [r2, sw]}
    - {endpoints: [r3, sw]}
measurements:
  - {name: udp, kind: udp, duration: 1s, rate: 40mbit}
patterns:
  - {name: rx, kind: star, source: src, destinations: [r1, r2, r3], alone: false, measurements: [udp]}
factors:
  - {name: receivers, path: patterns.rx.count, levels: [1, 2, 3]}
design: {kind: one-factor, replications: 2}
analysis: {response: loss_ratio, loss_threshold: 0.01}
"""


def _run(spec_text: str, tmp_path: Path) -> tuple[Path, str, dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text)
    db = tmp_path / "store.db"
    run = subprocess.run([*VNB, "run", str(spec), "--db", str(db), "--no-report", "--seed", "7"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    with sqlite3.connect(db) as conn:
        cid = conn.execute("select id from campaigns").fetchone()[0]
    _assert_clean(db, cid)
    assert run.returncode == 0, run.stderr
    out = subprocess.run(
        [*VNB, "analyze", cid, "--db", str(db), "--json"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return db, cid, json.loads(out.stdout)


def _assert_clean(db: Path, cid: str) -> None:
    """Nothing of the campaign is left: every recorded object removed, no namespace of ours."""
    with sqlite3.connect(db) as conn:
        live = conn.execute(
            "select kind, name from objects where campaign_id = ? and removed_utc_ns is null", (cid,)
        ).fetchall()
    assert live == []
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"vnb{cid}" not in names


def _flows(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "select id, step_key, repetition, factors, offered_bps from measurements where status = 'ok'"
        ).fetchall()
        out = []
        for r in rows:
            metrics = dict(
                conn.execute("select metric, value from summaries where measurement_id = ?", (r["id"],))
            )
            out.append(dict(r) | {"factors": json.loads(r["factors"]), "summary": metrics})
    return out


def _mean_after_omit(db: Path, mid: int, metric: str, omit_ns: int) -> float:
    with sqlite3.connect(db) as conn:
        values = [v for (v,) in conn.execute(
            "select value from samples where measurement_id = ? and metric = ? and stream is null and t_ns >= ?",
            (mid, metric, omit_ns),
        )]  # fmt: skip
    assert values, f"no {metric} samples after the transient in measurement {mid}"
    return float(np.mean(values))


def test_two_k_r_effects_and_fairness_match_the_store(tmp_path: Path) -> None:
    db, cid, result = _run(TCP_SPEC, tmp_path)
    flows = _flows(db)
    assert len(flows) == 2 * (1 + 2) * 2  # 2 cc × (1 + 2 flows) × 2 replications
    assert result["campaign"] == cid and result["design"]["kind"] == "2k-r"

    # the group response: mean throughput per flow after dropping the first 0.5 s of every flow
    groups: dict[str, list[float]] = {}
    level: dict[str, tuple[str, int]] = {}
    for f in flows:
        groups.setdefault(f["step_key"], []).append(
            _mean_after_omit(db, f["id"], "throughput_bps", 500_000_000)
        )
        level[f["step_key"]] = (f["factors"]["cc"], f["factors"]["flows"])
    assert result["transient"]["flows_recomputed"] == len(flows)

    cells = {
        combo: [float(np.mean(v)) for k, v in groups.items() if level[k] == combo]
        for combo in itertools.product(["cubic", "reno"], [1, 2])
    }
    assert all(len(v) == 2 for v in cells.values())
    model = next(m for m in result["models"] if m["response"] == "throughput_bps")
    r = model["result"]
    lo = {f: r["coding"][f]["-1"] for f in ("cc", "flows")}
    mean = {c: float(np.mean(v)) for c, v in cells.items()}
    sign = {c: (1 if c[0] != lo["cc"] else -1, 1 if c[1] != lo["flows"] else -1) for c in cells}
    q_a = sum(sign[c][0] * mean[c] for c in cells) / 4
    q_b = sum(sign[c][1] * mean[c] for c in cells) / 4
    q_ab = sum(sign[c][0] * sign[c][1] * mean[c] for c in cells) / 4
    sse = sum((y - mean[c]) ** 2 for c, ys in cells.items() for y in ys)
    effects = {e["letters"]: e for e in r["effects"]}
    assert effects["I"]["q"] == pytest.approx(np.mean(list(mean.values())), rel=1e-9)
    for letters, q in (("A", q_a), ("B", q_b), ("AB", q_ab)):
        assert effects[letters]["q"] == pytest.approx(q, rel=1e-7, abs=1e-3)
        assert effects[letters]["ss"] == pytest.approx(4 * 2 * q * q, rel=1e-7, abs=1e-3)
    assert r["sse"] == pytest.approx(sse, rel=1e-7)
    half = stats.t.ppf(0.95, 4) * np.sqrt(sse / 4) / np.sqrt(8)  # 90 % on 2^2(r − 1) = 4 DF
    assert effects["B"]["ci"][1] - effects["B"]["q"] == pytest.approx(half, rel=1e-7)
    # the bottleneck is shared: two flows get about half each, so the number of flows dominates
    assert effects["B"]["q"] < 0 and effects["B"]["significant"]

    spread = {(s["cc"], s["flows"]): s for s in result["fairness"]["spread"]}
    for cc in ("cubic", "reno"):
        per_rep = [
            (sum(v) ** 2) / (len(v) * sum(x * x for x in v)) for k, v in groups.items() if level[k] == (cc, 2)
        ]
        assert spread[(cc, 2)]["mean"] == pytest.approx(np.mean(per_rep), rel=1e-9)
        assert spread[(cc, 2)]["sd"] == pytest.approx(np.std(per_rep, ddof=1), rel=1e-9)


def test_one_factor_loss_anova_and_capacity_match_the_store(tmp_path: Path) -> None:
    db, _, result = _run(UDP_SPEC, tmp_path)
    flows = _flows(db)
    by_group: dict[str, list[float]] = {}
    n_of: dict[str, int] = {}
    for f in flows:
        by_group.setdefault(f["step_key"], []).append(f["summary"]["loss_ratio"])
        n_of[f["step_key"]] = f["factors"]["receivers"]
    y = {k: float(np.mean(v)) for k, v in by_group.items()}
    levels = [1, 2, 3]
    per_level = {lv: [y[k] for k in y if n_of[k] == lv] for lv in levels}
    everything = np.array([v for lv in levels for v in per_level[lv]])
    grand = everything.mean()
    ssa = sum(len(v) * (np.mean(v) - grand) ** 2 for v in per_level.values())
    sse = sum(((np.array(v) - np.mean(v)) ** 2).sum() for v in per_level.values())

    model = next(m for m in result["models"] if m["response"] == "loss_ratio")
    a = model["anova"]
    assert model["model"] == "one-factor" and a["levels"] == levels and a["replications"] == [2, 2, 2]
    assert a["ssy"] == pytest.approx(float((everything**2).sum()), rel=1e-9, abs=1e-15)
    assert a["ssa"] == pytest.approx(ssa, rel=1e-7, abs=1e-15)
    assert a["sse"] == pytest.approx(sse, rel=1e-7, abs=1e-15)
    assert a["df_a"] == 2 and a["df_e"] == 3
    step = model["successive_differences"][0]
    assert step["estimate"] == pytest.approx(np.mean(per_level[2]) - np.mean(per_level[1]), abs=1e-12)
    assert step["half_width"] == pytest.approx(
        stats.t.ppf(0.975, 3) * np.sqrt(sse / 3) * np.sqrt(2 / 2), rel=1e-7
    )

    means = [np.mean(per_level[lv]) for lv in levels]
    under = None
    for lv, m in zip(levels, means, strict=True):
        if m > 0.01:
            break
        under = lv
    assert model["capacity"]["max_level_under_threshold"] == under

    # UDP effective throughput: (1 − loss) × offered, per flow, averaged per number of receivers
    effective = {row["receivers"]: row for row in result["udp_effective_throughput"]}
    for lv in levels:
        mine = [f for f in flows if f["factors"]["receivers"] == lv]
        expect = np.mean([(1 - f["summary"]["loss_ratio"]) * f["offered_bps"] for f in mine])
        assert effective[lv]["effective_throughput_bps"] == pytest.approx(expect, rel=1e-9)
        assert effective[lv]["n_flows"] == lv * 2
