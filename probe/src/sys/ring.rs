//! A PACKET_MMAP TPACKET_V3 receive ring on an AF_PACKET socket (the delay node's cheap receive
//! path).

use std::io;
use std::mem::size_of;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use super::socket::setsockopt_int;

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
