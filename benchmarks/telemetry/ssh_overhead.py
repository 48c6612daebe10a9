"""What telemetry adds to an SSH campaign's control overhead per measurement (root).

The campaign of benchmarks/ssh/run.py part A (a ring of pairs, each a 1 s iperf3 TCP test and one
ping echo) over SSH against sshd hosts in namespaces, run with `telemetry: {enabled: false}` and with
telemetry on (default 1 s interval), alternating which goes first, ROUNDS rounds. Overhead = a step's
wall time - its planned measuring time (benchmarks/ssh/run.py's run()). Writes ssh-overhead.json.

    sudo .venv/bin/python benchmarks/telemetry/ssh_overhead.py [--hosts 6] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.integration.sshnet import SshNet, skip_reason  # noqa: E402

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("sshbench", ROOT / "benchmarks" / "ssh" / "run.py")
assert _spec and _spec.loader
sshbench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sshbench)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if reason := skip_reason():
        sys.exit(f"cannot run: {reason}")
    n = args.hosts
    base = sshbench.ring_campaign(n)
    steps: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vnb-telssh-") as tmp:
        work = Path(tmp)
        net = SshNet(work / "net", count=n, jump_hosts=0).start()
        try:
            inventory = {**net.inventory(), "nodes": {f"n{i}": f"h{i}" for i in range(n)}}
            for r in range(args.rounds):
                order = [False, True] if r % 2 == 0 else [True, False]
                for telemetry in order:
                    spec = dict(base, inventory=inventory, telemetry={"enabled": telemetry})
                    got, _ = sshbench.run(spec, "ssh", work)
                    steps += [dict(s, round=r, telemetry=telemetry) for s in got]
                print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            net.close()
    summary = {}
    for kind in ("tcp", "rtt"):
        for telemetry in (False, True):
            values = [s["overhead_s"] for s in steps if s["kind"] == kind and s["telemetry"] == telemetry]
            summary[f"{kind} telemetry={'on' if telemetry else 'off'}"] = sshbench.spread(values)
        on, off = (summary[f"{kind} telemetry={x}"]["median"] for x in ("on", "off"))
        summary[f"{kind} added by telemetry (median difference, s)"] = on - off
    (HERE / "raw").mkdir(exist_ok=True)  # every step: regenerated, not kept in git
    (HERE / "raw" / "ssh-overhead.json").write_text(
        json.dumps({"args": vars(args), "summary": summary, "steps": steps}, indent=1)
    )
    (HERE / "ssh-overhead.json").write_text(json.dumps({"args": vars(args), "summary": summary}, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
