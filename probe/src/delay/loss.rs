//! Loss models: independent (Bernoulli) loss and the bursty two-state Gilbert–Elliott model.

use crate::delay::rng::Rng;

/// How frames are chosen for loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    /// Nothing is lost.
    None,
    /// Each frame is lost with probability `p`, independently.
    Random {
        /// Loss probability.
        p: f64,
    },
    /// Two states: Good (loss `k`) and Bad (loss `h`); Good -> Bad with probability `p`,
    /// Bad -> Good with `r`, evaluated once per frame. Mean loss = (r·k + p·h) / (p + r).
    GilbertElliott {
        /// P(Good -> Bad) per frame.
        p: f64,
        /// P(Bad -> Good) per frame (mean time in Bad = 1/r frames).
        r: f64,
        /// Loss probability in Good.
        k: f64,
        /// Loss probability in Bad.
        h: f64,
    },
}

impl LossModel {
    /// Gilbert–Elliott with no loss in Good and full loss in Bad (the simple Gilbert model),
    /// tuned to a mean loss `ratio` with loss bursts of `burst` frames on average.
    pub fn bursty(ratio: f64, burst: f64) -> Result<Self, String> {
        if !(0.0..1.0).contains(&ratio) {
            return Err(format!("loss {ratio} must be in [0, 1)"));
        }
        if burst < 1.0 || !burst.is_finite() {
            return Err(format!("mean loss burst {burst} must be >= 1 frame"));
        }
        let r = 1.0 / burst;
        // stationary P(Bad) = p / (p + r) = ratio
        let p = ratio * r / (1.0 - ratio);
        Ok(LossModel::GilbertElliott {
            p,
            r,
            k: 0.0,
            h: 1.0,
        })
    }

    /// The mean loss ratio the model converges to.
    pub fn mean(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Random { p } => p,
            LossModel::GilbertElliott { p, r, k, h } => {
                if p + r == 0.0 {
                    k
                } else {
                    (r * k + p * h) / (p + r)
                }
            }
        }
    }
}

/// A loss model with its state (one per direction).
#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    bad: bool,
}

impl Loss {
    /// Start in the Good state.
    pub fn new(model: LossModel) -> Self {
        Loss { model, bad: false }
    }

    /// Decide for the next frame: true = drop it.
    #[inline]
    pub fn drop_next(&mut self, rng: &mut Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random { p } => rng.chance(p),
            LossModel::GilbertElliott { p, r, k, h } => {
                self.bad = if self.bad {
                    !rng.chance(r)
                } else {
                    rng.chance(p)
                };
                rng.chance(if self.bad { h } else { k })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: LossModel, n: usize) -> Vec<bool> {
        let mut rng = Rng::new(99);
        let mut l = Loss::new(model);
        (0..n).map(|_| l.drop_next(&mut rng)).collect()
    }

    fn bursts(v: &[bool]) -> Vec<usize> {
        let mut out = vec![];
        let mut cur = 0;
        for &d in v {
            if d {
                cur += 1;
            } else if cur > 0 {
                out.push(cur);
                cur = 0;
            }
        }
        out
    }

    #[test]
    fn none_never_drops() {
        assert!(run(LossModel::None, 10_000).iter().all(|d| !d));
    }

    #[test]
    fn random_rate_and_independence() {
        let v = run(LossModel::Random { p: 0.01 }, 1_000_000);
        let ratio = v.iter().filter(|&&d| d).count() as f64 / v.len() as f64;
        assert!((ratio - 0.01).abs() < 0.0005, "ratio {ratio}");
        // independent: mean burst length 1/(1-p) ~ 1.01
        let b = bursts(&v);
        let mean = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!(mean < 1.05, "mean burst {mean}");
    }

    #[test]
    fn gilbert_elliott_rate_and_bursts() {
        let m = LossModel::bursty(0.01, 5.0).unwrap();
        assert!((m.mean() - 0.01).abs() < 1e-12);
        let v = run(m, 2_000_000);
        let ratio = v.iter().filter(|&&d| d).count() as f64 / v.len() as f64;
        assert!((ratio - 0.01).abs() < 0.001, "ratio {ratio}");
        let b = bursts(&v);
        let mean = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!((mean - 5.0).abs() < 0.3, "mean burst {mean}");
    }

    #[test]
    fn gilbert_elliott_general_mean() {
        let m = LossModel::GilbertElliott {
            p: 0.05,
            r: 0.2,
            k: 0.01,
            h: 0.5,
        };
        let v = run(m, 1_000_000);
        let ratio = v.iter().filter(|&&d| d).count() as f64 / v.len() as f64;
        assert!((ratio - m.mean()).abs() < 0.003, "{ratio} vs {}", m.mean());
    }

    #[test]
    fn bursty_rejects_bad_input() {
        assert!(LossModel::bursty(1.0, 2.0).is_err());
        assert!(LossModel::bursty(0.1, 0.5).is_err());
    }
}
