//! `send`: constant-rate UDP with anchored slots, sendmmsg batches, skip-or-bounded-catch-up
//! after stalls, per-packet seq + timestamp, FIN with the exact count at the end.

use std::net::{SocketAddr, UdpSocket};

use serde::Serialize;

use crate::output::{l2_frame_bytes, L1_OVERHEAD_BYTES};
use crate::pacing::{plan, wake_time, Schedule, Sleeper};
use crate::packet;
use crate::stats::{NsHist, NsSummary};
use crate::sys::{self, Clock};

/// Options of `send`.
#[derive(Clone, Debug)]
pub struct SendOpts {
    /// Destination.
    pub dst: SocketAddr,
    /// Local address to bind (default: any, same family).
    pub bind: Option<SocketAddr>,
    /// Packets per second.
    pub pps: f64,
    /// UDP payload bytes.
    pub size: usize,
    /// Duration, ns.
    pub duration_ns: u64,
    /// Stream id (in packets >= 22 bytes and in FIN).
    pub stream: u32,
    /// First sequence number.
    pub first_seq: u64,
    /// Overdue slots sent after a stall, at most.
    pub catch_up: u64,
    /// A slot later than this is overdue.
    pub stall_ns: u64,
    /// sendmmsg batch size.
    pub batch: usize,
    /// CLOCK_REALTIME start instant.
    pub start_at_ns: Option<u64>,
    /// FIN datagrams to send.
    pub fin_count: u32,
    /// Busy-wait bound before each deadline.
    pub max_spin_ns: u64,
    /// Wake at most once per quantum and send every due slot in one batch (0: per slot).
    pub quantum_ns: u64,
    /// The quantum was chosen by the rate (no --pacing-quantum-us given).
    pub quantum_auto: bool,
    /// Requested socket send buffer.
    pub sndbuf_bytes: usize,
}

/// The `send` report.
#[derive(Serialize, Debug)]
pub struct SendReport {
    /// Destination address:port.
    pub dst: String,
    /// Local address:port the packets came from.
    pub src: String,
    /// Stream id.
    pub stream_id: u32,
    /// UDP payload per packet, bytes.
    pub payload_bytes: usize,
    /// Ethernet frame per packet (14 header + IP + UDP + payload + 4 FCS, >= 64), bytes.
    pub frame_bytes: usize,
    /// Target rate, packets/s.
    pub target_pps: f64,
    /// Target UDP payload bit rate, bits/s.
    pub target_bps: f64,
    /// Requested duration, ns.
    pub duration_ns: u64,
    /// Slots in the schedule (= target_pps × duration).
    pub slots_total_packets: u64,
    /// Packets sent (= slots − missed).
    pub sent_packets: u64,
    /// UDP payload bytes sent.
    pub sent_bytes: u64,
    /// Slots skipped because they were overdue after a stall (never sent).
    pub missed_slots_packets: u64,
    /// The --catch-up bound used.
    pub catch_up_max_packets: u64,
    /// A slot later than this was overdue, ns.
    pub stall_threshold_ns: u64,
    /// Pacing quantum used, ns (0: every packet at its own slot time).
    pub pacing_quantum_ns: u64,
    /// The quantum was chosen from the rate (0 up to 20K pps, else 50 µs), not given.
    pub pacing_quantum_auto: bool,
    /// sendmmsg calls that failed (e.g. ICMP port unreachable reported as ECONNREFUSED).
    pub send_errors: u64,
    /// sendmmsg calls.
    pub syscalls: u64,
    /// Mean packets per sendmmsg call.
    pub mean_batch_packets: f64,
    /// Sequence number of the first packet.
    pub first_seq: u64,
    /// The --start-at-ns instant, CLOCK_REALTIME ns; null if not given.
    pub start_at_realtime_ns: Option<u64>,
    /// First send − start_at (null without --start-at-ns), ns.
    pub start_lateness_ns: Option<i64>,
    /// First packet's send timestamp, CLOCK_REALTIME ns.
    pub first_send_realtime_ns: Option<u64>,
    /// Last packet's send timestamp, CLOCK_REALTIME ns.
    pub last_send_realtime_ns: Option<u64>,
    /// Last − first send time, ns.
    pub send_window_ns: u64,
    /// (sent_packets − 1) / send window, packets/s.
    pub achieved_pps: f64,
    /// Achieved UDP payload bit rate, bits/s.
    pub achieved_bps: f64,
    /// Achieved rate as Ethernet frames (header + FCS), bits/s.
    pub achieved_l2_bps: f64,
    /// Achieved rate on a physical link (frames + 20 bytes preamble/SFD/IFG), bits/s.
    pub achieved_l1_bps: f64,
    /// achieved_pps / target_pps.
    pub achieved_to_target_ratio: f64,
    /// Send time − slot time of every packet, ns (the sender's own timing error).
    pub send_lateness: NsSummary,
    /// FIN datagrams sent.
    pub fin_sent_packets: u32,
    /// Send buffer the kernel granted, bytes.
    pub sndbuf_bytes: usize,
    /// Bound on the busy-wait before each slot (--max-spin-us or its default), ns.
    pub max_spin_ns: u64,
    /// Final spin margin of the sleeper, ns.
    pub spin_margin_ns: u64,
    /// CPU time in user mode, ns.
    pub cpu_user_ns: u64,
    /// CPU time in kernel mode, ns.
    pub cpu_system_ns: u64,
}

/// Bind a UDP socket of the destination's family and connect it.
pub fn connected_socket(dst: SocketAddr, bind: Option<SocketAddr>) -> Result<UdpSocket, String> {
    let local: SocketAddr = match bind {
        Some(b) => b,
        None if dst.is_ipv6() => "[::]:0".parse().expect("valid"),
        None => "0.0.0.0:0".parse().expect("valid"),
    };
    let sock = UdpSocket::bind(local).map_err(|e| format!("cannot bind {local}: {e}"))?;
    sock.connect(dst)
        .map_err(|e| format!("cannot connect to {dst}: {e}"))?;
    Ok(sock)
}

/// Sleep until CLOCK_REALTIME reaches `t` (for --start-at-ns).
pub fn wait_realtime(t: u64, max_spin_ns: u64) {
    let mut sl = Sleeper::new(Clock::Realtime, max_spin_ns);
    while sys::real_ns() < t && !sys::stop_requested() {
        sl.until(t);
    }
}

/// Run the sender.
pub fn run(o: &SendOpts) -> Result<SendReport, String> {
    let sock = connected_socket(o.dst, o.bind)?;
    let sndbuf = sys::set_sndbuf(&sock, o.sndbuf_bytes).map_err(|e| format!("SO_SNDBUF: {e}"))?;
    let src = sock.local_addr().map_err(|e| e.to_string())?;
    sys::install_stop_handler();
    let total = (o.pps * o.duration_ns as f64 / 1e9).round() as u64;
    let batch_n = o.batch.max(1);
    let mut batch = sys::SendBatch::new(batch_n, o.size);
    for i in 0..batch_n {
        packet::encode_data(batch.buf_mut(i), 0, 0, o.stream);
        batch.set_len(i, o.size);
    }
    let mut sleeper = Sleeper::new(Clock::Monotonic, o.max_spin_ns);
    let mut lateness = NsHist::new();

    if let Some(t) = o.start_at_ns {
        wait_realtime(t, o.max_spin_ns);
    }
    let sched = Schedule {
        t0: sys::mono_ns(),
        period_ns: 1e9 / o.pps,
        total,
    };
    // with a pacing quantum, a slot is only overdue once it is two quanta late
    let stall_ns = o.stall_ns.max(2 * o.quantum_ns);
    let (mut next, mut sent, mut missed, mut errors, mut calls) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut consecutive_errors = 0u32;
    let (mut first_rt, mut last_rt): (Option<u64>, Option<u64>) = (None, None);
    while next < total && !sys::stop_requested() {
        sleeper.until(wake_time(&sched, next, o.quantum_ns));
        let now = sys::mono_ns();
        let st = plan(&sched, next, now, stall_ns, o.catch_up, batch_n as u64);
        missed += st.skip;
        next += st.skip;
        if st.send == 0 {
            continue;
        }
        let n = st.send as usize;
        let rt = sys::real_ns();
        for i in 0..n {
            packet::put_seq_ts(
                batch.buf_mut(i),
                o.first_seq.wrapping_add(sent + i as u64),
                rt,
            );
        }
        calls += 1;
        match batch.send(&sock, n) {
            Ok(k) => {
                consecutive_errors = 0;
                for j in 0..k as u64 {
                    lateness.record(now.saturating_sub(sched.slot_time(next + j)));
                }
                if k > 0 {
                    first_rt.get_or_insert(rt);
                    last_rt = Some(rt);
                }
                sent += k as u64;
                next += k as u64;
            }
            Err(e) => {
                errors += 1;
                consecutive_errors += 1;
                if consecutive_errors > 10_000 {
                    return Err(format!("sendmmsg to {} keeps failing: {e}", o.dst));
                }
            }
        }
    }
    // FIN: the exact count, several times, 2 ms apart
    let mut fins = 0;
    for i in 0..o.fin_count {
        let b = packet::encode_fin(sent, sys::real_ns(), o.stream, o.first_seq);
        if sock.send(&b).is_ok() {
            fins += 1;
        }
        if i + 1 < o.fin_count {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    let (cpu_u, cpu_s) = sys::rusage_self_ns();
    let v6 = o.dst.is_ipv6();
    let frame = l2_frame_bytes(o.size, v6);
    let window = match (first_rt, last_rt) {
        (Some(f), Some(l)) => l.saturating_sub(f),
        _ => 0,
    };
    let achieved_pps = if window > 0 && sent > 1 {
        (sent - 1) as f64 * 1e9 / window as f64
    } else {
        0.0
    };
    Ok(SendReport {
        dst: o.dst.to_string(),
        src: src.to_string(),
        stream_id: o.stream,
        payload_bytes: o.size,
        frame_bytes: frame,
        target_pps: o.pps,
        target_bps: o.pps * o.size as f64 * 8.0,
        duration_ns: o.duration_ns,
        slots_total_packets: total,
        sent_packets: sent,
        sent_bytes: sent * o.size as u64,
        missed_slots_packets: missed,
        catch_up_max_packets: o.catch_up,
        stall_threshold_ns: stall_ns,
        pacing_quantum_ns: o.quantum_ns,
        pacing_quantum_auto: o.quantum_auto,
        send_errors: errors,
        syscalls: calls,
        mean_batch_packets: if calls > 0 {
            sent as f64 / calls as f64
        } else {
            0.0
        },
        first_seq: o.first_seq,
        start_at_realtime_ns: o.start_at_ns,
        start_lateness_ns: o
            .start_at_ns
            .zip(first_rt)
            .map(|(t, f)| f as i64 - t as i64),
        first_send_realtime_ns: first_rt,
        last_send_realtime_ns: last_rt,
        send_window_ns: window,
        achieved_pps,
        achieved_bps: achieved_pps * o.size as f64 * 8.0,
        achieved_l2_bps: achieved_pps * frame as f64 * 8.0,
        achieved_l1_bps: achieved_pps * (frame + L1_OVERHEAD_BYTES) as f64 * 8.0,
        achieved_to_target_ratio: if o.pps > 0.0 {
            achieved_pps / o.pps
        } else {
            0.0
        },
        send_lateness: lateness.summary(),
        fin_sent_packets: fins,
        sndbuf_bytes: sndbuf,
        max_spin_ns: o.max_spin_ns,
        spin_margin_ns: sleeper.margin_ns(),
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
    })
}
