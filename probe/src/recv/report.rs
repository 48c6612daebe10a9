//! The `recv` report: per stream (loss, duplicates, reordering, jitter, IPDV, PDV, OWD, rates),
//! their sums, and the throughput trace.

use std::net::SocketAddr;

use serde::Serialize;

use super::streams::{Stream, Streams};
use super::{Counters, RecvOpts};
use crate::accounting::Counts;
use crate::output::l2_frame_bytes;
use crate::stats::{PacketsSummary, SignedSummary};
use crate::sys;
use crate::trace::{Trace, TraceReport};

/// One stream in the JSON `streams` list.
#[derive(Serialize, Debug)]
pub struct StreamReport {
    /// Stream id carried by packets of >= 22 bytes or by the FIN; null if never seen.
    pub stream_id: Option<u32>,
    /// Sender's address:port.
    pub source: String,
    /// True once at least one FIN arrived.
    pub fin_received: bool,
    /// FIN datagrams received (the sender sends several).
    pub fin_packets: u64,
    /// Loss, duplicates, reordering.
    #[serde(flatten)]
    pub counts: Counts,
    /// UDP payload bytes received, duplicates included.
    pub received_bytes: u64,
    /// UDP payload bytes of distinct packets.
    pub unique_bytes: u64,
    /// Kernel receive time of the first packet, CLOCK_REALTIME ns.
    pub first_rx_realtime_ns: Option<u64>,
    /// Kernel receive time of the last packet, CLOCK_REALTIME ns.
    pub last_rx_realtime_ns: Option<u64>,
    /// last − first receive time, ns.
    pub receive_window_ns: u64,
    /// (unique_packets − 1) / receive window: received packet rate, packets/s.
    pub received_pps: f64,
    /// Received UDP payload bit rate over the receive window, bits/s.
    pub received_bps: f64,
    /// Received rate counted as Ethernet frames (header + FCS, 64-byte minimum), bits/s.
    pub received_l2_bps: f64,
    /// RFC 4737 reordering extent distribution, packets.
    pub reorder_extent: PacketsSummary,
    /// RFC 3550 interarrival jitter at the end of the stream (the smoothed estimator), ns.
    pub jitter_rfc3550_ns: f64,
    /// Mean of the RFC 3550 estimator over the stream, ns.
    pub jitter_rfc3550_mean_ns: f64,
    /// IPDV (RFC 5481): delay(seq+1) − delay(seq) for consecutive received seqs, ns.
    pub ipdv: SignedSummary,
    /// Packet delay variation: delay − minimum delay (clock offset cancels), ns.
    pub pdv: SignedSummary,
    /// One-way delay = receive stamp − sender stamp, ns. ONLY meaningful when sender and
    /// receiver share a clock or both are synchronised (same host, PTP).
    pub owd: SignedSummary,
}

/// The whole `recv` report.
#[derive(Serialize, Debug)]
pub struct RecvReport {
    /// Bound address.
    pub bind: String,
    /// Why recv stopped: "duration", "idle_timeout", "streams_done" or "signal".
    pub stop_reason: &'static str,
    /// From READY to stop, ns.
    pub elapsed_ns: u64,
    /// RFC 7680 waiting time used, ns.
    pub waiting_time_ns: u64,
    /// Receive buffer the kernel granted, bytes.
    pub rcvbuf_bytes: usize,
    /// True with --busy-poll (the receiver never slept; its CPU is 100 % by design).
    pub busy_poll: bool,
    /// Longest sleep between draining reads in timed polling, ns (0: off).
    pub poll_max_ns: u64,
    /// Sleeps on the receiver's own timer between draining reads (timed polling).
    pub timed_polls: u64,
    /// True with --gro (UDP_GRO: coalesced buffers taken whole and cut here).
    pub gro: bool,
    /// Reads that carried more than one datagram (with --gro).
    pub coalesced_reads: u64,
    /// Datagrams received, all streams, ours or not.
    pub datagrams_received_packets: u64,
    /// Datagrams that were not vnb-probe data/FIN packets (garbage, other tools, RTT probes).
    pub foreign_packets: u64,
    /// Datagrams larger than the receive buffer.
    pub truncated_packets: u64,
    /// Packets of streams beyond the tracking limit (4096 streams).
    pub overflow_stream_packets: u64,
    /// Datagrams the kernel dropped because this socket's queue was full (SO_RXQ_OVFL).
    pub kernel_drops_packets: u64,
    /// CPU time of the receiver in user mode, ns.
    pub cpu_user_ns: u64,
    /// CPU time of the receiver in kernel mode, ns.
    pub cpu_system_ns: u64,
    /// Sums over all streams.
    pub totals: Totals,
    /// One object per stream (key: source address + stream id).
    pub streams: Vec<StreamReport>,
    /// Throughput trace over all streams.
    pub trace: TraceReport,
}

/// Sums over all streams.
#[derive(Serialize, Debug, Default)]
pub struct Totals {
    /// Number of streams.
    pub streams: usize,
    /// Streams whose FIN arrived.
    pub streams_with_fin: usize,
    /// Sum of expected_packets.
    pub expected_packets: u64,
    /// Sum of received_packets.
    pub received_packets: u64,
    /// Sum of unique_packets.
    pub unique_packets: u64,
    /// Sum of duplicate_packets.
    pub duplicate_packets: u64,
    /// Sum of late_packets.
    pub late_packets: u64,
    /// Sum of lost_packets.
    pub lost_packets: u64,
    /// lost / expected over all streams.
    pub loss_ratio: f64,
    /// Sum of reordered_packets.
    pub reordered_packets: u64,
    /// Sum of received_bytes.
    pub received_bytes: u64,
    /// Sum of the streams' received_pps.
    pub received_pps: f64,
    /// Sum of the streams' received_bps.
    pub received_bps: f64,
}

/// How the run went, beside the counters.
pub(super) struct Run {
    pub(super) local: SocketAddr,
    pub(super) rcvbuf: usize,
    pub(super) stop_reason: &'static str,
    pub(super) elapsed_ns: u64,
}

/// Received rates of a stream over its receive window: (packets/s, payload bits/s, L2 bits/s).
fn rates(s: &Stream, window: u64, v6: bool) -> (f64, f64, f64) {
    if window == 0 || s.acct.unique <= 1 {
        return (0.0, 0.0, 0.0);
    }
    let n = (s.acct.unique - 1) as f64;
    let secs = window as f64 / 1e9;
    let mean_len = s.acct.unique_bytes as f64 / s.acct.unique as f64;
    let frame = l2_frame_bytes(mean_len.round() as usize, v6) as f64;
    (n / secs, n * mean_len * 8.0 / secs, n * frame * 8.0 / secs)
}

/// One stream's report.
fn stream_report(s: &Stream, v6: bool) -> StreamReport {
    let (first, last) = (s.acct.first_rx_ns, s.acct.last_rx_ns);
    let window = match (first, last) {
        (Some(f), Some(l)) => l.saturating_sub(f),
        _ => 0,
    };
    let (pps, bps, l2) = rates(s, window, v6);
    let (j, jm) = s.acct.jitter_ns();
    StreamReport {
        stream_id: s.id,
        source: s.src.to_string(),
        fin_received: s.acct.fin_seen(),
        fin_packets: s.acct.fins,
        counts: s.acct.counts(),
        received_bytes: s.acct.received_bytes,
        unique_bytes: s.acct.unique_bytes,
        first_rx_realtime_ns: first,
        last_rx_realtime_ns: last,
        receive_window_ns: window,
        received_pps: pps,
        received_bps: bps,
        received_l2_bps: l2,
        reorder_extent: s.acct.reorder_extent().into(),
        jitter_rfc3550_ns: j,
        jitter_rfc3550_mean_ns: jm,
        ipdv: s.acct.ipdv(),
        pdv: s.acct.pdv(),
        owd: s.acct.owd(),
    }
}

impl Totals {
    fn add(&mut self, r: &StreamReport) {
        let c = &r.counts;
        self.streams += 1;
        self.streams_with_fin += r.fin_received as usize;
        self.expected_packets += c.expected_packets;
        self.received_packets += c.received_packets;
        self.unique_packets += c.unique_packets;
        self.duplicate_packets += c.duplicate_packets;
        self.late_packets += c.late_packets;
        self.lost_packets += c.lost_packets;
        self.reordered_packets += c.reordered_packets;
        self.received_bytes += r.received_bytes;
        self.received_pps += r.received_pps;
        self.received_bps += r.received_bps;
    }
}

/// The report of a finished run.
pub(super) fn build(
    o: &RecvOpts,
    run: &Run,
    c: &Counters,
    streams: &Streams,
    trace: Trace,
) -> RecvReport {
    let (cpu_u, cpu_s) = sys::rusage_self_ns();
    let v6 = run.local.is_ipv6();
    let mut totals = Totals::default();
    let reports: Vec<StreamReport> = streams.iter().map(|s| stream_report(s, v6)).collect();
    for r in &reports {
        totals.add(r);
    }
    if totals.expected_packets > 0 {
        totals.loss_ratio = totals.lost_packets as f64 / totals.expected_packets as f64;
    }
    RecvReport {
        bind: run.local.to_string(),
        stop_reason: run.stop_reason,
        elapsed_ns: run.elapsed_ns,
        waiting_time_ns: o.waiting_time_ns,
        rcvbuf_bytes: run.rcvbuf,
        busy_poll: o.busy_poll,
        poll_max_ns: if o.busy_poll { 0 } else { o.poll_max_ns },
        timed_polls: c.timed_polls,
        gro: o.gro,
        coalesced_reads: c.coalesced_reads,
        datagrams_received_packets: c.datagrams,
        foreign_packets: c.foreign,
        truncated_packets: c.truncated,
        overflow_stream_packets: streams.overflow,
        kernel_drops_packets: c.drops as u64,
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
        totals,
        streams: reports,
        trace: trace.report(),
    }
}
