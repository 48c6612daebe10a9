//! The only module with `unsafe`: thin wrappers over the Linux system calls the probe needs
//! (clocks, absolute sleeps, timer slack, rusage, signals, socket options, recvmmsg/sendmmsg with
//! per-packet kernel timestamps and the SO_RXQ_OVFL drop counter, CPU affinity, adjtimex,
//! AF_PACKET sockets bound to one interface and ppoll, for the delay node).
//!
//! Audit rule: every `unsafe` block has a SAFETY comment; every pointer handed to the kernel
//! points into memory owned by the struct that makes the call and outlives the call.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Which clock to read.
#[derive(Clone, Copy, Debug)]
pub enum Clock {
    /// CLOCK_REALTIME: wall clock, comparable between hosts whose clocks are synchronised.
    Realtime,
    /// CLOCK_MONOTONIC: for durations and pacing on one host.
    Monotonic,
}

impl Clock {
    fn id(self) -> libc::clockid_t {
        match self {
            Clock::Realtime => libc::CLOCK_REALTIME,
            Clock::Monotonic => libc::CLOCK_MONOTONIC,
        }
    }
}

fn ts_to_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

fn ns_to_ts(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Current time of `clock` in nanoseconds (vDSO, ~20 ns).
#[inline]
pub fn now_ns(clock: Clock) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec on our stack; the clock id is a constant the
    // kernel always supports, so the call cannot fail.
    unsafe { libc::clock_gettime(clock.id(), &mut ts) };
    ts_to_ns(&ts)
}

/// CLOCK_MONOTONIC in ns.
#[inline]
pub fn mono_ns() -> u64 {
    now_ns(Clock::Monotonic)
}

/// CLOCK_REALTIME in ns since the Unix epoch.
#[inline]
pub fn real_ns() -> u64 {
    now_ns(Clock::Realtime)
}

/// Resolution of `clock` in ns.
pub fn clock_res_ns(clock: Clock) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid writable timespec; clock id is valid.
    unsafe { libc::clock_getres(clock.id(), &mut ts) };
    ts_to_ns(&ts)
}

/// Sleep until `clock` reads `deadline_ns` (absolute, TIMER_ABSTIME). Returns early on a signal
/// (EINTR), so callers re-check their stop flag and loop.
pub fn sleep_until(clock: Clock, deadline_ns: u64) {
    let ts = ns_to_ts(deadline_ns);
    // SAFETY: `ts` is a valid timespec that lives across the call; the remaining-time pointer may
    // be null with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(clock.id(), libc::TIMER_ABSTIME, &ts, std::ptr::null_mut());
    }
}

/// Set this thread's timer slack (PR_SET_TIMERSLACK) so absolute sleeps wake on time.
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long by value; no pointers are involved.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// (user, system) CPU time of this process in ns.
pub fn rusage_self_ns() -> (u64, u64) {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { zeroed() };
    // SAFETY: `ru` is a valid writable rusage; RUSAGE_SELF is always accepted.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// `Some(true)` when the kernel says the clock is synchronised (NTP/PTP), `Some(false)` when it
/// says it is not, `None` if adjtimex failed.
pub fn clock_synchronized() -> Option<bool> {
    // SAFETY: an all-zero timex is valid; with modes == 0 adjtimex only reads.
    let mut tx: libc::timex = unsafe { zeroed() };
    // SAFETY: `tx` is a valid writable timex; modes = 0 means read-only, no privilege needed.
    let r = unsafe { libc::adjtimex(&mut tx) };
    if r < 0 {
        None
    } else {
        Some(r != libc::TIME_ERROR)
    }
}

/// Pin the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "cpu index too large",
        ));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET writes inside it (index checked
    // above); sched_setaffinity reads `size_of::<cpu_set_t>()` bytes from a valid pointer.
    let r = unsafe {
        let mut set: libc::cpu_set_t = zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// USER_HZ: the unit of /proc/stat.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM handlers that set a flag (without SA_RESTART, so blocking calls return
/// EINTR and the loops notice at once). The probe then finishes and prints its report.
pub fn install_stop_handler() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: an all-zero sigaction is valid; we set a handler with the C ABI that only does
        // an atomic store; sigemptyset initialises the mask we own; the old-action pointer may be
        // null.
        unsafe {
            let mut sa: libc::sigaction = zeroed();
            sa.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True once SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

fn setsockopt_int(fd: i32, level: i32, name: i32, val: i32) -> io::Result<()> {
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

/// Ask for a receive buffer of `bytes` (SO_RCVBUFFORCE when root, else SO_RCVBUF capped by
/// rmem_max). Returns what the kernel granted (it doubles the request for bookkeeping).
pub fn set_rcvbuf(sock: &UdpSocket, bytes: usize) -> io::Result<usize> {
    let fd = sock.as_raw_fd();
    let v = bytes.min(i32::MAX as usize / 2) as i32;
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, v).is_err() {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, v)?;
    }
    Ok(getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)? as usize)
}

/// Same for the send buffer (any socket: UDP or AF_PACKET).
pub fn set_sndbuf(sock: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    let fd = sock.as_raw_fd();
    let v = bytes.min(i32::MAX as usize / 2) as i32;
    if setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, v).is_err() {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, v)?;
    }
    Ok(getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF)? as usize)
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

fn sockaddr_to_std(ss: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
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

fn std_to_sockaddr(addr: &SocketAddr, ss: &mut libc::sockaddr_storage) -> libc::socklen_t {
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

/// A PACKET_MMAP TPACKET_V3 receive ring on an AF_PACKET socket: the kernel writes frames into
/// blocks of memory shared with us and hands over a block when it is full or `retire_ms` after its
/// first frame. No recvmmsg, no per-frame copy to a user buffer, no per-frame syscall work; each
/// frame carries its kernel receive time (CLOCK_REALTIME).
pub struct RxRing {
    map: *mut u8,
    len: usize,
    block_size: usize,
    blocks: usize,
    next: usize,
}

impl RxRing {
    /// Set up the ring on `sock` (bound, no ring yet): `blocks` blocks of `block_size` bytes
    /// (a multiple of the page size), frames up to `max_frame` bytes.
    pub fn new(
        sock: &impl AsRawFd,
        block_size: usize,
        blocks: usize,
        max_frame: usize,
        retire_ms: u32,
    ) -> io::Result<Self> {
        let fd = sock.as_raw_fd();
        setsockopt_int(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            libc::tpacket_versions::TPACKET_V3 as i32,
        )?;
        // frame_size only has to be a multiple of TPACKET_ALIGNMENT dividing the block (V3
        // packs frames of any size into a block)
        let frame_size = (libc::TPACKET3_HDRLEN + max_frame + 64).next_power_of_two();
        let req = libc::tpacket_req3 {
            tp_block_size: block_size as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: (block_size / frame_size * blocks) as u32,
            tp_retire_blk_tov: retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        // SAFETY: `req` is a live tpacket_req3 and we pass its exact size.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_PACKET,
                libc::PACKET_RX_RING,
                &req as *const libc::tpacket_req3 as *const libc::c_void,
                size_of::<libc::tpacket_req3>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let len = block_size * blocks;
        // SAFETY: maps the ring the kernel just allocated for this socket; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(RxRing {
            map: map as *mut u8,
            len,
            block_size,
            blocks,
            next: 0,
        })
    }

    /// If the kernel has handed over the next block, call `each(frame, kernel_rx_realtime_ns,
    /// truncated)` for its frames in arrival order, give the block back, and return how many
    /// frames it held; None if the block is still the kernel's.
    pub fn next_block(&mut self, mut each: impl FnMut(&[u8], u64, bool)) -> Option<usize> {
        // SAFETY: `next < blocks`, so the block lies inside the mapping, which lives as long as
        // `self`; the block descriptor is at its start (tpacket_block_desc, 8-aligned since
        // blocks are page-aligned). block_status is read and written atomically: the kernel
        // owns the block until TP_STATUS_USER is set, and we own it until we store
        // TP_STATUS_KERNEL; frame headers and data are read only in between, each inside the
        // block at the offsets the kernel wrote (tp_next_offset, tp_mac, tp_snaplen).
        unsafe {
            let block = self.map.add(self.next * self.block_size);
            let desc = block as *mut libc::tpacket_block_desc;
            let bh = std::ptr::addr_of_mut!((*desc).hdr.bh1);
            let status = &*(std::ptr::addr_of_mut!((*bh).block_status)
                as *const std::sync::atomic::AtomicU32);
            if status.load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                return None;
            }
            let n = (*bh).num_pkts as usize;
            let mut off = (*bh).offset_to_first_pkt as usize;
            for _ in 0..n {
                let h = block.add(off) as *const libc::tpacket3_hdr;
                let hdr = std::ptr::read_unaligned(h);
                let data = std::slice::from_raw_parts(
                    block.add(off + hdr.tp_mac as usize),
                    hdr.tp_snaplen as usize,
                );
                let ts = hdr.tp_sec as u64 * 1_000_000_000 + hdr.tp_nsec as u64;
                each(data, ts, hdr.tp_snaplen < hdr.tp_len);
                off += hdr.tp_next_offset as usize;
            }
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.next = (self.next + 1) % self.blocks;
            Some(n)
        }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.len);
        }
    }
}

/// Run the calling thread under SCHED_FIFO at `priority` (1..=99; needs root or CAP_SYS_NICE):
/// it then preempts ordinary tasks as soon as it wakes up.
pub fn set_fifo_priority(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that lives across the call; pid 0 = this thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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

/// Ask for socket buffers on any socket (SO_*BUFFORCE when root); returns what was granted.
pub fn set_fd_bufs(sock: &impl AsRawFd, rcv: usize, snd: usize) -> io::Result<(usize, usize)> {
    let fd = sock.as_raw_fd();
    for (force, plain, bytes) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, rcv),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, snd),
    ] {
        let v = bytes.min(i32::MAX as usize / 2) as i32;
        if setsockopt_int(fd, libc::SOL_SOCKET, force, v).is_err() {
            setsockopt_int(fd, libc::SOL_SOCKET, plain, v)?;
        }
    }
    Ok((
        getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)? as usize,
        getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF)? as usize,
    ))
}

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

    #[test]
    fn clocks_advance() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(b >= a);
        assert!(real_ns() > 1_600_000_000_000_000_000);
    }

    #[test]
    fn rx_ring_delivers_frames_with_kernel_timestamps() {
        // AF_PACKET needs CAP_NET_RAW: without it there is nothing to test here
        let Ok(sock) = packet_socket("lo", true) else {
            eprintln!("skipped: no AF_PACKET socket on lo (needs CAP_NET_RAW)");
            return;
        };
        let mut ring = RxRing::new(&sock, 1 << 16, 4, 1522, 1).unwrap();
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let marker = b"vnb-rx-ring-test-marker";
        let t0 = real_ns();
        for _ in 0..3 {
            tx.send_to(marker, rx.local_addr().unwrap()).unwrap();
        }
        let (mut seen, deadline) = (0, mono_ns() + 2_000_000_000);
        while seen < 3 && mono_ns() < deadline {
            let got = ring.next_block(|frame, ts, truncated| {
                if frame.windows(marker.len()).any(|w| w == marker) {
                    assert!(!truncated);
                    assert!(
                        ts >= t0 - 1_000_000 && ts <= real_ns(),
                        "timestamp {ts} vs {t0}"
                    );
                    // Ethernet (14) + IPv4 (20) + UDP (8) + payload
                    assert_eq!(frame.len(), 14 + 20 + 8 + marker.len());
                    seen += 1;
                }
            });
            if got.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        assert_eq!(seen, 3);
    }

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
    fn udp_segment_cuts_one_send_into_datagrams() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_millis(500)))
            .unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        if let Err(e) = set_udp_segment(&tx, 100) {
            assert_eq!(e.raw_os_error(), Some(libc::ENOPROTOOPT), "{e}");
            eprintln!("skipped: this kernel has no UDP_SEGMENT");
            return;
        }
        // one send of 3 x 100 + 40 bytes: four datagrams, the last one short
        let msg: Vec<u8> = (0..340u32).map(|i| (i / 100) as u8).collect();
        assert_eq!(tx.send(&msg).unwrap(), 340);
        let mut buf = [0u8; 2048];
        for (i, want) in [100, 100, 100, 40].into_iter().enumerate() {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(n, want);
            assert!(buf[..n].iter().all(|&b| b as usize == i));
        }
        // a send of at most one segment stays one datagram; 0 turns GSO off
        assert_eq!(tx.send(&[9u8; 60]).unwrap(), 60);
        assert_eq!(rx.recv(&mut buf).unwrap(), 60);
        set_udp_segment(&tx, 0).unwrap();
        assert_eq!(tx.send(&[7u8; 250]).unwrap(), 250);
        assert_eq!(rx.recv(&mut buf).unwrap(), 250);
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
