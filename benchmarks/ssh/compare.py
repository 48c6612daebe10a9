"""Local vs SSH provider, alternating every repetition: are the results the same within noise?

    .venv/bin/python benchmarks/ssh/compare.py [--alternations 10]

The 4-node campaign of run.py part C, one repetition per run, providers alternating
(local, ssh, ssh, local, ...) so slow drifts in the shared machine's load hit both alike.
Per metric: medians, IQRs, the ratio of medians and a two-sided Mann-Whitney U test.
Writes compare.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scipy.stats import mannwhitneyu

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alternations", type=int, default=10)
    args = parser.parse_args()
    if reason := bench.skip_reason():
        sys.exit(f"cannot run: {reason}")
    spec = bench.campaign(
        4,
        [["n0", "n1"], ["n2", "n3"], ["n1", "n2"]],
        [
            {"name": "tcp", "kind": "tcp", "duration": "2s"},
            {"name": "rtt", "kind": "rtt", "count": 20, "interval": "0.05s"},
        ],
        1,
    )
    values: dict[str, dict[str, list[float]]] = {
        "local": {"tcp": [], "rtt": []},
        "ssh": {"tcp": [], "rtt": []},
    }
    with tempfile.TemporaryDirectory(prefix="vnb-sshcmp-") as tmp:
        work = Path(tmp)
        net = bench.SshNet(work / "net", count=4, jump_hosts=0).start()
        try:
            inventory = {**net.inventory(), "nodes": {f"n{i}": f"h{i}" for i in range(4)}}
            for a in range(args.alternations):
                order = ["local", "ssh"] if a % 2 == 0 else ["ssh", "local"]
                for name in order:
                    _, frame = bench.run(
                        dict(spec, inventory=inventory) if name == "ssh" else spec, name, work
                    )
                    values[name]["tcp"] += frame[frame.kind == "tcp"]["throughput_bps"].tolist()
                    values[name]["rtt"] += frame[frame.kind == "rtt"]["rtt_median_ns"].tolist()
                print(f"alternation {a + 1}/{args.alternations}", file=sys.stderr)
        finally:
            net.close()
    out = {}
    for kind in ("tcp", "rtt"):
        local, ssh = values["local"][kind], values["ssh"][kind]
        test = mannwhitneyu(local, ssh, alternative="two-sided")
        out[kind] = {
            "local": bench.spread(local),
            "ssh": bench.spread(ssh),
            "ratio_of_medians_ssh_over_local": bench.spread(ssh)["median"] / bench.spread(local)["median"],
            "mann_whitney_p": float(test.pvalue),
        }
    (HERE / "compare.json").write_text(json.dumps({"alternations": args.alternations, **out}, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
