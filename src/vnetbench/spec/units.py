"""Parsing of the human units a campaign is written in: rates, durations, sizes, percentages.

Every parser returns plain integers or floats in base units (bit/s, ns, bytes, ratio) and raises
ValueError with a message that says what is accepted, so pydantic can pass it on to the user.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo, WithJsonSchema

_NUMBER = r"(?P<num>\d+(?:\.\d+)?)\s*"

_RATE_UNITS = {
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "tbit": 10**12,
    "bps": 1,
    "kbps": 10**3,
    "mbps": 10**6,
    "gbps": 10**9,
}
_PREFIX_NAMES = {"k": "kilo", "m": "mega", "g": "giga", "t": "tera"}
RATE_HELP = "a rate like 10mbit, 100mbit, 1gbit, 2.5gbit or 500kbit (bits per second, SI prefixes)"

_DURATION_UNITS = {
    "ns": 1,
    "us": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
DURATION_HELP = "a duration like 10s, 500ms, 2m or 1h (a bare number means seconds)"

_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2}
SIZE_HELP = "a size in bytes like 1470, 64K or 4M (K = 1024 bytes)"

PERCENT_HELP = "a percentage like 1% or 0.5% (or a ratio between 0 and 1)"


def _negative(value: object, help_text: str, what: str = "must not be negative") -> None:
    """'-1ms', '-100mbit': a sign the number pattern does not take; say so rather than 'not a duration'."""
    text = str(value).strip()
    if text.startswith("-") and re.fullmatch(_NUMBER + r"[a-zA-Z/%]*", text[1:].strip()):
        raise ValueError(f"{what}, got {value!r}; expected {help_text}")


# Below this, a rate without a unit is a forgotten unit (`rate: 100` meaning 100mbit), not 100 bit/s.
MIN_BARE_RATE = 1000


def is_stored(info: ValidationInfo) -> bool:
    """Validating a stored campaign's spec (report, analyze, resume): checks added after it ran, which
    refuse what was once accepted, are skipped there, so its measurements stay readable."""
    return bool(info.context and info.context.get("stored"))


def _number_text(value: object) -> object:
    """The number a text of digits stands for ('100', '1e8': YAML reads 1e8 without a dot as text);
    anything else as it is."""
    if isinstance(value, str) and re.fullmatch(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?", value.strip()):
        return float(value)
    return value


def no_bare_seconds(value: object, info: ValidationInfo) -> object:
    """A one-way delay written as a bare number of 1 or more (`delay: 10`, a delay_cdf point's
    `[1, 40]`): refused for a new campaign, since it meant milliseconds far more often than that
    many seconds one way. Below 1 (`0.01`) it is seconds, as every duration of the spec."""
    if is_stored(info):
        return value
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        number = float(value)
    if number is not None and number >= 1:
        raise ValueError(
            f"{value!r} without a unit is {number:g} s one way; write {number:g}ms for milliseconds "
            f"(or {number:g}s if you mean seconds)"
        )
    return value


def _unit_given(value: object, info: ValidationInfo) -> object:
    """A bare rate below MIN_BARE_RATE: refused for a new campaign as a forgotten unit."""
    value = _number_text(value)
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is not None and 0 < number < MIN_BARE_RATE and not is_stored(info):
        raise ValueError(
            f"{number!r} without a unit is {number:g} bit/s (a 1500-byte frame would take "
            f"{12000 / number:.0f} s); write the unit, e.g. {number:g}mbit; expected {RATE_HELP}"
        )
    return value


def parse_rate(value: object) -> int:
    """'100mbit' -> 100_000_000 (bits per second); a bare number (1e8, or the text '1e8') is bit/s."""
    if isinstance(value, bool):
        raise ValueError(f"expected {RATE_HELP}")
    value = _number_text(value)
    if isinstance(value, int | float):
        if value <= 0:
            raise ValueError(f"must be positive, got {value!r}; expected {RATE_HELP}")
        return int(value)
    _negative(value, RATE_HELP, "must be positive")
    match = re.fullmatch(_NUMBER + r"(?P<unit>[a-zA-Z/]+)", str(value).strip())
    byte_unit = match and re.fullmatch(r"(?P<prefix>[kKmMgGtT]?)B(?:ps|/s)", match["unit"])
    if byte_unit:
        # A capital B is bytes (MB/s, MBps); lower-cased it would silently be read as bits, 8x off.
        bits = round(float(match["num"]) * 8 * _RATE_UNITS[byte_unit["prefix"].lower() + "bit"])
        raise ValueError(
            f"{value!r} is bytes per second (capital B); rates are written in bits: write "
            f"{format_rate_spec(bits)} for the same rate; expected {RATE_HELP}"
        )
    unit = match and match["unit"].lower().removesuffix("/s")
    if match and unit in ("k", "m", "g", "t", "kb", "mb", "gb", "tb"):  # `100mb`, `10M`: bits or bytes?
        bits = f"{match['num']}{unit[0]}bit"
        raise ValueError(
            f"{value!r} is not a rate: its unit says neither bits nor bytes; write {bits} for "
            f"{match['num']} {_PREFIX_NAMES[unit[0]]}bits per second; expected {RATE_HELP}"
        )
    if not match or unit not in _RATE_UNITS:
        raise ValueError(f"{value!r} is not a rate; expected {RATE_HELP}")
    bits = float(match["num"]) * _RATE_UNITS[unit]
    if bits <= 0:
        raise ValueError(f"must be positive, got {value!r}; expected {RATE_HELP}")
    return round(bits)


def parse_duration_ns(value: object) -> int:
    """'500ms' -> 500_000_000 (nanoseconds)."""
    if isinstance(value, bool):
        raise ValueError(f"expected {DURATION_HELP}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"must not be negative, got {value!r}; expected {DURATION_HELP}")
        return round(value * 10**9)
    _negative(value, DURATION_HELP)
    match = re.fullmatch(_NUMBER + r"(?P<unit>[a-z]*)", str(value).strip().lower())
    if not match or match["unit"] not in {*_DURATION_UNITS, ""}:
        raise ValueError(f"{value!r} is not a duration; expected {DURATION_HELP}")
    return round(float(match["num"]) * _DURATION_UNITS.get(match["unit"] or "s", 1))


def parse_size_bytes(value: object) -> int:
    """'64K' -> 65536 (bytes)."""
    if isinstance(value, bool):
        raise ValueError(f"expected {SIZE_HELP}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"must be positive, got {value!r}; expected {SIZE_HELP}")
        return value
    _negative(value, SIZE_HELP, "must be positive")
    match = re.fullmatch(_NUMBER + r"(?P<unit>[a-zA-Z]*)", str(value).strip())
    if not match or match["unit"].lower() not in _SIZE_UNITS:
        raise ValueError(f"{value!r} is not a size; expected {SIZE_HELP}")
    size = int(float(match["num"]) * _SIZE_UNITS[match["unit"].lower()])
    if size <= 0:
        raise ValueError(f"must be positive, got {value!r}; expected {SIZE_HELP}")
    return size


def parse_ratio(value: object) -> float:
    """'1%' -> 0.01; 0.01 -> 0.01."""
    if isinstance(value, bool):
        raise ValueError(f"expected {PERCENT_HELP}")
    text = str(value).strip()
    try:
        ratio = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a percentage; expected {PERCENT_HELP}") from None
    if ratio < 0:
        raise ValueError(f"must not be negative, got {value!r}; expected {PERCENT_HELP}")
    if ratio > 1 and not text.endswith("%"):
        # `loss: 5` meant 5 %: a bare number is a ratio, so it read as 500 %
        raise ValueError(
            f"{value!r} without '%' is a ratio, {ratio * 100:g} %; write {text}% for {text} percent "
            f"(or the ratio {ratio / 100:g}); expected {PERCENT_HELP}"
        )
    if ratio > 1:
        raise ValueError(f"{value!r} is outside 0–100 %; expected {PERCENT_HELP}")
    return ratio


def format_rate(bits_per_second: float) -> str:
    """100_000_000 -> '100 Mbit/s' (for tables and figures)."""
    for factor, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if abs(bits_per_second) >= factor:
            return f"{bits_per_second / factor:.4g} {unit}"
    return f"{bits_per_second:.4g} bit/s"


def format_rate_spec(bits_per_second: int) -> str:
    """100_000_000 -> '100mbit' (the form tc and the spec accept)."""
    for factor, unit in ((10**9, "gbit"), (10**6, "mbit"), (10**3, "kbit")):
        if bits_per_second % factor == 0:
            return f"{bits_per_second // factor}{unit}"
    return f"{bits_per_second}bit"


def format_duration(ns: float) -> str:
    """Nanoseconds as the largest unit that fits: 1.5 s, 250 ms, 40 µs, 900 ns."""
    for factor, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(ns) >= factor:
            return f"{ns / factor:.4g} {unit}"
    return f"{ns:.4g} ns"


# ------------------------------------------------------------- the units a person reads stored metrics in
# Stored names carry their base unit (throughput_bps, rtt_ns, loss_ratio); a table, a figure or a
# sentence shows each in one unit: Mbit/s, ms, K pps, %. report/format.py formats with these; analysis
# sentences (reproducibility, capacity) use `format_metric` so they read the same.


@dataclass(frozen=True)
class DisplayUnit:
    scale: float  # stored value / scale = the value shown
    label: str  # "Mbit/s", "ms", "K pps", "%", "" (a plain number)
    digits: int = 4  # significant digits
    delta_label: str = ""  # the unit of a difference, when it is not `label` (% -> percentage points)

    def of(self, value: float) -> float:
        return value / self.scale


PLAIN = DisplayUnit(1.0, "")
_SUFFIX_UNITS = (  # by the stored name's ending
    ("_bps", DisplayUnit(1e6, "Mbit/s")),
    ("_ns", DisplayUnit(1e6, "ms", 3)),
    ("_pps", DisplayUnit(1e3, "K pps")),
    ("_ratio", DisplayUnit(0.01, "%", 3, "pp")),
    ("_bytes", DisplayUnit(1.0, "bytes", 6)),
    ("_packets", DisplayUnit(1.0, "packets", 9)),
    ("_s", DisplayUnit(1.0, "s", 3)),
)
_NAMED_UNITS = {"jain_index": PLAIN, "pps": _SUFFIX_UNITS[2][1], "loss": _SUFFIX_UNITS[3][1]}


def display_unit(metric: str) -> DisplayUnit:
    """The unit a stored metric is shown in, from its name ('rtt vma→vmb rtt_mean_ns': the last word)."""
    name = metric.split()[-1] if metric.strip() else metric
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    return next((unit for suffix, unit in _SUFFIX_UNITS if name.endswith(suffix)), PLAIN)


# Measured quantities that cannot be negative, by their stored name: rates, counts, loss, RTT and
# jitter (a difference, a residual or a clock offset can be).
_NONNEGATIVE_SUFFIXES = ("_bps", "_pps", "_bytes", "_packets")
_NONNEGATIVE_PREFIXES = ("rtt", "jitter", "loss")


def cannot_be_negative(metric: str) -> bool:
    """Whether a stored metric ('throughput_bps', 'loss_ratio', 'rtt_mean_ns', ...) is never below 0."""
    name = metric.split()[-1] if metric.strip() else metric
    return name == "pps" or name.endswith(_NONNEGATIVE_SUFFIXES) or name.startswith(_NONNEGATIVE_PREFIXES)


def metric_name(metric: str, after: str = "") -> str:
    """A stored name without its unit, for people: 'rtt_mean_ns' -> 'rtt mean', 'loss_ratio' -> 'loss'.
    `after` is the measurement's name written before it, so not repeated: after 'rtt', 'rtt_mean_ns'
    is 'mean' ('rtt vma→vmb mean', not 'rtt vma→vmb rtt mean'); after 'tcp', 'throughput'."""
    name = metric
    for suffix, _ in _SUFFIX_UNITS:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    name = name.replace("_", " ")
    said = f"{after.strip()} "
    return name[len(said) :] if after.strip() and name.startswith(said) else name


def plain_number(x: float, digits: int = 4) -> str:
    """`digits` significant digits, never in exponent form: 95300000 -> '95300000', 0.000123 -> '0.000123'.
    Integers keep every digit; missing values are ''."""
    if x is None or not math.isfinite(x):
        return "" if x is None or math.isnan(x) else ("∞" if x > 0 else "-∞")
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    if decimals and abs(float(text)) >= 10 ** (digits - decimals):  # rounded up to the next power
        text = f"{x:.{decimals - 1}f}"  # of ten: 0.99999 to four digits is 1.000, not 1.0000
    return text.lstrip("-") if float(text) == 0 else text  # never '-0.000'


def percent_of(ratio: float) -> str:
    """A share (a ratio, 0.5 for half) as a percentage with two decimals, or two significant digits
    below 0.01 % (1 of 60,000 is '0.0017 %', not '0.00 %'), never in exponent form (1 of 10 million is
    '0.00001 %', not '1e-05 %'): the report's loss tables and the tools' events write shares so."""
    if 0 < abs(ratio) < 1e-4:
        text = plain_number(100 * ratio, 2)
        return f"{text.rstrip('0').rstrip('.') if '.' in text else text} %"
    return f"{100 * ratio:.2f} %"


# The minus sign of a signed number in text people read (reports, terminal tables, sentences): '−'
# (U+2212), as wide as '+' and as typeset numbers write it; an ASCII hyphen beside '+86.08' reads as
# a dash, not a sign. Exports (CSV, Parquet, `--json` values) keep the ASCII '-' that programs parse.
MINUS = "\u2212"


def minus(text: str) -> str:
    """A formatted number with its leading ASCII '-' as the minus sign: '-86.08' -> '−86.08'."""
    return MINUS + text[1:] if text.startswith("-") else text


def signed(x: float, spec: str = "g") -> str:
    """`x` formatted with `spec` and its sign, for a difference or a change: '+5.0' and '−5.0'
    (signed(0.05, '.1f')). A value that rounds to zero has no sign ('0.0', neither '+0.0' nor
    '-0.0'), as `format_metric`'s differences."""
    text = format(x, spec)
    if not math.isfinite(x):
        return minus(text)
    if float(text) == 0:
        return text.lstrip("+-")
    return minus(text) if x < 0 else "+" + text


def format_metric(metric: str, value: float | None, unit: bool = True, delta: bool = False) -> str:
    """A stored value in its display unit: format_metric('throughput_bps', 95.3e6) -> '95.30 Mbit/s'.
    `delta` marks a difference: signed, '+0.07172 Mbit/s' and '−86.08 Mbit/s' (U+2212, see `MINUS`;
    zero unsigned), a difference of percentages in percentage points."""
    u = display_unit(metric)
    if value is None or not math.isfinite(value):
        return plain_number(value)  # type: ignore[arg-type]
    text = plain_number(u.of(value), u.digits)
    if delta:
        text = minus(text) if value < 0 else ("+" + text if value > 0 else text)
    label = (u.delta_label or u.label) if delta else u.label
    return f"{text} {label}" if unit and label else text


def format_interval(low: float, high: float, digits: int = 4, label: str = "", fixed: bool = False) -> str:
    """A confidence interval as people read one, in every text vnetbench prints (the report's Findings
    and tables, the terminal, analysis sentences): '(95.53 to 95.70)', '(−0.5100 to 0.5800)', with
    `label` '(1.0 to 3.0) %'. Each end has `digits` significant digits, its zeros kept (`fixed`:
    `digits` decimals), or as many more (up to 3) as write two different ends apart ('(237.9 to
    238.0)', not '(238 to 238)'); a negative end has the minus sign (`MINUS`), a positive one no '+';
    '–' (an en dash) when an end is missing. 'to', not a comma: a comma between the ends reads as a
    list, or as a thousands separator beside '1,204'. Exports and `--json` keep the two numbers."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "–"
    ends = interval_ends(float(low), float(high), digits, fixed)
    return f"({ends[0]} to {ends[1]})" + (f" {label}" if label else "")


def format_metric_interval(
    metric: str, low: float, high: float, unit: bool = False, delta: bool = False
) -> str:
    """`format_interval` in a stored metric's display unit with its digits: ('throughput_bps', 95.1e6,
    95.42e6) -> '(95.10 to 95.42)'; with `unit` '(95.10 to 95.42) Mbit/s'; `delta` for an interval of
    a difference, in the difference's unit (percentage points of a loss: '(−0.300 to 0.100) pp')."""
    u = display_unit(metric)
    label = (u.delta_label or u.label) if delta else u.label
    if low is None or high is None:
        return format_interval(low, high)  # type: ignore[arg-type]
    return format_interval(u.of(low), u.of(high), u.digits, label if unit else "")


def interval_ends(low: float, high: float, digits: int = 4, fixed: bool = False) -> tuple[str, str]:
    """The two ends `format_interval` writes: (−1.601, −1.571) -> ('−1.601', '−1.571')."""
    if fixed:
        wider = _widened(digits, low, high, _fixed)
        return minus(_fixed(low, wider)), minus(_fixed(high, wider))
    wider = digits_apart(digits, low, high)
    return minus(plain_number(low, wider)), minus(plain_number(high, wider))


def digits_apart(digits: int, low: float, high: float) -> int:
    """`digits` significant digits, or as many more (up to 3) as write two different values apart:
    a min of 237.9 ms and a max of 238.4 ms are '238' and '238' to the 3 digits of an RTT, 237.9 and
    238.4 to 4. Equal values keep `digits`."""
    return _widened(digits, low, high, plain_number)


def _widened(digits: int, low: float, high: float, write: Callable[[float, int], str]) -> int:
    """`digits` (significant digits or decimals, as `write` counts them), or up to 3 more while two
    different values would be written alike."""
    wider = digits
    if low != high:
        while wider < digits + 3 and write(low, wider) == write(high, wider):
            wider += 1
    return wider


def _fixed(x: float, decimals: int) -> str:
    """x with `decimals` decimals, never '-0.0'."""
    text = f"{x:.{decimals}f}"
    return text.lstrip("-") if float(text) == 0 else text


# Annotated types for the pydantic models: parse on input, keep base units inside.
def _schema(description: str, pattern: str) -> WithJsonSchema:
    return WithJsonSchema(
        {"anyOf": [{"type": "string", "pattern": pattern}, {"type": "number"}], "description": description}
    )


Rate = Annotated[
    int,
    BeforeValidator(parse_rate),
    BeforeValidator(_unit_given),  # runs first (pydantic runs before-validators last to first)
    PlainSerializer(format_rate_spec, return_type=str),
    _schema(RATE_HELP, r"^\d+(\.\d+)?\s*[a-zA-Z/]+$"),
]
DurationNs = Annotated[
    int, BeforeValidator(parse_duration_ns), _schema(DURATION_HELP, r"^\d+(\.\d+)?\s*[a-z]*$")
]
SizeBytes = Annotated[
    int, BeforeValidator(parse_size_bytes), _schema(SIZE_HELP, r"^\d+(\.\d+)?\s*[a-zA-Z]*$")
]
Ratio = Annotated[float, BeforeValidator(parse_ratio), _schema(PERCENT_HELP, r"^\d+(\.\d+)?%?$")]
