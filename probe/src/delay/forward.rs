//! One direction of the delay node: read frames (PACKET_MMAP ring or recvmmsg), hold each until
//! its release time, write it to the other side; between the two, sleep (ppoll until a frame
//! arrives or shortly before the next release, then spin; or, in batch mode, a timer sleep).
//!
//! `forward` is the loop; `Forwarder` holds its state and does one phase per method: release
//! what is due, admit what arrived, wait.

use std::os::fd::OwnedFd;

use super::sched::{Held, Impairment, ReleaseQueue, Scheduler, Verdict};
use super::{loss_name, DirReport, NodeOpts, Side};
use crate::pacing::SpinMargin;
use crate::stats::NsHist;
use crate::sys::{self, RecvBatch, RxRing, SliceSend};

const BATCH_MAX_SLEEP_NS: u64 = 1_000_000;
const RATE_WINDOW_NS: u64 = 2_000_000;
const BUSY_FRAMES_PER_QUANTUM: u64 = 1;
/// The ring hands a block over at most RING_RETIRE_MS after its first frame: only directions
/// that delay every frame by at least twice that (delay − 3 × jitter) use it.
const RING_RETIRE_MS: u32 = 1;
const RING_MIN_DELAY_NS: u64 = 2_000_000;
/// Ring memory is pinned kernel memory: 128 blocks of 32 KB per direction (4 MB; 32 ms at
/// 1 Gbit/s). At low rates a block leaves after RING_RETIRE_MS holding a frame or two, so the
/// ring rides out a stalled thread of about one millisecond per block: with 16 blocks of 256 KB
/// that was 16 ms, and a busy machine (node releases up to 14 ms late) overflowed it — 99 frames
/// lost in kernel_rx_drop_frames at 850 frames/s (docs/fidelity-notes.md). 32 KB still holds a
/// 9000-byte frame (a 16 KB slot).
const RING_BLOCK_BYTES: usize = 32 << 10;
const RING_BYTES_MAX: usize = 4 << 20;

/// (CLOCK_MONOTONIC, CLOCK_REALTIME) at one instant, to turn the kernel's realtime receive
/// timestamps into monotonic arrival times. Read as mono, real, mono: a pair read across a
/// preemption would place arrivals early by the length of the preemption (hence releases too
/// early), so the read is repeated while the two monotonic reads are more than 5 µs apart, and
/// the realtime value is taken to be at their midpoint.
fn clock_pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..8 {
        let m1 = sys::mono_ns();
        let r = sys::real_ns();
        let m2 = sys::mono_ns();
        if m2 - m1 < best.0 {
            best = (m2 - m1, m1 + (m2 - m1) / 2, r);
        }
        if m2 - m1 <= 5_000 {
            break;
        }
    }
    (best.1, best.2)
}

/// Admission of received frames into one direction's release queue, shared by both receive
/// paths (PACKET_MMAP ring and recvmmsg): the queue, the impairment that decides release times,
/// and the counters of what came in.
struct Intake<'a> {
    rep: DirReport,
    sched: Scheduler,
    queue: ReleaseQueue,
    /// Frame buffers to reuse.
    pool: Vec<Vec<u8>>,
    seq: u64,
    o: &'a NodeOpts,
}

impl Intake<'_> {
    /// Count one received frame (`len`: its length on the wire) and hold it for release, or
    /// count why it is dropped. `kernel_rx_ns`: the kernel's receive time (realtime clock),
    /// converted to the monotonic clock with `clocks` = (mono, real) read after it arrived
    /// (falls back to mono when missing or implausible).
    fn admit(
        &mut self,
        frame: &[u8],
        len: usize,
        truncated: bool,
        kernel_rx_ns: Option<u64>,
        clocks: (u64, u64),
    ) {
        let rep = &mut self.rep;
        rep.rx_frames += 1;
        rep.rx_bytes += len as u64;
        if truncated || len > self.o.max_frame {
            rep.oversize_drop_frames += 1;
            return;
        }
        let (mono, real) = clocks;
        let arrived = match kernel_rx_ns {
            Some(k) if k <= real && real - k < 1_000_000_000 => mono - (real - k),
            _ => mono,
        };
        if self.queue.len() >= self.o.limit {
            rep.limit_drop_frames += 1;
            return;
        }
        match self.sched.admit(arrived, frame.len()) {
            Verdict::Lost => rep.lost_frames += 1,
            Verdict::QueueFull => rep.queue_drop_frames += 1,
            Verdict::Release(t) => {
                let mut buf = self
                    .pool
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(self.o.max_frame));
                buf.clear();
                buf.extend_from_slice(frame);
                self.queue.push(Held {
                    release: t,
                    seq: self.seq,
                    frame: buf,
                });
                self.seq += 1;
            }
        }
    }
}

/// The state of one direction.
struct Forwarder<'a> {
    side: &'a Side,
    from: &'a str,
    o: &'a NodeOpts,
    intake: Intake<'a>,
    ring: Option<RxRing>,
    rb: RecvBatch,
    tx: SliceSend,
    /// Frames due now, taken from the queue, sent in one batch.
    due: Vec<Held>,
    errors: NsHist,
    /// How long before a release to stop ppoll and spin (tracks ppoll's lateness).
    margin: SpinMargin,
    /// Arrivals counted over a RATE_WINDOW_NS window decide batch mode (`busy`).
    win_start: u64,
    win_frames: u64,
    busy: bool,
}

/// Forward frames from `side.rx` to `side.tx` until `deadline` or a stop signal.
pub(super) fn forward(
    side: &Side,
    from: &str,
    to: &str,
    imp: Impairment,
    seed: u64,
    deadline: Option<u64>,
    o: &NodeOpts,
) -> Result<DirReport, String> {
    let mut f = Forwarder::new(side, from, to, imp, seed, o);
    loop {
        let now = sys::mono_ns();
        if sys::stop_requested() || deadline.is_some_and(|d| now >= d) {
            break;
        }
        if f.release_due(now) || f.admit_arrivals()? {
            continue; // more may be due or waiting
        }
        f.wait(deadline)?;
    }
    Ok(f.finish())
}

impl<'a> Forwarder<'a> {
    fn new(
        side: &'a Side,
        from: &'a str,
        to: &str,
        imp: Impairment,
        seed: u64,
        o: &'a NodeOpts,
    ) -> Self {
        // best effort: without CAP_SYS_NICE the node still forwards, with more timing error
        let realtime = o.rt_priority > 0 && sys::set_fifo_priority(o.rt_priority).is_ok();
        let mut rep = DirReport {
            from: from.into(),
            to: to.into(),
            delay_ns: imp.delay_ns,
            jitter_ns: imp.jitter_ns,
            jitter_dist: imp.dist.name(),
            delay_cdf: imp.cdf.as_ref().map(|c| c.spec()),
            reorder: imp.reorder,
            delay_hold_ns: imp.hold_ns,
            loss_model: loss_name(&imp.loss),
            loss_ratio: imp.loss.mean(),
            rate_bps: imp.rate_bps,
            realtime,
            ..Default::default()
        };
        let ring = open_ring(side, &imp, o);
        rep.rx_path = if ring.is_some() { "ring" } else { "recvmmsg" };
        let _ = sys::packet_stats(&side.rx); // reset the kernel's counters
        Forwarder {
            side,
            from,
            o,
            intake: Intake {
                rep,
                queue: ReleaseQueue::new(imp.reorder),
                sched: Scheduler::new(imp, seed),
                pool: Vec::new(),
                seq: 0,
                o,
            },
            ring,
            rb: RecvBatch::new(o.batch, o.max_frame + 1),
            tx: SliceSend::new(o.batch),
            due: Vec::with_capacity(o.batch),
            errors: NsHist::new(),
            margin: SpinMargin::new(o.max_spin_ns),
            win_start: sys::mono_ns(),
            win_frames: 0,
            busy: false,
        }
    }

    /// Release what is due, a batch at a time, sent straight from where it was held; true if
    /// the batch was full (more may be due).
    fn release_due(&mut self, now: u64) -> bool {
        while self.due.len() < self.o.batch {
            let Some(h) = self.intake.queue.pop_due(now) else {
                break;
            };
            self.due.push(h);
        }
        if self.due.is_empty() {
            return false;
        }
        let n = self.due.len();
        let at = sys::mono_ns();
        for h in &self.due {
            self.errors.record(at.saturating_sub(h.release));
        }
        send_all(&mut self.tx, &self.side.tx, &self.due, &mut self.intake.rep);
        self.intake.pool.extend(self.due.drain(..).map(|h| h.frame));
        n == self.o.batch
    }

    /// Admit what arrived (ring blocks or one recvmmsg batch); true if anything did.
    fn admit_arrivals(&mut self) -> Result<bool, String> {
        let got = if self.ring.is_some() {
            self.admit_from_ring()
        } else {
            self.admit_from_socket()?
        };
        if got > 0 {
            self.win_frames += got as u64;
            let held = self.intake.queue.len() as u64;
            self.intake.rep.held_max_frames = self.intake.rep.held_max_frames.max(held);
        }
        Ok(got > 0)
    }

    fn admit_from_ring(&mut self) -> usize {
        let Some(ring) = self.ring.as_mut() else {
            return 0;
        };
        let mut got = 0;
        while got < self.o.batch {
            // the clocks are read once the block is ours (at its first frame): every frame in
            // it arrived before, so kernel time <= real and the conversion is exact
            let mut clocks: Option<(u64, u64)> = None;
            let intake = &mut self.intake;
            let admit = |frame: &[u8], k: u64, truncated: bool| {
                let clocks = *clocks.get_or_insert_with(clock_pair);
                intake.admit(frame, frame.len(), truncated, Some(k), clocks);
            };
            let Some(n) = ring.next_block(admit) else {
                break;
            };
            got += n;
        }
        got
    }

    fn admit_from_socket(&mut self) -> Result<usize, String> {
        let got = self
            .rb
            .recv_nowait(&self.side.rx)
            .map_err(|e| format!("recvmmsg on {}: {e}", self.from))?;
        if got > 0 {
            let clocks = clock_pair();
            for i in 0..got {
                let (frame, meta) = self.rb.get(i);
                let (len, truncated, k) = (meta.len, meta.truncated, meta.kernel_rx_ns);
                self.intake.admit(frame, len, truncated, k, clocks);
            }
        }
        Ok(got)
    }

    /// Nothing to do now: sleep until a frame arrives or shortly before the next release (or,
    /// in batch mode, a timer sleep of a quantum).
    fn wait(&mut self, deadline: Option<u64>) -> Result<(), String> {
        let now = sys::mono_ns();
        if now - self.win_start >= RATE_WINDOW_NS {
            // busy: at least BUSY_FRAMES_PER_QUANTUM frames arrive per quantum on average
            self.busy = self.win_frames * self.o.quantum_ns
                >= BUSY_FRAMES_PER_QUANTUM * (now - self.win_start);
            self.win_start = now;
            self.win_frames = 0;
        }
        let q = self.o.quantum_ns;
        if let (true, true, Some(next)) = (q > 0, self.busy, self.intake.queue.next_release()) {
            // batch mode: a timer sleep of at least one quantum, at most 1 ms (the socket
            // buffer holds what arrives meanwhile; kernel timestamps keep arrival times)
            let mut wake = next.clamp(now + q, now + BATCH_MAX_SLEEP_NS.max(q));
            if let Some(d) = deadline {
                wake = wake.min(d);
            }
            sys::sleep_until(sys::Clock::Monotonic, wake);
            return Ok(());
        }
        let mut wake = match self.intake.queue.next_release() {
            Some(t) if t <= now + self.margin.ns() => {
                // spin, but yield: on a shared core the other direction and the endpoints run
                std::thread::yield_now();
                return Ok(());
            }
            Some(t) => t - self.margin.ns(),
            None => now + 100_000_000, // re-check the stop flag 10 times a second
        };
        if let Some(d) = deadline {
            wake = wake.min(d);
        }
        let readable = sys::wait_readable(&self.side.rx, wake.saturating_sub(now))
            .map_err(|e| format!("ppoll on {}: {e}", self.from))?;
        if !readable && self.intake.queue.next_release().is_some() {
            self.margin.observe(sys::mono_ns().saturating_sub(wake));
        }
        Ok(())
    }

    fn finish(self) -> DirReport {
        let mut rep = self.intake.rep;
        if let Ok((_, drops)) = sys::packet_stats(&self.side.rx) {
            rep.kernel_rx_drop_frames = drops;
        }
        rep.held_at_exit_frames = self.intake.queue.len() as u64;
        rep.release_error = self.errors.summary();
        rep.spin_margin_ns = self.margin.ns();
        rep.quantum_ns = self.o.quantum_ns;
        rep
    }
}

/// The receive ring of a direction whose every frame is delayed by at least
/// RING_MIN_DELAY_NS (delay − 3 × jitter; an empirical CDF: its first point), else None.
fn open_ring(side: &Side, imp: &Impairment, o: &NodeOpts) -> Option<RxRing> {
    let least_delay_ns = match &imp.cdf {
        Some(cdf) => cdf.min_ns(),
        None => imp.delay_ns.saturating_sub(3 * imp.jitter_ns),
    };
    if !o.rx_ring || least_delay_ns < RING_MIN_DELAY_NS {
        return None;
    }
    let blocks = (o.rcvbuf.min(RING_BYTES_MAX) / RING_BLOCK_BYTES).max(4);
    RxRing::new(
        &side.rx,
        RING_BLOCK_BYTES,
        blocks,
        o.max_frame,
        RING_RETIRE_MS,
    )
    .ok()
}

/// Send the held frames; on a partial send, send the rest (twice more at most after a refusal);
/// what the kernel still refuses is counted in tx_error_frames.
fn send_all(tx: &mut SliceSend, sock: &OwnedFd, held: &[Held], rep: &mut DirReport) {
    let (mut sent, mut tries) = (0, 0);
    while sent < held.len() {
        let rest = held[sent..].iter().map(|h| h.frame.as_slice());
        match tx.send(sock, rest) {
            Ok(k) if k > 0 => {
                rep.tx_frames += k as u64;
                rep.tx_bytes += held[sent..sent + k]
                    .iter()
                    .map(|h| h.frame.len() as u64)
                    .sum::<u64>();
                sent += k;
            }
            _ => {
                tries += 1;
                if tries > 2 {
                    rep.tx_error_frames += (held.len() - sent) as u64;
                    return;
                }
                std::thread::yield_now(); // e.g. ENOBUFS: let the peer's backlog drain
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_pair_is_consistent() {
        for _ in 0..1000 {
            let before = sys::mono_ns();
            let (mono, real) = clock_pair();
            let after = sys::mono_ns();
            assert!(before <= mono && mono <= after);
            // the realtime - monotonic offset stays put between pairs (no step here)
            let (m2, r2) = clock_pair();
            let drift = (r2 as i128 - m2 as i128) - (real as i128 - mono as i128);
            assert!(drift.abs() < 1_000_000, "offset moved by {drift} ns");
        }
    }
}
