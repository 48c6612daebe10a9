//! `recv`: batched receive (recvmmsg) with kernel timestamps, per-stream accounting, the
//! throughput trace and the kernel's receive-queue drop counter.
//!
//! `run` is set-up, then the loop (check the stop conditions, read a batch, count each
//! datagram into its stream), then the report (`report.rs`); `streams.rs` is the stream table.

mod report;
mod streams;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use crate::net::ready_line;
use crate::packet::{self, Packet};
use crate::sys::{self, RxMeta};
use crate::trace::Trace;
pub use report::{RecvReport, StreamReport, Totals};
use streams::Streams;
pub use streams::MAX_STREAMS;

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
    /// Longest sleep between draining reads in timed polling, ns (0: timed polling off).
    pub poll_max_ns: u64,
    /// UDP_GRO on the socket: take coalesced buffers and cut them into datagrams here.
    pub gro: bool,
}

/// Timed polling engages while at least this many datagrams a second arrive: two per sleep of
/// the default 1 ms, so polling never wakes the receiver more often than the datagrams would.
const POLL_MIN_PPS: f64 = 2_000.0;
/// The arrival rate is measured over windows of this length.
const POLL_WINDOW_NS: u64 = 10_000_000;
/// A shorter sleep than this gains nothing over waiting on the socket.
const POLL_MIN_NS: u64 = 50_000;

/// Timed polling. A receiver that waits on its socket is woken for (nearly) every datagram, and
/// on veth or loopback that wake-up is work of the *sender's* CPU (the receive softirq runs in
/// its context): it costs the sender CPU, and at 100K+ datagrams/s a good share of its rate.
/// While datagrams arrive fast, the receiver instead drains the socket, sleeps on its own timer
/// (nobody has to wake it: the softirq finds no waiter) and drains again. The sleep is bounded
/// so that the datagrams queued meanwhile fill at most a quarter of the receive buffer. Every
/// timestamp is the kernel's receive stamp, so when the receiver reads changes no measured value.
struct Poll {
    max_ns: u64,
    /// A quarter of the receive buffer granted, bytes.
    budget_bytes: f64,
    /// Current sleep between draining reads; 0 while waiting on the socket.
    interval_ns: u64,
    win_start: u64,
    win_packets: u64,
    win_bytes: u64,
    timed_polls: u64,
}

impl Poll {
    fn new(max_ns: u64, rcvbuf_bytes: usize) -> Self {
        Poll {
            max_ns,
            budget_bytes: rcvbuf_bytes as f64 / 4.0,
            interval_ns: 0,
            win_start: sys::mono_ns(),
            win_packets: 0,
            win_bytes: 0,
            timed_polls: 0,
        }
    }

    /// Count a read of `packets` datagrams of `bytes` in all at `now`; at the end of a window,
    /// set the sleep from the arrival rate (0: wait on the socket).
    fn observe(&mut self, now: u64, packets: usize, bytes: usize) {
        self.win_packets += packets as u64;
        self.win_bytes += bytes as u64;
        let dt = now.saturating_sub(self.win_start);
        if dt < POLL_WINDOW_NS {
            return;
        }
        let pps = self.win_packets as f64 * 1e9 / dt as f64;
        self.interval_ns = if self.max_ns > 0 && pps >= POLL_MIN_PPS {
            // queued bytes per datagram: its payload plus ~1 KiB of skb overhead (truesize)
            let mean_len = self.win_bytes as f64 / self.win_packets as f64;
            let fits_ns = (self.budget_bytes / (pps * (1024.0 + mean_len)) * 1e9) as u64;
            Some(fits_ns.min(self.max_ns))
                .filter(|&ns| ns >= POLL_MIN_NS)
                .unwrap_or(0)
        } else {
            0
        };
        (self.win_start, self.win_packets, self.win_bytes) = (now, 0, 0);
    }

    /// The socket is drained: while polling, sleep on our own timer.
    fn drained(&mut self) {
        if self.interval_ns > 0 {
            sys::sleep_until(sys::Clock::Monotonic, sys::mono_ns() + self.interval_ns);
            self.timed_polls += 1;
        }
    }
}

/// The counters of one run (per-stream counts live in the stream table).
#[derive(Default)]
struct Counters {
    datagrams: u64,
    foreign: u64,
    truncated: u64,
    /// The socket's cumulative SO_RXQ_OVFL counter, as last delivered.
    drops: u32,
    last_packet_mono: Option<u64>,
    last_fin_mono: u64,
    timed_polls: u64,
    /// Reads that carried more than one datagram (UDP_GRO).
    coalesced_reads: u64,
}

/// Bind, size the receive buffer, ask for kernel timestamps and the drop counter; returns the
/// socket, the buffer granted and the bound address.
fn open_socket(o: &RecvOpts) -> Result<(UdpSocket, usize, SocketAddr), String> {
    let sock = crate::net::bind_socket(o.bind)?;
    let rcvbuf = sys::set_rcvbuf(&sock, o.rcvbuf_bytes).map_err(|e| format!("SO_RCVBUF: {e}"))?;
    sys::enable_rx_metadata(&sock, true).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    if o.gro {
        sys::set_udp_gro(&sock, true).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                "--gro: this kernel has no UDP GRO (UDP_GRO, Linux >= 5.0); leave out --gro".into()
            } else {
                format!("--gro: setsockopt UDP_GRO: {e}")
            }
        })?;
    }
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| format!("SO_RCVTIMEO: {e}"))?;
    let local = sock.local_addr().map_err(|e| e.to_string())?;
    Ok((sock, rcvbuf, local))
}

/// Why to stop now, if a stop condition holds.
fn stop_reason(o: &RecvOpts, t0: u64, c: &Counters, streams: &Streams) -> Option<&'static str> {
    let now = sys::mono_ns();
    if sys::stop_requested() {
        return Some("signal");
    }
    if o.duration_ns.is_some_and(|d| now - t0 >= d) {
        return Some("duration");
    }
    if let (Some(idle), Some(last)) = (o.idle_timeout_ns, c.last_packet_mono) {
        if now.saturating_sub(last) >= idle {
            return Some("idle_timeout");
        }
    }
    let done = o.expect_streams.is_some_and(|n| {
        streams.fins_seen() >= n && now.saturating_sub(c.last_fin_mono) >= o.fin_linger_ns
    });
    done.then_some("streams_done")
}

/// Run the receiver until a stop condition.
pub fn run(o: &RecvOpts) -> Result<RecvReport, String> {
    let (sock, rcvbuf, local) = open_socket(o)?;
    sys::install_stop_handler();
    let mut batch = sys::RecvBatch::new(o.batch, 65536);
    let mut streams = Streams::new(o.waiting_time_ns);
    let mut trace = Trace::new(o.trace_bin_ns);
    let mut c = Counters::default();
    let mut poll = Poll::new(if o.busy_poll { 0 } else { o.poll_max_ns }, rcvbuf);
    ready_line(&local);
    let t0 = sys::mono_ns();
    let stop_reason = loop {
        if let Some(reason) = stop_reason(o, t0, &c, &streams) {
            break reason;
        }
        let got = if o.busy_poll || poll.interval_ns > 0 {
            batch.recv_nowait(&sock)
        } else {
            batch.recv(&sock)
        }
        .map_err(|e| format!("recvmmsg: {e}"))?;
        let now_mono = sys::mono_ns();
        let mut bytes = 0;
        if got > 0 {
            c.last_packet_mono = Some(now_mono);
            let fallback_rx = sys::real_ns();
            for i in 0..got {
                let (buf, m) = batch.get(i);
                bytes += buf.len();
                let (first, rest) = datagrams(buf, m.segment_bytes);
                c.coalesced_reads += u64::from(rest.len() > 0);
                for data in std::iter::once(first).chain(rest) {
                    count(
                        data,
                        m,
                        fallback_rx,
                        now_mono,
                        &mut c,
                        &mut streams,
                        &mut trace,
                    );
                }
            }
        }
        poll.observe(now_mono, got, bytes);
        if got == 0 {
            poll.drained();
        }
    };
    c.timed_polls = poll.timed_polls;
    let run = report::Run {
        local,
        rcvbuf,
        stop_reason,
        elapsed_ns: sys::mono_ns() - t0,
    };
    Ok(report::build(o, &run, &c, &streams, trace))
}

/// The datagrams in one read, first and the rest: the whole buffer (an empty datagram too), or
/// with UDP_GRO every `segment` bytes (the last may be shorter). All of them share the read's
/// kernel timestamp: the kernel stamps the buffer, not its segments.
fn datagrams(buf: &[u8], segment: Option<usize>) -> (&[u8], std::slice::Chunks<'_, u8>) {
    let cut = segment.map_or(buf.len(), |s| s.clamp(1, buf.len().max(1)));
    let (first, rest) = buf.split_at(cut.min(buf.len()));
    (first, rest.chunks(cut.max(1)))
}

/// Count one datagram: into its stream and the trace, or as foreign.
fn count(
    data: &[u8],
    m: &RxMeta,
    fallback_rx: u64,
    now_mono: u64,
    c: &mut Counters,
    streams: &mut Streams,
    trace: &mut Trace,
) {
    c.datagrams += 1;
    if let Some(d) = m.drops {
        c.drops = d;
    }
    if m.truncated {
        c.truncated += 1;
    }
    let rx = m.kernel_rx_ns.unwrap_or(fallback_rx);
    let pkt = packet::decode(data);
    let key = match (m.src, &pkt) {
        (Some(src), Ok(p)) => streams.key(src, p),
        _ => None,
    };
    let Some(key) = key else {
        c.foreign += 1;
        return;
    };
    let Some(st) = streams.get(key) else {
        return; // overflow, counted by the table
    };
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
            c.last_fin_mono = now_mono;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coalesced_read_is_cut_at_its_segment_size() {
        let all = |buf: &[u8], seg| {
            let (first, rest) = datagrams(buf, seg);
            std::iter::once(first)
                .chain(rest)
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        };
        let lens = |buf: &[u8], seg| all(buf, seg).iter().map(Vec::len).collect::<Vec<_>>();
        let buf: Vec<u8> = (0..50).collect();
        assert_eq!(lens(&buf, None), [50]);
        assert_eq!(lens(&buf, Some(18)), [18, 18, 14]); // a shorter last one (a FIN after data)
        assert_eq!(lens(&buf, Some(25)), [25, 25]);
        assert_eq!(lens(&buf, Some(64)), [50]);
        assert_eq!(all(&buf, Some(18))[1][0], 18); // in order, nothing skipped
        assert_eq!(lens(&[], None), [0]); // an empty datagram is still one datagram
        assert_eq!(lens(&[], Some(18)), [0]);
    }

    /// A poller whose window started at 0, fed one read of `packets` datagrams of 18 bytes at
    /// the end of a 10 ms window.
    fn after_window(max_ns: u64, rcvbuf: usize, packets: usize) -> u64 {
        let mut p = Poll::new(max_ns, rcvbuf);
        p.win_start = 0;
        p.observe(POLL_WINDOW_NS, packets, packets * 18);
        p.interval_ns
    }

    #[test]
    fn timed_polling_sleeps_while_a_quarter_of_the_buffer_fills() {
        // 2 000 datagrams in 10 ms = 200K/s, ~1 042 bytes each queued (18 + 1 KiB of skb)
        // root's 8 MiB request, granted 16 MiB: a quarter (4 MiB) lasts 20 ms -> capped at 1 ms
        assert_eq!(after_window(1_000_000, 16 << 20, 2_000), 1_000_000);
        // a user's rmem_max (212 992, granted 425 984): 106 496 B / (200K/s x 1 042 B) = 511 µs
        let ns = after_window(1_000_000, 425_984, 2_000);
        assert_eq!(ns, (106_496.0 / (200_000.0 * 1_042.0) * 1e9) as u64);
        assert!((510_000..512_000).contains(&ns), "{ns}");
        // a buffer that fills in under 50 µs: wait on the socket instead
        assert_eq!(after_window(1_000_000, 16_384, 2_000), 0);
    }

    #[test]
    fn timed_polling_only_at_20k_per_second_and_only_when_allowed() {
        assert_eq!(after_window(1_000_000, 16 << 20, 19), 0); // 1 900/s
        assert_eq!(after_window(1_000_000, 16 << 20, 20), 1_000_000); // 2 000/s
        assert_eq!(after_window(0, 16 << 20, 2_000), 0); // --poll-max-us 0
                                                         // within a window nothing changes yet
        let mut p = Poll::new(1_000_000, 16 << 20);
        p.win_start = 0;
        p.observe(POLL_WINDOW_NS - 1, 2_000, 36_000);
        assert_eq!(p.interval_ns, 0);
    }
}
