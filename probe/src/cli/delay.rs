//! `vnb-probe delay`: its flags, their conversion into the delay node's options, and its JSON
//! fields.

use clap::Args;

use crate::delay::cdf::DelayCdf;
use crate::delay::jitter::JitterDist;
use crate::delay::loss::LossModel;
use crate::delay::sched::Impairment;
use crate::delay::{Direction, NodeOpts};
use crate::units::{parse_duration_ns, parse_rate, parse_ratio, parse_secs};

/// JSON fields of `delay`, shown at the end of `vnb-probe delay --help`.
pub const FIELDS: &str = "\
DELAY FIELDS (vnb-probe delay; docs/delay-nodes.md)
  seed                          seed of the random draws (A->B uses it, B->A seed + 1)
  elapsed_ns                    start to stop, ns
  cpu_user_ns, cpu_system_ns    CPU time of the node, ns
  cpu_per_frame_ns              (user + system) / frames received in both directions, ns
  softnet_backlog_drop_frames_machine_wide
                                frames dropped from full per-CPU input backlogs while the node
                                ran, whole machine (/proc/net/softnet_stat)
  directions[]                  A->B, then B->A:
    from, to                    receiving and sending interface
    delay_ns, jitter_ns, jitter_dist, delay_cdf, reorder, delay_hold_ns, loss_model,
    loss_ratio, rate_bps        the impairment of this direction (delay_cdf: the
                                empirical distribution as P:DELAYns,...; null if none;
                                delay_hold_ns: how long a drawn delay is kept, 0: per frame)
    rx_frames, rx_bytes         read from `from`
    tx_frames, tx_bytes         written to `to`
    lost_frames                 dropped by the loss model (emulated loss)
    queue_drop_frames           dropped: --rate queue full (emulated tail drop)
    limit_drop_frames           dropped: --limit frames held already
    oversize_drop_frames        dropped: larger than --max-frame
    tx_error_frames             dropped: the kernel refused to send them
    kernel_rx_drop_frames       dropped by the kernel before we read them (PACKET_STATISTICS)
    held_max_frames             most frames held at once
    held_at_exit_frames         held when the node stopped (never sent)
    release_error{...}          send time - release time, ns (the node's own timing error)
    spin_margin_ns              final busy-wait margin before a release, ns
    quantum_ns                  batch-mode quantum, ns (0: off)
    realtime                    the thread ran under SCHED_FIFO (--rt-priority was granted)
    rx_path                     ring (PACKET_MMAP TPACKET_V3) or recvmmsg";

/// `delay` arguments.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct DelayArgs {
    /// Interface of side A (in this network namespace).
    #[arg(long)]
    pub a: String,
    /// Interface of side B.
    #[arg(long)]
    pub b: String,
    /// One-way delay per direction (50ms, 250us, or seconds).
    #[arg(long, value_parser = parse_duration_ns, default_value = "0", allow_hyphen_values = true)]
    pub delay: u64,
    /// Delay variation: uniform half-width, normal standard deviation, or the scale of netem's
    /// pareto / paretonormal tables.
    #[arg(long, value_parser = parse_duration_ns, default_value = "0", allow_hyphen_values = true)]
    pub jitter: u64,
    /// Jitter distribution: uniform, normal, pareto or paretonormal (as netem's tables).
    #[arg(long, value_parser = JitterDist::parse, default_value = "uniform")]
    pub jitter_dist: JitterDist,
    /// Empirical one-way delay distribution instead of --delay/--jitter: points
    /// PROBABILITY:DELAY of its CDF, probabilities rising strictly from 0 to 1, delays not
    /// falling, joined linearly (e.g. 0:49.5ms,0.75:52.5ms,0.95:90ms,1:400ms).
    #[arg(long, value_parser = DelayCdf::parse, conflicts_with_all = ["delay", "jitter", "jitter_dist"])]
    pub delay_cdf: Option<DelayCdf>,
    /// Let a frame overtake earlier ones (release times used as drawn). Without it, frames leave
    /// in arrival order and jitter only ever adds delay to the frame behind a late one.
    #[arg(long)]
    pub reorder: bool,
    /// Keep a drawn delay (--delay-cdf, or --delay ± --jitter) for every frame that arrives in
    /// the next DURATION, then draw a new one on the first frame after it (per direction;
    /// 0: every frame draws its own). A path's delay in episodes, as a queue makes it.
    #[arg(long, value_parser = parse_duration_ns, default_value = "0", allow_hyphen_values = true)]
    pub delay_hold: u64,
    /// Loss ratio per direction: 0.01 or 1%.
    #[arg(long, value_parser = parse_ratio, default_value = "0", allow_hyphen_values = true)]
    pub loss: f64,
    /// Loss model: random (independent) or gilbert-elliott (bursty).
    #[arg(long, default_value = "random", value_parser = ["random", "gilbert-elliott"])]
    pub loss_model: String,
    /// Mean length of a loss burst, frames (gilbert-elliott).
    #[arg(long, default_value_t = 4.0)]
    pub loss_burst: f64,
    /// Serialisation rate per direction, bits/s (k/M/G suffixes); default unlimited.
    #[arg(long, value_parser = parse_rate, allow_hyphen_values = true)]
    pub rate: Option<f64>,
    /// Bytes that may wait for --rate before frames are dropped (default: 50 ms at rate).
    #[arg(long)]
    pub queue_bytes: Option<u64>,
    /// Which direction is impaired: both, a-to-b or b-to-a (the other passes frames at once).
    #[arg(long, default_value = "both", value_parser = ["both", "a-to-b", "b-to-a"])]
    pub direction: String,
    /// Random seed (recorded in the report); default: drawn from the clock.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop after S seconds (default: run until SIGINT/SIGTERM, then print the report).
    #[arg(long, value_parser = parse_secs)]
    pub duration: Option<u64>,
    /// Frames per recvmmsg/sendmmsg call at most.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// Largest frame, bytes (MTU + 14, + 4 for a VLAN tag); larger ones are dropped and counted.
    #[arg(long, default_value_t = 1522)]
    pub max_frame: usize,
    /// Frames held at once per direction at most; beyond, new frames are dropped and counted.
    #[arg(long, default_value_t = 200_000)]
    pub limit: usize,
    /// Busy-wait at most this many µs before a release time (the rest is a ppoll sleep).
    #[arg(long, default_value_t = 200)]
    pub max_spin_us: u64,
    /// Batch mode at high packet rates: while at least 1 frame arrives per Q µs, wake once per
    /// Q µs (never on each arriving frame) and forward everything received and due in whole
    /// batches. Far less CPU per frame; releases are then up to Q µs late (measured in
    /// release_error). Below that rate, and with 0, every frame leaves at its own time
    /// (ppoll + spin).
    #[arg(long, default_value_t = 0)]
    pub quantum_us: u64,
    /// Run the forwarding threads under SCHED_FIFO at this priority (1..=99; 0: no): wake-ups
    /// then preempt ordinary tasks, which keeps the release-time error small on a busy machine.
    /// Best effort: if refused (no CAP_SYS_NICE), the node runs normally (`realtime`: false).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=99))]
    pub rt_priority: i32,
    /// Socket receive buffer per side, bytes (also the size of the receive ring).
    #[arg(long, default_value_t = 16 << 20)]
    pub rcvbuf: usize,
    /// Receive with recvmmsg only. By default a direction whose delay − 3 × jitter is >= 2 ms
    /// receives through a PACKET_MMAP TPACKET_V3 ring (less CPU per frame; the kernel hands over
    /// a block of frames at most 1 ms after its first one, which the delay absorbs: arrival
    /// times are the kernel's timestamps either way).
    #[arg(long)]
    pub no_rx_ring: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl DelayArgs {
    /// The node's options, or a usage error.
    pub fn opts(&self) -> Result<NodeOpts, String> {
        if self.a == self.b {
            return Err("--a and --b must be different interfaces".into());
        }
        let loss = match (self.loss, self.loss_model.as_str()) {
            (0.0, _) => LossModel::None,
            (l, "random") => LossModel::Random { p: l },
            (l, _) => LossModel::bursty(l, self.loss_burst)?,
        };
        let queue_bytes = match (self.rate, self.queue_bytes) {
            (_, Some(q)) => q,
            (Some(r), None) => ((r / 8.0 * 0.05) as u64).max(4 * self.max_frame as u64),
            (None, None) => u64::MAX,
        };
        let imp = Impairment {
            delay_ns: self.delay,
            jitter_ns: self.jitter,
            dist: self.jitter_dist,
            cdf: self.delay_cdf.clone(),
            reorder: self.reorder,
            hold_ns: self.delay_hold,
            loss,
            rate_bps: self.rate,
            queue_bytes,
        };
        let direction = match self.direction.as_str() {
            "a-to-b" => Direction::AToB,
            "b-to-a" => Direction::BToA,
            _ => Direction::Both,
        };
        Ok(NodeOpts {
            a: self.a.clone(),
            b: self.b.clone(),
            imp,
            direction,
            seed: self.seed.unwrap_or_else(crate::sys::real_ns),
            duration_ns: self.duration,
            batch: self.batch as usize,
            max_frame: self.max_frame.max(64),
            limit: self.limit.max(1),
            max_spin_ns: self.max_spin_us.saturating_mul(1000),
            rcvbuf: self.rcvbuf,
            rt_priority: self.rt_priority,
            quantum_ns: self.quantum_us.saturating_mul(1000),
            rx_ring: !self.no_rx_ring,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_cdf_excludes_delay_and_jitter() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            d: DelayArgs,
        }
        let base = ["x", "--a", "a", "--b", "b"];
        let parse = |extra: &[&str]| Cli::try_parse_from(base.iter().chain(extra));
        let cli = parse(&["--delay-cdf", "0:1ms,1:3ms"]).unwrap();
        let imp = cli.d.opts().unwrap().imp;
        assert_eq!(
            imp.cdf.unwrap().points(),
            &[(0.0, 1_000_000), (1.0, 3_000_000)]
        );
        assert_eq!((imp.delay_ns, imp.jitter_ns), (0, 0));
        assert!(parse(&["--delay-cdf", "0:1ms,1:3ms", "--delay", "5ms"]).is_err());
        assert!(parse(&["--delay-cdf", "0:1ms,1:3ms", "--jitter", "1ms"]).is_err());
        assert!(parse(&["--delay-cdf", "0:3ms,1:1ms"]).is_err());
    }

    #[test]
    fn delay_hold_is_a_duration_and_defaults_to_per_frame() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            d: DelayArgs,
        }
        let base = ["x", "--a", "a", "--b", "b", "--delay-cdf", "0:1ms,1:3ms"];
        let parse = |extra: &[&str]| Cli::try_parse_from(base.iter().chain(extra));
        let hold = |extra: &[&str]| parse(extra).unwrap().d.opts().unwrap().imp.hold_ns;
        assert_eq!(hold(&[]), 0);
        assert_eq!(hold(&["--delay-hold", "1000ms"]), 1_000_000_000);
        assert_eq!(hold(&["--delay-hold", "2s"]), 2_000_000_000);
        assert!(parse(&["--delay-hold", "soon"]).is_err());
    }
}
