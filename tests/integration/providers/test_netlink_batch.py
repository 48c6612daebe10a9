"""One namespace's batch of thousands of netlink requests commits (issue 17).

A 1,000-node build with network shaping's relays sends thousands of requests into one host
namespace. Sent all at once, their acks overflowed the socket's receive buffer (ENOBUFS, acks
lost) and the build failed; a batch must read each chunk's acks before sending the next.
"""

from __future__ import annotations

import socket
import subprocess

from tests.helpers.integration.topology import new_campaign_id
from vnetbench.providers.local import netlink, netns

REQUESTS = 6000  # acks of ~6,000 requests are several times a default receive buffer (208 KiB)
LOOPBACK = 1  # ifindex of lo in a new namespace


def _address(i: int) -> netlink.Op:
    ip = f"198.19.{i // 250}.{i % 250 + 1}"
    return netlink.Op(
        f"address {ip} on lo",
        "addr",
        LOOPBACK,
        create=True,
        fields={"family": socket.AF_INET, "prefixlen": 32},
        attrs=[["IFA_LOCAL", ip], ["IFA_ADDRESS", ip]],
    )


def test_a_batch_of_thousands_of_requests_in_one_namespace_commits() -> None:
    name = f"vnb{new_campaign_id()}-batch"
    created: list[netns.Namespace] = []
    try:
        netns.create([name], created.append)
        (ns,) = created
        assert ns.nl is not None
        batch = netlink.Batch(name, ns.nl)
        batch.extend([_address(i) for i in range(REQUESTS)])
        batch.commit()
        shown = subprocess.run(
            ["ip", "-n", name, "-4", "-o", "addr", "show", "dev", "lo"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert sum("198.19." in line for line in shown.splitlines()) == REQUESTS
    finally:
        for ns in created:
            ns.close()
            netns.remove(ns.path)
