//! Socket set-up the commands share (plain std code; the system calls std lacks are in `sys`).

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, UdpSocket};

/// Bind a UDP socket to `--bind ADDR:PORT`; an error names the flag and the fix.
pub fn bind_socket(local: SocketAddr) -> Result<UdpSocket, String> {
    UdpSocket::bind(local).map_err(|e| bind_error(local, &e))
}

/// Why `--bind` failed, and what to do about it.
pub fn bind_error(local: SocketAddr, e: &std::io::Error) -> String {
    let fix = match e.kind() {
        ErrorKind::AddrInUse => {
            "the port is in use by another socket: choose a free port, or port 0 for any free one \
             (e.g. --bind 127.0.0.1:0)"
        }
        ErrorKind::AddrNotAvailable => {
            "not an address of this host (or of this network namespace): give one of its \
             addresses, or 0.0.0.0 / [::] for all"
        }
        ErrorKind::PermissionDenied => "ports below 1024 need root: use a port from 1024 up",
        _ => "",
    };
    if fix.is_empty() {
        format!("--bind {local}: cannot bind: {e}")
    } else {
        format!("--bind {local}: cannot bind ({e}): {fix}")
    }
}

/// Bind a UDP socket of the destination's family and connect it.
pub fn connected_socket(dst: SocketAddr, bind: Option<SocketAddr>) -> Result<UdpSocket, String> {
    let local: SocketAddr = match bind {
        Some(b) => b,
        None if dst.is_ipv6() => "[::]:0".parse().expect("valid"),
        None => "0.0.0.0:0".parse().expect("valid"),
    };
    let sock = bind_socket(local)?;
    sock.connect(dst).map_err(|e| {
        let fix = match e.raw_os_error() {
            Some(libc::ENETUNREACH | libc::EHOSTUNREACH) => {
                ": no route to it from this host (or network namespace); check the address and \
                 `ip route`"
            }
            Some(libc::EAFNOSUPPORT | libc::EINVAL) => {
                ": give a --bind address of the same family (IPv4 or IPv6) as --dst"
            }
            _ => "",
        };
        format!("--dst {dst}: cannot connect ({e}){fix}")
    })?;
    Ok(sock)
}

/// Tell the controller the socket is bound: exactly one line `READY <addr:port>` on stderr.
pub fn ready_line(addr: &SocketAddr) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "READY {addr}");
    let _ = e.flush();
}
