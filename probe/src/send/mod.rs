//! `send`: constant-rate UDP with anchored slots, sendmmsg batches, skip-or-bounded-catch-up
//! after stalls, per-packet seq + timestamp, FIN with the exact count at the end.
//!
//! `run` is set-up, then the pacing loop (wake, plan the due slots, stamp and send them, count),
//! then the FINs and the report (`report.rs`); `output.rs` is where the packets go.

mod output;
mod report;

use std::net::SocketAddr;

use crate::pacing::{plan, wait_realtime, wake_time, RateGiven, Schedule, Sleeper};
use crate::packet;
use crate::stats::NsHist;
use crate::sys::{self, Clock};
pub use output::RawOut;
use output::{enable_gso, gso_fatal, open_output, Output};
pub use report::SendReport;

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
    /// sendmmsg batch size (messages).
    pub batch: usize,
    /// The batch was chosen from the rate (no --batch given).
    pub batch_auto: bool,
    /// How the rate was given (--pps or --rate).
    pub rate_given: RateGiven,
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

/// What the set-up decided, for the report.
struct Setup {
    src: SocketAddr,
    sndbuf: usize,
    total: u64,
    stall_ns: u64,
    segs: usize,
    spin_margin_ns: u64,
}

/// The counters of one run: what the loop did so far.
struct Counters {
    /// First slot not handled yet.
    next: u64,
    sent: u64,
    missed: u64,
    errors: u64,
    consecutive_errors: u32,
    calls: u64,
    messages: u64,
    first_rt: Option<u64>,
    last_rt: Option<u64>,
    lateness: NsHist,
    /// Packets sent since the pacing loop last had to wait: the burst still open.
    burst: u64,
    /// Closed bursts, packets each.
    bursts: NsHist,
    /// Wake-up time - planned wake-up time of the wake-ups that waited.
    wake_lateness: NsHist,
}

impl Counters {
    fn new() -> Self {
        Counters {
            next: 0,
            sent: 0,
            missed: 0,
            errors: 0,
            consecutive_errors: 0,
            calls: 0,
            messages: 0,
            first_rt: None,
            last_rt: None,
            lateness: NsHist::new(),
            burst: 0,
            bursts: NsHist::new(),
            wake_lateness: NsHist::new(),
        }
    }

    /// The pacing loop waited until `planned` and woke at `woke`: the packets sent since the
    /// last wait were one burst.
    fn woke(&mut self, planned: u64, woke: u64) {
        self.close_burst();
        self.wake_lateness.record(woke.saturating_sub(planned));
    }

    fn close_burst(&mut self) {
        if self.burst > 0 {
            self.bursts.record(self.burst);
            self.burst = 0;
        }
    }

    /// `k` packets from slot `next` on left at `now` (monotonic) stamped `rt` (realtime), in
    /// `messages` messages.
    fn sent(&mut self, k: u64, messages: u64, now: u64, rt: u64, sched: &Schedule) {
        self.messages += messages;
        self.consecutive_errors = 0;
        for j in 0..k {
            self.lateness
                .record(now.saturating_sub(sched.slot_time(self.next + j)));
        }
        if k > 0 {
            self.first_rt.get_or_insert(rt);
            self.last_rt = Some(rt);
        }
        self.sent += k;
        self.next += k;
        self.burst += k;
    }

    /// A failed sendmmsg: counted, fatal after 10 000 in a row.
    fn failed(&mut self, e: &std::io::Error, dst: SocketAddr) -> Result<(), String> {
        self.errors += 1;
        self.consecutive_errors += 1;
        if self.consecutive_errors > 10_000 {
            return Err(format!("sendmmsg to {dst} keeps failing: {e}"));
        }
        Ok(())
    }
}

/// The send buffers: `batch` messages of `segs` packets (1 without GSO) after the frame header
/// (raw frames only), every packet pre-encoded; a wake-up only writes seqs and timestamps.
struct Packets {
    batch: sys::SendBatch,
    hdr: usize,
    segs: usize,
    size: usize,
}

impl Packets {
    fn new(o: &SendOpts, out: &Output, segs: usize) -> Self {
        let hdr = out.header_len();
        let msgs = o.batch.max(1);
        let mut batch = sys::SendBatch::new(msgs, hdr + segs * o.size);
        for m in 0..msgs {
            out.write_header(batch.buf_mut(m), o.size);
            for b in batch.buf_mut(m)[hdr..].chunks_exact_mut(o.size) {
                packet::encode_data(b, 0, 0, o.stream);
            }
            batch.set_len(m, hdr + segs * o.size);
        }
        Packets {
            batch,
            hdr,
            segs,
            size: o.size,
        }
    }

    /// Packets one call can carry.
    fn capacity(&self) -> usize {
        self.batch.capacity() * self.segs
    }

    /// Write seqs `seq0..seq0 + n` and timestamp `rt` into the first `n` packets and size the
    /// messages that carry them; returns the number of messages.
    fn stamp(&mut self, n: usize, seq0: u64, rt: u64) -> usize {
        let (hdr, segs, size) = (self.hdr, self.segs, self.size);
        for i in 0..n {
            let off = hdr + (i % segs) * size;
            packet::put_seq_ts(
                &mut self.batch.buf_mut(i / segs)[off..off + size],
                seq0.wrapping_add(i as u64),
                rt,
            );
        }
        let nmsg = n.div_ceil(segs);
        if segs > 1 {
            for m in 0..nmsg {
                self.batch.set_len(m, (n - m * segs).min(segs) * size);
            }
        }
        nmsg
    }
}

/// Packets carried by the first `messages` messages of a call that packed `n` packets into
/// messages of `segs` (all full but the last): sendmmsg counts messages, the report packets.
pub fn packets_in(messages: usize, n: usize, segs: usize) -> usize {
    messages.saturating_mul(segs).min(n)
}

/// Packets per message: `--gso-segments` with UDP GSO turned on, else 1.
fn gso_setup(o: &SendOpts, out: &Output) -> Result<usize, String> {
    if !o.gso {
        return Ok(1);
    }
    let Output::Udp(udp) = out else {
        return Err("--gso works on UDP sockets only; leave it out with --raw-iface".into());
    };
    enable_gso(udp, o.size)?;
    Ok(o.gso_segments.max(1))
}

/// Run the sender.
pub fn run(o: &SendOpts) -> Result<SendReport, String> {
    let (out, src) = open_output(o)?;
    let sndbuf = sys::set_sndbuf(&out, o.sndbuf_bytes).map_err(|e| format!("SO_SNDBUF: {e}"))?;
    sys::install_stop_handler();
    let segs = gso_setup(o, &out)?;
    let mut packets = Packets::new(o, &out, segs);
    let mut sleeper = Sleeper::new(Clock::Monotonic, o.max_spin_ns);
    if let Some(t) = o.start_at_ns {
        wait_realtime(t, o.max_spin_ns);
    }
    let sched = Schedule {
        t0: sys::mono_ns(),
        period_ns: 1e9 / o.pps,
        total: (o.pps * o.duration_ns as f64 / 1e9).round() as u64,
    };
    // with a pacing quantum, a slot is only overdue once it is two quanta late
    let stall_ns = o.stall_ns.max(2 * o.quantum_ns);
    let mut c = Counters::new();
    while c.next < sched.total && !sys::stop_requested() {
        let planned = wake_time(&sched, c.next, o.quantum_ns);
        if sleeper.until(planned) {
            c.woke(planned, sys::mono_ns());
        }
        send_due(o, &sched, stall_ns, &out, &mut packets, &mut c)?;
    }
    c.close_burst();
    let fins = send_fins(o, &out, &mut c)?;
    let setup = Setup {
        src,
        sndbuf,
        total: sched.total,
        stall_ns,
        segs,
        spin_margin_ns: sleeper.margin_ns(),
    };
    Ok(report::build(o, &setup, &c, fins))
}

/// One wake-up: skip what is overdue, send what is due (one sendmmsg), count.
fn send_due(
    o: &SendOpts,
    sched: &Schedule,
    stall_ns: u64,
    out: &Output,
    packets: &mut Packets,
    c: &mut Counters,
) -> Result<(), String> {
    let now = sys::mono_ns();
    let st = plan(
        sched,
        c.next,
        now,
        stall_ns,
        o.catch_up,
        packets.capacity() as u64,
    );
    c.missed += st.skip;
    c.next += st.skip;
    if st.send == 0 {
        return Ok(());
    }
    let n = st.send as usize;
    let mut rt = sys::real_ns();
    let seq0 = o.first_seq.wrapping_add(c.sent);
    let mut nmsg = packets.stamp(n, seq0, rt);
    c.calls += 1;
    let mut result = packets.batch.send(out, nmsg);
    if let Err(e) = &result {
        if earlier_icmp_error(e, out) {
            // counted, then the same packets again, stamped with the time they now leave
            c.failed(e, o.dst)?;
            rt = sys::real_ns();
            nmsg = packets.stamp(n, seq0, rt);
            c.calls += 1;
            result = packets.batch.send(out, nmsg);
        }
    }
    match result {
        Ok(km) => {
            let k = packets_in(km, n, packets.segs);
            c.sent(k as u64, km as u64, now, rt, sched);
            Ok(())
        }
        Err(e) => match gso_fatal(&e, o.size).filter(|_| o.gso) {
            Some(msg) => Err(msg),
            None => c.failed(&e, o.dst),
        },
    }
}

/// ECONNREFUSED on a connected UDP socket is the ICMP port unreachable an *earlier* datagram
/// drew: the kernel reports it (and clears it) on the next send call, which then sends nothing.
/// That call is worth one retry; a second error is a new one.
fn earlier_icmp_error(e: &std::io::Error, out: &Output) -> bool {
    matches!(out, Output::Udp(_)) && e.raw_os_error() == Some(libc::ECONNREFUSED)
}

/// FIN: the exact count, several times, 2 ms apart; never cut by GSO (a 30-byte FIN is longer
/// than a segment of 18..29 bytes). A failed send is counted in `send_errors`, and one that only
/// reported an earlier ICMP error is retried once. Returns how many went out.
fn send_fins(o: &SendOpts, out: &Output, c: &mut Counters) -> Result<u32, String> {
    if let (true, Output::Udp(udp)) = (o.gso, out) {
        sys::set_udp_segment(udp, 0).map_err(|e| format!("setsockopt UDP_SEGMENT 0: {e}"))?;
    }
    let mut fins = 0;
    for i in 0..o.fin_count {
        let b = packet::encode_fin(c.sent, sys::real_ns(), o.stream, o.first_seq);
        let mut result = out.send_one(&b);
        if let Err(e) = &result {
            c.errors += 1;
            if earlier_icmp_error(e, out) {
                let b = packet::encode_fin(c.sent, sys::real_ns(), o.stream, o.first_seq);
                result = out.send_one(&b);
                c.errors += u64::from(result.is_err());
            }
        }
        fins += u32::from(result.is_ok());
        if i + 1 < o.fin_count {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    Ok(fins)
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
