"""The campaign spec: what a user writes in YAML, as validated pydantic models.

Units are parsed on the way in (see units.py) so everything inside is in base units:
rates in bit/s, times in ns, sizes in bytes, ratios in [0, 1].
Cross-references (a link to a node that does not exist, ...) are checked in references.py,
so that every error carries the path of the field that is wrong.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from vnetbench.spec.delaycdf import CdfPoint, check_points
from vnetbench.spec.inventory import Inventory
from vnetbench.spec.monitoring import AlertRule, MonitorSchedule
from vnetbench.spec.thresholds import Thresholds
from vnetbench.spec.units import DurationNs, Rate, Ratio, SizeBytes, is_stored, no_bare_seconds

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,30}$"
MAX_DELAY_HOLD_NS = 3600 * 10**9  # a link's delay_hold: at most 1 h
NAME_HELP = "a name of 1–31 letters, digits, '-' or '_' starting with a letter"
Name = Annotated[str, Field(pattern=NAME_PATTERN, description=NAME_HELP)]


class Strict(BaseModel):
    """Unknown keys are errors: a typo must never be silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- topology


class Site(Strict):
    name: Name
    description: str = ""


class Host(Strict):
    """An emulated physical machine (a hypervisor): the nodes placed on it share its CPU quota."""

    name: Name
    site: Name | None = Field(None, description="the site this host is in (default: the only site)")
    cpu: float | None = Field(
        None, gt=0, le=64, description="CPU quota as a fraction of one core (0.5 = half a core), via cgroup"
    )


class Node(Strict):
    """A virtual machine: a network namespace placed on a host."""

    name: Name
    host: Name | None = Field(None, description="the host this node runs on (default: the only host)")
    cpu: float | None = Field(
        None, gt=0, le=64, description="CPU quota of this node alone (fraction of a core)"
    )


class Switch(Strict):
    name: Name
    kind: Literal["linux-bridge", "ovs"] = "linux-bridge"
    host: Name | None = Field(None, description="the host the switch runs on (default: the only host)")


class Link(Strict):
    """A link between two endpoints (nodes or switches), shaped per direction at each sending end."""

    name: Name | None = Field(None, description="default: the two endpoint names joined by '-'")
    endpoints: tuple[Name, Name] = Field(description="two node or switch names")
    rate: Rate | None = Field(None, description="shaping rate per direction; unshaped when absent")
    mtu: int = Field(1500, ge=576, le=9000)
    queue: SizeBytes | None = Field(
        None,
        description="shaper queue limit in bytes (default, shaping network: the link's bandwidth-delay"
        " product, at least min(125 KB, 50 ms at rate); shaping sender: 50 ms at rate)",
    )
    shaper: Literal["tbf", "htb"] = "tbf"
    pps: int | None = Field(
        None,
        ge=1,
        le=100_000_000,
        description="forwarding capacity in packets/s per direction (a switch's or vNIC's packet"
        " processing limit): each frame costs the shaper at least rate / pps bytes; without rate,"
        " rate = pps full frames",
    )
    shaping: Literal["network", "sender"] = Field(
        "network",
        description="network: the link's queue drops what exceeds the rate, the sender never blocks on it"
        " (a shaper in the hypervisor or the network); sender: the sending interface's own qdisc, which"
        " pushes back on the sender's socket (a physical NIC)",
    )
    delay: DurationNs | None = Field(None, description="one-way delay per direction (netem or a delay node)")
    jitter: DurationNs | None = Field(
        None, description="delay variation: uniform half-width, normal sd, or netem's pareto scale"
    )
    jitter_distribution: Literal["uniform", "normal", "pareto", "paretonormal"] = "uniform"
    delay_cdf: tuple[CdfPoint, ...] | None = Field(
        None,
        description="empirical one-way delay per direction instead of delay/jitter: (probability, delay)"
        " points of its CDF, probabilities rising from 0 to 1, delays not falling, joined linearly",
    )
    reorder: bool = Field(False, description="jitter may reorder frames (else a delay node keeps order)")
    delay_hold: DurationNs | None = Field(
        None,
        description="keep a drawn delay (delay_cdf, or delay ± jitter) for every frame of the next"
        " delay_hold, then draw anew, per direction (default: every frame draws its own): a path's"
        " delay in episodes, as queues make it; TCP over a per-frame tail sees reordering instead."
        " Needs a delay node",
    )
    loss: Ratio | None = Field(None, description="loss ratio per direction")
    loss_model: Literal["random", "gilbert-elliott"] = "random"
    loss_burst: float = Field(4.0, ge=1, le=1000, description="mean loss burst, frames (gilbert-elliott)")
    emulator: Literal["auto", "netem", "delay-node"] = Field(
        "auto", description="delay/jitter/loss by netem or a delay node (auto: netem if the kernel has it)"
    )
    overlay: Literal["vxlan"] | None = Field(
        None, description="carry a link between hosts in a VXLAN tunnel (the studies' stitched VLANs / GRE)"
    )

    @property
    def label(self) -> str:
        return self.name or "-".join(self.endpoints)

    @field_validator("delay_cdf")
    @classmethod
    def _delay_cdf_points(cls, value: Any) -> Any:
        return check_points(value)

    @field_validator("delay_hold")
    @classmethod
    def _delay_hold_range(cls, value: int | None) -> int | None:
        if value is not None and not 0 < value <= MAX_DELAY_HOLD_NS:
            raise ValueError(
                f"{value / 1e9:g} s is outside (0, 1 h]: hold a delay for e.g. 1s, or remove delay_hold "
                "to draw a delay per frame"
            )
        return value

    @field_validator("delay", "jitter", mode="before")
    @classmethod
    def _no_bare_seconds(cls, value: Any, info: ValidationInfo) -> Any:
        return no_bare_seconds(value, info)  # `delay: 10` meant 10 ms far more often than 10 s one way


class Topology(Strict):
    sites: list[Site] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    nodes: list[Node]
    switches: list[Switch] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)

    @field_validator("sites", mode="before")
    @classmethod
    def _sites_as_names(cls, value: Any) -> Any:
        # `sites: [ams, hou]` is accepted as a short form of `sites: [{name: ams}, {name: hou}]`.
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value


# ---------------------------------------------------------------- measurements


class _Measurement(Strict):
    name: Name
    timeout: DurationNs | None = Field(
        None, description="give up after this long (default: duration, or count × interval, + 45 s)"
    )
    thresholds: Thresholds | None = Field(
        None, description="dashboard colours per summary metric (spec/thresholds.py), over the campaign's"
    )


class TcpMeasurement(_Measurement):
    kind: Literal["tcp"]
    duration: DurationNs = Field(10 * 10**9, description="test length (iperf3 -t)")
    omit: DurationNs = Field(0, description="warm-up excluded from the summary (iperf3 -O)")
    streams: int = Field(1, ge=1, le=128, description="parallel streams (iperf3 -P)")
    congestion: str | None = Field(None, pattern=r"^[a-z0-9_]{1,16}$", description="congestion control (-C)")
    window: SizeBytes | None = Field(None, description="socket buffer / window size (iperf3 -w)")
    reverse: bool = Field(False, description="server sends, client receives (iperf3 -R)")
    interval: DurationNs = Field(10**9, description="sample interval of the time series (iperf3 -i)")


class UdpMeasurement(_Measurement):
    kind: Literal["udp"]
    duration: DurationNs = 10 * 10**9
    omit: DurationNs = 0
    rate: Rate | Literal["link"] = Field(
        "link",
        description="offered payload rate, or 'link': the most payload the link can carry "
        "(its rate × payload / frame size, see the overhead model)",
    )
    rate_factor: float = Field(
        1.0, gt=0, le=100, description="multiply the offered rate (2 = offer twice it)"
    )
    length: SizeBytes = Field(1470, description="UDP payload bytes per datagram (iperf3 -l)")
    streams: int = Field(1, ge=1, le=128)
    interval: DurationNs = 10**9
    window: SizeBytes | None = Field(
        None, description="socket buffer size on both ends (iperf3 -w); small values provoke socket drops"
    )


class RttMeasurement(_Measurement):
    kind: Literal["rtt"]
    count: int = Field(10, ge=1, le=1_000_000)
    interval: DurationNs = Field(10**9, description="between echo requests (ping -i; ≥ 2 ms)")
    size: SizeBytes = Field(56, description="ICMP payload bytes (ping -s)")
    deadline: DurationNs | None = Field(
        None,
        description="ping -W (default 2 s): how long ping waits after its last request when nothing was "
        "answered; not a per-reply deadline (with replies it waits 2 × the largest RTT, at least the "
        "interval)",
    )


class _ProbeFlow(_Measurement):
    """A constant-rate UDP flow of vnb-probe (send → recv): give `rate` (payload bit/s) or `pps`."""

    rate: Rate | None = Field(None, description="offered UDP payload rate (vnb-probe send --rate)")
    pps: int | None = Field(None, ge=1, le=10_000_000, description="offered packets/s (instead of rate)")
    size: SizeBytes = Field(
        1472, ge=18, le=65507, description="UDP payload bytes per packet (18 = a 64-byte frame)"
    )
    duration: DurationNs = Field(10 * 10**9, description="how long the sender sends")

    @model_validator(mode="after")
    def _one_rate(self) -> _ProbeFlow:
        if (self.rate is None) == (self.pps is None):
            raise ValueError("give exactly one of rate (payload bits/s, e.g. 10mbit) or pps (packets/s)")
        return self


class TraceMeasurement(_ProbeFlow):
    """Throughput over time in fine bins (the EC2 study's millisecond traces)."""

    kind: Literal["trace"]
    bin: DurationNs = Field(10**6, description="trace bin width (vnb-probe recv --trace-bin-us)")


class BackgroundMeasurement(_ProbeFlow):
    """A fixed-rate flow that runs during a pattern's other measurements (patterns: background)."""

    kind: Literal["background"]
    pairs: list[tuple[Name, Name]] = Field(min_length=1, description="[source, destination] of each flow")


class PpsMeasurement(_Measurement):
    """A sweep of offered packet rates × packet sizes: every (size, rate) is one step of its own."""

    kind: Literal["pps"]
    rates: list[Annotated[int, Field(ge=1, le=10_000_000)]] = Field(
        min_length=1, description="offered packet rates, packets/s"
    )
    sizes: list[Annotated[int, Field(ge=18, le=65507)]] = Field(
        [18], min_length=1, description="UDP payload bytes (18 = a 64-byte frame, 1472 = a 1500-byte packet)"
    )
    duration: DurationNs = Field(5 * 10**9, description="length of every step")
    busy_poll: bool = Field(False, description="receiver polls without sleeping (recv --busy-poll)")


class CpushareMeasurement(_Measurement):
    """The EC2 study's timestamp loop on a node: the share of time the node gets a CPU."""

    kind: Literal["cpushare"]
    duration: DurationNs = Field(5 * 10**9)
    threshold: DurationNs = Field(100_000, description="a clock step above this is time off the CPU")


class ProbeRttMeasurement(_Measurement):
    """Isochronous UDP RTT probes (vnb-probe rtt → echo), the echo's processing time removed."""

    kind: Literal["probe-rtt"]
    count: int = Field(100, ge=1, le=1_000_000)
    interval: DurationNs = Field(10**7, description="between probes")
    size: SizeBytes = Field(34, ge=34, le=65507, description="UDP payload bytes per probe")
    wait: DurationNs = Field(10**9, description="how long to wait for the last replies")


Measurement = Annotated[
    TcpMeasurement
    | UdpMeasurement
    | RttMeasurement
    | PpsMeasurement
    | TraceMeasurement
    | CpushareMeasurement
    | BackgroundMeasurement
    | ProbeRttMeasurement,
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- patterns


class _Pattern(Strict):
    name: Name | None = None
    measurements: list[Name] = Field(min_length=1, description="names of measurements to run")
    background: list[Name] = Field(
        default_factory=list, description="background measurements that run during every step"
    )


class PairsPattern(_Pattern):
    """Each pair measured on its own, one after another."""

    kind: Literal["pairs"]
    pairs: list[tuple[Name, Name]] = Field(min_length=1, description="[source, destination] node pairs")
    both_directions: bool = False


class StarPattern(_Pattern):
    """One source to many destinations at the same moment."""

    kind: Literal["star"]
    source: Name
    destinations: list[Name] = Field(min_length=1)
    count: int | None = Field(None, ge=1, description="use only the first N destinations (a factor handle)")
    alone: bool = Field(True, description="also measure each flow alone, for the competition verdict")


class FanInPattern(_Pattern):
    """Many sources to one destination at the same moment."""

    kind: Literal["fan-in"]
    sources: list[Name] = Field(min_length=1)
    destination: Name
    count: int | None = Field(None, ge=1, description="use only the first N sources (a factor handle)")
    alone: bool = True


class ParallelPattern(_Pattern):
    """Disjoint pairs measured at the same moment (the OpenStack study's tenants, each its own sender
    and receiver): every step starts one flow per pair behind one start barrier."""

    kind: Literal["parallel"]
    pairs: list[tuple[Name, Name]] = Field(
        min_length=1, description="[source, destination] of each simultaneous flow; no node in two pairs"
    )
    count: int | None = Field(None, ge=1, description="use only the first N pairs (a factor handle)")
    alone: bool = Field(True, description="also measure each pair alone, for the competition verdict")

    @field_validator("pairs")
    @classmethod
    def _disjoint(cls, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        first: dict[str, int] = {}
        for k, pair in enumerate(pairs):
            for node in dict.fromkeys(pair):
                if node in first:
                    raise ValueError(
                        f"node '{node}' is in pairs[{first[node]}] and pairs[{k}]; flows measured at the "
                        "same moment need disjoint pairs: give each pair its own nodes (for one source or "
                        "destination shared by several flows use kind: star or fan-in)"
                    )
                first[node] = k
        return pairs


class MeshPattern(_Pattern):
    """All ordered pairs; throughput tests never overlap on a node (perfSONAR's rule)."""

    kind: Literal["mesh"]
    nodes: list[Name] | None = Field(None, description="default: every node (at least two)")
    max_parallel: int = Field(1, ge=1, description="disjoint pairs measured at once")

    @field_validator("nodes")
    @classmethod
    def _two_or_more(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is not None and len(value) < 2 and not is_stored(info):
            raise ValueError(f"a mesh of {len(value)} node has no pair to measure: list at least two nodes")
        return value


class NodesPattern(_Pattern):
    """Measurements on one node at a time (cpushare): no destination."""

    kind: Literal["nodes"]
    nodes: list[Name] = Field(min_length=1)


Pattern = Annotated[
    PairsPattern | StarPattern | FanInPattern | ParallelPattern | MeshPattern | NodesPattern,
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- schedule and design


class Schedule(Strict):
    repetitions: int = Field(1, ge=1, le=100_000)
    interval: DurationNs = Field(0, description="from one repetition's start to the next (0: back to back)")
    rebuild: bool = Field(False, description="rebuild the topology from scratch before every repetition")
    order: Literal["as-written", "random"] = "as-written"
    seed: int | None = Field(None, description="seed for random order (recorded; default: drawn and stored)")
    retries: int = Field(0, ge=0, le=10, description="re-run a failed measurement up to this many times")
    pause: DurationNs = Field(0, description="pause between measurements (lets queues drain)")
    prime: bool = Field(
        True,
        description="before each step, one unmeasured ping per flow so that no sample pays for path"
        " set-up (ARP through a delay node)",
    )


class Factor(Strict):
    name: Name
    path: str = Field(
        description="the spec field this factor sets, e.g. measurements.tcp.congestion or "
        "topology.links.uplink.rate (named list items are addressed by name)",
        pattern=r"^[A-Za-z0-9_.-]+$",
    )
    levels: list[Any] = Field(min_length=1)


class Design(Strict):
    kind: Literal["full-factorial", "one-factor", "two-factor", "2k-r", "2k-p"] = "full-factorial"
    replications: int = Field(1, ge=1, le=10_000, description="1: no replication (two-factor, 2k-r, 2k-p)")
    generators: list[str] = Field(
        [],
        description="2k-p: each generated factor as a product of others, with the factors' letters A, B, C, "
        "… in the order they are listed, e.g. ['D=ABC'] (a half fraction; 'D=-ABC' the other half)",
    )
    randomize: bool = Field(True, description="randomise run order (seed recorded)")
    block_by_replication: bool = Field(False, description="randomise within each replication only")
    rebuild: bool = Field(False, description="rebuild the topology before every replication")


# what `analyze` can model against the factors: the responses of a group of simultaneous flows
# (analysis/campaign_data.py); a name outside them used to give no model and no word
RESPONSES = (
    "throughput_bps", "total_throughput_bps", "jain_index", "loss_ratio", "effective_throughput_bps",
    "rtt_mean_ns",
)  # fmt: skip


class Analysis(Strict):
    omit: DurationNs = Field(0, description="transient removal: drop samples in each flow's first seconds")
    confidence: float = Field(0.95, gt=0.5, lt=1)
    loss_threshold: Ratio = Field(0.01, description="capacity recommendation threshold")
    response: str | None = Field(
        None, description=f"metric analysed against the factors: one of {', '.join(RESPONSES)}"
    )
    outliers: Literal["none", "iqr", "mad"] = Field(
        "none", description="outlier policy: none excluded unless iqr (Tukey) or mad (modified z) is asked"
    )
    reproducibility_tolerance: Ratio = Field(
        0.05,
        gt=0,
        description="rebuilds agree when the whole Welch interval of their difference from the first "
        "build lies within ± this share of the first build's mean",
    )
    reproducibility_cv_max: Ratio = Field(
        0.05, gt=0, description="largest coefficient of variation of the rebuild means still 'reproducible'"
    )

    @field_validator("response")
    @classmethod
    def _known_response(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or value in RESPONSES or is_stored(info):
            return value
        near = difflib.get_close_matches(value, RESPONSES, n=1, cutoff=0.6)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise ValueError(
            f"'{value}' is not a response analyze can model; {hint}use one of {', '.join(RESPONSES)}, "
            "or remove response to model each kind's default"
        )


class Capture(Strict):
    """Packet capture (tcpdump) during every measurement, on chosen node interfaces."""

    interfaces: list[str] = Field(
        min_length=1, description="node names (every interface of the node) or NODE:IFNAME, e.g. vm1:eth0"
    )
    snaplen: SizeBytes = Field(96, description="bytes kept of each packet (tcpdump -s)")
    packets: int = Field(10_000, ge=1, le=10_000_000, description="stop after this many packets (tcpdump -c)")


class Telemetry(Strict):
    """Host and kernel counters sampled on every namespace a measurement involves."""

    enabled: bool = True
    interval: DurationNs = Field(10**9, description="sampling interval (≥ 50 ms)", ge=50 * 10**6)
    capture: Capture | None = None


class Campaign(Strict):
    name: Name
    description: str = ""
    topology: Topology
    measurements: list[Measurement] = Field(min_length=1)
    patterns: list[Pattern] = Field(min_length=1)
    schedule: Schedule = Field(default_factory=Schedule)
    factors: list[Factor] = Field(default_factory=list)
    design: Design | None = None
    analysis: Analysis = Field(default_factory=Analysis)
    thresholds: Thresholds | None = Field(
        None, description="dashboard colours per summary metric for every measurement (spec/thresholds.py)"
    )
    telemetry: Telemetry = Field(default_factory=Telemetry)
    inventory: Inventory | None = Field(
        None, description="run on existing hosts over SSH (docs/ssh-provider.md); absent: local namespaces"
    )
    # ---- the monitor (issue 16, spec/monitoring.py): when `vnetbench monitor` runs it, what it alerts on
    monitor: MonitorSchedule | None = Field(
        None, description="run periodically under `vnetbench monitor` (docs/monitoring.md)"
    )
    alerts: list[AlertRule] = Field(
        default_factory=list, description="rules checked after every monitored run (docs/monitoring.md)"
    )

    def measurement(self, name: str) -> Any:
        return next(m for m in self.measurements if m.name == name)
