"""What a reader must never see in a report (issue #15), checked on the page as a browser shows it.

`PAGE_JS` reads a rendered report (in headless Chromium, through Playwright: the test suite and
scripts/regenerate_scenarios.py) into plain data: every section's tables (title, headers, cells) and
figures (caption, whether the image loaded). `problems(page)` lists what is wrong:

- a raw-unit number: a large number in exponent form (9.56701e+07), a stored metric name with its base
  unit (throughput_bps, rtt_mean_ns) or a base unit (bit/s, ns) in a header, a fractional cell of seven
  digits or more;
- a numeric column in text order (1000, 10000, 100000, 200000, 30000: sorted as words, not numbers);
- an empty interval "(, )" or a "nan";
- a metric with data but no figure: every rebuilt metric and every placement table has its figure,
  every throughput, RTT and packet-rate section has at least one, and every image loads.
"""

from __future__ import annotations

import re
from typing import Any

PAGE_JS = """() => [...document.querySelectorAll('main > section')].map(s => ({
  id: s.id,
  title: (s.querySelector('h2') || {}).innerText || '',
  text: s.innerText,
  tables: [...s.querySelectorAll('table')].map(t => {
    const h = t.previousElementSibling;
    return {
      title: h && h.tagName === 'H3' ? h.innerText : '',
      headers: [...t.querySelectorAll('thead th')].map(c => c.innerText),
      rows: [...t.querySelectorAll('tbody tr')].map(r => [...r.querySelectorAll('td')].map(c => c.innerText)),
    };
  }),
  figures: [...s.querySelectorAll('figure')].map(f => ({
    caption: (f.querySelector('figcaption') || {}).innerText || '',
    loaded: [...f.querySelectorAll('img')].some(i => i.complete && i.naturalWidth > 0),
  })),
}))"""

EXPONENT = re.compile(r"(?<![\w.])\d(?:\.\d+)?e\+0*[4-9]\d*\b|(?<![\w.])\d(?:\.\d+)?e\+\d{2,}\b")
STORED_NAME = re.compile(r"\b[a-z][a-z0-9_]*_(?:bps|ns|pps)\b")
BASE_UNIT = re.compile(r"\((?:bit/s|ns|bits/s)\)|(?<![kMG])\bbit/s\b")
LONG_NUMBER = re.compile(r"^[-−]?\d{7,}\.\d+$")  # 95670100.5: bit/s (a seed or a count is an integer)
EMPTY_INTERVAL = re.compile(r"\(\s*,|,\s*\)|\bnan\b", re.I)
INTEGER = re.compile(r"^[-+−]?\d+$")  # a sign as the report writes it too: −1 (U+2212)
FIGURE_SECTIONS = ("tcp", "udp", "rtt")  # a section of these measurements always has a figure


def problems(page: list[dict[str, Any]]) -> list[str]:
    """Everything a reader should not see, one line each (empty: the report is clean)."""
    out: list[str] = []
    for section in page:
        for table in section["tables"]:
            where = f"{section['title']} / {table['title'] or 'table'}"
            out += _raw_units(where, table)
            out += _text_sorted(where, table)
            out += [f"{where}: empty interval or nan in {row}" for row in table["rows"] if _empty(row)]
        out += [
            f"{section['title']}: figure '{f['caption'][:60]}' did not load"
            for f in section["figures"]
            if not f["loaded"]
        ]
        out += _missing_figures(section)
    return out


def _raw_units(where: str, table: dict[str, Any]) -> list[str]:
    found = []
    for text in [table["title"], *table["headers"]]:
        for pattern in (EXPONENT, STORED_NAME, BASE_UNIT):
            found += [f"{where}: raw unit '{m.group(0)}' in '{text[:80]}'" for m in pattern.finditer(text)]
    for row in table["rows"]:
        for cell in row:
            hits = [m.group(0) for p in (EXPONENT, STORED_NAME) for m in p.finditer(cell)]
            hits += [cell] if LONG_NUMBER.match(cell.strip()) else []
            found += [f"{where}: raw unit '{h}' in a cell" for h in hits]
    return found


def _text_sorted(where: str, table: dict[str, Any]) -> list[str]:
    """Columns of integers (factor levels, rates) in the order of their text and not of their values."""
    out = []
    for i, header in enumerate(table["headers"]):
        cells = [row[i].strip() for row in table["rows"] if i < len(row)]
        values = [_number(c) for c in cells]
        if len(cells) < 3 or any(v is None for v in values):
            continue
        runs = _runs(cells)  # only contiguous blocks of distinct values matter (repeated keys group rows)
        numbers = [_number(c) for c in runs]
        # three or more values in text order and not in number order (two could be either by chance)
        if len(runs) >= 3 and runs == sorted(runs) and numbers != sorted(numbers):  # type: ignore[type-var]
            out.append(f"{where}: column '{header}' is sorted as text: {', '.join(runs[:8])}")
    return out


def _runs(cells: list[str]) -> list[str]:
    out: list[str] = []
    for c in cells:
        if not out or out[-1] != c:
            out.append(c)
    return out


def _number(cell: str) -> float | None:
    """The integer a key cell holds (a rate, a count of receivers), else None."""
    text = cell.replace(",", "").replace(" ", "").replace("−", "-")  # float() reads only ASCII '-'
    return float(text) if INTEGER.match(text) else None


def _empty(row: list[str]) -> bool:
    return any(EMPTY_INTERVAL.search(cell) for cell in row)


def _missing_figures(section: dict[str, Any]) -> list[str]:
    """Every metric with data has its figure."""
    figures = len(section["figures"])
    out = []
    if section["id"] in FIGURE_SECTIONS and figures == 0:
        out.append(f"{section['title']}: measurements but no figure")
    if section["id"] == "analysis-reproducibility":
        rows = sum(len(t["rows"]) for t in section["tables"] if t["title"].startswith("Rebuilds"))
        if figures < rows:
            out.append(f"{section['title']}: {rows} metrics but {figures} figures")
    if section["id"] == "analysis-placement":
        tables = sum(1 for t in section["tables"] if "per placement" in t["title"])
        if figures < tables:
            out.append(f"{section['title']}: {tables} metrics but {figures} figures")
    return out
