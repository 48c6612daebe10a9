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
pub use report::{ExtentSummary, RecvReport, StreamReport, Totals};
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
}

/// Bind, size the receive buffer, ask for kernel timestamps and the drop counter; returns the
/// socket, the buffer granted and the bound address.
fn open_socket(o: &RecvOpts) -> Result<(UdpSocket, usize, SocketAddr), String> {
    let sock = UdpSocket::bind(o.bind).map_err(|e| format!("cannot bind {}: {e}", o.bind))?;
    let rcvbuf = sys::set_rcvbuf(&sock, o.rcvbuf_bytes).map_err(|e| format!("SO_RCVBUF: {e}"))?;
    sys::enable_rx_metadata(&sock, true).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
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
    ready_line(&local);
    let t0 = sys::mono_ns();
    let stop_reason = loop {
        if let Some(reason) = stop_reason(o, t0, &c, &streams) {
            break reason;
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
        c.last_packet_mono = Some(now_mono);
        let fallback_rx = sys::real_ns();
        for i in 0..got {
            let (data, m) = batch.get(i);
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
    };
    let run = report::Run {
        local,
        rcvbuf,
        stop_reason,
        elapsed_ns: sys::mono_ns() - t0,
    };
    Ok(report::build(o, &run, &c, &streams, trace))
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
