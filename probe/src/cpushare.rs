//! `cpushare`: the EC2 study's CPU-share method. A tight loop reads CLOCK_MONOTONIC; a gap
//! between two consecutive reads above a threshold means the loop was off the CPU (the VM
//! descheduled, or this process preempted). Share on CPU = 1 − sum of gaps / wall time,
//! cross-checked with the steal time of /proc/stat and with getrusage.

use serde::Serialize;

use crate::stats::{NsHist, NsSummary};
use crate::sys;

/// Options of `cpushare`.
#[derive(Clone, Debug)]
pub struct CpuOpts {
    /// Loop duration, ns.
    pub duration_ns: u64,
    /// A gap above this is counted, ns.
    pub threshold_ns: u64,
    /// Pin the loop to this CPU.
    pub cpu: Option<usize>,
    /// Keep at most this many gaps in the `gaps` list.
    pub max_gaps: usize,
}

/// One histogram bucket.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Lower bound (inclusive), ns.
    pub ge_ns: u64,
    /// Upper bound (exclusive), ns; null for the last bucket.
    pub lt_ns: Option<u64>,
    /// Gaps in this bucket.
    pub count: u64,
}

/// One gap.
#[derive(Serialize, Debug, Clone)]
pub struct Gap {
    /// Start of the gap since the start of the loop, ns.
    pub at_ns: u64,
    /// Length of the gap, ns.
    pub gap_ns: u64,
}

/// /proc/stat steal (all CPUs).
#[derive(Serialize, Debug, Clone, Default)]
pub struct Steal {
    /// True if /proc/stat has a steal column.
    pub available: bool,
    /// Steal time over the run, all CPUs summed, ns (USER_HZ ticks converted).
    pub steal_delta_ns: u64,
    /// Total CPU time over the run, all CPUs summed, ns.
    pub total_delta_ns: u64,
    /// steal / total over the run.
    pub steal_ratio: f64,
}

/// The `cpushare` report.
#[derive(Serialize, Debug)]
pub struct CpuReport {
    /// Wall time of the loop, ns.
    pub wall_ns: u64,
    /// Gap threshold, ns.
    pub threshold_ns: u64,
    /// CPU the loop was pinned to, null if not pinned.
    pub pinned_cpu: Option<usize>,
    /// Loop iterations (clock reads).
    pub iterations: u64,
    /// wall / iterations, ns.
    pub mean_iteration_ns: f64,
    /// Gaps above the threshold.
    pub gaps_count: u64,
    /// Sum of the gaps, ns.
    pub gaps_sum_ns: u64,
    /// Gap length distribution, ns.
    pub gap: NsSummary,
    /// Power-of-two histogram of gap lengths starting at the threshold.
    pub gap_histogram: Vec<Bucket>,
    /// Estimated share of time on CPU = 1 − gaps_sum / wall.
    pub cpu_share_ratio: f64,
    /// (user + system CPU time) / wall from getrusage: a cross-check.
    pub rusage_cpu_ratio: f64,
    /// Steal time of the host as the guest kernel reports it.
    pub steal: Steal,
    /// The first gaps (offset and length), at most --max-gaps.
    pub gaps: Vec<Gap>,
    /// True if more gaps happened than listed.
    pub gaps_truncated: bool,
}

fn read_proc_stat() -> Option<(u64, Option<u64>)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    parse_proc_stat(&s)
}

/// (total ticks, steal ticks) of the aggregate "cpu" line.
pub fn parse_proc_stat(s: &str) -> Option<(u64, Option<u64>)> {
    let line = s.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // inside user/nice, so the total counts the first eight columns.
    let total = v.iter().take(8).sum();
    Some((total, v.get(7).copied()))
}

/// Index of the power-of-two bucket of gap `g` (>= `threshold`).
#[inline]
pub fn bucket_index(g: u64, threshold: u64) -> usize {
    let r = g / threshold.max(1);
    (63 - r.max(1).leading_zeros()) as usize
}

/// Buckets [t·2^i, t·2^(i+1)) from per-index counts; the last bucket is open-ended.
pub fn buckets(counts: &[u64], threshold: u64) -> Vec<Bucket> {
    let t = threshold.max(1);
    let n = counts.len().max(1);
    (0..n)
        .map(|i| Bucket {
            ge_ns: t.saturating_mul(1u64 << i.min(62)),
            lt_ns: (i + 1 < n).then(|| t.saturating_mul(1u64 << (i + 1).min(62))),
            count: counts.get(i).copied().unwrap_or(0),
        })
        .collect()
}

/// Power-of-two histogram of `gaps` from `threshold`.
pub fn histogram(gaps: &[u64], threshold: u64) -> Vec<Bucket> {
    let mut counts: Vec<u64> = Vec::new();
    for &g in gaps {
        let i = bucket_index(g, threshold);
        if i >= counts.len() {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }
    buckets(&counts, threshold)
}

/// Run the loop.
pub fn run(o: &CpuOpts) -> Result<CpuReport, String> {
    if let Some(c) = o.cpu {
        sys::pin_to_cpu(c).map_err(|e| format!("cannot pin to CPU {c}: {e}"))?;
    }
    sys::install_stop_handler();
    let stat0 = read_proc_stat();
    let (u0, s0) = sys::rusage_self_ns();
    let mut hist = NsHist::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut ngaps = 0u64;
    let mut listed: Vec<Gap> = Vec::new();
    let t0 = sys::mono_ns();
    let end = t0 + o.duration_ns;
    let mut prev = t0;
    let mut iters = 0u64;
    let mut sum = 0u64;
    loop {
        let now = sys::mono_ns();
        iters += 1;
        let g = now - prev;
        if g > o.threshold_ns {
            sum += g;
            hist.record(g);
            ngaps += 1;
            let i = bucket_index(g, o.threshold_ns);
            if i >= counts.len() {
                counts.resize(i + 1, 0);
            }
            counts[i] += 1;
            if listed.len() < o.max_gaps {
                listed.push(Gap {
                    at_ns: prev - t0,
                    gap_ns: g,
                });
            }
        }
        prev = now;
        if now >= end || (iters & 0xffff == 0 && sys::stop_requested()) {
            break;
        }
    }
    let wall = prev - t0;
    let (u1, s1) = sys::rusage_self_ns();
    let stat1 = read_proc_stat();
    let hz = sys::clock_ticks_per_sec();
    let tick_ns = 1_000_000_000 / hz;
    let steal = match (stat0, stat1) {
        (Some((t0_, Some(st0))), Some((t1_, Some(st1)))) => {
            let td = t1_.saturating_sub(t0_);
            let sd = st1.saturating_sub(st0);
            Steal {
                available: true,
                steal_delta_ns: sd * tick_ns,
                total_delta_ns: td * tick_ns,
                steal_ratio: if td > 0 { sd as f64 / td as f64 } else { 0.0 },
            }
        }
        _ => Steal::default(),
    };
    let wall_f = wall.max(1) as f64;
    Ok(CpuReport {
        wall_ns: wall,
        threshold_ns: o.threshold_ns,
        pinned_cpu: o.cpu,
        iterations: iters,
        mean_iteration_ns: wall_f / iters.max(1) as f64,
        gaps_count: ngaps,
        gaps_sum_ns: sum,
        gap: hist.summary(),
        gap_histogram: buckets(&counts, o.threshold_ns),
        cpu_share_ratio: (1.0 - sum as f64 / wall_f).clamp(0.0, 1.0),
        rusage_cpu_ratio: ((u1 - u0 + s1 - s0) as f64 / wall_f).clamp(0.0, 1.0),
        steal,
        gaps_truncated: ngaps > listed.len() as u64,
        gaps: listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat() {
        let s = "cpu  100 0 50 1000 5 0 2 40 0 0\ncpu0 1 2 3\n";
        assert_eq!(parse_proc_stat(s), Some((1197, Some(40))));
        assert_eq!(parse_proc_stat("cpu  1 2 3 4\n"), Some((10, None)));
        assert_eq!(parse_proc_stat("nothing"), None);
    }

    #[test]
    fn buckets() {
        let h = histogram(&[100, 150, 200, 399, 1000], 100);
        assert_eq!(
            h,
            vec![
                Bucket {
                    ge_ns: 100,
                    lt_ns: Some(200),
                    count: 2
                },
                Bucket {
                    ge_ns: 200,
                    lt_ns: Some(400),
                    count: 2
                },
                Bucket {
                    ge_ns: 400,
                    lt_ns: Some(800),
                    count: 0
                },
                Bucket {
                    ge_ns: 800,
                    lt_ns: None,
                    count: 1
                },
            ]
        );
        assert_eq!(histogram(&[], 100).len(), 1);
    }

    #[test]
    fn short_run() {
        let r = run(&CpuOpts {
            duration_ns: 50_000_000,
            threshold_ns: 50_000,
            cpu: None,
            max_gaps: 10,
        })
        .unwrap();
        assert!(r.wall_ns >= 50_000_000);
        assert!(r.iterations > 1000);
        assert!((0.0..=1.0).contains(&r.cpu_share_ratio));
    }
}
