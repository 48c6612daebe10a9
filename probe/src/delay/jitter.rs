//! Delay variation: the per-packet offset added to the configured delay.

use crate::delay::rng::Rng;

/// Distribution of the delay offset. `jitter_ns` is the uniform half-width (offset in
/// [-jitter, +jitter]), the normal standard deviation, or netem's scale ("sigma") of its
/// pareto and paretonormal tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitterDist {
    /// Offset uniform in [-jitter, +jitter].
    Uniform,
    /// Offset normal with mean 0 and standard deviation jitter.
    Normal,
    /// netem's pareto (iproute2 netem/pareto.c): jitter × (4/3)(X − 1.5), X Pareto with shape 3
    /// and scale 1 (mean 1.5), cut at +4 jitter as netem's 16-bit table is: offset in
    /// [−2/3, +4] jitter, mean −0.03 jitter, sd 0.82 jitter, median −0.32 jitter.
    Pareto,
    /// netem's paretonormal (iproute2 netem/paretonormal.c): jitter × (N + 3 P) / 4 with N the
    /// standard normal and P the pareto above taken at the same quantile (one uniform draw u:
    /// N = Φ⁻¹(u), P = pareto quantile at u), i.e. 1/4 normal + 3/4 pareto, added not mixed.
    ParetoNormal,
}

/// netem's cap of its distribution tables: i16 max / NETEM_DIST_SCALE (8192), about 4.
const NETEM_TABLE_MAX: f64 = 32767.0 / 8192.0;

/// netem's pareto offset (in units of jitter) at quantile u in (0, 1).
fn pareto_quantile(u: f64) -> f64 {
    let x = (1.0 - u).powf(-1.0 / 3.0); // Pareto(shape 3, scale 1)
    ((x - 1.5) * 4.0 / 3.0).min(NETEM_TABLE_MAX)
}

/// Standard normal quantile Φ⁻¹(p), p in (0, 1) (Acklam's rational approximation with one
/// Halley step: relative error below 1e-12 for the purposes here).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let p_low = 0.024_25;
    if p < p_low {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - p_low {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// A uniform draw strictly inside (0, 1).
fn open_uniform(rng: &mut Rng) -> f64 {
    loop {
        let u = rng.uniform();
        if u > 0.0 && u < 1.0 {
            return u;
        }
    }
}

impl JitterDist {
    /// Parse "uniform" or "normal".
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(JitterDist::Uniform),
            "normal" => Ok(JitterDist::Normal),
            "pareto" => Ok(JitterDist::Pareto),
            "paretonormal" => Ok(JitterDist::ParetoNormal),
            _ => Err(format!(
                "jitter distribution {s:?}: use uniform, normal, pareto or paretonormal"
            )),
        }
    }

    /// Name as in the command line.
    pub fn name(self) -> &'static str {
        match self {
            JitterDist::Uniform => "uniform",
            JitterDist::Normal => "normal",
            JitterDist::Pareto => "pareto",
            JitterDist::ParetoNormal => "paretonormal",
        }
    }
}

/// One packet's delay: `delay_ns` + offset, never below zero (a normal tail longer than the
/// delay is cut at zero, as netem does).
pub fn sample_delay_ns(rng: &mut Rng, delay_ns: u64, jitter_ns: u64, dist: JitterDist) -> u64 {
    if jitter_ns == 0 {
        return delay_ns;
    }
    let offset = match dist {
        JitterDist::Uniform => (2.0 * rng.uniform() - 1.0) * jitter_ns as f64,
        JitterDist::Normal => rng.normal() * jitter_ns as f64,
        JitterDist::Pareto => pareto_quantile(open_uniform(rng)) * jitter_ns as f64,
        JitterDist::ParetoNormal => {
            let u = open_uniform(rng);
            (normal_quantile(u) + 3.0 * pareto_quantile(u)) / 4.0 * jitter_ns as f64
        }
    };
    let d = delay_ns as f64 + offset;
    if d <= 0.0 {
        0
    } else {
        d.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(dist: JitterDist, n: usize) -> Vec<f64> {
        let mut r = Rng::new(11);
        (0..n)
            .map(|_| sample_delay_ns(&mut r, 50_000_000, 10_000_000, dist) as f64)
            .collect()
    }

    /// Mean and sd of `xs`, which it sorts (for `quantile`).
    fn moments(xs: &mut [f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (mean, sd)
    }

    /// The p quantile of sorted `xs`.
    fn quantile(xs: &[f64], p: f64) -> f64 {
        xs[((p * xs.len() as f64) as usize).min(xs.len() - 1)]
    }

    #[test]
    fn parse_and_name_round_trip() {
        for name in ["uniform", "normal", "pareto", "paretonormal"] {
            assert_eq!(JitterDist::parse(name).unwrap().name(), name);
        }
        assert!(JitterDist::parse("gamma").is_err());
    }

    #[test]
    fn normal_quantile_matches_known_values() {
        assert!(normal_quantile(0.5).abs() < 1e-9);
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.01) + 2.326_348).abs() < 1e-5);
        assert!((normal_quantile(1e-6) + 4.753_424).abs() < 1e-4);
    }

    #[test]
    fn pareto_matches_netem_table_moments_and_tail() {
        // offsets in units of jitter (10 ms); figures of iproute2's pareto.dist: mean -0.033,
        // sd 0.82, min -0.667, max 4 (the table cap), median -0.320, p99 at the cap
        let mut xs: Vec<f64> = draws(JitterDist::Pareto, 200_000)
            .iter()
            .map(|x| (x - 50e6) / 10e6)
            .collect();
        let (mean, sd) = moments(&mut xs);
        let q = |p: f64| quantile(&xs, p);
        assert!((mean + 0.033).abs() < 0.01, "mean {mean}");
        assert!((sd - 0.82).abs() < 0.015, "sd {sd}");
        assert!(q(0.0) >= -2.0 / 3.0 - 1e-6 && q(1.0) <= NETEM_TABLE_MAX + 1e-6);
        assert!((q(0.5) + 0.320).abs() < 0.01, "median {}", q(0.5));
        // a long right tail: p99 - median 4.3 jitter against a normal's 2.33 sd, and the
        // left side short (median - p1 0.33 against 2.33)
        assert!(q(0.99) - q(0.5) > 4.2, "p99 {}", q(0.99));
        assert!(q(0.5) - q(0.01) < 0.4, "p1 {}", q(0.01));
        // offset > 2 jitter <=> X > 3: probability 3^-3 = 1/27
        let above = xs.iter().filter(|&&x| x > 2.0).count() as f64 / xs.len() as f64;
        assert!((above - 1.0 / 27.0).abs() < 0.003, "P(>2) {above}");
    }

    #[test]
    fn paretonormal_matches_netem_table_moments_and_tail() {
        // figures of iproute2's paretonormal.dist: mean -0.025, sd 0.834, median -0.240,
        // p99 3.58, min about -1.5
        let mut xs: Vec<f64> = draws(JitterDist::ParetoNormal, 200_000)
            .iter()
            .map(|x| (x - 50e6) / 10e6)
            .collect();
        let (mean, sd) = moments(&mut xs);
        let q = |p: f64| quantile(&xs, p);
        assert!((mean + 0.025).abs() < 0.01, "mean {mean}");
        assert!((sd - 0.834).abs() < 0.015, "sd {sd}");
        assert!((q(0.5) + 0.240).abs() < 0.01, "median {}", q(0.5));
        assert!((q(0.99) - 3.58).abs() < 0.05, "p99 {}", q(0.99));
        assert!(q(0.99) - q(0.5) > 3.6);
        assert!(q(0.0) > -1.8, "min {}", q(0.0));
    }

    #[test]
    fn no_jitter_is_exact() {
        let mut r = Rng::new(1);
        assert_eq!(sample_delay_ns(&mut r, 123, 0, JitterDist::Normal), 123);
    }

    #[test]
    fn uniform_stays_in_range_and_is_flat() {
        let xs = draws(JitterDist::Uniform, 100_000);
        assert!(xs.iter().all(|&x| (40e6..=60e6).contains(&x)));
        // ten equal bins each hold ~10 %
        let mut bins = [0usize; 10];
        for x in &xs {
            bins[(((x - 40e6) / 2e6) as usize).min(9)] += 1;
        }
        for b in bins {
            assert!((b as f64 / 1e5 - 0.1).abs() < 0.006, "bins {bins:?}");
        }
    }

    #[test]
    fn normal_matches_mean_sd_and_quantiles() {
        let mut xs = draws(JitterDist::Normal, 100_000);
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 50e6).abs() < 0.1e6, "mean {mean}");
        assert!((sd - 10e6).abs() < 0.15e6, "sd {sd}");
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        // 2.5 % and 97.5 % quantiles at mean -/+ 1.96 sd
        let q = |p: f64| xs[(p * n) as usize];
        assert!((q(0.025) - 30.4e6).abs() < 0.4e6);
        assert!((q(0.975) - 69.6e6).abs() < 0.4e6);
    }

    #[test]
    fn normal_tail_is_cut_at_zero() {
        let mut r = Rng::new(5);
        let xs: Vec<u64> = (0..10_000)
            .map(|_| sample_delay_ns(&mut r, 1_000, 10_000, JitterDist::Normal))
            .collect();
        assert!(xs.contains(&0));
    }

    /// Standard normal CDF (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7).
    fn phi(x: f64) -> f64 {
        let z = x.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.327_591_1 * z);
        let poly = t
            * (0.254_829_592
                + t * (-0.284_496_736
                    + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let erf = 1.0 - poly * (-z * z).exp();
        0.5 * (1.0 + if x < 0.0 { -erf } else { erf })
    }

    /// One-sample KS statistic D of `xs` against the standard normal.
    fn ks_d(xs: &mut [f64]) -> f64 {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = phi(x);
                ((i + 1) as f64 / n - f).max(f - i as f64 / n)
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn ks_at_5_percent_rejects_about_1_sample_in_20() {
        // The integration test's situation: 5000 draws of 50 ms + N(0, 10 ms), KS at 5 %
        // (critical D = 1.358 / sqrt(n)). A calibrated generator is rejected in ~5 % of seeds —
        // which is why that test fixes its seed rather than asserting on a fresh sample.
        let (n, seeds) = (5000, 400u64);
        let crit = 1.358 / (n as f64).sqrt();
        let rejected = (0..seeds)
            .filter(|&seed| {
                let mut r = Rng::new(seed);
                let mut z: Vec<f64> = (0..n)
                    .map(|_| {
                        (sample_delay_ns(&mut r, 50_000_000, 10_000_000, JitterDist::Normal) as f64
                            - 50e6)
                            / 10e6
                    })
                    .collect();
                ks_d(&mut z) > crit
            })
            .count();
        // binomial(400, 0.05): mean 20, sd 4.4
        assert!(
            (8..=34).contains(&rejected),
            "{rejected} of {seeds} rejected"
        );
    }
}
