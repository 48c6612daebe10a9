//! Socket options and addresses: buffer sizes, UDP GSO, receive timestamps and the drop counter,
//! sockaddr conversions for the mmsg calls, AF_PACKET sockets bound to one interface, an
//! interface's MAC, PACKET_STATISTICS and ppoll.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::clock::ns_to_ts;

pub(super) fn setsockopt_int(fd: i32, level: i32, name: i32, val: i32) -> io::Result<()> {
    // SAFETY: we pass a pointer to a live i32 and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &val as *const i32 as *const libc::c_void,
            size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn getsockopt_int(fd: i32, level: i32, name: i32) -> io::Result<i32> {
    let mut val: i32 = 0;
    let mut len = size_of::<i32>() as libc::socklen_t;
    // SAFETY: `val` and `len` are live and writable; len says how many bytes `val` holds.
    let r = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            &mut val as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(val)
}

/// Ask for a buffer of `bytes` with `force` (SO_*BUFFORCE: root may exceed the sysctl maximum),
/// else `plain` (capped by rmem_max / wmem_max); return what the kernel granted (it doubles the
/// request for bookkeeping).
fn set_buf(fd: i32, force: i32, plain: i32, bytes: usize) -> io::Result<usize> {
    let v = bytes.min(i32::MAX as usize / 2) as i32;
    if setsockopt_int(fd, libc::SOL_SOCKET, force, v).is_err() {
        setsockopt_int(fd, libc::SOL_SOCKET, plain, v)?;
    }
    Ok(getsockopt_int(fd, libc::SOL_SOCKET, plain)? as usize)
}

/// The path MTU of a connected UDP socket (IP_MTU / IPV6_MTU: the route's MTU), bytes.
pub fn path_mtu(sock: &UdpSocket, ipv6: bool) -> io::Result<usize> {
    let (level, name) = if ipv6 {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        (libc::IPPROTO_IP, libc::IP_MTU)
    };
    getsockopt_int(sock.as_raw_fd(), level, name).map(|m| m.max(0) as usize)
}

/// Ask for a receive buffer of `bytes` on any socket (UDP or AF_PACKET); returns what was granted.
pub fn set_rcvbuf(sock: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    set_buf(
        sock.as_raw_fd(),
        libc::SO_RCVBUFFORCE,
        libc::SO_RCVBUF,
        bytes,
    )
}

/// The same for the send buffer.
pub fn set_sndbuf(sock: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    set_buf(
        sock.as_raw_fd(),
        libc::SO_SNDBUFFORCE,
        libc::SO_SNDBUF,
        bytes,
    )
}

const UDP_SEGMENT: i32 = 103; // linux/udp.h, since 4.18

/// UDP GSO (UDP_SEGMENT): from now on the kernel cuts every send of more than `segment_bytes` on
/// `sock` into datagrams of `segment_bytes` (the last may be shorter) as late as it can; a send
/// of at most `segment_bytes` stays one datagram. 0 turns it off. ENOPROTOOPT: no UDP GSO here.
pub fn set_udp_segment(sock: &UdpSocket, segment_bytes: u16) -> io::Result<()> {
    setsockopt_int(
        sock.as_raw_fd(),
        libc::SOL_UDP,
        UDP_SEGMENT,
        i32::from(segment_bytes),
    )
}

pub(super) const UDP_GRO: i32 = 104; // linux/udp.h, since 5.0

/// UDP GRO on a receiving socket (UDP_GRO): the kernel may hand over several datagrams of one
/// flow as one buffer (a UDP GSO send kept whole on veth/loopback, or datagrams a NIC's GRO
/// merged), with their segment size in a (SOL_UDP, UDP_GRO) cmsg. Without it, such a buffer is
/// cut into datagrams on the way in. ENOPROTOOPT: no UDP GRO here.
pub fn set_udp_gro(sock: &impl AsRawFd, on: bool) -> io::Result<()> {
    setsockopt_int(sock.as_raw_fd(), libc::SOL_UDP, UDP_GRO, i32::from(on))
}

/// Ask for a kernel receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME) and, if `ovfl`, the
/// socket's cumulative drop counter (SO_RXQ_OVFL) on every received datagram.
pub fn enable_rx_metadata(sock: &impl AsRawFd, ovfl: bool) -> io::Result<()> {
    let fd = sock.as_raw_fd();
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
    if ovfl {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RXQ_OVFL, 1)?;
    }
    Ok(())
}

pub(super) fn sockaddr_to_std(
    ss: &libc::sockaddr_storage,
    len: libc::socklen_t,
) -> Option<SocketAddr> {
    match ss.ss_family as i32 {
        libc::AF_INET if len as usize >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: family is AF_INET and the kernel wrote at least a sockaddr_in; storage is
            // large and aligned enough for any sockaddr type.
            let sin = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 if len as usize >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above for AF_INET6 / sockaddr_in6.
            let sin6 = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

pub(super) fn std_to_sockaddr(
    addr: &SocketAddr,
    ss: &mut libc::sockaddr_storage,
) -> libc::socklen_t {
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough to hold a sockaddr_in; we
            // write a fully initialised value.
            let sin = unsafe { &mut *(ss as *mut _ as *mut libc::sockaddr_in) };
            *sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(*a.ip()).to_be(),
                },
                sin_zero: [0; 8],
            };
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above for sockaddr_in6.
            let sin6 = unsafe { &mut *(ss as *mut _ as *mut libc::sockaddr_in6) };
            *sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

/// An AF_PACKET raw socket bound to one interface (the delay node's port to one side).
///
/// `rx`: it receives every frame arriving on the interface (ETH_P_ALL), but not the frames this
/// process sends out of it (PACKET_IGNORE_OUTGOING). Without `rx` (protocol 0) it only sends:
/// sendmmsg without an address transmits on the bound interface.
pub fn packet_socket(ifname: &str, rx: bool) -> io::Result<OwnedFd> {
    let name = std::ffi::CString::new(ifname)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: `name` is a valid NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        return Err(io::Error::last_os_error());
    }
    // Protocol 0 at creation: the socket receives nothing until bound to its interface.
    // SAFETY: plain socket(2) call; the result is checked and owned at once.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let proto = if rx {
        (libc::ETH_P_ALL as u16).to_be()
    } else {
        0
    };
    if rx {
        setsockopt_int(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
    } else {
        // best effort: hand frames straight to the driver, past the (empty) qdisc layer
        let _ = setsockopt_int(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1);
    }
    // SAFETY: an all-zero sockaddr_ll is valid; we fill family, protocol and ifindex.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = index as i32;
    // SAFETY: we pass a pointer to a live sockaddr_ll and its exact size.
    let r = unsafe {
        libc::bind(
            fd,
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sock)
}

/// MAC address of interface `ifname` in this network namespace (SIOCGIFHWADDR).
pub fn iface_mac(ifname: &str) -> io::Result<[u8; 6]> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {ifname:?}"),
        ));
    }
    // SAFETY: plain socket(2) call; the result is checked and owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: an all-zero ifreq is valid; the name (checked shorter than IFNAMSIZ) is copied in
    // and stays NUL-terminated.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: SIOCGIFHWADDR reads the name and writes ifru_hwaddr inside the live `req`.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR as _, &mut req) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: after a successful SIOCGIFHWADDR the union holds ifru_hwaddr.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (m, b) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *m = *b as u8;
    }
    Ok(mac)
}

const PACKET_IGNORE_OUTGOING: i32 = 23; // linux/if_packet.h, since 4.20
const PACKET_QDISC_BYPASS: i32 = 20; // since 3.14

/// PACKET_STATISTICS of an AF_PACKET socket: (frames received, frames dropped because the
/// receive buffer was full) since the last call (the kernel resets the counters on read).
pub fn packet_stats(sock: &impl AsRawFd) -> io::Result<(u64, u64)> {
    let mut st = [0u32; 2]; // struct tpacket_stats { tp_packets, tp_drops }
    let mut len = size_of::<[u32; 2]>() as libc::socklen_t;
    // SAFETY: `st` and `len` are live and writable; len says how many bytes `st` holds.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            st.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st[0] as u64, st[1] as u64))
}

/// Wait until `sock` is readable or `timeout_ns` passed (ppoll, ns resolution). Returns true if
/// readable; false on timeout or a signal (EINTR), so callers re-check their stop flag.
pub fn wait_readable(sock: &impl AsRawFd, timeout_ns: u64) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = ns_to_ts(timeout_ns);
    // SAFETY: one valid pollfd and a valid timespec live across the call; null sigmask.
    let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_roundtrip() {
        for a in ["127.0.0.1:5000", "[::1]:6000", "198.18.0.1:1"] {
            let a: SocketAddr = a.parse().unwrap();
            // SAFETY (test): all-zero storage is valid.
            let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
            let l = std_to_sockaddr(&a, &mut ss);
            assert_eq!(sockaddr_to_std(&ss, l), Some(a));
        }
    }
}
