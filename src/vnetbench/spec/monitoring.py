"""The monitor's part of a campaign spec (issue 16): `monitor:` (when to run) and `alerts:` (what to watch).

    monitor:
      repeat: PT10M          # ISO-8601 duration (or 10m), from one run's start to the next; or
      cron: "*/10 * * * *"   # a cron rule, in UTC
      slip: 30s              # each start is delayed by a random amount in [0, slip] (perfSONAR's sliprand)
      max_runs: 240          # stop after this many runs (default: run until stopped)
      until: 2026-12-01T00:00:00Z
    alerts:
      - {name: lossy, measurement: udp, metric: loss_ratio, op: ">", threshold: 1%, for_runs: 3}

A monitored campaign is ONE campaign in the store; its runs are its repetitions (run n = repetition n).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from vnetbench.spec.units import format_metric, parse_duration_ns, parse_rate, parse_ratio

REPEAT_HELP = (
    "an ISO-8601 duration like PT10M, PT1H or P1D, or a duration like 10m, 1h (a bare number is seconds)"
)
_ISO_DURATION = TypeAdapter(dt.timedelta)


def parse_period_ns(value: object) -> int:
    """'PT10M' (ISO 8601, as perfSONAR writes it) or '10m' -> nanoseconds."""
    text = str(value).strip()
    if text.startswith("-"):  # a duration, but one that goes back: not "not a duration"
        raise ValueError(f"must not be negative, got {value!r}; expected {REPEAT_HELP}")
    if text[:1].upper() == "P":
        try:
            delta = _ISO_DURATION.validate_python(text.upper())
        except ValidationError:
            raise ValueError(f"{value!r} is not a duration; expected {REPEAT_HELP}") from None
        return int(delta.total_seconds() * 10**9)
    try:
        return parse_duration_ns(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a duration; expected {REPEAT_HELP}") from None


PeriodNs = Annotated[int, BeforeValidator(parse_period_ns)]
RuleName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,30}$")]


class _Strict(BaseModel):
    """As spec.models.Strict (unknown keys are errors); models.py imports this module, not the reverse."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class MonitorSchedule(_Strict):
    """When `vnetbench monitor` runs the campaign: every `repeat`, or on a `cron` rule (one of them)."""

    repeat: PeriodNs | None = Field(None, description=f"from one run's start to the next: {REPEAT_HELP}")
    cron: str | None = Field(None, description="a cron rule (minute hour day month weekday), in UTC")
    slip: PeriodNs = Field(0, description="delay each start by a random amount in [0, slip]")
    max_runs: int | None = Field(None, ge=1, description="stop after this many runs (default: no limit)")
    until: dt.datetime | None = Field(
        None, description="start no run after this time (ISO 8601; UTC if no zone)"
    )

    @field_validator("repeat")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError(f"must be longer than zero; expected {REPEAT_HELP}")
        return value

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from croniter import croniter

        if not croniter.is_valid(value):
            raise ValueError(
                f"{value!r} is not a cron rule; expected five fields (minute hour day month weekday), "
                "e.g. '*/10 * * * *' for every ten minutes"
            )
        return value

    @field_validator("until", mode="before")
    @classmethod
    def _not_a_number(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):  # pydantic: seconds since 1970
            raise ValueError(
                f"{value!r} is not a time (a bare number would be read as seconds since 1970); "
                "expected an ISO-8601 time like 2026-12-11T00:00:00Z"
            )
        return value

    @field_validator("until")
    @classmethod
    def _utc(cls, value: dt.datetime | None) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value

    @model_validator(mode="after")
    def _one_rule(self) -> MonitorSchedule:
        if (self.repeat is None) == (self.cron is None):
            raise ValueError("give exactly one of repeat (e.g. PT10M) or cron (e.g. '*/10 * * * *')")
        return self


def threshold_value(metric: str, value: Any) -> float:
    """A threshold in the metric's base unit, read by the unit its name carries (_ratio, _bps, _ns)."""
    if isinstance(value, bool):
        raise ValueError("expected a number or a value with its unit")
    if isinstance(value, int | float):
        return float(value)
    if metric.endswith("_ratio"):
        return parse_ratio(value)
    if metric.endswith("_bps"):
        return float(parse_rate(value))
    if metric.endswith("_ns"):
        return float(parse_duration_ns(value))
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number (metric {metric} carries no unit)") from None


class AlertRule(_Strict):
    """'loss > 1 % for 3 runs': fires once when the last `for_runs` runs of a pair all break the rule,
    and clears when a run no longer does."""

    name: RuleName
    metric: str = Field(
        pattern=r"^[a-z][a-z0-9_]{0,63}$", description="a summary metric, e.g. loss_ratio, throughput_bps"
    )
    op: Literal[">", ">=", "<", "<="] = Field(description="how the value compares to the threshold to fire")
    threshold: float = Field(description="in the metric's unit: 1% for _ratio, 90mbit for _bps, 5ms for _ns")
    measurement: RuleName | None = Field(
        None, description="only this measurement (default: every one with the metric)"
    )
    for_runs: int = Field(1, ge=1, le=1000, description="consecutive runs that must break the rule")
    severity: Literal["warning", "critical"] = "warning"

    @field_validator("threshold", mode="before")
    @classmethod
    def _threshold_in_base_units(cls, value: Any, info: ValidationInfo) -> float:
        return threshold_value(info.data.get("metric", ""), value)

    def breaks(self, value: float) -> bool:
        limit = self.threshold
        return {
            ">": value > limit,
            ">=": value >= limit,
            "<": value < limit,
            "<=": value <= limit,
        }[self.op]

    def describe(self) -> str:
        runs = f" for {self.for_runs} runs" if self.for_runs > 1 else ""
        return f"{self.metric} {self.op} {format_metric(self.metric, self.threshold)}{runs}"
