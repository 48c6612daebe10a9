//! Batched datagram I/O: recvmmsg with per-datagram kernel timestamps, the socket's drop
//! counter (SO_RXQ_OVFL) and the segment size of coalesced buffers (UDP_GRO), sendmmsg from
//! reusable buffers, and sendmmsg of frames that live elsewhere (the delay node's held frames).

use std::io;
use std::mem::{size_of, zeroed};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use super::clock::ts_to_ns;
use super::socket::{sockaddr_to_std, std_to_sockaddr, UDP_GRO};

const CMSG_SPACE_BYTES: usize = 128; // timespec + u32 cmsgs with headers fit easily

/// Metadata of one received datagram.
#[derive(Clone, Copy, Debug)]
pub struct RxMeta {
    /// Payload length in bytes (as received; truncated datagrams are flagged).
    pub len: usize,
    /// True if the datagram was larger than the buffer.
    pub truncated: bool,
    /// Source address.
    pub src: Option<SocketAddr>,
    /// Kernel receive timestamp, CLOCK_REALTIME ns (SO_TIMESTAMPNS), if delivered.
    pub kernel_rx_ns: Option<u64>,
    /// Socket's cumulative drop counter (SO_RXQ_OVFL), if delivered.
    pub drops: Option<u32>,
    /// Segment size of a buffer that carries several datagrams (UDP_GRO on the socket): every
    /// `segment_bytes` bytes are one datagram, the last may be shorter.
    pub segment_bytes: Option<usize>,
}

/// Buffers for one recvmmsg call of up to `n` datagrams.
pub struct RecvBatch {
    bufs: Vec<u8>,
    buf_size: usize,
    iovs: Vec<libc::iovec>,
    names: Vec<libc::sockaddr_storage>,
    ctrl: Vec<u64>, // u64 for cmsghdr alignment
    hdrs: Vec<libc::mmsghdr>,
    meta: Vec<RxMeta>,
}

impl RecvBatch {
    /// `n` datagrams of at most `buf_size` bytes each.
    pub fn new(n: usize, buf_size: usize) -> Self {
        let n = n.max(1);
        RecvBatch {
            bufs: vec![0u8; n * buf_size],
            buf_size,
            iovs: Vec::with_capacity(n),
            // SAFETY: all-zero sockaddr_storage / mmsghdr are valid C values.
            names: vec![unsafe { zeroed() }; n],
            ctrl: vec![0u64; n * CMSG_SPACE_BYTES / 8],
            // SAFETY: as above.
            hdrs: vec![unsafe { zeroed() }; n],
            meta: Vec::with_capacity(n),
        }
    }

    /// Receive up to the batch size. Blocks until at least one datagram arrives
    /// (MSG_WAITFORONE), the socket's read timeout passes (returns Ok(0)) or a signal arrives
    /// (Ok(0)).
    pub fn recv(&mut self, sock: &impl AsRawFd) -> io::Result<usize> {
        self.recv_flags(sock, libc::MSG_WAITFORONE)
    }

    /// Like `recv` but never blocks (MSG_DONTWAIT): Ok(0) when nothing is queued. A receiver
    /// that polls this way never sleeps, so the sender's CPU does not pay for waking it up.
    pub fn recv_nowait(&mut self, sock: &impl AsRawFd) -> io::Result<usize> {
        self.recv_flags(sock, libc::MSG_DONTWAIT)
    }

    fn recv_flags(&mut self, sock: &impl AsRawFd, flags: i32) -> io::Result<usize> {
        let n = self.hdrs.len();
        self.iovs.clear();
        for i in 0..n {
            self.iovs.push(libc::iovec {
                // SAFETY: i * buf_size < bufs.len(), so the pointer stays inside `bufs`.
                iov_base: unsafe { self.bufs.as_mut_ptr().add(i * self.buf_size) }
                    as *mut libc::c_void,
                iov_len: self.buf_size,
            });
        }
        for i in 0..n {
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = &mut self.names[i] as *mut _ as *mut libc::c_void;
            h.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            // SAFETY: index within `ctrl` (n * CMSG_SPACE_BYTES / 8 u64s).
            h.msg_control = unsafe { self.ctrl.as_mut_ptr().add(i * CMSG_SPACE_BYTES / 8) }
                as *mut libc::c_void;
            h.msg_controllen = CMSG_SPACE_BYTES as _;
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        // SAFETY: every mmsghdr points at name/iov/control memory owned by `self` that lives
        // until the call returns and is not otherwise borrowed; vlen equals hdrs.len().
        let r = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::TimedOut
                | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let got = r as usize;
        self.meta.clear();
        for i in 0..got {
            let h = &self.hdrs[i];
            let mut m = RxMeta {
                len: h.msg_len as usize,
                truncated: h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                src: sockaddr_to_std(&self.names[i], h.msg_hdr.msg_namelen),
                kernel_rx_ns: None,
                drops: None,
                segment_bytes: None,
            };
            // SAFETY: the control buffer was filled by the kernel for this message and
            // msg_controllen says how much; CMSG_* walk only within it. Payload reads use
            // read_unaligned since CMSG_DATA need not be aligned for the target type.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                while !c.is_null() {
                    let ch = &*c;
                    if ch.cmsg_level == libc::SOL_SOCKET {
                        if ch.cmsg_type == libc::SCM_TIMESTAMPNS {
                            let ts = std::ptr::read_unaligned(
                                libc::CMSG_DATA(c) as *const libc::timespec
                            );
                            m.kernel_rx_ns = Some(ts_to_ns(&ts));
                        } else if ch.cmsg_type == libc::SO_RXQ_OVFL {
                            m.drops =
                                Some(std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const u32));
                        }
                    } else if ch.cmsg_level == libc::SOL_UDP && ch.cmsg_type == UDP_GRO {
                        let size = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32);
                        m.segment_bytes = usize::try_from(size).ok().filter(|&s| s > 0);
                    }
                    c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
                }
            }
            self.meta.push(m);
        }
        Ok(got)
    }

    /// Payload and metadata of datagram `i` of the last `recv`.
    pub fn get(&self, i: usize) -> (&[u8], &RxMeta) {
        let m = &self.meta[i];
        let len = m.len.min(self.buf_size);
        (&self.bufs[i * self.buf_size..i * self.buf_size + len], m)
    }
}

/// Buffers for one sendmmsg call of up to `n` datagrams.
pub struct SendBatch {
    bufs: Vec<u8>,
    buf_size: usize,
    lens: Vec<usize>,
    dests: Vec<Option<SocketAddr>>,
    iovs: Vec<libc::iovec>,
    names: Vec<libc::sockaddr_storage>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SendBatch {
    /// `n` datagrams of at most `buf_size` bytes each (zero-filled).
    pub fn new(n: usize, buf_size: usize) -> Self {
        let n = n.max(1);
        SendBatch {
            bufs: vec![0u8; n * buf_size],
            buf_size,
            lens: vec![buf_size; n],
            dests: vec![None; n],
            iovs: Vec::with_capacity(n),
            // SAFETY: all-zero C structs are valid values.
            names: vec![unsafe { zeroed() }; n],
            // SAFETY: as above.
            hdrs: vec![unsafe { zeroed() }; n],
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.hdrs.len()
    }

    /// The whole buffer of slot `i` (write the datagram here, then `set_len`).
    pub fn buf_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self.bufs[i * self.buf_size..(i + 1) * self.buf_size]
    }

    /// Datagram length of slot `i`.
    pub fn set_len(&mut self, i: usize, len: usize) {
        self.lens[i] = len.min(self.buf_size);
    }

    /// Destination of slot `i` (None: the socket's connected peer).
    pub fn set_dest(&mut self, i: usize, dest: Option<SocketAddr>) {
        self.dests[i] = dest;
    }

    /// Send slots `0..n`. Returns how many the kernel took (it may take fewer).
    pub fn send(&mut self, sock: &impl AsRawFd, n: usize) -> io::Result<usize> {
        let n = n.min(self.hdrs.len());
        if n == 0 {
            return Ok(0);
        }
        self.iovs.clear();
        for i in 0..n {
            self.iovs.push(libc::iovec {
                // SAFETY: offset within `bufs`.
                iov_base: unsafe { self.bufs.as_mut_ptr().add(i * self.buf_size) }
                    as *mut libc::c_void,
                iov_len: self.lens[i],
            });
        }
        for i in 0..n {
            let (name, namelen) = match &self.dests[i] {
                Some(a) => {
                    let l = std_to_sockaddr(a, &mut self.names[i]);
                    (&mut self.names[i] as *mut _ as *mut libc::c_void, l)
                }
                None => (std::ptr::null_mut(), 0),
            };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = name;
            h.msg_namelen = namelen;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = std::ptr::null_mut();
            h.msg_controllen = 0;
            h.msg_flags = 0;
        }
        // SAFETY: each mmsghdr points at iov/name memory owned by `self`, valid for the call;
        // vlen = n <= hdrs.len().
        let r = unsafe {
            libc::sendmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                0,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(r as usize)
    }
}

/// sendmmsg of frames that live elsewhere (no copy into a batch buffer): the delay node sends
/// its held frames straight from where it keeps them. Its vectors are reused between calls.
pub struct SliceSend {
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SliceSend {
    /// Room for up to `n` frames per call.
    pub fn new(n: usize) -> Self {
        SliceSend {
            iovs: Vec::with_capacity(n),
            hdrs: Vec::with_capacity(n),
        }
    }

    /// Send `frames` on the socket's bound interface (one datagram each). Returns how many the
    /// kernel took (it may take fewer; the rest were not sent).
    pub fn send<'a>(
        &mut self,
        sock: &impl AsRawFd,
        frames: impl Iterator<Item = &'a [u8]>,
    ) -> io::Result<usize> {
        self.iovs.clear();
        self.iovs.extend(frames.map(|f| libc::iovec {
            // the kernel only reads through this pointer (sendmmsg)
            iov_base: f.as_ptr() as *mut libc::c_void,
            iov_len: f.len(),
        }));
        self.hdrs.clear();
        for iov in self.iovs.iter_mut() {
            // SAFETY: an all-zero mmsghdr is a valid value (no name, no control data).
            let mut h: libc::mmsghdr = unsafe { zeroed() };
            h.msg_hdr.msg_iov = iov;
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        if self.hdrs.is_empty() {
            return Ok(0);
        }
        // SAFETY: every mmsghdr points at one iovec of `self.iovs`, which points at a frame
        // borrowed from `frames`; all outlive the call; vlen = hdrs.len().
        let r = unsafe {
            libc::sendmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                self.hdrs.len() as libc::c_uint,
                0,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(r as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::enable_rx_metadata;
    use std::net::UdpSocket;

    #[test]
    fn slices_are_sent_in_order_without_copies_of_ours() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let frames: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 20 + i as usize]).collect();
        let mut ss = SliceSend::new(2); // capacity is a hint: 5 frames still go in one call
        assert_eq!(
            ss.send(&tx, frames.iter().map(|f| f.as_slice())).unwrap(),
            5
        );
        assert_eq!(ss.send(&tx, std::iter::empty()).unwrap(), 0);
        let mut buf = [0u8; 64];
        for f in &frames {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], f.as_slice());
        }
    }

    #[test]
    fn batch_roundtrip_with_timestamps() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        enable_rx_metadata(&rx, true).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let mut sb = SendBatch::new(4, 64);
        for i in 0..4 {
            sb.buf_mut(i)[0] = i as u8;
            sb.set_len(i, 10 + i);
        }
        assert_eq!(sb.send(&tx, 4).unwrap(), 4);
        let mut rb = RecvBatch::new(8, 2048);
        let mut got = 0;
        while got < 4 {
            let n = rb.recv(&rx).unwrap();
            assert!(n > 0);
            for i in 0..n {
                let (d, m) = rb.get(i);
                assert_eq!(d.len(), 10 + got);
                assert_eq!(d[0] as usize, got);
                assert!(m.kernel_rx_ns.is_some());
                assert_eq!(m.src, Some(tx.local_addr().unwrap()));
                got += 1;
            }
        }
    }
}
