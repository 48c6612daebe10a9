"""The colours of every chart vnetbench draws: the live dashboard's (dashboard.js and dashboard.css hold
the same hex strings; tests/unit/dashboard/test_palette.py checks they are equal) and the report's figures.

Series are Okabe & Ito's colour-blind safe palette ("Color Universal Design", 2008) without its
vermillion, which is too close to the failure red for dichromats: CIE76 ΔE 17.9 under tritanopia and
21.3 under deuteranopia (Machado, Oliveira & Fernandes 2009, severity 1.0), where every other series
colour is at least 30 from it; and without its yellow as a line: #F0E442 has a contrast of 1.3:1 on
white (WCAG 2.x), a seventh line hard to see at all. The seventh line is a violet, #7700CC (7.9:1),
which is at least 31 from every other line and 81 from the failure red in normal vision and every
dichromacy. Ordered for the common case of few lines: blue, black and orange stay apart in normal
vision and in every dichromacy. Orange (2.2:1) and sky blue (2.3:1) are below WCAG's 3:1 for
graphics too; darker shades of them come within ΔE 30 of the failure red or 15 of the blue for a
dichromat, so they stay until the palette is redesigned (tests/unit/dashboard/test_palette.py names
them). A dark outline has 3:1 by itself, but on a 1.5-2 px line it mixes with the colour into one
within ΔE 15 of the bluish green (sky blue) or the reddish purple (orange) for a tritanope: not used.

Levels (the dashboard's grid cells, the report's good/bad marks) are a blue–orange scale, never
red–green: blue for ok, yellow for warning, vermillion for critical (a filled cell with its level's
name written in it, where a light yellow reads well).

This module imports nothing, so every package may use it (the bottom layer of pyproject's contract).
"""

from __future__ import annotations

ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
BLACK = "#000000"
VIOLET = "#7700CC"  # not Okabe & Ito's: the seventh line, in yellow's place
OKABE_ITO = (ORANGE, SKY_BLUE, BLUISH_GREEN, YELLOW, BLUE, VERMILLION, REDDISH_PURPLE, BLACK)

# one colour per line of a chart, in this order (the dashboard shows at most this many lines)
SERIES = (BLUE, BLACK, ORANGE, SKY_BLUE, BLUISH_GREEN, REDDISH_PURPLE, VIOLET)
# a failed attempt (always also a × or a word, never the colour alone) and the table's failed rows
FAILED = "#B71C1C"
# the grid's levels, from good to bad (the level's name is written beside the colour)
OK = BLUE
WARNING = YELLOW
CRITICAL = VERMILLION
# what carries no level: a reference line (dashed and named: a link limit, received = offered, the
# dashboard's threshold lines), a result that is not significant. #555555, not a lighter grey: #808080
# was within CIE76 15 of the bluish green and the reddish purple lines for a dichromat (9.6, 11.8)
NEUTRAL = "#555555"
