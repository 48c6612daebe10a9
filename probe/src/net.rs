//! Socket set-up the commands share (plain std code; the system calls std lacks are in `sys`).

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};

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

/// Tell the controller the socket is bound: exactly one line `READY <addr:port>` on stderr.
pub fn ready_line(addr: &SocketAddr) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "READY {addr}");
    let _ = e.flush();
}
