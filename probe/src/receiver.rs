//! `recv`: batched receive (recvmmsg) with kernel timestamps, per-stream accounting, the
//! throughput trace and the kernel's receive-queue drop counter.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use serde::Serialize;

use crate::accounting::{Counts, StreamAcct};
use crate::output::l2_frame_bytes;
use crate::packet::{self, Packet};
use crate::stats::{NsSummary, SignedSummary};
use crate::sys;
use crate::trace::{Trace, TraceReport};

/// Streams tracked at most; packets of further streams count as `overflow_stream_packets`.
pub const MAX_STREAMS: usize = 4096;

/// Options of `recv`.
#[derive(Clone, Debug)]
pub struct RecvOpts {
    /// Address to bind.
    pub bind: SocketAddr,
    /// Stop after this long (from READY).
    pub duration_ns: Option<u64>,
    /// Stop when no packet arrived for this long (after the first).
    pub idle_timeout_ns: Option<u64>,
    /// Stop once this many streams have sent FIN (plus `fin_linger_ns`).
    pub expect_streams: Option<usize>,
    /// Wait after the last awaited FIN for stragglers.
    pub fin_linger_ns: u64,
    /// RFC 7680 waiting time.
    pub waiting_time_ns: u64,
    /// Trace bin width (0 = off).
    pub trace_bin_ns: u64,
    /// Requested socket receive buffer.
    pub rcvbuf_bytes: usize,
    /// recvmmsg batch size.
    pub batch: usize,
    /// Poll without sleeping (one core at 100 %).
    pub busy_poll: bool,
}

/// Reorder extent distribution, in packets.
#[derive(Serialize, Debug, Default)]
pub struct ExtentSummary {
    /// Reordered packets with a known extent.
    pub count: u64,
    /// Smallest extent, packets.
    pub min_packets: Option<u64>,
    /// Mean extent, packets.
    pub mean_packets: Option<f64>,
    /// Median extent, packets.
    pub p50_packets: Option<u64>,
    /// 99th percentile extent, packets.
    pub p99_packets: Option<u64>,
    /// Largest extent, packets.
    pub max_packets: Option<u64>,
}

impl From<NsSummary> for ExtentSummary {
    fn from(s: NsSummary) -> Self {
        ExtentSummary {
            count: s.count,
            min_packets: s.min_ns,
            mean_packets: s.mean_ns,
            p50_packets: s.p50_ns,
            p99_packets: s.p99_ns,
            max_packets: s.max_ns,
        }
    }
}

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
    pub reorder_extent: ExtentSummary,
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

struct Stream {
    id: Option<u32>,
    src: SocketAddr,
    acct: StreamAcct,
}

fn ready_line(addr: &SocketAddr) {
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "READY {addr}");
    let _ = e.flush();
}

/// Run the receiver until a stop condition.
pub fn run(o: &RecvOpts) -> Result<RecvReport, String> {
    let sock = UdpSocket::bind(o.bind).map_err(|e| format!("cannot bind {}: {e}", o.bind))?;
    let rcvbuf = sys::set_rcvbuf(&sock, o.rcvbuf_bytes).map_err(|e| format!("SO_RCVBUF: {e}"))?;
    sys::enable_rx_metadata(&sock, true).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| format!("SO_RCVTIMEO: {e}"))?;
    let local = sock.local_addr().map_err(|e| e.to_string())?;
    let v6 = local.is_ipv6();
    sys::install_stop_handler();

    let mut batch = sys::RecvBatch::new(o.batch, 65536);
    let mut streams: Vec<Stream> = Vec::new();
    let mut index: HashMap<(SocketAddr, Option<u32>), usize> = HashMap::new();
    let mut trace = Trace::new(o.trace_bin_ns);
    let (mut datagrams, mut foreign, mut truncated, mut overflow) = (0u64, 0u64, 0u64, 0u64);
    let mut drops: u32 = 0;
    let mut last_key: Option<((SocketAddr, Option<u32>), usize)> = None;
    let mut last_packet_mono: Option<u64> = None;
    let mut last_fin_mono: u64 = 0;

    ready_line(&local);
    let t0 = sys::mono_ns();
    let stop_reason = loop {
        let now = sys::mono_ns();
        if sys::stop_requested() {
            break "signal";
        }
        if let Some(d) = o.duration_ns {
            if now - t0 >= d {
                break "duration";
            }
        }
        if let (Some(idle), Some(last)) = (o.idle_timeout_ns, last_packet_mono) {
            if now.saturating_sub(last) >= idle {
                break "idle_timeout";
            }
        }
        if let Some(n) = o.expect_streams {
            let done = streams.iter().filter(|s| s.acct.fin_seen()).count();
            if done >= n && now.saturating_sub(last_fin_mono) >= o.fin_linger_ns {
                break "streams_done";
            }
        }
        let got = if o.busy_poll {
            batch.recv_nowait(&sock)
        } else {
            batch.recv(&sock)
        }
        .map_err(|e| format!("recvmmsg: {e}"))?;
        if got == 0 {
            continue;
        }
        let now_mono = sys::mono_ns();
        last_packet_mono = Some(now_mono);
        let fallback_rx = sys::real_ns();
        for i in 0..got {
            let (data, m) = batch.get(i);
            datagrams += 1;
            if let Some(d) = m.drops {
                drops = d;
            }
            if m.truncated {
                truncated += 1;
            }
            let rx = m.kernel_rx_ns.unwrap_or(fallback_rx);
            let src = match m.src {
                Some(s) => s,
                None => {
                    foreign += 1;
                    continue;
                }
            };
            let pkt = packet::decode(data);
            let key = match pkt {
                Ok(Packet::Data { stream, .. }) => (src, stream),
                Ok(Packet::Fin { stream, .. }) => {
                    // a FIN matches the stream with its id, else the id-less stream of the source
                    if index.contains_key(&(src, Some(stream))) {
                        (src, Some(stream))
                    } else if index.contains_key(&(src, None)) {
                        (src, None)
                    } else {
                        (src, Some(stream))
                    }
                }
                _ => {
                    foreign += 1;
                    continue;
                }
            };
            let idx = match last_key {
                Some((k, ix)) if k == key => ix,
                _ => {
                    let ix = match index.get(&key) {
                        Some(&ix) => ix,
                        None => {
                            if streams.len() >= MAX_STREAMS {
                                overflow += 1;
                                continue;
                            }
                            streams.push(Stream {
                                id: key.1,
                                src,
                                acct: StreamAcct::new(o.waiting_time_ns),
                            });
                            index.insert(key, streams.len() - 1);
                            streams.len() - 1
                        }
                    };
                    last_key = Some((key, ix));
                    ix
                }
            };
            let st = &mut streams[idx];
            match pkt {
                Ok(Packet::Data { seq, tx_ns, .. }) => {
                    st.acct.on_data(seq, tx_ns, rx, data.len());
                    trace.add(rx, data.len());
                }
                Ok(Packet::Fin {
                    sent,
                    first_seq,
                    stream,
                    ..
                }) => {
                    st.id = Some(stream);
                    st.acct.on_fin(sent, first_seq);
                    last_fin_mono = now_mono;
                }
                _ => {}
            }
        }
    };
    let elapsed = sys::mono_ns() - t0;
    let (cpu_u, cpu_s) = sys::rusage_self_ns();

    let mut totals = Totals::default();
    let mut reports = Vec::with_capacity(streams.len());
    for s in &streams {
        let c = s.acct.counts();
        let (first, last) = (s.acct.first_rx_ns, s.acct.last_rx_ns);
        let window = match (first, last) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        };
        let (pps, bps, l2) = if window > 0 && s.acct.unique > 1 {
            let n = (s.acct.unique - 1) as f64;
            let secs = window as f64 / 1e9;
            let mean_len = s.acct.unique_bytes as f64 / s.acct.unique as f64;
            let frame = l2_frame_bytes(mean_len.round() as usize, v6) as f64;
            (n / secs, n * mean_len * 8.0 / secs, n * frame * 8.0 / secs)
        } else {
            (0.0, 0.0, 0.0)
        };
        let (j, jm) = s.acct.jitter_ns();
        totals.streams += 1;
        totals.streams_with_fin += s.acct.fin_seen() as usize;
        totals.expected_packets += c.expected_packets;
        totals.received_packets += c.received_packets;
        totals.unique_packets += c.unique_packets;
        totals.duplicate_packets += c.duplicate_packets;
        totals.late_packets += c.late_packets;
        totals.lost_packets += c.lost_packets;
        totals.reordered_packets += c.reordered_packets;
        totals.received_bytes += s.acct.received_bytes;
        totals.received_pps += pps;
        totals.received_bps += bps;
        reports.push(StreamReport {
            stream_id: s.id,
            source: s.src.to_string(),
            fin_received: s.acct.fin_seen(),
            fin_packets: s.acct.fins,
            counts: c,
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
        });
    }
    if totals.expected_packets > 0 {
        totals.loss_ratio = totals.lost_packets as f64 / totals.expected_packets as f64;
    }
    Ok(RecvReport {
        bind: local.to_string(),
        stop_reason,
        elapsed_ns: elapsed,
        waiting_time_ns: o.waiting_time_ns,
        rcvbuf_bytes: rcvbuf,
        busy_poll: o.busy_poll,
        datagrams_received_packets: datagrams,
        foreign_packets: foreign,
        truncated_packets: truncated,
        overflow_stream_packets: overflow,
        kernel_drops_packets: drops as u64,
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
        totals,
        streams: reports,
        trace: trace.report(),
    })
}
