//! `vnb-probe cpushare`: its flags, their conversion into options, and its JSON fields.

use clap::Args;

use crate::cpushare::CpuOpts;
use crate::units::parse_secs;

/// `cpushare` fields, shown at the end of `vnb-probe cpushare --help`.
pub const FIELDS: &str = "\
CPUSHARE FIELDS
  wall_ns                       wall time of the loop, ns
  threshold_ns                  gaps above this count, ns
  pinned_cpu                    --cpu value, null if not pinned
  iterations                    clock reads
  mean_iteration_ns             wall / iterations, ns
  gaps_count, gaps_sum_ns       gaps above threshold and their total, ns
  gap{...}                      gap length distribution, ns
  gap_histogram[]               {ge_ns, lt_ns, count}: power-of-two buckets from the threshold
                                (lt_ns null for the last, open bucket)
  cpu_share_ratio               estimated share of time on CPU = 1 - gaps_sum / wall
  rusage_cpu_ratio              (user + system CPU time) / wall from getrusage
  steal.available               /proc/stat has a steal column
  steal.steal_delta_ns          steal time over the run, all CPUs, ns
  steal.total_delta_ns          total CPU time over the run, all CPUs, ns
  steal.steal_ratio             steal / total
  gaps[]                        {at_ns, gap_ns}: offset from the loop start and length of each
                                gap, first --max-gaps of them
  gaps_truncated                true if more gaps happened than listed";

/// `cpushare` arguments.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct CpuArgs {
    /// Loop duration, seconds.
    #[arg(long, value_parser = parse_secs, default_value = "10")]
    pub duration: u64,
    /// Gaps above this many µs count as time off the CPU.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub threshold_us: u64,
    /// Pin the loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// List at most this many gaps in `gaps`.
    #[arg(long, default_value_t = 10_000)]
    pub max_gaps: usize,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl CpuArgs {
    /// The loop's options.
    pub fn opts(&self) -> CpuOpts {
        CpuOpts {
            duration_ns: self.duration,
            threshold_ns: self.threshold_us.saturating_mul(1000),
            cpu: self.cpu,
            max_gaps: self.max_gaps,
        }
    }
}
