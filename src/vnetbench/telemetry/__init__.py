"""Telemetry: what the kernel counted while a measurement ran — collection only, no analysis.

- `observer`  TelemetryObserver: the runner's observer that samples around every step
- `sampler`   a thread reading every source each interval, keeping counter deltas
- `sources`   local sources: host CPU, processes, a namespace's SNMP/interface/qdisc counters
- `procfs`, `nldump`  parsers of /proc files and netlink qdisc dumps
- `ovsstats`  userspace Open vSwitch port and datapath counters
- `remote`    the same counters read from hosts over SSH, and a flow's path from their routing
- `capture`   tcpdump on chosen interfaces during a measurement

What the counters say (where packets were lost, CPU against loss) is analysis (analysis/loss.py,
analysis/cpu.py).
"""
