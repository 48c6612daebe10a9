//! `echo`: answers RTT probes from any number of clients with the same bytes, its kernel
//! receive stamp and its send stamp filled in; anything else is counted, never answered.

use std::collections::HashSet;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use serde::Serialize;

use crate::net::ready_line;
use crate::packet::{self, Packet};
use crate::sys;

/// Options of `echo`.
#[derive(Clone, Debug)]
pub struct EchoOpts {
    /// Address to bind.
    pub bind: SocketAddr,
    /// Stop after this long; None: until SIGINT/SIGTERM.
    pub duration_ns: Option<u64>,
    /// Batch size.
    pub batch: usize,
}

/// The `echo` report (printed when it stops).
#[derive(Serialize, Debug)]
pub struct EchoReport {
    /// Bound address.
    pub bind: String,
    /// "duration" or "signal".
    pub stop_reason: &'static str,
    /// From READY to stop, ns.
    pub elapsed_ns: u64,
    /// Valid RTT requests received.
    pub requests_packets: u64,
    /// Replies sent.
    pub replies_packets: u64,
    /// Datagrams that were not RTT requests (garbage, data packets, replies).
    pub foreign_packets: u64,
    /// Replies the kernel refused.
    pub send_errors: u64,
    /// Distinct client addresses seen (counted up to 65536).
    pub clients: usize,
    /// CPU time in user mode, ns.
    pub cpu_user_ns: u64,
    /// CPU time in kernel mode, ns.
    pub cpu_system_ns: u64,
}

/// The counters of an echo run.
#[derive(Default)]
struct Counters {
    requests: u64,
    replies: u64,
    foreign: u64,
    errors: u64,
    clients: HashSet<SocketAddr>,
}

/// Run the echo server.
pub fn run_echo(o: &EchoOpts) -> Result<EchoReport, String> {
    let sock = crate::net::bind_socket(o.bind)?;
    sys::enable_rx_metadata(&sock, false).map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    let _ = sys::set_rcvbuf(&sock, 4 << 20);
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .map_err(|e| e.to_string())?;
    let local = sock.local_addr().map_err(|e| e.to_string())?;
    sys::install_stop_handler();
    let mut rb = sys::RecvBatch::new(o.batch, 65536);
    let mut sb = sys::SendBatch::new(o.batch, 65536);
    let mut c = Counters::default();
    ready_line(&local);
    let t0 = sys::mono_ns();
    let reason = loop {
        if sys::stop_requested() {
            break "signal";
        }
        if o.duration_ns.is_some_and(|d| sys::mono_ns() - t0 >= d) {
            break "duration";
        }
        let n = rb.recv(&sock).map_err(|e| format!("recvmmsg: {e}"))?;
        let k = prepare_replies(&rb, n, &mut sb, &mut c);
        if k > 0 {
            send_replies(&sock, &mut sb, k, &mut c);
        }
    };
    let (cpu_u, cpu_s) = sys::rusage_self_ns();
    Ok(EchoReport {
        bind: local.to_string(),
        stop_reason: reason,
        elapsed_ns: sys::mono_ns() - t0,
        requests_packets: c.requests,
        replies_packets: c.replies,
        foreign_packets: c.foreign,
        send_errors: c.errors,
        clients: c.clients.len(),
        cpu_user_ns: cpu_u,
        cpu_system_ns: cpu_s,
    })
}

/// Turn the valid requests among the `n` datagrams just read into replies in `sb` (kind
/// RTT_REPLY, the kernel receive stamp filled in, addressed to the sender); returns how many.
fn prepare_replies(
    rb: &sys::RecvBatch,
    n: usize,
    sb: &mut sys::SendBatch,
    c: &mut Counters,
) -> usize {
    let fallback = sys::real_ns();
    let mut k = 0;
    for i in 0..n {
        let (d, m) = rb.get(i);
        let ok = matches!(packet::decode(d), Ok(Packet::Rtt { reply: false, .. }));
        let src = match (ok, m.src) {
            (true, Some(s)) => s,
            _ => {
                c.foreign += 1;
                continue;
            }
        };
        c.requests += 1;
        if c.clients.len() < 65536 {
            c.clients.insert(src);
        }
        let len = d.len();
        let rx = m.kernel_rx_ns.unwrap_or(fallback);
        let buf = sb.buf_mut(k);
        buf[..len].copy_from_slice(d);
        // server_rx now, server_tx just before sending
        packet::make_rtt_reply(&mut buf[..len], rx, 0);
        sb.set_len(k, len);
        sb.set_dest(k, Some(src));
        k += 1;
    }
    k
}

/// Stamp the send time into the first `k` replies and send them; count what the kernel took.
fn send_replies(sock: &UdpSocket, sb: &mut sys::SendBatch, k: usize, c: &mut Counters) {
    let tx = sys::real_ns();
    for i in 0..k {
        sb.buf_mut(i)[26..34].copy_from_slice(&tx.to_be_bytes());
    }
    match sb.send(sock, k) {
        Ok(s) => {
            c.replies += s as u64;
            c.errors += (k - s) as u64;
        }
        Err(_) => c.errors += k as u64,
    }
}
