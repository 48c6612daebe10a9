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

pub mod cdf;
mod forward;
pub mod jitter;
pub mod loss;
pub mod rng;
pub mod sched;

use std::os::fd::OwnedFd;

use serde::Serialize;

use crate::delay::loss::LossModel;
use crate::delay::sched::Impairment;
use crate::stats::NsSummary;
use crate::sys;
use forward::forward;

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
    /// A drawn delay is kept for the frames that arrive in this long after it, ns (0: every
    /// frame draws its own).
    pub delay_hold_ns: u64,
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

struct Side {
    rx: OwnedFd,
    tx: OwnedFd,
}

/// Ask for receive and send buffers on an AF_PACKET socket.
fn set_bufs(sock: &OwnedFd, rcv: usize, snd: usize) -> std::io::Result<()> {
    sys::set_rcvbuf(sock, rcv)?;
    sys::set_sndbuf(sock, snd).map(|_| ())
}

fn open_side(rx_if: &str, tx_if: &str, rcvbuf: usize) -> Result<Side, String> {
    let rx =
        sys::packet_socket(rx_if, true).map_err(|e| format!("AF_PACKET socket on {rx_if}: {e}"))?;
    set_bufs(&rx, rcvbuf, 1 << 20).map_err(|e| format!("buffers on {rx_if}: {e}"))?;
    sys::enable_rx_metadata(&rx, false).map_err(|e| format!("timestamps on {rx_if}: {e}"))?;
    let tx = sys::packet_socket(tx_if, false)
        .map_err(|e| format!("AF_PACKET socket on {tx_if}: {e}"))?;
    set_bufs(&tx, 1 << 16, 4 << 20).map_err(|e| format!("buffers on {tx_if}: {e}"))?;
    Ok(Side { rx, tx })
}

pub(super) fn loss_name(m: &LossModel) -> &'static str {
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
