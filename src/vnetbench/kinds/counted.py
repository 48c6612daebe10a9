"""What the echo kinds (rtt, probe-rtt) share: `count` probes every `interval`, not a duration."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Kind


class CountedKind(Kind):
    """A kind that sends `count` probes `interval` apart."""

    def planned_ns(self, m: Any) -> int:
        return int(m.count * m.interval)

    def flow_timing(self, m: Any) -> tuple[int, int]:
        return 0, 0  # the tool runs `count` probes, not for a duration
