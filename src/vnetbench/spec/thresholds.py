"""Thresholds that colour the dashboard's grid (MaDDash-style: ok / warning / critical per cell).

A campaign or a measurement may carry `thresholds:`, a map from a summary metric to its levels:

    thresholds:
      loss_ratio: {warning: 0.1%, critical: 1%}                       # the value itself
      throughput_bps: {warning: 0.9, critical: 0.5, of: expected-max} # share of the overhead-model maximum
                                                                      # (or of the offered rate, if lower)
      rtt_mean_ns: {warning: 1.5, critical: 3, of: baseline}          # times the pair's best so far

Which side is worse follows from the order of the two levels (critical above warning: higher is worse),
or is said with `worse: above|below`. A value given `of: value` is read in the metric's unit, named by
its suffix (`_bps` a rate such as 50mbit, `_ns` a duration such as 2ms, `_ratio` a percentage).
The measurement's map is laid over the campaign's, which is laid over DEFAULT_THRESHOLDS.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from vnetbench.spec.units import parse_duration_ns, parse_rate, parse_ratio

METRIC_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"


class Threshold(BaseModel):
    # as models.Strict (not imported: models imports this module): a typo is an error
    model_config = ConfigDict(extra="forbid", frozen=True)

    warning: float | str = Field(description="the level from which a cell is 'warning'")
    critical: float | str = Field(description="the level from which a cell is 'critical'")
    of: Literal["value", "expected-max", "baseline"] = Field(
        "value",
        description="compare the value itself, its share of the expected maximum goodput (throughput; a "
        "constant-rate flow's offered rate where that is lower), or its ratio to the pair's best value in "
        "the campaign so far (baseline)",
    )
    worse: Literal["above", "below"] | None = Field(
        None, description="which side of the levels is bad (default: from their order)"
    )

    @model_validator(mode="after")
    def _direction(self) -> Threshold:
        if self.worse is None and self.warning == self.critical:
            raise ValueError("warning and critical are equal: say which side is bad with worse: above|below")
        return self

    @property
    def higher_is_worse(self) -> bool:
        if self.worse is not None:
            return self.worse == "above"
        return float(self.critical) > float(self.warning)


def _level_in_unit(metric: str, value: float | str, of: str) -> float:
    """A level as a number: in the metric's base unit for `of: value`, else a plain factor."""
    if of != "value" or isinstance(value, int | float):
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{metric}: {value!r} is not a number (of: {of} levels are factors)") from None
    for suffix, parse in (("_bps", parse_rate), ("_ns", parse_duration_ns), ("_ratio", parse_ratio)):
        if metric.endswith(suffix):
            try:
                return float(parse(value))
            except ValueError as exc:
                raise ValueError(f"{metric}: {exc}") from None
    try:
        return float(value)
    except ValueError:
        # '10%' on loss_ration: the unit is fine, the name is not one that takes a unit
        close = difflib.get_close_matches(metric, UNIT_METRICS, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ValueError(
            f"{metric}: {value!r} is not a number; only metrics named …_bps, …_ns or …_ratio take units{hint}"
        ) from None


def _resolve(thresholds: dict[str, Threshold]) -> dict[str, Threshold]:
    resolved = {}
    for metric, th in thresholds.items():
        if not re.fullmatch(METRIC_PATTERN, metric):
            raise ValueError(f"{metric!r} is not a metric name (lower case, digits, '_'; e.g. loss_ratio)")
        warning = _level_in_unit(metric, th.warning, th.of)
        critical = _level_in_unit(metric, th.critical, th.of)
        if th.worse is not None and warning != critical and (critical > warning) != (th.worse == "above"):
            # e.g. loss {warning: 5%, critical: 1%, worse: above}: every value past 1 % is critical first
            raise ValueError(
                f"{metric}: with worse: {th.worse} the critical level must lie {th.worse} the warning level "
                f"(here {th.critical} vs {th.warning}), or no cell can ever be 'warning'; swap the two levels"
            )
        resolved[metric] = th.model_copy(update={"warning": warning, "critical": critical})
    return resolved


Thresholds = Annotated[dict[str, Threshold], AfterValidator(_resolve)]

# Sensible defaults: loss as perfSONAR's MaDDash colours it (0.1 % / 1 %), throughput as a share of the
# overhead model's maximum goodput (ExoGENI reached 94 % on a physical link), RTT against the pair's own
# best value in the campaign (namespaces have no propagation delay to compare with).
# Metrics a threshold is usually set on (docs/drivers.md lists every stored metric): the hint for a
# misspelt name given a level with a unit.
UNIT_METRICS = (
    "throughput_bps", "sender_throughput_bps", "loss_ratio", "rtt_mean_ns", "rtt_median_ns", "rtt_p95_ns",
    "rtt_p99_ns", "rtt_max_ns", "jitter_mean_ns", "jitter_last_ns", "received_bps", "achieved_bps",
)  # fmt: skip
DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "throughput_bps": Threshold(warning=0.9, critical=0.5, of="expected-max"),
    "loss_ratio": Threshold(warning=0.001, critical=0.01),
    "rtt_mean_ns": Threshold(warning=1.5, critical=3.0, of="baseline"),
}


def thresholds_for(
    campaign_level: dict[str, Threshold] | None, measurement_level: dict[str, Threshold] | None
) -> dict[str, Threshold]:
    """The thresholds in force for one measurement: defaults < campaign < measurement, per metric."""
    return {**DEFAULT_THRESHOLDS, **(campaign_level or {}), **(measurement_level or {})}
