//! `vnb-probe send`: its flags, their conversion into the sender's options, and the JSON fields
//! its `--help` documents.

use std::net::SocketAddr;

use clap::Args;

use crate::pacing::{default_batch, default_quantum_ns, default_spin_ns, RateGiven};
use crate::send::{RawOut, SendOpts};
use crate::units::{parse_pps, parse_rate, parse_secs};

/// `send` fields, shown at the end of `vnb-probe send --help`.
pub const FIELDS: &str = "\
SEND FIELDS
  dst, src                      destination and local address:port
  stream_id                     stream id carried in packets >= 22 bytes and in the FIN
  payload_bytes                 UDP payload per packet (--size), bytes
  frame_bytes                   Ethernet frame per packet: 14 + IP (20/40) + 8 + payload + 4 FCS,
                                at least 64, bytes
  target_pps, target_bps        target packet rate (packets/s) and UDP payload bit rate (bits/s)
  duration_ns                   requested duration, ns
  slots_total_packets           slots in the schedule = round(target_pps x duration)
  sent_packets, sent_bytes      packets sent (= slots - missed) and their UDP payload bytes
  missed_slots_packets          slots skipped because they were overdue after a stall
  catch_up_max_packets          the --catch-up bound (overdue slots still sent after a stall)
  stall_threshold_ns            a slot later than this is overdue, ns (at least 2 quanta)
  pacing_quantum_ns             pacing quantum used, ns (0: each packet at its slot time)
  pacing_quantum_auto           true: the quantum was chosen from the rate (see --pacing-quantum-us),
                                not given with --pacing-quantum-us
  rate_given                    \"pps\" (--pps: a packet schedule) or \"bps\" (--rate: a bit rate, as
                                iperf3 -b); the default pacing depends on it
  sendmmsg_batch_messages       messages per sendmmsg call at most (--batch or its default)
  batch_auto                    true: the batch was chosen from the rate, not given with --batch
  burst_packets{count, min_packets, mean_packets, p50_packets, p99_packets, max_packets}
                                packets sent back to back per wake-up of the pacing loop (a
                                burst; count = wake-ups that sent): 1 when each packet has its
                                own slot time, the packets of a quantum with one
  wake_lateness{...}            wake-up time - planned wake-up time (slot or quantum boundary),
                                ns, of the wake-ups that had to wait: the pacing timer's own
                                error, apart from the quantum
  send_errors                   failed send calls, data and FIN, each counted; ECONNREFUSED on
                                the connected socket is an earlier datagram's ICMP unreachable
                                (the call sent nothing) and that call is retried once
  syscalls, mean_batch_packets  sendmmsg calls (retries too) and mean packets per call
  gso                           true: --gso, UDP GSO (UDP_SEGMENT) carried several packets per
                                message (one skb until the kernel segments it)
  gso_segments                  packets per sendmmsg message at most (1 without --gso)
  sent_messages                 messages the kernel took (= sent_packets without --gso)
  mean_message_packets          sent_packets / sent_messages: packets per message (per skb)
  first_seq                     sequence number of the first packet
  start_at_realtime_ns          --start-at-ns value, null if not given
  start_lateness_ns             first send - start_at, ns (null without --start-at-ns)
  first_send_realtime_ns        send timestamp of the first packet
  last_send_realtime_ns         send timestamp of the last packet
  send_window_ns                last - first send, ns
  achieved_pps                  (sent_packets - 1) / send_window, packets/s
  achieved_bps                  achieved UDP payload bit rate, bits/s
  achieved_l2_bps               achieved rate as Ethernet frames (header + FCS), bits/s
  achieved_l1_bps               achieved rate on a physical link (+20 B preamble/SFD/IFG), bits/s
  achieved_to_target_ratio      achieved_pps / target_pps (1.0 = exact)
  send_lateness{...}            send time - slot time of every packet, ns (own timing error)
  fin_sent_packets              FIN datagrams sent
  sndbuf_bytes                  socket send buffer granted, bytes
  max_spin_ns                   bound on the busy-wait before each slot, ns
  spin_margin_ns                final busy-wait margin before each deadline, ns
  cpu_user_ns, cpu_system_ns    CPU time of the sender (getrusage), ns
  raw_iface, raw_dst_mac        --raw-iface: interface the frames were written on and their
                                destination MAC; null when sent through a UDP socket";

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
#[command(allow_negative_numbers = true)]
#[command(group(clap::ArgGroup::new("rate_spec").required(true).args(["pps", "rate"])))]
pub struct SendArgs {
    /// Destination ADDR:PORT (an IP address; names are not resolved).
    #[arg(long, value_parser = crate::units::parse_dst)]
    pub dst: SocketAddr,
    /// Local ADDR:PORT to send from, of --dst's family (default: any address, ephemeral port).
    #[arg(long, value_parser = crate::units::parse_addr)]
    pub bind: Option<SocketAddr>,
    /// Packets per second, > 0 and at most 1e9 (decimal allowed).
    #[arg(long, value_parser = parse_pps)]
    pub pps: Option<f64>,
    /// UDP payload bit rate, bits/s with an optional k/M/G/T suffix (powers of 1000), like
    /// iperf3 -b: 100M = 100 Mbit/s, and a plain number is bits/s (100 = 100 bit/s). The packet
    /// rate is RATE / (8 x size).
    #[arg(long, value_parser = parse_rate, allow_hyphen_values = true)]
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
    /// Duration, seconds (a plain number > 0, e.g. 10 or 0.5).
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
    /// --gso-segments packets), 1..=1024. Default: twice the packets due per wake-up, within
    /// 64..=1024.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: Option<u32>,
    /// UDP GSO (UDP_SEGMENT, Linux >= 4.18; off by default): each sendmmsg message carries up to
    /// --gso-segments packets of --size back to back, each with its own seq and timestamp, and
    /// the kernel cuts it into datagrams as late as it can. Far less sender CPU per packet (100
    /// Mbit/s of 1472 B with a 5 ms quantum: ~0.3x iperf3's, benchmarks/probe/README.md), but
    /// a GSO buffer crosses veth, bridges and tc as ONE skb until it is segmented (at the
    /// receiver, or by tbf), so it loads a virtual network less per packet than the studies'
    /// traffic does, and AF_PACKET readers in the path (userspace OVS, vnetbench delay nodes)
    /// see super-frames. For cheap senders and background flows on veth/bridge/routed paths,
    /// not for packet-rate sweeps. A message carries the packets due at one wake-up: with --rate
    /// the default 1 ms quantum batches (~8.5 per message at 100 Mbit/s of 1472 B); with --pps up
    /// to 20K pps every packet is its own message unless --pacing-quantum-us is given. Needs
    /// --size + 28 (IPv4; 48 IPv6) within the path MTU; older kernels also need TX checksum
    /// offload on the outgoing device.
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
    /// FIN datagrams sent at the end (2 ms apart), each with the exact count of packets sent;
    /// 0..=100.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub fin_count: u32,
    /// Busy-wait at most this many µs before each send time (the rest is an absolute
    /// clock_nanosleep); lower = less CPU, higher = less lateness. Default: with --pps paced per
    /// slot, period/20 clamped to 10..=50 µs; else 0.
    #[arg(long)]
    pub max_spin_us: Option<u64>,
    /// Wake at most once per Q µs and send all due slots in one sendmmsg (like iperf3's 1 ms
    /// pacing timer): far less CPU, bursts of up to Q µs of packets, lateness up to Q µs (both
    /// measured and reported); 0: every packet at its own slot time. Default, from the rate
    /// (a timer wake-up costs more CPU than a packet): --pps (a packet schedule) up to 20K pps:
    /// 0; above: 64 packets' time, at most 1000. --rate (a bit rate, like iperf3 -b): 1000, as
    /// iperf3's own pacing timer (0 below 1000 pps). Never more than 1000 by default.
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

impl SendArgs {
    /// The sender's options, or a usage error naming the flag.
    pub fn opts(&self) -> Result<SendOpts, String> {
        let size = self.payload_bytes()?;
        let (pps, given) = match (self.pps, self.rate) {
            (Some(p), _) => (p, RateGiven::Pps),
            (None, Some(r)) => (r / (size as f64 * 8.0), RateGiven::Bps),
            (None, None) => return Err("give --pps or --rate".into()),
        };
        self.check_bind_family()?;
        self.check_schedule(pps, size)?;
        let gso_segments = if self.gso {
            gso_segments(size, self.gso_segments)?
        } else {
            1
        };
        let quantum_ns = self.pacing_quantum_us.map_or_else(
            || default_quantum_ns(pps, given),
            |u| u.saturating_mul(1000),
        );
        Ok(SendOpts {
            dst: self.dst,
            bind: self.bind,
            pps,
            size,
            duration_ns: self.duration,
            stream: self.stream,
            first_seq: self.first_seq,
            catch_up: self.catch_up,
            stall_ns: self.stall_threshold_us.saturating_mul(1000),
            batch: self
                .batch
                .map_or_else(|| default_batch(pps, quantum_ns), |b| b as usize),
            batch_auto: self.batch.is_none(),
            rate_given: given,
            start_at_ns: self.start_at_ns,
            fin_count: self.fin_count,
            max_spin_ns: self.max_spin_us.map_or_else(
                || default_spin_ns(pps, quantum_ns, given),
                |u| u.saturating_mul(1000),
            ),
            quantum_ns,
            quantum_auto: self.pacing_quantum_us.is_none(),
            sndbuf_bytes: self.sndbuf,
            gso: self.gso,
            gso_segments,
            raw: self.raw_iface.clone().map(|iface| RawOut {
                iface,
                dst_mac: self.dst_mac.expect("clap: --raw-iface requires --dst-mac"),
            }),
        })
    }

    /// A --bind of the other address family than --dst cannot send to it.
    fn check_bind_family(&self) -> Result<(), String> {
        match self.bind {
            Some(b) if b.is_ipv6() != self.dst.is_ipv6() => {
                let fam = |a: SocketAddr| if a.is_ipv6() { "IPv6" } else { "IPv4" };
                Err(format!(
                    "--bind {b} is {} but --dst {} is {}: give a --bind of the same family \
                     (or leave it out)",
                    fam(b),
                    self.dst,
                    fam(self.dst)
                ))
            }
            _ => Ok(()),
        }
    }

    /// The schedule must hold a packet: the sender sends round(pps x duration) of them, and a
    /// run of none used to exit 0 with every count 0 (typically `--rate 100`, a unit forgotten).
    fn check_schedule(&self, pps: f64, size: usize) -> Result<(), String> {
        let secs = self.duration as f64 / 1e9;
        if (pps * secs).round() >= 1.0 {
            return Ok(());
        }
        let least = 0.5 / pps;
        Err(match self.rate {
            Some(r) if self.pps.is_none() => format!(
                "--rate {r} is {r} bit/s = {pps:.3} packets/s of --size {size} bytes: --duration \
                 {secs} s holds no packet; give the rate with its unit (e.g. --rate 100M for 100 \
                 Mbit/s) or a --duration of at least {least:.3} s"
            ),
            _ => format!(
                "--pps {pps} for --duration {secs} s sends no packet (the sender sends \
                 round(packets/s x duration)); give a --duration of at least {least:.3} s or a \
                 higher --pps"
            ),
        })
    }

    /// UDP payload per packet: --size, or what --frame-size leaves after the headers.
    fn payload_bytes(&self) -> Result<usize, String> {
        let Some(f) = self.frame_size else {
            return Ok(self.size as usize);
        };
        let over = 14 + 4 + 8 + if self.dst.is_ipv6() { 40 } else { 20 };
        let p = (f as i64) - over as i64;
        if !(18..=65507).contains(&p) {
            return Err(format!(
                "--frame-size {f} leaves a UDP payload of {p} bytes; it must be 18..=65507 \
                 (frame >= {})",
                over + 18
            ));
        }
        Ok(p as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
