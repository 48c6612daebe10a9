"""The colours of every chart vnetbench draws: the live dashboard's (dashboard.js and dashboard.css hold
the same hex strings; tests/unit/dashboard/test_palette.py checks they are equal) and the report's figures.

Every line colour has WCAG 2.x's 3:1 contrast on white (SC 1.4.11, graphics) and is at least CIE76 ΔE 30
from the failure red and 15 from every other line and from the reference lines' grey, in normal vision
and under deuteranopia, protanopia and tritanopia (Machado, Oliveira & Fernandes 2009, severity 1.0).
Four lines are Okabe & Ito's colour-blind safe palette ("Color Universal Design", 2008): blue, black,
bluish green, reddish purple. Their other four are not lines:

- vermillion: too close to the failure red for dichromats (ΔE 17.9 under tritanopia, 21.3 under
  deuteranopia);
- yellow: #F0E442 has 1.3:1 on white. In its place a violet, #7700CC (7.9:1);
- orange: #E69F00 has 2.2:1, and no orange has both 3:1 and ΔE 30 from the failure red: among every
  sRGB colour of CIELAB hue 40-80° and chroma ≥ 40 with 3:1, the farthest from it is #DC7D00 (3.01:1),
  29.8 under deuteranopia. In its place a dark magenta, #840474 (9.3:1): ΔE ≥ 44.5 from the red
  (tritanopia), 23.9 from the blue (protanopia) and 23.7 from the grey (deuteranopia) at the least;
- sky blue: #56B4E9 has 2.3:1, and its darker shades come within ΔE 15 of the blue for a tritanope.
  In its place an azure, #3594FF (3.07:1): ΔE 17.2 from the bluish green and from the blue under
  tritanopia (Okabe & Ito's own blue and bluish green are 17.0 apart there), ≥ 91 from the red.

Ordered for the common case of few lines: blue, black and magenta stay apart in normal vision and in
every dichromacy (ΔE ≥ 23.9).

Levels (the dashboard's grid cells, the report's good/bad marks) are a blue–orange scale, never
red–green: blue for ok, yellow for warning, vermillion for critical (a filled cell with its level's
name written in it, where a light yellow reads well).

This module imports nothing, so every package may use it (the bottom layer of pyproject's contract).
"""

from __future__ import annotations

BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
BLACK = "#000000"
# not Okabe & Ito's: lines in the place of their yellow, orange and sky blue (all below 3:1 on white)
VIOLET = "#7700CC"
MAGENTA = "#840474"
AZURE = "#3594FF"

# one colour per line of a chart, in this order (the dashboard shows at most this many lines)
SERIES = (BLUE, BLACK, MAGENTA, AZURE, BLUISH_GREEN, REDDISH_PURPLE, VIOLET)
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
