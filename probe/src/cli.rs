//! Command line: clap definitions, value parsers, and conversion into each module's options.

use std::net::SocketAddr;

use clap::{Args, Parser, Subcommand};

use crate::fields;

fn help(specific: &str) -> String {
    format!("{specific}\n\n{}", fields::COMMON)
}

/// vnetbench's native data-plane probe: constant-rate UDP with per-packet sequence numbers and
/// timestamps, exact loss/duplicate/reorder accounting, isochronous RTT, CPU share.
#[derive(Parser, Debug)]
#[command(name = "vnb-probe", version, propagate_version = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Send constant-rate UDP (slots anchored to the start; FIN with the exact count at the end).
    #[command(after_long_help = help(fields::SEND))]
    Send(SendArgs),
    /// Receive vnb-probe streams: loss, duplicates, reordering, jitter, IPDV, trace, OWD.
    #[command(after_long_help = help(fields::RECV))]
    Recv(RecvArgs),
    /// Answer RTT probes (many clients; garbage is counted, never answered).
    #[command(after_long_help = help(fields::ECHO))]
    Echo(EchoArgs),
    /// Isochronous RTT probes to an echo; the echo's processing time is removed.
    #[command(after_long_help = help(fields::RTT))]
    Rtt(RttArgs),
    /// Timestamp loop: gaps reveal time off the CPU; estimated CPU share vs /proc/stat steal.
    #[command(after_long_help = help(fields::CPUSHARE))]
    Cpushare(CpuArgs),
    /// Delay node: forward frames between two interfaces with delay, jitter, loss, rate.
    #[command(after_long_help = help(crate::delay::args::FIELDS))]
    Delay(crate::delay::args::DelayArgs),
}

/// Parse seconds (decimal) into ns; must be > 0.
pub fn parse_secs(s: &str) -> Result<u64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a number of seconds: {s:?}"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e7 {
        return Err(format!("seconds must be > 0 and finite: {s:?}"));
    }
    Ok((v * 1e9).round() as u64)
}

/// Parse a bit rate with an optional SI suffix (k, M, G, T; powers of 1000), e.g. "100M".
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('t' | 'T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("not a bit rate: {s:?} (e.g. 100M, 2.5G, 64000)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("bit rate must be > 0: {s:?}"));
    }
    Ok(v * mult)
}

fn parse_pps(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a packet rate: {s:?}"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e9 {
        return Err(format!("packet rate must be in (0, 1e9]: {s:?}"));
    }
    Ok(v)
}

pub use crate::pacing::auto_spin_ns;

/// Largest UDP payload of one IPv4 datagram, bytes: a GSO message may not exceed it.
pub const GSO_MAX_MESSAGE_BYTES: usize = 65_507;
/// The kernel's UDP_MAX_SEGMENTS (64 up to Linux 6.8, raised later): packets per GSO message.
pub const GSO_MAX_SEGMENTS: usize = 64;

/// Packets per GSO message: `want` (--gso-segments) or the most that fits, checked against 64
/// and 65507 bytes per message. Err names the flag and the fix.
pub fn gso_segments(size: usize, want: Option<u32>) -> Result<usize, String> {
    let fits = (GSO_MAX_MESSAGE_BYTES / size.max(1)).min(GSO_MAX_SEGMENTS);
    if fits < 2 {
        return Err(format!(
            "--gso needs at least 2 packets per message of at most {GSO_MAX_MESSAGE_BYTES} \
             bytes; --size {size} allows {fits}: use --size <= {} or leave out --gso",
            GSO_MAX_MESSAGE_BYTES / 2
        ));
    }
    match want {
        None => Ok(fits),
        Some(n) if (n as usize) <= fits => Ok(n as usize),
        Some(n) => Err(format!(
            "--gso-segments {n} x --size {size} = {} bytes exceeds {GSO_MAX_MESSAGE_BYTES} per \
             message: use --gso-segments <= {fits}",
            n as usize * size
        )),
    }
}

/// `send` arguments.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("rate_spec").required(true).args(["pps", "rate"])))]
pub struct SendArgs {
    /// Destination ADDR:PORT.
    #[arg(long)]
    pub dst: SocketAddr,
    /// Local ADDR:PORT to send from (default: any address, ephemeral port).
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// Packets per second (decimal allowed).
    #[arg(long, value_parser = parse_pps)]
    pub pps: Option<f64>,
    /// UDP payload bit rate, bits/s with optional k/M/G suffix (powers of 1000), like iperf3 -b;
    /// the packet rate is RATE / (8 x size).
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// UDP payload per packet, bytes (18..=65507). 18 bytes = a 64-byte Ethernet frame over IPv4
    /// (14 + 20 + 8 + 18 + 4); 1472 bytes = a 1518-byte frame (1500-byte MTU).
    #[arg(long, default_value_t = 18, conflicts_with = "frame_size",
          value_parser = clap::value_parser!(u32).range(18..=65507))]
    pub size: u32,
    /// Ethernet frame size incl. 14-byte header and 4-byte FCS, bytes (64..=1518 typical);
    /// payload = frame - 18 - IP header (20 or 40) - 8.
    #[arg(long)]
    pub frame_size: Option<u32>,
    /// Duration, seconds.
    #[arg(long, value_parser = parse_secs)]
    pub duration: u64,
    /// Stream id (u32), carried in packets of >= 22 bytes and in the FIN.
    #[arg(long, default_value_t = 0)]
    pub stream: u32,
    /// Sequence number of the first packet (u64; e.g. 4294967290 to cross 2^32).
    #[arg(long, default_value_t = 0)]
    pub first_seq: u64,
    /// After a stall, send at most MAX overdue packets in a burst (default 0: skip them all and
    /// count them in missed_slots_packets). Never unbounded.
    #[arg(long, default_value_t = 0)]
    pub catch_up: u64,
    /// A slot later than this many µs is overdue (skipped unless --catch-up). Pauses shorter
    /// than this (VM descheduling is often 0.1-2 ms) are made up by sending the due slots at once.
    #[arg(long, default_value_t = 5000)]
    pub stall_threshold_us: u64,
    /// Packets per sendmmsg call at most (with --gso: messages per call, each of up to
    /// --gso-segments packets).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// UDP GSO (UDP_SEGMENT, Linux >= 4.18; off by default): each sendmmsg message carries up to
    /// --gso-segments packets of --size back to back, each with its own seq and timestamp, and
    /// the kernel cuts it into datagrams as late as it can. Far less sender CPU per packet (100
    /// Mbit/s of 1472 B with a 5 ms quantum: ~0.3x iperf3's, benchmarks/probe/README.md), but
    /// a GSO buffer crosses veth, bridges and tc as ONE skb until it is segmented (at the
    /// receiver, or by tbf), so it loads a virtual network less per packet than the studies'
    /// traffic does, and AF_PACKET readers in the path (userspace OVS, vnetbench delay nodes)
    /// see super-frames. For cheap senders and background flows on veth/bridge/routed paths,
    /// not for packet-rate sweeps. Needs a pacing quantum to batch (e.g. --pacing-quantum-us
    /// 5000; per-slot pacing sends one packet per message) and --size + 28 (IPv4; 48 IPv6) within
    /// the path MTU; older kernels also need TX checksum offload on the outgoing device.
    #[arg(long, conflicts_with = "raw_iface")]
    pub gso: bool,
    /// With --gso: packets per message at most, 2..=64 and N x size <= 65507 bytes (default:
    /// the most that fits, e.g. 44 at 1472 bytes, 64 at <= 1023). A message carries the packets
    /// due at a wake-up up to N, so the pacing quantum sets the real count (reported as
    /// mean_message_packets): at 100 Mbit/s of 1472 B ~8.5 per message at 1 ms, ~42 at 5 ms.
    #[arg(long, requires = "gso", value_parser = clap::value_parser!(u32).range(2..=64))]
    pub gso_segments: Option<u32>,
    /// Start at this CLOCK_REALTIME instant (ns since the epoch): many senders start together.
    #[arg(long)]
    pub start_at_ns: Option<u64>,
    /// FIN datagrams sent at the end (2 ms apart), each with the exact count of packets sent.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub fin_count: u32,
    /// Busy-wait at most this many µs before each send time (the rest is an absolute
    /// clock_nanosleep); lower = less CPU, higher = less lateness. Default: 0 with a pacing quantum;
    /// per slot, period/20 clamped to 10..=50 µs (50 when the period is <= 50 µs).
    #[arg(long)]
    pub max_spin_us: Option<u64>,
    /// Wake at most once per Q µs and send all due slots in one sendmmsg (like iperf3's 1 ms
    /// pacing timer): far less CPU, bursts of up to Q µs of packets, lateness up to Q µs (it is
    /// measured and reported); 0: every packet at its own slot time. Default (auto): 0 up to
    /// 20K pps, 50 above (one wake-up per 50 µs instead of a spinning core).
    #[arg(long)]
    pub pacing_quantum_us: Option<u64>,
    /// Socket send buffer to ask for, bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub sndbuf: usize,
    /// Write the datagrams as raw Ethernet/IPv4/UDP frames on this interface (AF_PACKET, past the
    /// qdisc) instead of through a UDP socket, like a hardware or pktgen generator: the sender's
    /// IP/UDP stack is skipped, so it needs far less CPU per packet and leaves the CPU to what is
    /// measured (e.g. a delay node). Needs root, IPv4, --bind SRC_ADDR:PORT (written into every
    /// frame; nothing is bound) and --dst-mac. No ARP, no routing, no fragmentation: frames must
    /// fit the interface's MTU.
    #[arg(long, requires = "dst_mac")]
    pub raw_iface: Option<String>,
    /// Destination MAC of raw frames (--raw-iface): the receiver's interface MAC for a receiver
    /// that counts them, or any other unicast MAC to have the far side drop them at once (count
    /// them with interface counters).
    #[arg(long, requires = "raw_iface", value_parser = crate::rawframe::parse_mac)]
    pub dst_mac: Option<[u8; 6]>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `recv` arguments.
#[derive(Args, Debug)]
pub struct RecvArgs {
    /// ADDR:PORT to bind (port 0: any; the bound address is in the READY line).
    #[arg(long)]
    pub bind: SocketAddr,
    /// Stop after S seconds from READY.
    #[arg(long, value_parser = parse_secs)]
    pub duration: Option<u64>,
    /// Stop when no packet arrived for S seconds (after the first packet).
    #[arg(long, value_parser = parse_secs)]
    pub idle_timeout: Option<u64>,
    /// Stop once N streams have sent their FIN (then linger --fin-linger).
    #[arg(long)]
    pub expect_streams: Option<usize>,
    /// Seconds to keep receiving after the last awaited FIN.
    #[arg(long, value_parser = parse_secs, default_value = "0.2")]
    pub fin_linger: u64,
    /// RFC 7680 waiting time, seconds: a packet later than this (beyond the stream's minimum
    /// one-way delay) counts as lost.
    #[arg(long, value_parser = parse_secs, default_value = "2")]
    pub waiting_time: u64,
    /// Throughput trace bin width, µs (0: no trace).
    #[arg(long, default_value_t = 1000)]
    pub trace_bin_us: u64,
    /// Socket receive buffer to ask for, bytes (SO_RCVBUFFORCE when root).
    #[arg(long, default_value_t = 8 << 20)]
    pub rcvbuf: usize,
    /// Datagrams per recvmmsg call at most.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// Poll the socket without ever sleeping: one core at 100 %, but the sending side no longer
    /// pays for waking the receiver up (matters at several 100K pps on veth/loopback).
    #[arg(long)]
    pub busy_poll: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `echo` arguments.
#[derive(Args, Debug)]
pub struct EchoArgs {
    /// ADDR:PORT to bind.
    #[arg(long)]
    pub bind: SocketAddr,
    /// Stop after S seconds (default: run until SIGINT/SIGTERM, then print the report).
    #[arg(long, value_parser = parse_secs)]
    pub duration: Option<u64>,
    /// Datagrams per recvmmsg/sendmmsg call at most.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `rtt` arguments.
#[derive(Args, Debug)]
pub struct RttArgs {
    /// Echo ADDR:PORT.
    #[arg(long)]
    pub dst: SocketAddr,
    /// Interval between probes, seconds (send times anchored to the start).
    #[arg(long, value_parser = parse_secs, default_value = "0.01")]
    pub interval: u64,
    /// Number of probes.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub count: u64,
    /// Probe UDP payload, bytes (>= 34; the echo answers with the same size).
    #[arg(long, default_value_t = 34, value_parser = clap::value_parser!(u32).range(34..=65507))]
    pub size: u32,
    /// Seconds to wait for replies after the last probe; later replies count as lost.
    #[arg(long, value_parser = parse_secs, default_value = "1")]
    pub wait: u64,
    /// Start at this CLOCK_REALTIME instant (ns since the epoch).
    #[arg(long)]
    pub start_at_ns: Option<u64>,
    /// Leave out the per-probe records.
    #[arg(long)]
    pub no_records: bool,
    /// Busy-wait at most this many µs before each send time (default as for `send`).
    #[arg(long)]
    pub max_spin_us: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `cpushare` arguments.
#[derive(Args, Debug)]
pub struct CpuArgs {
    /// Loop duration, seconds.
    #[arg(long, value_parser = parse_secs, default_value = "10")]
    pub duration: u64,
    /// Gaps above this many µs count as time off the CPU.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub threshold_us: u64,
    /// Pin the loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// List at most this many gaps in `gaps`.
    #[arg(long, default_value_t = 10_000)]
    pub max_gaps: usize,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100M").unwrap(), 100e6);
        assert_eq!(parse_rate("2.5G").unwrap(), 2.5e9);
        assert_eq!(parse_rate("64000").unwrap(), 64000.0);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("-1M").is_err());
    }

    #[test]
    fn secs() {
        assert_eq!(parse_secs("1.5").unwrap(), 1_500_000_000);
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("nan").is_err());
    }

    #[test]
    fn gso_segments_fit_64_and_65507_bytes() {
        assert_eq!(gso_segments(1472, None).unwrap(), 44); // 44 x 1472 = 64768
        assert_eq!(gso_segments(18, None).unwrap(), 64);
        assert_eq!(gso_segments(1023, None).unwrap(), 64);
        assert_eq!(gso_segments(1024, None).unwrap(), 63);
        assert_eq!(gso_segments(32_753, None).unwrap(), 2);
        assert!(gso_segments(32_754, None).unwrap_err().contains("--size"));
        assert_eq!(gso_segments(1472, Some(8)).unwrap(), 8);
        assert_eq!(gso_segments(1472, Some(44)).unwrap(), 44);
        assert!(gso_segments(1472, Some(45))
            .unwrap_err()
            .contains("--gso-segments <= 44"));
    }
}
