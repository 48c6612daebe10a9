"""Path priming: one unmeasured exchange over every flow's path before a step is measured.

The first packet to a neighbour waits for ARP; over a delay node that costs a whole extra round
trip (measured: the first of 30 pings over 2 × 20 ms took 80.2–82.8 ms, the others 40.1–40.5 ms).
So before each step the runner sends one ping from each flow's source to its destination and waits
for the answer (up to PRIME_TRIES tries of PRIME_WAIT_S, for lossy paths): neighbour entries on the
path are then resolved both ways, and no sample pays for path set-up. The samples themselves are
not touched. Each flow's record gets an event saying how its path was primed (`path_primed`) or
why it could not be (`path_not_primed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vnetbench.providers.base import Provider, ProviderError
from vnetbench.store.records import Event, MeasurementRecord

PRIME_TRIES = 3
PRIME_WAIT_S = 1
PRIMED = "path_primed"
NOT_PRIMED = "path_not_primed"


def prime_pair(provider: Provider, src: str, address: str, dst: str) -> Event:
    """Ping dst (at `address`, as seen from src) until one answer comes, at most PRIME_TRIES times."""
    argv = ["ping", "-n", "-c", "1", "-W", str(PRIME_WAIT_S), address]
    for attempt in range(1, PRIME_TRIES + 1):
        try:
            fin = provider.spawn(src, argv).wait(PRIME_WAIT_S + 5)
        except ProviderError as err:
            return Event(NOT_PRIMED, f"{src}→{dst}: could not run ping to prime the path ({err})")
        if fin.returncode == 0:
            rtt = re.search(r"time=([\d.]+) ms", fin.stdout or "")
            took = f" in {rtt.group(1)} ms" if rtt else ""
            return Event(PRIMED, f"{src}→{dst}: one unmeasured ping answered{took} (try {attempt})")
    return Event(
        NOT_PRIMED,
        f"{src}→{dst}: no answer to {PRIME_TRIES} unmeasured pings; the first samples may include "
        "path set-up (ARP)",
    )


def prime_paths(
    provider: Provider, records: list[MeasurementRecord], address_of: Callable[[str, str], str]
) -> None:
    """Prime each distinct (src, dst) pair of a step once, and note on every flow's record how its
    path was primed; address_of(dst, src) is dst's address seen from src."""
    done: dict[tuple[str, str], Event] = {}
    for rec in records:
        pair = (rec.src, rec.dst)
        if rec.src == rec.dst:
            continue
        if pair not in done:
            done[pair] = prime_pair(provider, rec.src, address_of(rec.dst, rec.src), rec.dst)
        rec.events.append(done[pair])
