"""A campaign whose every new descriptor is numbered above 1024, under a low soft RLIMIT_NOFILE.

Issue 17: a 1,000-node campaign crashed in the start gate (`select()` cannot watch a descriptor
above 1023) after a build that needed ~2,000 descriptors. Here 1,100 open descriptors stand in for
the namespaces (so the gate's pipes, the tools' output files and pidfds are all numbered above
1,024) and the soft limit is 1,200, below what the build of 63 namespaces needs on top of them: the
provider must raise it to the hard limit, start the tools through the gate with poll(), measure,
and leave nothing behind (run_spec checks namespaces and child processes).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from tests.helpers.integration.loss_runs import run_spec

PADDING = 1100
LOW_SOFT_LIMIT = 1200
PER_HOST = 30


def two_host_spec() -> str:
    """60 nodes on 2 hosts, a bridge per host, a VXLAN link between the hosts' first nodes."""
    nodes = [f"    - {{name: n{i}, host: h{1 + (i - 1) // PER_HOST}}}" for i in range(1, 2 * PER_HOST + 1)]
    links = [
        f"    - {{endpoints: [n{i}, sw{1 + (i - 1) // PER_HOST}], rate: 100mbit}}"
        for i in range(1, 2 * PER_HOST + 1)
    ]
    far = PER_HOST + 1
    return (
        "\n".join(
            [
                "name: many-descriptors",
                "topology:",
                "  hosts: [{name: h1}, {name: h2}]",
                "  nodes:",
                *nodes,
                "  switches: [{name: sw1, host: h1}, {name: sw2, host: h2}]",
                "  links:",
                *links,
                f"    - {{name: wan, endpoints: [n1, n{far}], rate: 100mbit, overlay: vxlan}}",
                "measurements: [{name: rtt, kind: rtt, count: 3, interval: 200ms}]",
                f"patterns: [{{name: p, kind: pairs, pairs: [[n1, n2], [n1, n{far}]], measurements: [rtt]}}]",
            ]
        )
        + "\n"
    )


def test_campaign_runs_with_descriptors_above_1024_under_a_low_soft_limit(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4 * PADDING:
        pytest.skip(f"the hard RLIMIT_NOFILE ({hard}) leaves no room above {PADDING} descriptors")
    padding: list[int] = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW_SOFT_LIMIT, hard))
    try:
        while len(os.listdir("/proc/self/fd")) < PADDING:
            padding.append(os.open(os.devnull, os.O_RDONLY))
        probe_r, probe_w = os.pipe()  # the next descriptors, as the gate's pipes will get them
        os.close(probe_r)
        os.close(probe_w)
        assert min(probe_r, probe_w) > 1024
        store, cid = run_spec(tmp_path, two_host_spec())
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard  # raised for the build
        frame = store.measurements_frame(cid)
        assert frame["status"].tolist() == ["ok", "ok"]
        assert (frame["received_packets"] == 3).all() and (frame["rtt_mean_ns"] > 0).all()
        assert store.campaign(cid)["status"] == "finished"
        store.close()
    finally:
        for fd in padding:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
