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

/// IPv4 (20) or IPv6 (40) header plus the UDP header (8), bytes.
pub fn ip_udp_header_bytes(dst: SocketAddr) -> usize {
    if dst.is_ipv6() {
        48
    } else {
        28
    }
}

/// Refuse a payload (`flag` = `--size`) that does not fit the path MTU of the connected socket:
/// the kernel would send each datagram as IP fragments, so one "packet" would be several frames
/// on the wire, and frame_bytes, the packet rate and the loss would no longer describe them.
pub fn check_fits_mtu(
    sock: &UdpSocket,
    dst: SocketAddr,
    size: usize,
    flag: &str,
) -> Result<(), String> {
    let Ok(mtu) = crate::sys::path_mtu(sock, dst.is_ipv6()) else {
        return Ok(()); // no MTU to compare with (not connected): the kernel decides
    };
    let hdr = ip_udp_header_bytes(dst);
    if size + hdr <= mtu {
        return Ok(());
    }
    Err(format!(
        "{flag} {size}: {size} + {hdr} bytes of IP and UDP headers exceed the path MTU of {mtu} \
         bytes to {dst}, so every datagram would leave as IP fragments; use {flag} {} or less \
         (or raise the MTU of the path)",
        mtu.saturating_sub(hdr)
    ))
}

/// Tell the controller the socket is bound: exactly one line `READY <addr:port>` on stderr.
pub fn ready_line(addr: &SocketAddr) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "READY {addr}");
    let _ = e.flush();
}
