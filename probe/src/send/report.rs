//! The `send` report: what was asked, what was sent, how late, at what CPU.

use serde::Serialize;

use super::{Counters, SendOpts, Setup};
use crate::output::{l2_frame_bytes, L1_OVERHEAD_BYTES};
use crate::pacing::RateGiven;
use crate::rawframe;
use crate::stats::{NsSummary, PacketsSummary};
use crate::sys;

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
    /// The quantum was chosen from the rate, not given.
    pub pacing_quantum_auto: bool,
    /// How the rate was given: "pps" (a packet schedule) or "bps" (a bit rate, as iperf3 -b).
    pub rate_given: RateGiven,
    /// Messages per sendmmsg call at most.
    pub sendmmsg_batch_messages: usize,
    /// The batch was chosen from the rate, not given.
    pub batch_auto: bool,
    /// Packets sent back to back per wake-up of the pacing loop.
    pub burst_packets: PacketsSummary,
    /// Wake-up time − planned wake-up time of the wake-ups that waited, ns.
    pub wake_lateness: NsSummary,
    /// Send calls that failed, data (sendmmsg) and FIN alike, each counted, a retried one too
    /// (e.g. ECONNREFUSED: an ICMP port unreachable an earlier datagram drew, reported by the
    /// next call, which sent nothing and is retried once).
    pub send_errors: u64,
    /// sendmmsg calls (a retry too).
    pub syscalls: u64,
    /// Mean packets per sendmmsg call.
    pub mean_batch_packets: f64,
    /// UDP GSO (UDP_SEGMENT) was on.
    pub gso: bool,
    /// Packets per sendmmsg message at most (1 without GSO).
    pub gso_segments: usize,
    /// sendmmsg messages the kernel took (one skb each; = sent_packets without GSO).
    pub sent_messages: u64,
    /// Mean packets per message (sent_packets / sent_messages).
    pub mean_message_packets: f64,
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
    /// --raw-iface: the interface raw frames were written on; null for a UDP socket.
    pub raw_iface: Option<String>,
    /// --raw-iface: destination MAC of the frames; null for a UDP socket.
    pub raw_dst_mac: Option<String>,
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// The report of a finished run.
pub(super) fn build(o: &SendOpts, setup: &Setup, c: &Counters, fins: u32) -> SendReport {
    let (cpu_u, cpu_s) = sys::rusage_self_ns();
    let frame = l2_frame_bytes(o.size, o.dst.is_ipv6());
    let window = match (c.first_rt, c.last_rt) {
        (Some(f), Some(l)) => l.saturating_sub(f),
        _ => 0,
    };
    let achieved_pps = if window > 0 && c.sent > 1 {
        (c.sent - 1) as f64 * 1e9 / window as f64
    } else {
        0.0
    };
    SendReport {
        dst: o.dst.to_string(),
        src: setup.src.to_string(),
        stream_id: o.stream,
        payload_bytes: o.size,
        frame_bytes: frame,
        target_pps: o.pps,
        target_bps: o.pps * o.size as f64 * 8.0,
        duration_ns: o.duration_ns,
        slots_total_packets: setup.total,
        sent_packets: c.sent,
        sent_bytes: c.sent * o.size as u64,
        missed_slots_packets: c.missed,
        catch_up_max_packets: o.catch_up,
        stall_threshold_ns: setup.stall_ns,
        pacing_quantum_ns: o.quantum_ns,
        pacing_quantum_auto: o.quantum_auto,
        rate_given: o.rate_given,
        sendmmsg_batch_messages: o.batch.max(1),
        batch_auto: o.batch_auto,
        burst_packets: c.bursts.summary().into(),
        wake_lateness: c.wake_lateness.summary(),
        send_errors: c.errors,
        syscalls: c.calls,
        mean_batch_packets: ratio(c.sent as f64, c.calls as f64),
        gso: o.gso,
        gso_segments: setup.segs,
        sent_messages: c.messages,
        mean_message_packets: ratio(c.sent as f64, c.messages as f64),
        first_seq: o.first_seq,
        start_at_realtime_ns: o.start_at_ns,
        start_lateness_ns: o
            .start_at_ns
            .zip(c.first_rt)
            .map(|(t, f)| f as i64 - t as i64),
        first_send_realtime_ns: c.first_rt,
        last_send_realtime_ns: c.last_rt,
        send_window_ns: window,
        achieved_pps,
        achieved_bps: achieved_pps * o.size as f64 * 8.0,
        achieved_l2_bps: achieved_pps * frame as f64 * 8.0,
        achieved_l1_bps: achieved_pps * (frame + L1_OVERHEAD_BYTES) as f64 * 8.0,
        achieved_to_target_ratio: ratio(achieved_pps, o.pps),
        send_lateness: c.lateness.summary(),
        fin_sent_packets: fins,
        sndbuf_bytes: setup.sndbuf,
        max_spin_ns: o.max_spin_ns,
        spin_margin_ns: setup.spin_margin_ns,
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
        raw_iface: o.raw.as_ref().map(|r| r.iface.clone()),
        raw_dst_mac: o.raw.as_ref().map(|r| rawframe::format_mac(&r.dst_mac)),
    }
}
