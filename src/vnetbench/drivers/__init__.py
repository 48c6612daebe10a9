"""Tool drivers: build a tool's command line and parse its output — nothing else.

driver = driver_for("tcp")          # tcp, udp -> iperf3; rtt -> ping
driver.problems(measurement)        # what the tool cannot do, each with the fix (check before running)
cmds = driver.commands(measurement, FlowParams(...), offered_bps)
parsed = driver.parse(client_finished, server_finished)   # never raises
driver.version_command(), driver.parse_version(text)
"""

from __future__ import annotations

from vnetbench.drivers.base import Driver
from vnetbench.drivers.iperf3 import Iperf3Driver
from vnetbench.drivers.ping import PingDriver
from vnetbench.drivers.probe import CpushareDriver, ProbeFlowDriver, ProbeRttDriver

IPERF3 = Iperf3Driver()
PING = PingDriver()

# measurement kind -> driver; a new tool registers its kinds here
DRIVERS: dict[str, Driver] = {"tcp": IPERF3, "udp": IPERF3, "rtt": PING}
PROBE = ProbeFlowDriver()
DRIVERS.update(pps=PROBE, trace=PROBE, background=PROBE, cpushare=CpushareDriver())
DRIVERS["probe-rtt"] = ProbeRttDriver()


def driver_for(kind: str) -> Driver:
    try:
        return DRIVERS[kind]
    except KeyError:
        raise KeyError(
            f"no tool driver for measurement kind '{kind}' (known: {', '.join(sorted(DRIVERS))})"
        ) from None


__all__ = ["DRIVERS", "IPERF3", "PING", "PROBE", "Driver", "driver_for"]
