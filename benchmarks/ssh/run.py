"""SSH provider benchmarks on 20 namespaced sshd hosts (run as root, from the repository root):

    .venv/bin/python benchmarks/ssh/run.py [--rounds 3]

A. control overhead per measurement: the same campaign (a 20-host ring of 1 s TCP tests and
   single-echo pings) run by the local provider (namespaces) and by the SSH provider (sshd in
   namespaces), alternating, each round. A step's wall time is taken between the runner's step
   callbacks (the first step, which includes the build, is left out); overhead = wall - planned
   measuring time (1 s for TCP, 0 s for one echo).
B. `doctor` fan-out over the 20 hosts (fresh connections each time).
C. the same small campaign (4 hosts, TCP 2 s and 20 pings, 3 repetitions) by both providers: results
   side by side (docs/ssh-provider.md).
Writes results.json (the summary, kept in git), raw/results.csv (every step; git ignores raw/) and
README-ready tables to stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.integration.sshnet import SshNet, skip_reason  # noqa: E402

from vnetbench.providers.local import LocalProvider  # noqa: E402
from vnetbench.providers.registry import make_provider  # noqa: E402
from vnetbench.providers.ssh.doctor import run_checks  # noqa: E402
from vnetbench.providers.ssh.loop import LoopThread  # noqa: E402
from vnetbench.run.campaign import create_campaign  # noqa: E402
from vnetbench.run.runner import Runner  # noqa: E402
from vnetbench.spec.inventory import parse_inventory_data  # noqa: E402
from vnetbench.spec.loader import parse_spec  # noqa: E402
from vnetbench.store.db import Store  # noqa: E402

HERE = Path(__file__).parent


def campaign(n: int, pairs: list[list[str]], measurements: list[dict[str, Any]], reps: int) -> dict[str, Any]:
    nodes = [f"n{i}" for i in range(n)]
    return {
        "name": "sshbench",
        "topology": {
            "switches": [{"name": "lan"}],
            "nodes": [{"name": x} for x in nodes],
            "links": [{"endpoints": [x, "lan"]} for x in nodes],
        },
        "measurements": measurements,
        "patterns": [{"kind": "pairs", "pairs": pairs, "measurements": [m["name"] for m in measurements]}],
        "schedule": {"repetitions": reps},
    }


def ring_campaign(n: int) -> dict[str, Any]:
    """Part A's campaign (also benchmarks/telemetry/ssh_overhead.py's): a ring of n pairs, each a
    1 s TCP test and one ping echo."""
    ring = [[f"n{i}", f"n{(i + 1) % n}"] for i in range(n)]
    measurements = [
        {"name": "tcp", "kind": "tcp", "duration": "1s"},
        {"name": "echo", "kind": "rtt", "count": 1},
    ]
    return campaign(n, ring, measurements, 1)


def run(spec: dict[str, Any], provider_name: str, workdir: Path) -> tuple[list[dict[str, Any]], Any]:
    loaded = parse_spec(yaml.safe_dump(spec), "bench.yaml")
    store = Store(str(workdir / f"{provider_name}-{time.monotonic_ns()}.db"))
    started = create_campaign(loaded, store, provider=provider_name)
    cid = started.campaign_id
    provider = (
        LocalProvider(cid, store.location) if provider_name == "local" else make_provider("ssh", cid, store)
    )
    stamps: list[tuple[float, Any]] = []
    runner = Runner(
        store, cid, started.plan, provider, {}, on_step=lambda s, r: stamps.append((time.monotonic(), s))
    )
    summary = runner.run(store.campaign(cid)["created_utc_ns"])
    assert summary.flows_failed == 0, summary.failures
    steps = []
    for (t0, _), (t1, step) in itertools.pairwise(stamps):
        m = started.plan.variants[step.variant].measurement(step.measurement)
        planned = getattr(m, "duration", 0) / 1e9
        steps.append(
            {"provider": provider_name, "kind": m.kind, "wall_s": t1 - t0, "overhead_s": t1 - t0 - planned}
        )
    return steps, store.measurements_frame(cid)


def doctor_time(net: SshNet) -> float:
    inventory = parse_inventory_data(net.inventory())
    loop = LoopThread()
    try:
        t0 = time.monotonic()
        checks = loop.run(run_checks(inventory), 60)
        elapsed = time.monotonic() - t0
    finally:
        loop.stop()
    assert all(c.reachable and c.tools.get("iperf3") for c in checks), [c.reason for c in checks]
    return elapsed


def spread(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {"n": len(values), "median": statistics.median(values), "p25": q[0], "p75": q[2],
            "min": values[0], "max": values[-1]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=20)
    args = parser.parse_args()
    if reason := skip_reason():
        sys.exit(f"cannot run: {reason}")
    n = args.hosts
    overhead_spec = ring_campaign(n)
    small_pairs = [["n0", "n1"], ["n2", "n3"], ["n1", "n2"]]
    small_spec = campaign(
        4,
        small_pairs,
        [
            {"name": "tcp", "kind": "tcp", "duration": "2s"},
            {"name": "rtt", "kind": "rtt", "count": 20, "interval": "0.05s"},
        ],
        3,
    )
    steps: list[dict[str, Any]] = []
    doctor: list[float] = []
    frames: dict[str, list[Any]] = {"local": [], "ssh": []}
    with tempfile.TemporaryDirectory(prefix="vnb-sshbench-") as tmp:
        work = Path(tmp)
        net = SshNet(work / "net", count=n, jump_hosts=0).start()
        try:
            inventory = {**net.inventory(), "nodes": {f"n{i}": f"h{i}" for i in range(n)}}
            for r in range(args.rounds):
                order = ["local", "ssh"] if r % 2 == 0 else ["ssh", "local"]
                for name in order:
                    spec = dict(overhead_spec, inventory=inventory) if name == "ssh" else overhead_spec
                    got, _ = run(spec, name, work)
                    steps += [dict(s, round=r) for s in got]
                    small = dict(small_spec, inventory=inventory) if name == "ssh" else small_spec
                    frames[name].append(run(small, name, work)[1])
                doctor.append(doctor_time(net))
                print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            net.close()
    result: dict[str, Any] = {"hosts": n, "rounds": args.rounds, "overhead": {}, "doctor_s": spread(doctor)}
    for name in ("local", "ssh"):
        for kind in ("tcp", "rtt"):
            vals = [s["overhead_s"] for s in steps if s["provider"] == name and s["kind"] == kind]
            result["overhead"][f"{name}/{kind}"] = spread(vals)
    for kind in ("tcp", "rtt"):
        ssh = result["overhead"][f"ssh/{kind}"]["median"]
        loc = result["overhead"][f"local/{kind}"]["median"]
        result["overhead"][f"ssh-minus-local/{kind}"] = ssh - loc
    comparison = []
    for name, parts in frames.items():
        import pandas as pd

        frame = pd.concat(parts)
        for (src, dst, kind), g in frame.groupby(["src", "dst", "kind"]):
            col = "throughput_bps" if kind == "tcp" else "rtt_median_ns"
            vals = g[col].dropna().tolist()
            comparison.append({"provider": name, "pair": f"{src}>{dst}", "kind": kind, **spread(vals)})
    result["comparison"] = comparison
    (HERE / "results.json").write_text(json.dumps(result, indent=2))
    (HERE / "raw").mkdir(exist_ok=True)  # per-step values: regenerated, not kept in git
    with open(HERE / "raw" / "results.csv", "w") as f:
        f.write("provider,kind,round,wall_s,overhead_s\n")
        for s in steps:
            f.write(f"{s['provider']},{s['kind']},{s['round']},{s['wall_s']:.4f},{s['overhead_s']:.4f}\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
