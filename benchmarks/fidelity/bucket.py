"""Diagnosis of the `load` part's misses with a 4 ms bucket: the network-side shaper's token bucket,
4 ms (the default until 2026-11-27) against 8 ms (the default since, layout/build.py
NETWORK_BURST_MS), alternating, 2 x 12 TCP runs each beside the same busy loop as
`run.py --parts load`. README.md has the result and the full benchmark re-run with 8 ms.

Usage (root):  .venv/bin/python benchmarks/fidelity/bucket.py    # ~5 min; raw stores in raw/
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import vnetbench.layout.build as layout_build

HERE = Path(__file__).resolve().parent
BUCKETS_MS = (4, 8, 4, 8)
REPETITIONS = 12


def main() -> None:
    spec = importlib.util.spec_from_file_location("fidelity_run", HERE / "run.py")
    assert spec is not None and spec.loader is not None
    fidelity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fidelity)
    fidelity.LOAD = fidelity.LOAD.replace("repetitions: 30", f"repetitions: {REPETITIONS}")
    shares: dict[int, list[float]] = {}
    for bucket_ms in BUCKETS_MS:
        layout_build.NETWORK_BURST_MS = bucket_ms  # read when each link's shaper is laid out
        runs = sorted(round(r["of_model"] * 100, 2) for r in fidelity.part_load())
        shares.setdefault(bucket_ms, []).extend(runs)
        print(bucket_ms, runs, flush=True)
    for bucket_ms, values in shares.items():
        values.sort()
        below = sum(v < 98 for v in values)
        print(
            f"bucket {bucket_ms} ms: n={len(values)} below 98 %: {below}  "
            f"min {values[0]} median {values[len(values) // 2]} max {values[-1]}"
        )


if __name__ == "__main__":
    main()
