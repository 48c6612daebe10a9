//! Delay variation: the per-packet offset added to the configured delay.

use crate::delay::rng::Rng;

/// Distribution of the delay offset. `jitter_ns` is the uniform half-width (offset in
/// [-jitter, +jitter]) or the normal standard deviation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitterDist {
    /// Offset uniform in [-jitter, +jitter].
    Uniform,
    /// Offset normal with mean 0 and standard deviation jitter.
    Normal,
}

impl JitterDist {
    /// Parse "uniform" or "normal".
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(JitterDist::Uniform),
            "normal" => Ok(JitterDist::Normal),
            _ => Err(format!("jitter distribution {s:?}: use uniform or normal")),
        }
    }

    /// Name as in the command line.
    pub fn name(self) -> &'static str {
        match self {
            JitterDist::Uniform => "uniform",
            JitterDist::Normal => "normal",
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
