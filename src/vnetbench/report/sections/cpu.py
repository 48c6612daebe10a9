"""Report section: CPU during the measurements — the tool's own CPU in the form of the ExoGENI study's
Tables 18–19, and loss against CPU (telemetry, issue 5)."""

from __future__ import annotations

from vnetbench.analysis.cpu import correlation, tool_cpu_table
from vnetbench.report import format as fmt
from vnetbench.report.figures import plt, save
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Figure, Section, TableView

ORDER = 65
NOTE = (
    "Medians over the measurements. Rate: the link's shaping rate (or the offered rate when unshaped). "
    "ExoGENI: XOSmall VMs (1 core) on physical 10/100 Mbit/s paths; this machine's cores are shared."
)


def build(ctx: ReportContext) -> list[Section]:
    df = ctx.cpu
    if df.empty:
        return []
    section = Section(
        "CPU during the measurements",
        "cpu",
        intro="The measuring tool's own CPU (user + system time from /proc/PID/stat over the time it ran, "
        "as a share of one core), beside iperf3's own report and the ExoGENI study's Tables 18–19; and "
        "packet loss against the host's CPU load, sampled during every measurement.",
    )
    table = tool_cpu_table(df)
    if table:
        section.tables.append(
            TableView(
                "Tool CPU load (%), sender and receiver, per rate (ExoGENI Tables 18–19)",
                [
                    "rate",
                    "traffic",
                    "n",
                    "sender CPU (%)",
                    "receiver CPU (%)",
                    "iperf3 sender (%)",
                    "iperf3 receiver (%)",
                    "ExoGENI sender (%)",
                    "ExoGENI receiver (%)",
                ],
                [
                    [
                        fmt.rate(r["rate_bps"]),
                        r["kind"].upper(),
                        str(r["n"]),
                        fmt.one_decimal(r["sender_cpu_percent"]),
                        fmt.one_decimal(r["receiver_cpu_percent"]),
                        fmt.one_decimal(r["tool_sender_cpu_percent"]),
                        fmt.one_decimal(r["tool_receiver_cpu_percent"]),
                        fmt.one_decimal(r["exogeni_sender_cpu_percent"]),
                        fmt.one_decimal(r["exogeni_receiver_cpu_percent"]),
                    ]
                    for r in table
                ],
                NOTE,
            )
        )
    udp = df[df["kind"].isin(["udp", "pps"])].dropna(subset=["loss_ratio", "host_busy_ratio"])
    if len(udp):
        corr = correlation(df, "host_busy_ratio")
        rcv = correlation(df, "receiver_cpu_ratio")
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        for ax, col, c, name, label in (
            (axes[0], "host_busy_ratio", corr, "host CPU", "host CPU busy (share of all cores)"),
            (axes[1], "receiver_cpu_ratio", rcv, "receiver tool CPU", "receiver tool CPU (share of a core)"),
        ):
            d = udp.dropna(subset=[col])
            ax.scatter(d[col] * 100, d["loss_ratio"] * 100, s=14, alpha=0.7)
            ax.set_title(f"loss vs {name}: {_r_p_n(c)}", fontsize=9)
            ax.set_xlabel(f"{label} (%)")
            ax.set_ylabel("UDP loss (%)")
            ax.grid(alpha=0.3)
        png = save(fig, ctx.fig_dir / "loss-vs-cpu")
        section.figures.append(
            Figure(
                "Loss against CPU", png, "one point per UDP measurement; r: Pearson's correlation coefficient"
            )
        )
        section.items.append(
            f"Loss vs host CPU: {_r_p_n(corr)}; loss vs receiver tool CPU: {_r_p_n(rcv)}. "
            "A correlation is not a cause: the loss localization above says where the packets went."
            if corr["r"] is not None
            else f"Loss vs CPU: no correlation coefficient: {corr['skipped']}."
        )
    return [section]


def _r_p_n(c: dict) -> str:
    """Pearson's r with its p (two significant digits: a p of 0.004 is not '0.0') and n, or why there
    is no coefficient."""
    if c["r"] is None:
        return f"no coefficient ({c['skipped']})"
    return f"r = {coefficient(c['r'])} (p = {fmt.num(c['p'], 2)}, n = {c['n']}, {c['n_lossy']} with loss)"


def coefficient(r: float) -> str:
    """A correlation coefficient with two decimals, as the figure beside the sentence titles it (the
    sentence said r = 0.4 where the figure said r = 0.42), with the minus sign U+2212, and no sign
    when it rounds to zero: exogeni-exp2's 'r = -0.0'."""
    text = f"{r:.2f}"
    return "0.00" if float(text) == 0 else fmt.minus(text)
