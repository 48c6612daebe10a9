"""Markdown tables from benchmarks/ssh/results.json (for README.md and docs/ssh-provider.md)."""

from __future__ import annotations

import json
from pathlib import Path

from vnetbench.palette import NEUTRAL

HERE = Path(__file__).parent


def fmt(v: dict[str, float], scale: float = 1.0, digits: int = 3) -> str:
    return f"{v['median'] * scale:.{digits}f} ({v['p25'] * scale:.{digits}f}–{v['p75'] * scale:.{digits}f})"


def main() -> None:
    d = json.loads((HERE / "results.json").read_text())
    o = d["overhead"]
    print(
        f"Control overhead per measurement, {d['hosts']} hosts, {d['rounds']} rounds; "
        "seconds, median (p25–p75):\n"
    )
    print("| measurement | local provider | SSH provider | SSH − local (medians) | goal |")
    print("|---|---|---|---|---|")
    for kind, label in (("tcp", "TCP 1 s (iperf3 server + client)"), ("rtt", "one ping echo (client only)")):
        n = o[f"ssh/{kind}"]["n"]
        print(
            f"| {label}, n={n} each | {fmt(o[f'local/{kind}'])} | {fmt(o[f'ssh/{kind}'])} | "
            f"{o[f'ssh-minus-local/{kind}']:+.3f} | ≤ 0.3 s |"
        )
    doc = d["doctor_s"]
    print(f"\n`doctor` over {d['hosts']} hosts (n={doc['n']}): median {doc['median']:.2f} s, "
          f"min {doc['min']:.2f} s, max {doc['max']:.2f} s (goal ≤ 3 s)\n")  # fmt: skip
    print("Same campaign by both providers, median (p25–p75) over the repetitions:\n")
    print("| pair | metric | local provider | SSH provider |")
    print("|---|---|---|---|")
    rows: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for c in d["comparison"]:
        rows.setdefault((c["pair"], c["kind"]), {})[c["provider"]] = c
    for (pair, kind), by in sorted(rows.items()):
        if kind == "tcp":
            metric, scale, digits = "TCP goodput, Gbit/s", 1e-9, 2
        else:
            metric, scale, digits = "RTT median of 20 pings, µs", 1e-3, 1
        print(f"| {pair.replace('>', ' → ')} | {metric} | {fmt(by['local'], scale, digits)} | "
              f"{fmt(by['ssh'], scale, digits)} |")  # fmt: skip


def compare_table() -> None:
    """The alternating comparison (compare.py), if it was run."""
    path = HERE / "compare.json"
    if not path.exists():
        return
    d = json.loads(path.read_text())
    print(
        f"\nAlternating every repetition ({d['alternations']} × each provider, 3 pairs each; compare.py):\n"
    )
    print("| metric | local provider | SSH provider | SSH / local (medians) | Mann-Whitney p |")
    print("|---|---|---|---|---|")
    for kind, label, scale, digits in (
        ("tcp", "TCP goodput, Gbit/s", 1e-9, 2),
        ("rtt", "RTT median, µs", 1e-3, 1),
    ):
        c = d[kind]
        print(
            f"| {label} (n={c['local']['n']} each) | {fmt(c['local'], scale, digits)} | "
            f"{fmt(c['ssh'], scale, digits)} | {c['ratio_of_medians_ssh_over_local']:.3f} | "
            f"{c['mann_whitney_p']:.2f} |"
        )


def figure() -> Path:
    """Box plots of the per-measurement overhead, local vs SSH, from raw/results.csv (run.py writes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from vnetbench.report.cycle import use_palette

    use_palette()

    frame = pd.read_csv(HERE / "raw" / "results.csv")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=False)
    for ax, kind, title in zip(axes, ("tcp", "rtt"), ("TCP 1 s", "one ping echo"), strict=True):
        data = [
            frame[(frame.provider == p) & (frame.kind == kind)]["overhead_s"] * 1e3 for p in ("local", "ssh")
        ]
        ax.boxplot(data, tick_labels=["local", "ssh"])
        ax.set_title(title)
        ax.set_ylabel("control overhead per measurement (ms)")
        ax.axhline(300, color=NEUTRAL, linestyle="--", linewidth=1, label="goal 300 ms")
        ax.legend(fontsize=8)
    fig.suptitle(
        "wall time per measurement minus its planned measuring time (goal ≤ 300 ms, dashed)", fontsize=9
    )
    fig.tight_layout()
    out = HERE / "overhead.png"
    fig.savefig(out, dpi=110)
    return out


if __name__ == "__main__":
    main()
    compare_table()
    figure()
