"""The report's figures draw with palette.py's colours, and a reference line never looks like a series.

Before: the packet-rate sweep's link limit was a black dashed line while its second series, in the
palette's cycle (blue, black, ...), was black too; the loss diagram's boxes and the topology's rates had
colours of their own (#b3261e, #4a6fa5, #a33: a link's rate in a red that reads as a failure). The
statistics' mean-per-level chart drew the capacity threshold in vermillion, the grid's critical level's
colour, labelled only 'threshold 1'; the rebuilds' tolerance lines were black."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from matplotlib.colors import to_hex

from tests.helpers.stats_app import ONL
from vnetbench import palette
from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.loss import Explainer, Localization, Stage
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.reproducibility import reproducibility
from vnetbench.report import figures
from vnetbench.report import stats_figures as sf
from vnetbench.report.sections import loss, probe

PALETTE = {
    c.lower()
    for c in (*palette.SERIES, palette.FAILED, palette.NEUTRAL, palette.OK, palette.WARNING, palette.CRITICAL)
}
WHITE = "#ffffff"


def _capture(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[Any]:
    """The figures the module saves, kept open instead of written."""
    saved: list[Any] = []

    def keep(fig: Any, path: Path) -> Path:
        saved.append(fig)
        return path.with_suffix(".png")

    monkeypatch.setattr(module, "save", keep)
    return saved


def _colours(fig: Any) -> set[str]:
    """Every colour the figure's lines, patches and texts are drawn in (without their alpha)."""
    out: set[str] = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            out.add(to_hex(line.get_color()))
        for patch in ax.patches:
            for colour in (patch.get_edgecolor(), patch.get_facecolor()):
                if colour[3] > 0:  # drawn, not transparent
                    out.add(to_hex(colour, keep_alpha=False))
        for text in ax.texts:
            out.add(to_hex(text.get_color()))
    return out


def _sweep_rows() -> pd.DataFrame:
    """Two series (two patterns) of one packet-rate sweep, 18-byte payloads, a path limit of 60 K pps."""
    rows = []
    for pattern in ("alone", "with-background"):
        for offered in (1000, 30000, 60000, 100000):
            received = min(offered, 55000)
            row = {"status": "ok", "kind": "pps", "group_kind": "single", "pattern": pattern}
            row |= {"measurement": "sweep", "src": "a", "dst": "b", "factors": {}, "payload_bytes": 18.0}
            row |= {"target_pps": float(offered), "achieved_pps": float(offered), "loss_ratio": 0.0}
            row |= {"received_pps": float(received), "send_lateness_p99_ns": 1e5, "link_rate_bps": 1e9}
            rows.append(row | {"path_pps_limit": 60000.0, "repetition": 1})
    return pd.DataFrame(rows).assign(group_size=1, step_key="s", seq=1)


def test_the_sweeps_link_limit_is_grey_dashed_and_named_not_a_series_colour(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = _capture(monkeypatch, probe)
    assert probe._sweep_section(_sweep_rows(), tmp_path, set()) is not None
    (fig,) = saved
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    limit = lines["link limit 60.00 K pps"]
    assert to_hex(limit.get_color()) == palette.NEUTRAL.lower()
    assert limit.get_linestyle() == "--"
    assert to_hex(lines["received = offered"].get_color()) == palette.NEUTRAL.lower()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "link limit 60.00 K pps" in legend and "received = offered" in legend
    # the two series: the palette's first two colours (blue, black), neither the references' grey
    series = [to_hex(c.lines[0].get_color()) for c in ax.containers]
    assert series == [palette.SERIES[0].lower(), palette.SERIES[1].lower()]
    assert palette.NEUTRAL not in palette.SERIES


def _localization() -> Localization:
    """5,000 datagrams sent, 300 lost at the receiving socket (the hop that lost most)."""
    explainer = Explainer("udp RcvbufErrors on b", 300.0, "socket buffer full", "node:b", "rcvbuf_errors")
    stages = [
        Stage("app-sent", "sent by the application", "node:a", 5_000.0),
        Stage("tx:a/eth0", "sent by a/eth0", "a/eth0", 4_990.0, lost=10.0),
        Stage("rx:b", "received by b's socket", "node:b", 4_690.0, lost=300.0, explainers=[explainer]),
    ]
    return Localization(
        None, "a", "b", 5_000.0, 4_690.0, 310.0, 1, stages, "received by b's socket", "rx:b",
        "node:b", 300.0, "socket buffer full", explainer.counter, 300.0, "node:b", "rcvbuf_errors", 300.0,
    )  # fmt: skip


def test_the_loss_diagram_draws_in_the_palette_and_says_most_lost_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = _capture(monkeypatch, loss)
    loss.path_diagram(_localization(), "where the packets went", tmp_path / "loss")
    (fig,) = saved
    assert _colours(fig) <= PALETTE | {WHITE}, _colours(fig) - PALETTE
    (ax,) = fig.axes
    texts = {t.get_text(): to_hex(t.get_color()) for t in ax.texts}
    assert texts["−300 most lost"] == palette.FAILED.lower()  # the words, not the red alone
    assert texts["−10"] == palette.BLACK.lower()  # a smaller loss elsewhere: not marked
    assert texts["udp RcvbufErrors on b: 300"] == palette.FAILED.lower()
    widths = sorted(p.get_linewidth() for p in ax.patches)
    assert widths[-1] > widths[0]  # the hop's frame is thicker, too


def test_the_topology_draws_in_the_palette_and_its_rates_are_not_red(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = _capture(monkeypatch, figures)
    layout = {"node_host": {"a": "h1", "b": "h1", "c": "h2"}, "host_site": {"h1": "s1", "h2": "s1"}}
    links = [
        {"endpoints": ["a", "b"], "rate": "100 Mbit/s"},
        {"endpoints": ["b", "sw"], "rate": "1 Gbit/s"},
        {"endpoints": ["c", "sw"], "overlay": True},
    ]
    figures.topology(layout, links, tmp_path / "topology")
    (fig,) = saved
    assert _colours(fig) <= PALETTE | {WHITE}, _colours(fig) - PALETTE
    (ax,) = fig.axes
    rates = [t for t in ax.texts if t.get_text().endswith("bit/s")]
    assert len(rates) == 2 and all(to_hex(t.get_color()) == palette.BLACK.lower() for t in rates)


def test_the_topology_names_the_host_of_a_switch_drawn_above_the_hosts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """quickstart: ams-sw runs on host h1 but is drawn above h1's and h2's boxes, as if on no host."""
    saved = _capture(monkeypatch, figures)
    links = [{"endpoints": ["a", "sw"]}, {"endpoints": ["c", "sw"]}]
    two = {"node_host": {"a": "h1", "c": "h2"}, "host_site": {"h1": "s1", "h2": "s1"}}
    figures.topology(two, links, tmp_path / "two", {"sw": "h1"})
    one = {"node_host": {"a": "h1", "c": "h1"}, "host_site": {"h1": "s1"}}
    figures.topology(one, links, tmp_path / "one", {"sw": "h1"})  # one host: nothing to tell apart
    labels = [{t.get_text() for t in fig.axes[0].texts} for fig in saved]
    assert "sw (on host h1)" in labels[0] and "sw" not in labels[0]
    assert "sw" in labels[1] and "sw (on host h1)" not in labels[1]


def _capture_stats(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    saved: list[Any] = []

    def keep(fig: Any, path: Path) -> tuple[Path, Path]:
        saved.append(fig)
        return path.with_suffix(".png"), path.with_suffix(".svg")

    monkeypatch.setattr(sf, "_save", keep)
    return saved


def _references_are_grey_dashed_and_named(ax: Any) -> list[str]:
    """Every dashed line of the axes is palette.NEUTRAL and named in its legend (a band's second edge
    may go unnamed: the first names it); returns the names."""
    legend = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert all(to_hex(line.get_color()) == palette.NEUTRAL.lower() for line in dashed)
    names = [line.get_label() for line in dashed if not line.get_label().startswith("_")]
    assert set(names) <= set(legend) and (names or not dashed), (names, legend)
    return names


def test_the_statistics_figures_draw_references_grey_dashed_and_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = _capture_stats(monkeypatch)
    anova = one_factor_anova(pd.read_csv(ONL), "loss", "receivers")  # ratios; shown in % as the report does
    sf.level_means(anova, tmp_path / "means", threshold=0.01, title="loss", scale=0.01, unit="%")
    sf.residuals_vs_predicted(anova, tmp_path / "resid", scale=0.01, unit="%")
    sf.normal_qq(anova, tmp_path / "qq", scale=0.01, unit="%")
    sf.effects_chart(anova, tmp_path / "effects", scale=0.01, unit="%")
    sf.contrast_intervals(successive_differences(anova), tmp_path / "steps", scale=0.01, unit="%")
    rows = [{"build": 0, "metric": "m", "value": v} for v in (100, 102, 98, 101, 99)]
    rows += [{"build": b, "metric": "m", "value": v} for b, v in enumerate((101, 99, 100, 102, 98), 1)]
    (repro,) = reproducibility(pd.DataFrame(rows))
    sf.reproducibility_chart(repro, tmp_path / "repro")
    means, *_, rebuilds = saved
    names = {fig: _references_are_grey_dashed_and_named(fig.axes[0]) for fig in saved}
    # the capacity threshold: a criterion of the recommendation, not the critical level; its name says what
    assert names[means] == ["capacity threshold 1 %"]
    assert names[rebuilds] == ["tolerance ±5 %"]  # was black, the second series' colour
    assert len([line for line in rebuilds.axes[0].get_lines() if line.get_linestyle() == "--"]) == 2
    for fig in saved:
        assert _colours(fig) <= PALETTE | {WHITE}, _colours(fig) - PALETTE
        # no line in the grid's critical vermillion: none of these marks a critical level
        assert all(to_hex(line.get_color()) != palette.CRITICAL.lower() for line in fig.axes[0].get_lines())
