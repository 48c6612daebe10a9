"""Tool drivers: build a tool's command line and parse its output — nothing else.

driver.problems(measurement)        # what the tool cannot do, each with the fix (check before running)
cmds = driver.commands(measurement, FlowParams(...), offered_bps)
parsed = driver.parse(client_finished, server_finished)   # never raises
driver.version_command(), driver.parse_version(text)

One instance per tool lives here; which measurement kind uses which driver is the kind's to say
(kinds/: `kinds.driver_for("tcp")` is IPERF3).
"""

from __future__ import annotations

from vnetbench.drivers.base import Driver
from vnetbench.drivers.iperf3 import Iperf3Driver
from vnetbench.drivers.ping import PingDriver
from vnetbench.drivers.probe import CpushareDriver, ProbeFlowDriver, ProbeRttDriver

IPERF3 = Iperf3Driver()
PING = PingDriver()
PROBE = ProbeFlowDriver()
CPUSHARE = CpushareDriver()
PROBE_RTT = ProbeRttDriver()
ALL: tuple[Driver, ...] = (IPERF3, PING, PROBE, CPUSHARE, PROBE_RTT)

__all__ = ["ALL", "CPUSHARE", "IPERF3", "PING", "PROBE", "PROBE_RTT", "Driver"]
