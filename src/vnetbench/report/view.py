"""What a report is made of: sections holding tables, figures and short paragraphs (no rendering here)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TableView:
    """A table of display strings: rendered as HTML in the report and by rich in the terminal."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    title: str
    png: Path
    caption: str = ""
    wide: bool = False  # drawn across the page's width (a big topology)

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png.read_bytes()).decode()

    @property
    def svg_name(self) -> str:
        return self.png.with_suffix(".svg").name


@dataclass
class Section:
    title: str
    anchor: str
    intro: str = ""
    tables: list[TableView] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # short paragraphs (verdicts, reasons): text, <b> kept
    order: int | None = None  # where it goes when not at its module's ORDER (a study's main result first)
