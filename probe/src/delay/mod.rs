//! The delay node: a bump in the wire between two interfaces (two veths in a namespace of its
//! own). Every frame that arrives on one side is held until its release time (delay, jitter,
//! loss, optional rate — per direction, see `sched`) and then written to the other side,
//! unchanged, so the node is transparent to layer 2 (ARP, VXLAN, bridges, VLAN tags).
//!
//! One thread per direction: AF_PACKET sockets (`sys::packet_socket`), batched recvmmsg and
//! sendmmsg, held frames in a FIFO or a heap by release time, and a hybrid wait: ppoll until
//! shortly before the next release, then a busy loop (the spin margin adapts to the observed
//! ppoll wake-up lateness, bounded by --max-spin-us). Arrival times are the kernel's receive
//! timestamps, so time spent in the socket buffer counts towards the delay.
//! Reports, per direction, the release-time error (send time − release time) and every drop
//! with its cause.

pub mod args;
pub mod cdf;
pub mod jitter;
pub mod loss;
pub mod rng;
pub mod sched;

use std::os::fd::OwnedFd;

use serde::Serialize;

use crate::delay::loss::LossModel;
use crate::delay::sched::{Held, Impairment, ReleaseQueue, Scheduler, Verdict};
use crate::stats::{NsHist, NsSummary};
use crate::sys::{self, RecvBatch, RxRing, SliceSend};

/// Which directions the impairment applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Both.
    Both,
    /// Frames from A to B only (B to A passes at once).
    AToB,
    /// Frames from B to A only.
    BToA,
}

/// Everything the node needs.
#[derive(Clone, Debug)]
pub struct NodeOpts {
    /// Interface of side A.
    pub a: String,
    /// Interface of side B.
    pub b: String,
    /// The impairment of each impaired direction.
    pub imp: Impairment,
    /// Impaired directions.
    pub direction: Direction,
    /// Seed (direction A->B uses it, B->A uses seed + 1).
    pub seed: u64,
    /// Stop after this long (None: until a stop signal).
    pub duration_ns: Option<u64>,
    /// Frames per batch.
    pub batch: usize,
    /// Largest frame, bytes.
    pub max_frame: usize,
    /// Frames held at once per direction at most.
    pub limit: usize,
    /// Spin bound, ns.
    pub max_spin_ns: u64,
    /// Receive buffer per side, bytes.
    pub rcvbuf: usize,
    /// SCHED_FIFO priority of the forwarding threads (0: ordinary scheduling).
    pub rt_priority: i32,
    /// Batch-mode wake-up period, ns (0: per-frame release).
    pub quantum_ns: u64,
    /// Receive through a TPACKET_V3 ring where the delay allows (>= RING_MIN_DELAY_NS).
    pub rx_ring: bool,
}

/// Report of one direction.
#[derive(Serialize, Debug, Default)]
pub struct DirReport {
    /// Receiving interface.
    pub from: String,
    /// Sending interface.
    pub to: String,
    /// Configured one-way delay, ns.
    pub delay_ns: u64,
    /// Configured jitter, ns.
    pub jitter_ns: u64,
    /// Jitter distribution.
    pub jitter_dist: &'static str,
    /// Empirical delay distribution ("P:DELAYns,..."; null: delay + jitter).
    pub delay_cdf: Option<String>,
    /// Frames may be reordered by jitter.
    pub reorder: bool,
    /// "none", "random" or "gilbert-elliott".
    pub loss_model: &'static str,
    /// Mean loss ratio the model is configured for.
    pub loss_ratio: f64,
    /// Rate, bits/s (null: unlimited).
    pub rate_bps: Option<f64>,
    /// Frames read from `from`.
    pub rx_frames: u64,
    /// Bytes read.
    pub rx_bytes: u64,
    /// Frames written to `to`.
    pub tx_frames: u64,
    /// Bytes written.
    pub tx_bytes: u64,
    /// Frames dropped by the loss model (emulated loss).
    pub lost_frames: u64,
    /// Frames dropped because the rate queue was full (emulated tail drop).
    pub queue_drop_frames: u64,
    /// Frames dropped because --limit frames were held already.
    pub limit_drop_frames: u64,
    /// Frames larger than --max-frame, dropped.
    pub oversize_drop_frames: u64,
    /// Frames the kernel refused to send (sendmmsg error, e.g. ENOBUFS), dropped.
    pub tx_error_frames: u64,
    /// Frames the kernel dropped before we read them (socket receive buffer full;
    /// PACKET_STATISTICS tp_drops).
    pub kernel_rx_drop_frames: u64,
    /// Most frames held at once.
    pub held_max_frames: u64,
    /// Frames still held when the node stopped (never sent).
    pub held_at_exit_frames: u64,
    /// Release-time error: time of the sendmmsg call − release time, ns.
    pub release_error: NsSummary,
    /// Spin margin at the end, ns (adapted to the ppoll wake-up lateness).
    pub spin_margin_ns: u64,
    /// Batch-mode quantum, ns (0: off); batch mode engages while >= 1 frame arrives per quantum.
    pub quantum_ns: u64,
    /// The thread ran under SCHED_FIFO (--rt-priority granted).
    pub realtime: bool,
    /// "ring" (PACKET_MMAP TPACKET_V3) or "recvmmsg".
    pub rx_path: &'static str,
}

/// The node's report.
#[derive(Serialize, Debug)]
pub struct NodeReport {
    /// Seed of the random draws.
    pub seed: u64,
    /// From start to stop, ns.
    pub elapsed_ns: u64,
    /// A -> B, then B -> A.
    pub directions: Vec<DirReport>,
    /// User CPU time of the node, ns.
    pub cpu_user_ns: u64,
    /// System CPU time of the node, ns.
    pub cpu_system_ns: u64,
    /// (user + system) / frames received in both directions, ns.
    pub cpu_per_frame_ns: Option<f64>,
    /// Frames the kernel dropped from full per-CPU input backlogs (netdev_max_backlog) while the
    /// node ran, on the whole machine (/proc/net/softnet_stat): a frame a veth could not hand to
    /// the node or to the receiver is lost there, where no socket counts it. Null if unreadable.
    pub softnet_backlog_drop_frames_machine_wide: Option<u64>,
}

/// Sum of the `dropped` column of /proc/net/softnet_stat (hex, one line per CPU).
fn softnet_drops() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/softnet_stat").ok()?;
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|h| u64::from_str_radix(h, 16).ok())
        })
        .sum()
}

const BATCH_MAX_SLEEP_NS: u64 = 1_000_000;
const RATE_WINDOW_NS: u64 = 2_000_000;
const BUSY_FRAMES_PER_QUANTUM: u64 = 1;
/// The ring hands a block over at most RING_RETIRE_MS after its first frame: only directions
/// that delay every frame by at least twice that (delay − 3 × jitter) use it.
const RING_RETIRE_MS: u32 = 1;
const RING_MIN_DELAY_NS: u64 = 2_000_000;
/// Ring memory is pinned kernel memory: 16 blocks of 256 KB per direction (4 MB; 32 ms at
/// 1 Gbit/s, and 16 ms of stalled thread at low rates, where blocks leave partly filled).
const RING_BLOCK_BYTES: usize = 256 << 10;
const RING_BYTES_MAX: usize = 4 << 20;

struct Side {
    rx: OwnedFd,
    tx: OwnedFd,
}

fn open_side(rx_if: &str, tx_if: &str, rcvbuf: usize) -> Result<Side, String> {
    let rx =
        sys::packet_socket(rx_if, true).map_err(|e| format!("AF_PACKET socket on {rx_if}: {e}"))?;
    sys::set_fd_bufs(&rx, rcvbuf, 1 << 20).map_err(|e| format!("buffers on {rx_if}: {e}"))?;
    sys::enable_rx_metadata(&rx, false).map_err(|e| format!("timestamps on {rx_if}: {e}"))?;
    let tx = sys::packet_socket(tx_if, false)
        .map_err(|e| format!("AF_PACKET socket on {tx_if}: {e}"))?;
    sys::set_fd_bufs(&tx, 1 << 16, 4 << 20).map_err(|e| format!("buffers on {tx_if}: {e}"))?;
    Ok(Side { rx, tx })
}

fn loss_name(m: &LossModel) -> &'static str {
    match m {
        LossModel::None => "none",
        LossModel::Random { .. } => "random",
        LossModel::GilbertElliott { .. } => "gilbert-elliott",
    }
}

/// Run the node until the duration passes or a stop signal arrives.
pub fn run(o: &NodeOpts) -> Result<NodeReport, String> {
    sys::install_stop_handler();
    let _ = sys::set_timer_slack_ns(1);
    let ab = open_side(&o.a, &o.b, o.rcvbuf)?;
    let ba = open_side(&o.b, &o.a, o.rcvbuf)?;
    // Drop what queued between bind and now? No: frames that arrived are forwarded.
    let imp_ab = if o.direction == Direction::BToA {
        Impairment::passthrough()
    } else {
        o.imp.clone()
    };
    let imp_ba = if o.direction == Direction::AToB {
        Impairment::passthrough()
    } else {
        o.imp.clone()
    };
    let softnet0 = softnet_drops();
    let t0 = sys::mono_ns();
    let deadline = o.duration_ns.map(|d| t0 + d);
    eprintln!("READY {} {}", o.a, o.b);
    let (r_ab, r_ba) = std::thread::scope(|s| {
        let h1 = s.spawn(|| forward(&ab, &o.a, &o.b, imp_ab, o.seed, deadline, o));
        let h2 = s.spawn(|| forward(&ba, &o.b, &o.a, imp_ba, o.seed.wrapping_add(1), deadline, o));
        (h1.join(), h2.join())
    });
    let r_ab = r_ab.map_err(|_| "A->B thread panicked".to_string())??;
    let r_ba = r_ba.map_err(|_| "B->A thread panicked".to_string())??;
    let (user, system) = sys::rusage_self_ns();
    let frames = r_ab.rx_frames + r_ba.rx_frames;
    Ok(NodeReport {
        seed: o.seed,
        elapsed_ns: sys::mono_ns() - t0,
        directions: vec![r_ab, r_ba],
        cpu_user_ns: user,
        cpu_system_ns: system,
        cpu_per_frame_ns: (frames > 0).then(|| (user + system) as f64 / frames as f64),
        softnet_backlog_drop_frames_machine_wide: softnet_drops()
            .zip(softnet0)
            .map(|(b, a)| b.saturating_sub(a)),
    })
}

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

/// Adapts the spin margin to how late ppoll wakes up (a high quantile: up at once, down slowly).
struct Margin {
    ns: u64,
    min: u64,
    max: u64,
}

impl Margin {
    fn observe(&mut self, late_ns: u64) {
        let want = late_ns + late_ns / 4 + 1_000;
        if want > self.ns {
            self.ns = want.min(self.max);
        } else {
            self.ns -= (self.ns - want) / 64;
        }
        self.ns = self.ns.max(self.min);
    }
}

/// Admission of received frames into one direction's release queue, shared by both receive
/// paths (PACKET_MMAP ring and recvmmsg).
struct Intake<'a> {
    rep: &'a mut DirReport,
    sched: &'a mut Scheduler,
    queue: &'a mut ReleaseQueue,
    pool: &'a mut Vec<Vec<u8>>,
    seq: &'a mut u64,
    o: &'a NodeOpts,
}

impl<'a> Intake<'a> {
    fn new(
        rep: &'a mut DirReport,
        sched: &'a mut Scheduler,
        queue: &'a mut ReleaseQueue,
        pool: &'a mut Vec<Vec<u8>>,
        seq: &'a mut u64,
        o: &'a NodeOpts,
    ) -> Self {
        Intake {
            rep,
            sched,
            queue,
            pool,
            seq,
            o,
        }
    }

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
        let rep = &mut *self.rep;
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
                    seq: *self.seq,
                    frame: buf,
                });
                *self.seq += 1;
            }
        }
    }
}

fn forward(
    side: &Side,
    from: &str,
    to: &str,
    imp: Impairment,
    seed: u64,
    deadline: Option<u64>,
    o: &NodeOpts,
) -> Result<DirReport, String> {
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
        loss_model: loss_name(&imp.loss),
        loss_ratio: imp.loss.mean(),
        rate_bps: imp.rate_bps,
        realtime,
        ..Default::default()
    };
    // the smallest delay a frame gets (jitter: down to 3 sd / the uniform half-width below;
    // an empirical CDF: its first point)
    let least_delay_ns = match &imp.cdf {
        Some(cdf) => cdf.min_ns(),
        None => imp.delay_ns.saturating_sub(3 * imp.jitter_ns),
    };
    let mut ring = if o.rx_ring && least_delay_ns >= RING_MIN_DELAY_NS {
        let blocks = (o.rcvbuf.min(RING_BYTES_MAX) / RING_BLOCK_BYTES).max(4);
        RxRing::new(
            &side.rx,
            RING_BLOCK_BYTES,
            blocks,
            o.max_frame,
            RING_RETIRE_MS,
        )
        .ok()
    } else {
        None
    };
    rep.rx_path = if ring.is_some() { "ring" } else { "recvmmsg" };
    let mut queue = ReleaseQueue::new(imp.reorder);
    let mut sched = Scheduler::new(imp, seed);
    let mut rb = RecvBatch::new(o.batch, o.max_frame + 1);
    let mut tx = SliceSend::new(o.batch);
    let mut due: Vec<Held> = Vec::with_capacity(o.batch);
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut errors = NsHist::new();
    let mut margin = Margin {
        ns: 10_000.min(o.max_spin_ns),
        min: 2_000.min(o.max_spin_ns),
        max: o.max_spin_ns,
    };
    let _ = sys::packet_stats(&side.rx); // reset the kernel's counters
    let mut seq = 0u64;
    let (mut win_start, mut win_frames, mut busy) = (sys::mono_ns(), 0u64, false);
    loop {
        let now = sys::mono_ns();
        if sys::stop_requested() || deadline.is_some_and(|d| now >= d) {
            break;
        }
        // 1. release what is due, a batch at a time, sent straight from where it was held
        while due.len() < o.batch {
            let Some(h) = queue.pop_due(now) else { break };
            due.push(h);
        }
        if !due.is_empty() {
            let n = due.len();
            let at = sys::mono_ns();
            for h in &due {
                errors.record(at.saturating_sub(h.release));
            }
            send_all(&mut tx, &side.tx, &due, &mut rep);
            pool.extend(due.drain(..).map(|h| h.frame));
            if n == o.batch {
                continue; // more may be due
            }
        }
        // 2. admit what arrived
        if let Some(ring) = ring.as_mut() {
            let mut got = 0;
            while got < o.batch {
                // the clocks are read once the block is ours (at its first frame): every frame
                // in it arrived before, so kernel time <= real and the conversion is exact
                let mut clocks: Option<(u64, u64)> = None;
                let mut intake =
                    Intake::new(&mut rep, &mut sched, &mut queue, &mut pool, &mut seq, o);
                let admit = |frame: &[u8], k: u64, truncated: bool| {
                    let clocks = *clocks.get_or_insert_with(clock_pair);
                    intake.admit(frame, frame.len(), truncated, Some(k), clocks);
                };
                let Some(n) = ring.next_block(admit) else {
                    break;
                };
                got += n;
            }
            if got > 0 {
                win_frames += got as u64;
                rep.held_max_frames = rep.held_max_frames.max(queue.len() as u64);
                continue;
            }
        } else {
            let got = rb
                .recv_nowait(&side.rx)
                .map_err(|e| format!("recvmmsg on {from}: {e}"))?;
            if got > 0 {
                win_frames += got as u64;
                let clocks = clock_pair();
                let mut intake =
                    Intake::new(&mut rep, &mut sched, &mut queue, &mut pool, &mut seq, o);
                for i in 0..got {
                    let (frame, meta) = rb.get(i);
                    let (len, truncated, k) = (meta.len, meta.truncated, meta.kernel_rx_ns);
                    intake.admit(frame, len, truncated, k, clocks);
                }
                rep.held_max_frames = rep.held_max_frames.max(queue.len() as u64);
                continue;
            }
        }
        // 3. nothing to do now: sleep until a frame arrives or shortly before the next release
        let now = sys::mono_ns();
        if now - win_start >= RATE_WINDOW_NS {
            // busy: at least BUSY_FRAMES_PER_QUANTUM frames arrive per quantum on average
            busy = win_frames * o.quantum_ns >= BUSY_FRAMES_PER_QUANTUM * (now - win_start);
            win_start = now;
            win_frames = 0;
        }
        if o.quantum_ns > 0 && busy {
            if let Some(next) = queue.next_release() {
                // batch mode: a timer sleep of at least one quantum, at most 1 ms (the socket
                // buffer holds what arrives meanwhile; kernel timestamps keep arrival times)
                let mut wake = next.clamp(
                    now + o.quantum_ns,
                    now + BATCH_MAX_SLEEP_NS.max(o.quantum_ns),
                );
                if let Some(d) = deadline {
                    wake = wake.min(d);
                }
                sys::sleep_until(sys::Clock::Monotonic, wake);
                continue;
            }
        }
        let mut wake = match queue.next_release() {
            Some(t) if t <= now + margin.ns => {
                // spin, but yield: on a shared core the other direction and the endpoints run
                std::thread::yield_now();
                continue;
            }
            Some(t) => t - margin.ns,
            None => now + 100_000_000, // re-check the stop flag 10 times a second
        };
        if let Some(d) = deadline {
            wake = wake.min(d);
        }
        let readable = sys::wait_readable(&side.rx, wake.saturating_sub(now))
            .map_err(|e| format!("ppoll on {from}: {e}"))?;
        if !readable && queue.next_release().is_some() {
            margin.observe(sys::mono_ns().saturating_sub(wake));
        }
    }
    if let Ok((_, drops)) = sys::packet_stats(&side.rx) {
        rep.kernel_rx_drop_frames = drops;
    }
    rep.held_at_exit_frames = queue.len() as u64;
    rep.release_error = errors.summary();
    rep.spin_margin_ns = margin.ns;
    rep.quantum_ns = o.quantum_ns;
    Ok(rep)
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
