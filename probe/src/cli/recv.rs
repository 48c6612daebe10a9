//! `vnb-probe recv`: its flags, their conversion into the receiver's options, and its JSON fields.

use std::net::SocketAddr;

use clap::Args;

use crate::recv::RecvOpts;
use crate::units::parse_secs;

/// `recv` fields, shown at the end of `vnb-probe recv --help`.
pub const FIELDS: &str = "\
RECV FIELDS
  bind                          bound address:port (READY <addr:port> went to stderr)
  stop_reason                   duration | idle_timeout | streams_done | signal
  elapsed_ns                    READY to stop, ns
  waiting_time_ns               RFC 7680 waiting time, ns
  rcvbuf_bytes                  socket receive buffer granted, bytes
  busy_poll                     --busy-poll given: the receiver polled without sleeping
  poll_max_ns                   --poll-max-us in ns: longest sleep between draining reads in
                                timed polling (0: off)
  timed_polls                   sleeps on the receiver's own timer between draining reads
  gro                           --gro given: UDP_GRO on the socket
  coalesced_reads               reads that carried several datagrams (--gro), each counted as
                                itself
  datagrams_received_packets    all datagrams read
  foreign_packets               datagrams that are not vnb-probe data/FIN (garbage, other tools)
  truncated_packets             datagrams larger than 64 KiB
  overflow_stream_packets       packets of streams beyond the 4096-stream limit
  kernel_drops_packets          datagrams the kernel dropped on this socket's full queue
                                (SO_RXQ_OVFL)
  cpu_user_ns, cpu_system_ns    CPU time of the receiver, ns
  totals.streams                number of streams
  totals.streams_with_fin       streams whose FIN arrived
  totals.expected_packets, totals.received_packets, totals.unique_packets,
  totals.duplicate_packets, totals.late_packets, totals.lost_packets, totals.reordered_packets,
  totals.received_bytes, totals.received_pps, totals.received_bps
                                sums of the stream fields of the same name
  totals.loss_ratio             lost / expected over all streams
  streams[]                     one per (source address:port, stream id):
    stream_id                   id from packets >= 22 bytes or the FIN; null if never seen
    source                      sender address:port
    fin_received, fin_packets   FIN seen; FIN datagrams received
    sent_packets                sender's count from the FIN (null without FIN)
    expected_packets            sent_packets, or max_seq - min_seq + 1 without FIN
    expected_source             \"fin\" (exact) or \"seq_range\" (estimate: tail loss unseen)
    first_seq                   FIN's first seq, else lowest seq seen
    max_seq_seen                highest seq seen
    received_packets            datagrams, duplicates included
    unique_packets              distinct sequence numbers
    duplicate_packets           extra copies (counted apart; never reduce loss)
    late_packets                distinct packets whose delay exceeded the stream's minimum
                                delay by more than the waiting time: counted as lost
    out_of_range_packets        distinct seqs outside the FIN's [first_seq, first_seq + sent)
    lost_packets                expected - (distinct in range - late), exact with FIN
    loss_ratio                  lost / expected
    reordered_packets           RFC 4737 reordered (seq below the next expected)
    reordered_ratio             reordered / unique
    reorder_extent_capped_packets reordered packets whose extent exceeded 65536 arrivals
    reorder_extent{count, min_packets, mean_packets, p50_packets, p99_packets, max_packets}
                                RFC 4737 reordering extent, packets
    received_bytes, unique_bytes UDP payload bytes, all and distinct
    first_rx_realtime_ns, last_rx_realtime_ns  kernel receive stamps (SO_TIMESTAMPNS)
    receive_window_ns           last - first receive, ns
    received_pps                (unique - 1) / receive window, packets/s
    received_bps                UDP payload bit rate over the window, bits/s
    received_l2_bps             the same as Ethernet frames (header + FCS, >= 64 B), bits/s
    jitter_rfc3550_ns           RFC 3550 interarrival jitter at the end (smoothed, 1/16), ns
    jitter_rfc3550_mean_ns      mean of the RFC 3550 estimator over the stream, ns
    ipdv{...}                   RFC 5481 IPDV, delay(seq+1) - delay(seq), signed, ns
    pdv{...}                    delay - minimum delay (clock offset cancels), ns
    owd{...}                    one-way delay = receive stamp - send stamp, ns; ONLY meaningful
                                when sender and receiver share a clock or are synchronised
  trace.bin_ns                  bin width, ns (0 = disabled)
  trace.origin_realtime_ns      start of bin 0 = first data packet's receive stamp
  trace.bytes[]                 UDP payload bytes per bin (all streams, duplicates included)
  trace.packets[]               data packets per bin
  trace.truncated               true if the run outlasted 3.6 M bins
  trace.before_origin_packets   packets stamped before the origin (put in bin 0)";

/// `recv` arguments.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct RecvArgs {
    /// ADDR:PORT to bind (port 0: any; the bound address is in the READY line).
    #[arg(long, value_parser = crate::units::parse_addr)]
    pub bind: SocketAddr,
    /// Stop after S seconds from READY (default: no limit; SIGINT/SIGTERM also stop it).
    #[arg(long, value_parser = parse_secs)]
    pub duration: Option<u64>,
    /// Stop when no packet arrived for S seconds (after the first packet; default: never).
    #[arg(long, value_parser = parse_secs)]
    pub idle_timeout: Option<u64>,
    /// Stop once N streams have sent their FIN (then linger --fin-linger; default: not on FINs).
    #[arg(long)]
    pub expect_streams: Option<usize>,
    /// Seconds to keep receiving after the last awaited FIN.
    #[arg(long, value_parser = parse_secs, default_value = "0.2")]
    pub fin_linger: u64,
    /// RFC 7680 waiting time, seconds: a packet later than this (beyond the stream's minimum
    /// one-way delay) counts as lost.
    #[arg(long, value_parser = parse_secs, default_value = "2")]
    pub waiting_time: u64,
    /// Throughput trace bin width, µs (0: no trace). At most 3 600 000 bins are kept (1 h of
    /// 1 ms bins); later packets are left out and `trace.truncated` says so.
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
    /// Timed polling, longest sleep in µs (0: off). While >= 2K datagrams/s arrive, the
    /// receiver drains the socket, sleeps on its own timer and drains again instead of waiting
    /// on the socket, so the sender's CPU (which runs the receive softirq on veth and loopback)
    /// no longer wakes it for every few datagrams. The sleep is the shorter of this and the time
    /// a quarter of the receive buffer takes to fill at the measured rate. Kernel receive stamps
    /// are used either way: no measured value depends on when the receiver reads.
    #[arg(long, default_value_t = 1000)]
    pub poll_max_us: u64,
    /// UDP GRO (UDP_GRO, Linux >= 5.0; off by default): the kernel may hand over several
    /// datagrams of one flow as one buffer, which the receiver cuts at their segment size and
    /// counts one by one. A `send --gso` burst then crosses veth or loopback whole: the kernel
    /// never cuts it into datagrams, which saves CPU on both sides. The datagrams of one buffer
    /// share its kernel receive stamp (on a NIC with GRO: the first one's arrival), so leave it
    /// off where per-packet arrival times matter (jitter, IPDV of back-to-back packets).
    #[arg(long)]
    pub gro: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl RecvArgs {
    /// The receiver's options.
    pub fn opts(&self) -> RecvOpts {
        RecvOpts {
            bind: self.bind,
            duration_ns: self.duration,
            idle_timeout_ns: self.idle_timeout,
            expect_streams: self.expect_streams,
            fin_linger_ns: self.fin_linger,
            waiting_time_ns: self.waiting_time,
            trace_bin_ns: self.trace_bin_us.saturating_mul(1000),
            rcvbuf_bytes: self.rcvbuf,
            batch: self.batch as usize,
            busy_poll: self.busy_poll,
            poll_max_ns: self.poll_max_us.saturating_mul(1000),
            gro: self.gro,
        }
    }
}
