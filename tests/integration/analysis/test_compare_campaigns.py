"""`vnetbench compare` on real campaigns: a short exogeni-exp3 run twice says "same" for every row;
against a copy with the same-worker link's rate halved it says "worse" only for flows over that link,
for their TCP throughput and, unless a stalled sender left too little evidence, their UDP throughput
(it exits 1); both changes are measured as half. A halved rate may also raise that link's UDP
jitter for real, so a "worse" jitter there is allowed; nothing on the other link may be worse.

Three campaigns of ≈ 30 s each (two more when the first two differ: see the test): exogeni-exp3
scaled to 3 repetitions of 2 s flows and 10 pings 0.1 s apart. Not fewer repetitions: "worse" must survive Holm's correction over every row with
Welch's t, whose degrees of freedom at 2 v 2 runs (≈ 1–2) made half the rate not significant beside
a busy machine's spread (a stress run, 2026-11-26).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from tests.helpers.integration.requirements import missing
from tests.helpers.timing import best_of, first_then

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=150)]

VNB = [sys.executable, "-m", "vnetbench.cli"]

if (reason := missing(("iperf3", "ping"))) is not None:
    pytest.skip(reason, allow_module_level=True)


def short_exp3(rate: str = "100mbit") -> str:
    text = resources.files("vnetbench.scenarios").joinpath("exogeni-exp3.yaml").read_text()
    for old, new in (
        ("duration: 10s, omit: 1s", "duration: 2s, omit: 1s"),
        ("duration: 10s, rate: link", "duration: 2s, rate: link"),
        ("count: 50, interval: 0.2s", "count: 10, interval: 0.1s"),
        ("repetitions: 4", "repetitions: 3"),
        ("{name: same-worker, endpoints: [vma, vmb], rate: 100mbit}",
         f"{{name: same-worker, endpoints: [vma, vmb], rate: {rate}}}"),
    ):  # fmt: skip
        assert old in text, old
        text = text.replace(old, new)
    return text


def run_campaign(spec_text: str, db: Path, tmp_path: Path, name: str) -> str:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(spec_text)
    before = campaign_ids(db)
    run = subprocess.run([*VNB, "run", str(spec), "--db", str(db), "--no-report", "--seed", "5"],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr
    [cid] = campaign_ids(db) - before
    with sqlite3.connect(db) as conn:
        live = conn.execute(
            "select name from objects where campaign_id = ? and removed_utc_ns is null", (cid,)
        ).fetchall()
    assert live == []
    assert f"vnb{cid}" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return cid


def campaign_ids(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("select id from campaigns")}


def compare(*args: str) -> tuple[int, dict]:
    out = subprocess.run([*VNB, "compare", *args, "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, json.loads(out.stdout)


def _changed(result: dict) -> list[tuple]:
    """The rows that are not "same": what a failure shows."""
    keys = ("pair", "measurement", "metric", "verdict", "a", "b", "p_holm")
    return [tuple(r.get(k) for k in keys) for r in result["rows"] if r["verdict"] != "same"]


def test_same_scenario_is_same_and_a_halved_link_is_worse(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    first = run_campaign(short_exp3(), db, tmp_path, "a")
    second = run_campaign(short_exp3(), db, tmp_path, "b")
    halved_db = tmp_path / "halved.db"  # in a store of its own: the DB:ID form
    halved = run_campaign(short_exp3("50mbit"), halved_db, tmp_path, "c")

    def twice_again() -> tuple[int, dict]:
        a, b = (run_campaign(short_exp3(), db, tmp_path, name) for name in ("a2", "b2"))
        return compare(a, b, "--db", str(db), "--tolerance", "5%")

    # Two runs of one scenario differ only by the machine: a run slowed by a busy machine makes the
    # other look "better", and the difference is real (the machine changed), so "same" is a precision
    # claim and gets best_of's bounded repeat with two fresh runs (a stress run, 2026-11-27: a
    # "better" row beside stress-ng on both cores and two other test workers)
    met, attempts = best_of(
        first_then(compare(first, second, "--db", str(db), "--tolerance", "5%"), twice_again),
        lambda result: {r["verdict"] for r in result[1]["rows"]} == {"same"},
        attempts=2,
    )
    assert met, [_changed(result) for _, result in attempts]
    code, same = attempts[-1]
    assert code == 0
    verdicts = {(r["pair"], r["measurement"], r["metric"]): r["verdict"] for r in same["rows"]}
    # both pairs × (tcp throughput; udp throughput, loss, jitter; rtt)
    assert {(p, m) for p, m, _ in verdicts} == {
        (p, m) for p in ("vma→vmb", "vmc→vmd") for m in ("tcp", "udp", "rtt")
    }

    tcp, udp = ("vma→vmb", "tcp", "throughput_bps"), ("vma→vmb", "udp", "throughput_bps")

    def worse_rows(result: tuple[int, dict]) -> dict:
        return {(r["pair"], r["measurement"], r["metric"]): r for r in result[1]["rows"]}

    def only_the_halved_link_is_worse(result: tuple[int, dict]) -> bool:
        # only the halved link's flows are worse (its UDP jitter may rise for real)
        bad = {key for key, r in worse_rows(result).items() if r["verdict"] == "worse"}
        return result[0] == 1 and tcp in bad and bad <= {tcp, udp, ("vma→vmb", "udp", "jitter_mean_ns")}

    def halved_again() -> tuple[int, dict]:
        again_db = tmp_path / "halved2.db"  # best_of calls this at most once (attempts=2)
        base, cut = (
            run_campaign(short_exp3(), db, tmp_path, "a3"),
            run_campaign(short_exp3("50mbit"), again_db, tmp_path, "c2"),
        )
        return compare(base, f"{again_db}:{cut}", "--db", str(db))

    # "worse" is a significance claim too: beside stress-ng a stalled run widened the 100 mbit
    # campaign's TCP spread so that the halved link's -50 % was not significant (a CI run, 2026-11-30)
    met, tried = best_of(
        first_then(compare(first, f"{halved_db}:{halved}", "--db", str(db)), halved_again),
        only_the_halved_link_is_worse,
        attempts=2,
    )
    assert met, [r[1]["rows"] for r in tried]
    rows = worse_rows(tried[-1])
    # UDP offered at the link's rate: one run whose sender the busy machine stalled widens the first
    # campaign's spread so much that Welch's t (df ≈ 2 at 3 v 3 runs) cannot pass Holm's correction
    # (a CI run, 2026-11-26): then "same" for lack of evidence, never "better"; the change is half
    assert rows[udp]["verdict"] in {"worse", "same"}, rows[udp]
    for key in (tcp, udp):
        assert rows[key]["relative_change"] == pytest.approx(-0.5, abs=0.1), rows[key]  # half the rate
