//! An empirical one-way delay distribution: points (cumulative probability, delay) joined by
//! straight lines, i.e. a piecewise-linear inverse CDF. A draw is the delay at a uniform
//! quantile u: between two points (p0, d0) and (p1, d1), d0 + (u − p0)/(p1 − p0) × (d1 − d0).
//! So the delay is uniform between consecutive points, with the probability mass p1 − p0.

use crate::delay::rng::Rng;
use crate::units::parse_duration_ns;

/// The distribution: at least two points, probabilities strictly increasing from 0 to 1,
/// delays (ns) non-decreasing.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayCdf {
    points: Vec<(f64, u64)>,
}

impl DelayCdf {
    /// Check the points (see the type).
    pub fn new(points: Vec<(f64, u64)>) -> Result<Self, String> {
        if points.len() < 2 {
            return Err("--delay-cdf needs at least two points, e.g. 0:49.5ms,1:52.5ms".into());
        }
        if points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 {
            return Err("--delay-cdf must start at probability 0 and end at probability 1".into());
        }
        for w in points.windows(2) {
            let ((p0, d0), (p1, d1)) = (w[0], w[1]);
            if p1 <= p0 {
                return Err(format!(
                    "--delay-cdf probabilities must increase strictly: {p0} then {p1}"
                ));
            }
            if d1 < d0 {
                return Err(format!(
                    "--delay-cdf delays must not decrease: {d0} ns at {p0}, then {d1} ns at {p1}"
                ));
            }
        }
        Ok(DelayCdf { points })
    }

    /// Parse "P:DELAY,P:DELAY,...", e.g. "0:49.5ms,0.75:52.5ms,0.95:90ms,1:400ms".
    pub fn parse(s: &str) -> Result<Self, String> {
        let points = s
            .split(',')
            .map(|item| {
                let (p, d) = item.split_once(':').ok_or_else(|| {
                    format!(
                        "--delay-cdf point {item:?}: expected PROBABILITY:DELAY, e.g. 0.75:52.5ms"
                    )
                })?;
                let p: f64 = p.trim().parse().map_err(|_| {
                    format!("--delay-cdf point {item:?}: {p:?} is not a probability")
                })?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(format!(
                        "--delay-cdf point {item:?}: probability not in [0, 1]"
                    ));
                }
                Ok((p, parse_duration_ns(d)?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        DelayCdf::new(points)
    }

    /// The points, as given.
    pub fn points(&self) -> &[(f64, u64)] {
        &self.points
    }

    /// The smallest delay a frame gets, ns.
    pub fn min_ns(&self) -> u64 {
        self.points[0].1
    }

    /// The delay at quantile u in [0, 1], ns (not rounded).
    pub fn quantile(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        // the first segment whose upper probability reaches u
        let i = self
            .points
            .partition_point(|&(p, _)| p < u)
            .clamp(1, self.points.len() - 1);
        let ((p0, d0), (p1, d1)) = (self.points[i - 1], self.points[i]);
        d0 as f64 + (u - p0) / (p1 - p0) * (d1 as f64 - d0 as f64)
    }

    /// One frame's delay, ns.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.quantile(rng.uniform()).round() as u64
    }

    /// The command-line form, delays in ns ("0:49500000ns,1:52500000ns").
    pub fn spec(&self) -> String {
        self.points
            .iter()
            .map(|(p, d)| format!("{p}:{d}ns"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENI: &str = "0:49.5ms,0.75:52.5ms,0.95:90ms,1:400ms";

    #[test]
    fn parses_and_prints() {
        let c = DelayCdf::parse(GENI).unwrap();
        assert_eq!(c.points().len(), 4);
        assert_eq!(c.points()[1], (0.75, 52_500_000));
        assert_eq!(c.min_ns(), 49_500_000);
        assert_eq!(DelayCdf::parse(&c.spec()).unwrap(), c);
    }

    #[test]
    fn bad_input_names_the_problem() {
        let err = |s: &str| DelayCdf::parse(s).unwrap_err();
        assert!(err("0:1ms").contains("at least two points"));
        assert!(err("0.1:1ms,1:2ms").contains("start at probability 0"));
        assert!(err("0:1ms,0.9:2ms").contains("end at probability 1"));
        assert!(err("0:1ms,0.5:2ms,0.5:3ms,1:4ms").contains("increase strictly"));
        assert!(err("0:5ms,1:2ms").contains("must not decrease"));
        assert!(err("0:1ms,1.5:2ms").contains("not in [0, 1]"));
        assert!(err("0=1ms,1:2ms").contains("PROBABILITY:DELAY"));
        assert!(err("0:soon,1:2ms").contains("not a duration"));
    }

    #[test]
    fn quantile_interpolates_between_points() {
        let c = DelayCdf::parse(GENI).unwrap();
        assert_eq!(c.quantile(0.0), 49.5e6);
        assert_eq!(c.quantile(0.75), 52.5e6);
        assert!((c.quantile(0.375) - 51.0e6).abs() < 1.0);
        assert!((c.quantile(0.85) - 71.25e6).abs() < 1.0);
        assert_eq!(c.quantile(1.0), 400e6);
        // a step (equal delays) and a jump (an atom of probability at one delay)
        let s = DelayCdf::parse("0:10ms,0.5:10ms,1:20ms").unwrap();
        assert_eq!(s.quantile(0.25), 10e6);
        assert_eq!(s.quantile(0.75), 15e6);
    }

    #[test]
    fn sampled_quantiles_match_the_configured_cdf() {
        // 200 000 draws: at every configured point, and midway between, the sample's empirical
        // CDF is within 0.004 of the configured probability (binomial sd at most 0.0011), and the
        // sample's p quantile lies between the configured p − 0.004 and p + 0.004 quantiles.
        let c = DelayCdf::parse(GENI).unwrap();
        let mut rng = Rng::new(17);
        let n = 200_000;
        let mut xs: Vec<u64> = (0..n).map(|_| c.sample(&mut rng)).collect();
        xs.sort_unstable();
        assert!(xs[0] >= 49_500_000 && xs[n - 1] <= 400_000_000);
        let ecdf = |d: f64| xs.partition_point(|&x| (x as f64) <= d) as f64 / n as f64;
        let mut probes: Vec<f64> = vec![];
        for w in c.points().windows(2) {
            probes.push(w[1].0);
            probes.push((w[0].0 + w[1].0) / 2.0);
        }
        for p in probes {
            let d = c.quantile(p);
            let f = ecdf(d);
            assert!((f - p).abs() < 0.004, "F({d}) = {f}, configured {p}");
            let q = xs[((p * n as f64) as usize).min(n - 1)] as f64;
            let (lo, hi) = (c.quantile(p - 0.004), c.quantile(p + 0.004));
            assert!(
                lo - 1.0 <= q && q <= hi + 1.0,
                "q({p}) = {q}, configured {lo}..{hi}"
            );
        }
        // the body the GENI study reports: > 75 % within 49.5–52.5 ms
        let body = ecdf(52.5e6);
        assert!((body - 0.75).abs() < 0.004, "body {body}");
    }

    #[test]
    fn a_constant_cdf_is_a_constant_delay() {
        let c = DelayCdf::parse("0:20ms,1:20ms").unwrap();
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| c.sample(&mut rng) == 20_000_000));
    }
}
