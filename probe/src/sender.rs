//! `send`: constant-rate UDP with anchored slots, sendmmsg batches, skip-or-bounded-catch-up
//! after stalls, per-packet seq + timestamp, FIN with the exact count at the end.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use serde::Serialize;

use crate::output::{l2_frame_bytes, L1_OVERHEAD_BYTES};
use crate::pacing::{plan, wake_time, Schedule, Sleeper};
use crate::packet;
use crate::rawframe::{self, Endpoints};
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
    /// UDP GSO: one sendmmsg message carries up to `gso_segments` packets.
    pub gso: bool,
    /// Packets per message at most (1 without GSO).
    pub gso_segments: usize,
    /// Write raw Ethernet frames on an interface instead of using a UDP socket.
    pub raw: Option<RawOut>,
}

/// `--raw-iface`: where raw frames go out and to which MAC.
#[derive(Clone, Debug)]
pub struct RawOut {
    /// Interface to write frames on (AF_PACKET, past the qdisc).
    pub iface: String,
    /// Destination MAC of every frame.
    pub dst_mac: [u8; 6],
}

/// Where packets go: a connected UDP socket, or an AF_PACKET socket with the frame header that
/// precedes every payload.
enum Output {
    Udp(UdpSocket),
    Raw(OwnedFd, Endpoints),
}

impl AsRawFd for Output {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Output::Udp(s) => s.as_raw_fd(),
            Output::Raw(s, _) => s.as_raw_fd(),
        }
    }
}

impl Output {
    /// Bytes in front of each UDP payload in a send buffer.
    fn header_len(&self) -> usize {
        match self {
            Output::Udp(_) => 0,
            Output::Raw(..) => rawframe::HEADER_LEN,
        }
    }

    /// Prepare `buf` (header_len + payload_len bytes) to carry a payload of `payload_len`.
    fn write_header(&self, buf: &mut [u8], payload_len: usize) {
        if let Output::Raw(_, ep) = self {
            rawframe::write_header(buf, ep, payload_len);
        }
    }

    /// Send one datagram (the FIN) outside the batches.
    fn send_one(&self, payload: &[u8]) -> bool {
        match self {
            Output::Udp(s) => s.send(payload).is_ok(),
            Output::Raw(..) => {
                let h = rawframe::HEADER_LEN;
                let mut b = sys::SendBatch::new(1, h + payload.len());
                self.write_header(b.buf_mut(0), payload.len());
                b.buf_mut(0)[h..].copy_from_slice(payload);
                matches!(b.send(self, 1), Ok(1))
            }
        }
    }
}

/// Open the output of `o`: a connected UDP socket, or (--raw-iface) an AF_PACKET socket on the
/// interface with IPv4 addresses from --bind and --dst. Returns it and the source address.
fn open_output(o: &SendOpts) -> Result<(Output, SocketAddr), String> {
    let Some(raw) = &o.raw else {
        let sock = connected_socket(o.dst, o.bind)?;
        let src = sock.local_addr().map_err(|e| e.to_string())?;
        return Ok((Output::Udp(sock), src));
    };
    let (SocketAddr::V4(dst), Some(SocketAddr::V4(bind))) = (o.dst, o.bind) else {
        return Err(
            "--raw-iface needs IPv4 --dst and --bind SRC_ADDR:PORT (the source address \
                    written into every frame)"
                .into(),
        );
    };
    let src_mac = sys::iface_mac(&raw.iface)
        .map_err(|e| format!("--raw-iface {}: no such interface here ({e})", raw.iface))?;
    let sock = sys::packet_socket(&raw.iface, false).map_err(|e| {
        format!(
            "--raw-iface {}: cannot open an AF_PACKET socket: {e}",
            raw.iface
        )
    })?;
    let src = rawframe::source(*bind.ip(), bind.port());
    let ep = Endpoints {
        src_mac,
        dst_mac: raw.dst_mac,
        src,
        dst,
    };
    Ok((Output::Raw(sock, ep), SocketAddr::V4(src)))
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

/// Packets carried by the first `messages` messages of a call that packed `n` packets into
/// messages of `segs` (all full but the last): sendmmsg counts messages, the report packets.
pub fn packets_in(messages: usize, n: usize, segs: usize) -> usize {
    messages.saturating_mul(segs).min(n)
}

/// Turn UDP GSO on with segments of `size` bytes, or say why it cannot be.
fn enable_gso(sock: &UdpSocket, size: usize) -> Result<(), String> {
    let seg = u16::try_from(size).map_err(|_| format!("--gso: --size {size} > 65535"))?;
    sys::set_udp_segment(sock, seg).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
            "--gso: this kernel has no UDP GSO (UDP_SEGMENT, Linux >= 4.18); leave out --gso"
                .to_string()
        } else {
            format!("--gso: setsockopt UDP_SEGMENT {size}: {e}")
        }
    })
}

/// A GSO send error the sender cannot get past, with the fix; None for others (counted).
fn gso_fatal(e: &std::io::Error, size: usize) -> Option<String> {
    match e.raw_os_error() {
        Some(libc::EINVAL | libc::EMSGSIZE) => Some(format!(
            "--gso: the kernel refused a GSO message ({e}): each packet (--size {size} + IP \
             and UDP headers) must fit the path MTU, unfragmented; lower --size or leave out --gso"
        )),
        Some(libc::EIO) => Some(
            "--gso: the kernel refused a GSO message (EIO): older kernels need TX checksum \
             offload on the outgoing device (ethtool -K DEV tx on), and no IPsec on the route; \
             or leave out --gso"
                .to_string(),
        ),
        _ => None,
    }
}

/// Run the sender.
pub fn run(o: &SendOpts) -> Result<SendReport, String> {
    let (sock, src) = open_output(o)?;
    let sndbuf = sys::set_sndbuf(&sock, o.sndbuf_bytes).map_err(|e| format!("SO_SNDBUF: {e}"))?;
    let hdr = sock.header_len();
    sys::install_stop_handler();
    let total = (o.pps * o.duration_ns as f64 / 1e9).round() as u64;
    // a message holds `segs` packets back to back (1 without GSO) after the frame header (raw
    // frames only, never with GSO); a call sends up to --batch messages
    let segs = if o.gso { o.gso_segments.max(1) } else { 1 };
    if o.gso {
        let Output::Udp(udp) = &sock else {
            return Err("--gso works on UDP sockets only; leave it out with --raw-iface".into());
        };
        enable_gso(udp, o.size)?;
    }
    let msgs_n = o.batch.max(1);
    let batch_n = msgs_n * segs;
    let mut batch = sys::SendBatch::new(msgs_n, hdr + segs * o.size);
    for m in 0..msgs_n {
        sock.write_header(batch.buf_mut(m), o.size);
        for b in batch.buf_mut(m)[hdr..].chunks_exact_mut(o.size) {
            packet::encode_data(b, 0, 0, o.stream);
        }
        batch.set_len(m, hdr + segs * o.size);
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
    let mut messages = 0u64;
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
        let nmsg = n.div_ceil(segs);
        let rt = sys::real_ns();
        for i in 0..n {
            let off = hdr + (i % segs) * o.size;
            packet::put_seq_ts(
                &mut batch.buf_mut(i / segs)[off..off + o.size],
                o.first_seq.wrapping_add(sent + i as u64),
                rt,
            );
        }
        if segs > 1 {
            for m in 0..nmsg {
                batch.set_len(m, (n - m * segs).min(segs) * o.size);
            }
        }
        calls += 1;
        match batch.send(&sock, nmsg) {
            Ok(km) => {
                messages += km as u64;
                let k = packets_in(km, n, segs);
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
                if o.gso {
                    if let Some(msg) = gso_fatal(&e, o.size) {
                        return Err(msg);
                    }
                }
                errors += 1;
                consecutive_errors += 1;
                if consecutive_errors > 10_000 {
                    return Err(format!("sendmmsg to {} keeps failing: {e}", o.dst));
                }
            }
        }
    }
    // FIN: the exact count, several times, 2 ms apart; never cut by GSO (a 30-byte FIN is
    // longer than a segment of 18..29 bytes)
    if let (true, Output::Udp(udp)) = (o.gso, &sock) {
        sys::set_udp_segment(udp, 0).map_err(|e| format!("setsockopt UDP_SEGMENT 0: {e}"))?;
    }
    let mut fins = 0;
    for i in 0..o.fin_count {
        let b = packet::encode_fin(sent, sys::real_ns(), o.stream, o.first_seq);
        if sock.send_one(&b) {
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
        gso: o.gso,
        gso_segments: segs,
        sent_messages: messages,
        mean_message_packets: if messages > 0 {
            sent as f64 / messages as f64
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
        raw_iface: o.raw.as_ref().map(|r| r.iface.clone()),
        raw_dst_mac: o.raw.as_ref().map(|r| rawframe::format_mac(&r.dst_mac)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_sends_count_packets_not_messages() {
        // 100 packets in messages of 44: 44 + 44 + 12
        assert_eq!(100usize.div_ceil(44), 3);
        assert_eq!(packets_in(0, 100, 44), 0);
        assert_eq!(packets_in(1, 100, 44), 44);
        assert_eq!(packets_in(2, 100, 44), 88);
        assert_eq!(packets_in(3, 100, 44), 100);
        // without GSO a message is a packet
        assert_eq!(packets_in(7, 10, 1), 7);
        // one short message
        assert_eq!(packets_in(1, 9, 44), 9);
    }
}
