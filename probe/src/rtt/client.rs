//! `rtt`: isochronous probes to an echo (irtt's model). A thread collects the replies while the
//! main thread sends probe k at t0 + k·interval; then every probe becomes a record and the
//! distributions are summarised.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::net::connected_socket;
use crate::pacing::{wait_realtime, Schedule, Sleeper};
use crate::packet::{self, Packet};
use crate::stats::{NsHist, NsSummary, SignedHist, SignedSummary};
use crate::sys::{self, Clock};

/// Options of `rtt`.
#[derive(Clone, Debug)]
pub struct RttOpts {
    /// Echo address.
    pub dst: std::net::SocketAddr,
    /// Probe interval, ns.
    pub interval_ns: u64,
    /// Probes to send.
    pub count: u64,
    /// Probe payload bytes (>= 34).
    pub size: usize,
    /// Wait after the last probe for replies, ns.
    pub wait_ns: u64,
    /// CLOCK_REALTIME start instant.
    pub start_at_ns: Option<u64>,
    /// Include per-probe records.
    pub records: bool,
    /// Busy-wait bound.
    pub max_spin_ns: u64,
}

/// One probe.
#[derive(Serialize, Debug, Clone)]
pub struct ProbeRecord {
    /// Probe sequence number (0-based).
    pub seq: u64,
    /// Client send time, CLOCK_REALTIME ns.
    pub send_realtime_ns: u64,
    /// Client send time − scheduled time, ns.
    pub send_lateness_ns: u64,
    /// True if no reply arrived before the end of the wait.
    pub lost: bool,
    /// Round-trip time without the echo's processing time, ns; null if lost.
    pub rtt_ns: Option<i64>,
    /// Echo send − echo receive time, ns; null if lost.
    pub server_processing_ns: Option<i64>,
    /// Echo receive − client send (synchronised clocks only), ns.
    pub owd_up_ns: Option<i64>,
    /// Client receive − echo send (synchronised clocks only), ns.
    pub owd_down_ns: Option<i64>,
    /// Extra copies of the reply received.
    pub duplicates: u32,
}

/// The `rtt` report.
#[derive(Serialize, Debug)]
pub struct RttReport {
    /// Echo address:port.
    pub dst: String,
    /// Local address:port.
    pub src: String,
    /// Probe payload bytes.
    pub payload_bytes: usize,
    /// Probe interval, ns.
    pub interval_ns: u64,
    /// Probes sent.
    pub sent_packets: u64,
    /// Distinct replies received.
    pub received_packets: u64,
    /// Probes without a reply.
    pub lost_packets: u64,
    /// lost / sent.
    pub loss_ratio: f64,
    /// Extra reply copies.
    pub duplicate_packets: u64,
    /// Replies that were not ours or had a seq never sent.
    pub foreign_packets: u64,
    /// ICMP errors the socket reported (ECONNREFUSED: nothing listens at dst's port): lost probes.
    pub unreachable_events: u64,
    /// RTT without echo processing: min/mean/p50 (median)/p90/p99/p999/max/stddev, ns.
    pub rtt: NsSummary,
    /// Echo processing time distribution, ns.
    pub server_processing: SignedSummary,
    /// Upstream one-way delay (synchronised clocks only), ns.
    pub owd_up: SignedSummary,
    /// Downstream one-way delay (synchronised clocks only), ns.
    pub owd_down: SignedSummary,
    /// Client send-timing error (send time − scheduled time), ns.
    pub send_lateness: NsSummary,
    /// The --start-at-ns instant, null if not given.
    pub start_at_realtime_ns: Option<u64>,
    /// First send − start_at, ns.
    pub start_lateness_ns: Option<i64>,
    /// CPU time in user mode, ns.
    pub cpu_user_ns: u64,
    /// CPU time in kernel mode, ns.
    pub cpu_system_ns: u64,
    /// Per-probe records (omitted with --no-records).
    pub records: Option<Vec<ProbeRecord>>,
}

#[derive(Clone, Copy, Default)]
struct Reply {
    got: bool,
    client_rx: u64,
    server_rx: u64,
    server_tx: u64,
    dups: u32,
}

/// Signed `a - b` of two ns timestamps, correct while they are within 2^63 ns of each other
/// (the echo's stamps come from the network: garbage must not overflow).
fn ns_diff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// The times of one answered probe, ns.
#[derive(Debug, PartialEq, Eq)]
struct ProbeTimes {
    /// Round trip minus the echo's processing time.
    rtt: i64,
    /// Echo's send − receive stamp.
    server_processing: i64,
    /// One-way up (echo receive − client send) and down (client receive − echo send).
    up: i64,
    down: i64,
}

fn probe_times(tx: u64, client_rx: u64, server_rx: u64, server_tx: u64) -> ProbeTimes {
    let server_processing = ns_diff(server_tx, server_rx);
    ProbeTimes {
        rtt: ns_diff(client_rx, tx).saturating_sub(server_processing),
        server_processing,
        up: ns_diff(server_rx, tx),
        down: ns_diff(client_rx, server_tx),
    }
}

/// What the receiver thread saw besides the replies.
#[derive(Default)]
struct Seen {
    foreign: u64,
    unreachable: u64,
}

/// Collect replies until `done`: the first copy of each probe's reply and the count of extra
/// copies; everything that is not a reply to one of our `count` probes is foreign. An ICMP error
/// the socket reports (no echo at dst's port) is counted, not fatal: the probes are lost.
fn collect_replies(
    sock: &UdpSocket,
    count: u64,
    done: &AtomicBool,
) -> Result<(Vec<Reply>, Seen), String> {
    let mut replies = vec![Reply::default(); count as usize];
    let mut seen = Seen::default();
    let mut b = sys::RecvBatch::new(16, 65536);
    while !done.load(Ordering::Relaxed) {
        let n = match b.recv(sock) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                seen.unreachable += 1;
                continue;
            }
            Err(e) => return Err(format!("recvmmsg: {e}")),
        };
        let fallback = sys::real_ns();
        for i in 0..n {
            let (d, m) = b.get(i);
            match packet::decode(d) {
                Ok(Packet::Rtt {
                    reply: true,
                    seq,
                    server_rx_ns,
                    server_tx_ns,
                    ..
                }) if seq < count => {
                    let r = &mut replies[seq as usize];
                    if r.got {
                        r.dups += 1;
                    } else {
                        *r = Reply {
                            got: true,
                            client_rx: m.kernel_rx_ns.unwrap_or(fallback),
                            server_rx: server_rx_ns,
                            server_tx: server_tx_ns,
                            dups: 0,
                        };
                    }
                }
                _ => seen.foreign += 1,
            }
        }
    }
    Ok((replies, seen))
}

/// Send the probes on their schedule; returns (send time, lateness) of each and the lateness
/// distribution.
fn send_probes(o: &RttOpts, sock: &UdpSocket) -> (Vec<(u64, u64)>, NsHist) {
    let mut buf = vec![0u8; o.size];
    let mut sleeper = Sleeper::new(Clock::Monotonic, o.max_spin_ns);
    if let Some(t) = o.start_at_ns {
        wait_realtime(t, o.max_spin_ns);
    }
    let sched = Schedule {
        t0: sys::mono_ns(),
        period_ns: o.interval_ns as f64,
        total: o.count,
    };
    let mut sends: Vec<(u64, u64)> = Vec::with_capacity(o.count as usize);
    let mut lateness = NsHist::new();
    for seq in 0..o.count {
        if sys::stop_requested() {
            break;
        }
        let slot = sched.slot_time(seq);
        sleeper.until(slot);
        let rt = sys::real_ns();
        let late = sys::mono_ns().saturating_sub(slot);
        packet::encode_rtt_req(&mut buf, seq, rt);
        // a refused send (ICMP unreachable reported late) still counts as a sent, lost probe
        let _ = sock.send(&buf);
        lateness.record(late);
        sends.push((rt, late));
    }
    (sends, lateness)
}

/// Run the client.
pub fn run_client(o: &RttOpts) -> Result<RttReport, String> {
    let sock = connected_socket(o.dst, None)?;
    crate::net::check_fits_mtu(&sock, o.dst, o.size, "--size")?;
    sys::enable_rx_metadata(&sock, false).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| e.to_string())?;
    let src = sock.local_addr().map_err(|e| e.to_string())?;
    sys::install_stop_handler();
    let rsock = sock.try_clone().map_err(|e| e.to_string())?;
    let done = Arc::new(AtomicBool::new(false));
    let done_r = done.clone();
    let count = o.count;
    let rx_thread = std::thread::spawn(move || collect_replies(&rsock, count, &done_r));
    let (sends, lateness) = send_probes(o, &sock);
    let end = sys::mono_ns() + o.wait_ns;
    while sys::mono_ns() < end && !sys::stop_requested() {
        std::thread::sleep(Duration::from_millis(5));
    }
    done.store(true, Ordering::Relaxed);
    let (replies, seen) = rx_thread
        .join()
        .map_err(|_| "receiver thread panicked".to_string())??;
    let mut r = summarize(&sends, &replies);
    let (cpu_u, cpu_s) = sys::rusage_self_ns();
    let sent = sends.len() as u64;
    Ok(RttReport {
        dst: o.dst.to_string(),
        src: src.to_string(),
        payload_bytes: o.size,
        interval_ns: o.interval_ns,
        sent_packets: sent,
        received_packets: r.received,
        lost_packets: sent - r.received,
        loss_ratio: if sent > 0 {
            (sent - r.received) as f64 / sent as f64
        } else {
            0.0
        },
        duplicate_packets: r.dups,
        foreign_packets: seen.foreign,
        unreachable_events: seen.unreachable,
        rtt: r.rtt.summary(),
        server_processing: r.processing.summary(),
        owd_up: r.up.summary(),
        owd_down: r.down.summary(),
        send_lateness: lateness.summary(),
        start_at_realtime_ns: o.start_at_ns,
        start_lateness_ns: o
            .start_at_ns
            .zip(sends.first())
            .map(|(t, &(f, _))| ns_diff(f, t)),
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
        records: o.records.then(|| std::mem::take(&mut r.records)),
    })
}

/// Every probe's record and the distributions over the answered ones.
struct Summary {
    received: u64,
    dups: u64,
    rtt: NsHist,
    processing: SignedHist,
    up: SignedHist,
    down: SignedHist,
    records: Vec<ProbeRecord>,
}

fn summarize(sends: &[(u64, u64)], replies: &[Reply]) -> Summary {
    let mut s = Summary {
        received: 0,
        dups: 0,
        rtt: NsHist::new(),
        processing: SignedHist::new(),
        up: SignedHist::new(),
        down: SignedHist::new(),
        records: Vec::with_capacity(sends.len()),
    };
    for (seq, &(tx, late)) in sends.iter().enumerate() {
        let r = replies[seq];
        let mut rec = ProbeRecord {
            seq: seq as u64,
            send_realtime_ns: tx,
            send_lateness_ns: late,
            lost: !r.got,
            rtt_ns: None,
            server_processing_ns: None,
            owd_up_ns: None,
            owd_down_ns: None,
            duplicates: r.dups,
        };
        s.dups += r.dups as u64;
        if r.got {
            s.received += 1;
            let t = probe_times(tx, r.client_rx, r.server_rx, r.server_tx);
            s.rtt.record(t.rtt.max(0) as u64);
            s.processing.record(t.server_processing);
            s.up.record(t.up);
            s.down.record(t.down);
            rec.rtt_ns = Some(t.rtt);
            rec.server_processing_ns = Some(t.server_processing);
            rec.owd_up_ns = Some(t.up);
            rec.owd_down_ns = Some(t.down);
        }
        s.records.push(rec);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{probe_times, ProbeTimes};

    #[test]
    fn probe_times_subtract_the_echo_time() {
        let t = probe_times(1_000, 1_000 + 500, 1_200, 1_300);
        assert_eq!(
            t,
            ProbeTimes {
                rtt: 400,
                server_processing: 100,
                up: 200,
                down: 200
            }
        );
    }

    #[test]
    fn garbage_echo_stamps_do_not_overflow() {
        // in a debug build, any overflow here panics
        for &(srx, stx) in &[(0, u64::MAX), (u64::MAX, 0), (1 << 63, 0), (0, 1 << 63)] {
            let t = probe_times(5, 10, srx, stx);
            assert_eq!(t.up, (srx.wrapping_sub(5)) as i64);
        }
    }
}
