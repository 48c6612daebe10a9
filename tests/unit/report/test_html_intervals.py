"""In the HTML report an interval and a number with its unit stay on one line. A table's last column
and the notes wrap (`td:last-child { white-space: normal }`: their text can be long), and in a narrow
browser window '(1.766 to 6.234)' broke after 'to', '94.2 Mbit/s' before its unit: two numbers, or a
number without its unit. `html.page` (what `write_report` writes) now puts each interval and each number
with its unit of those cells in a <span class="nowrap">, with plain spaces (rich_view.join_units' tie,
as the terminal keeps them). The tables are those test_intervals_on_one_line prints in the terminal:
intervals with their units, a note, and a headerless notes table whose second column is long."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import chromium_page, missing_browser
from tests.helpers.interval_tables import findings_view, unit_view
from vnetbench.report import html
from vnetbench.report.rich_view import NBSP
from vnetbench.report.view import Section, TableView

CAMPAIGN = {"name": "narrow", "id": "c1", "status": "done", "spec_text": "name: narrow\n"}
NUMBER_UNIT = re.compile(r"\d (?:Mbit/s|ms|%|pp)(?![\w/])")
CELL = re.compile(r"<td>((?:(?!</td>).)*)</td></tr>", re.S)  # a row's last cell
NOTE = re.compile(r'<p class="note">(.*?)</p>', re.S)


INTERVAL = re.compile(r"\([^()]*? to [^()]*?\)(?: (?:Mbit/s|ms|%|pp)(?![\w/]))?")


def _views() -> list[TableView]:
    return [unit_view(), findings_view()]


def _page(views: list[TableView]) -> str:
    intro = "Rebuilt five times: the throughput's interval (95.10 to 95.42) Mbit/s, the RTT 0.24 ms."
    return html.page(CAMPAIGN, [Section("Findings", "findings", intro=intro, tables=views)], "now")


def _wrapping_texts(views: list[TableView]) -> list[str]:
    """What the report lets wrap: each row's last cell and each note."""
    return [row[-1] for v in views for row in v.rows] + [v.note for v in views if v.note]


def _text(markup: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", markup))


def test_each_interval_and_number_with_its_unit_is_one_nowrap_span() -> None:
    page = _page(_views())
    shown = [*CELL.findall(page), *NOTE.findall(page)]
    texts = _wrapping_texts(_views())
    assert [_text(m) for m in shown] == texts  # the text as it was: plain spaces, nothing added
    assert NBSP not in page
    for markup, text in zip(shown, texts, strict=True):
        spans = [_text(s) for s in re.findall(r'<span class="nowrap">(.*?)</span>', markup)]
        for interval in INTERVAL.findall(text):  # whole, with its unit, inside one span
            assert sum(interval in s for s in spans) == text.count(interval), (interval, spans)
        for value in NUMBER_UNIT.findall(text):
            assert any(value in s for s in spans), (value, spans)
        # the cell still wraps between words outside the spans (the long note's text)
        assert len(_text(re.sub(r'<span class="nowrap">.*?</span>', "", markup)).split()) >= len(spans) - 1
    assert '<span class="nowrap">(95.10 to 95.42) Mbit/s</span>' in page  # the intro too
    assert ".nowrap { white-space: nowrap; }" in page


def test_a_cell_of_other_text_is_unchanged() -> None:
    view = TableView("failures", ["measurement", "reason"], [["udp a→b", "iperf3 <exit 1> & no reply"]])
    assert "<td>iperf3 &lt;exit 1&gt; &amp; no reply</td>" in _page([view])


# Each interval's text (inside a span or not) as a DOM Range: on one line when its rectangles share a top.
BROKEN_JS = r"""() => {
  const pattern = /\([^()]*? to [^()]*?\)(?: (?:Mbit\/s|ms|%|pp))?|\d (?:Mbit\/s|ms|%|pp)(?![\w\/])/g;
  const broken = [], seen = [];
  for (const el of document.querySelectorAll("td:last-child, p.note, p.intro")) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(pattern)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        seen.push(m[0]);
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  const lines = [...document.querySelectorAll("td:last-child")].map((td) => td.getClientRects()[0].height);
  return { broken, seen, tallest: Math.max(...lines) };
}"""


def _in_chromium(page_html: str, tmp_path: Path, width: int) -> dict[str, Any]:
    tmp_path.mkdir()
    (tmp_path / "index.html").write_text(page_html)
    with chromium_page(tmp_path / "chromium", width=width, height=800) as page:
        page.goto((tmp_path / "index.html").as_uri())
        return page.evaluate(BROKEN_JS)


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_a_narrow_window_breaks_no_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 360 px (a phone) the long cells wrap over several lines, each interval and value whole; the
    baseline, the same page without the spans, broke some."""
    after = _in_chromium(_page(_views()), tmp_path / "after", 360)
    assert after["broken"] == [] and len(after["seen"]) >= 10
    assert after["tallest"] > 60  # the notes' long cell still wraps: several lines of 13 px text
    monkeypatch.setattr(html, "unbroken_html", lambda text: text)
    before = _in_chromium(_page(_views()), tmp_path / "before", 360)
    assert before["broken"], before


def test_an_items_text_is_escaped_and_its_label_kept_bold() -> None:
    """Items went into the page as HTML (`| safe`): a factor's level, which a campaign may set to any
    text (`{path: description, levels: ["<script>…"]}` validates), reached the Findings' treatment
    labels as markup and ran in the reader's browser; onl-tcp-factorial's 'duration_s (< 0.01 % of the
    variation)' had a bare '<'. Now an item is text, its builder's <b>…</b> kept."""
    item = "<b>x=<script>alert(1)</script></b>: flows (q = 1.0); cc (< 0.01 % of the variation) & more"
    page = html.page(CAMPAIGN, [Section("Findings", "findings", items=[item])], "now")
    assert (
        "<li><b>x=&lt;script&gt;alert(1)&lt;/script&gt;</b>: flows (q = 1.0); "
        "cc (&lt; 0.01 % of the variation) &amp; more</li>"
    ) in page
    assert "<script>" not in page
