//! Where `send` writes its packets: a connected UDP socket (optionally with UDP GSO), or an
//! AF_PACKET socket with prebuilt Ethernet/IPv4/UDP headers (`--raw-iface`).

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::SendOpts;
use crate::net::connected_socket;
use crate::rawframe::{self, Endpoints};
use crate::sys;

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
pub(super) enum Output {
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
    pub(super) fn header_len(&self) -> usize {
        match self {
            Output::Udp(_) => 0,
            Output::Raw(..) => rawframe::HEADER_LEN,
        }
    }

    /// Prepare `buf` (header_len + payload_len bytes) to carry a payload of `payload_len`.
    pub(super) fn write_header(&self, buf: &mut [u8], payload_len: usize) {
        if let Output::Raw(_, ep) = self {
            rawframe::write_header(buf, ep, payload_len);
        }
    }

    /// Send one datagram (the FIN) outside the batches.
    pub(super) fn send_one(&self, payload: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Udp(s) => s.send(payload).map(drop),
            Output::Raw(..) => {
                let h = rawframe::HEADER_LEN;
                let mut b = sys::SendBatch::new(1, h + payload.len());
                self.write_header(b.buf_mut(0), payload.len());
                b.buf_mut(0)[h..].copy_from_slice(payload);
                match b.send(self, 1)? {
                    1 => Ok(()),
                    _ => Err(std::io::Error::other("the kernel took no frame")),
                }
            }
        }
    }
}

/// Open the output of `o`: a connected UDP socket, or (--raw-iface) an AF_PACKET socket on the
/// interface with IPv4 addresses from --bind and --dst. Returns it and the source address.
pub(super) fn open_output(o: &SendOpts) -> Result<(Output, SocketAddr), String> {
    let Some(raw) = &o.raw else {
        let sock = connected_socket(o.dst, o.bind)?;
        crate::net::check_fits_mtu(&sock, o.dst, o.size, "--size")?;
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

/// Turn UDP GSO on with segments of `size` bytes, or say why it cannot be.
pub(super) fn enable_gso(sock: &UdpSocket, size: usize) -> Result<(), String> {
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
pub(super) fn gso_fatal(e: &std::io::Error, size: usize) -> Option<String> {
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
