//! Release times: for each admitted frame, when it leaves (loss, optional rate with a byte
//! queue, delay + jitter, with or without reordering), and the queue of held frames ordered by
//! release time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::delay::cdf::DelayCdf;
use crate::delay::jitter::{sample_delay_ns, JitterDist};
use crate::delay::loss::{Loss, LossModel};
use crate::delay::rng::Rng;

/// What one direction does to the frames that cross it.
#[derive(Clone, Debug)]
pub struct Impairment {
    /// Constant one-way delay, ns.
    pub delay_ns: u64,
    /// Jitter, ns (uniform half-width, normal standard deviation, or netem pareto scale).
    pub jitter_ns: u64,
    /// Jitter distribution.
    pub dist: JitterDist,
    /// An empirical delay distribution; when set, it gives the whole delay (delay_ns and
    /// jitter_ns are 0).
    pub cdf: Option<DelayCdf>,
    /// May a frame overtake an earlier one (its release time is used as drawn)? If false,
    /// a frame never leaves before the frame ahead of it (release = max(drawn, previous)).
    pub reorder: bool,
    /// Keep a drawn delay for every frame admitted in the next `hold_ns`, then draw a new one
    /// on the first frame after that (0: every frame draws its own delay). A path's delay in
    /// episodes, as a queue makes it, rather than independently per frame.
    pub hold_ns: u64,
    /// Loss model.
    pub loss: LossModel,
    /// Serialisation rate, bits/s (None: unlimited).
    pub rate_bps: Option<f64>,
    /// Bytes that may wait for the rate before new frames are dropped (tail drop).
    pub queue_bytes: u64,
}

impl Impairment {
    /// Frames pass untouched (zero delay, no loss).
    pub fn passthrough() -> Self {
        Impairment {
            delay_ns: 0,
            jitter_ns: 0,
            dist: JitterDist::Uniform,
            cdf: None,
            reorder: false,
            hold_ns: 0,
            loss: LossModel::None,
            rate_bps: None,
            queue_bytes: u64::MAX,
        }
    }
}

/// The fate of a frame at admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Leave at this CLOCK_MONOTONIC time, ns.
    Release(u64),
    /// Dropped by the loss model.
    Lost,
    /// Dropped: the rate queue held `queue_bytes` already.
    QueueFull,
}

/// Decides release times for one direction.
pub struct Scheduler {
    imp: Impairment,
    rng: Rng,
    loss: Loss,
    last_release: u64,
    link_free_at: u64,
    /// The delay drawn last and the arrival time until which it is kept (with `hold_ns` > 0).
    held: Option<(u64, u64)>,
}

impl Scheduler {
    /// A scheduler with its own random sequence.
    pub fn new(imp: Impairment, seed: u64) -> Self {
        let loss = Loss::new(imp.loss);
        Scheduler {
            imp,
            rng: Rng::new(seed),
            loss,
            last_release: 0,
            link_free_at: 0,
            held: None,
        }
    }

    /// The impairment this scheduler applies.
    pub fn impairment(&self) -> &Impairment {
        &self.imp
    }

    /// A new delay, ns: from the empirical distribution, or delay + jitter.
    fn draw_delay(&mut self) -> u64 {
        match &self.imp.cdf {
            Some(cdf) => cdf.sample(&mut self.rng),
            None => sample_delay_ns(
                &mut self.rng,
                self.imp.delay_ns,
                self.imp.jitter_ns,
                self.imp.dist,
            ),
        }
    }

    /// Admit a frame of `len` bytes that arrived at `now` (ns).
    pub fn admit(&mut self, now: u64, len: usize) -> Verdict {
        if self.loss.drop_next(&mut self.rng) {
            return Verdict::Lost;
        }
        let mut sent = now;
        if let Some(rate) = self.imp.rate_bps {
            let backlog_bytes = self.link_free_at.saturating_sub(now) as f64 * rate / 8e9;
            if backlog_bytes + len as f64 > self.imp.queue_bytes as f64 {
                return Verdict::QueueFull;
            }
            let start = now.max(self.link_free_at);
            self.link_free_at = start + (len as f64 * 8e9 / rate).round() as u64;
            sent = self.link_free_at;
        }
        let delay = match self.held {
            _ if self.imp.hold_ns == 0 => self.draw_delay(),
            Some((d, until)) if now < until => d,
            _ => {
                let d = self.draw_delay();
                self.held = Some((d, now.saturating_add(self.imp.hold_ns)));
                d
            }
        };
        let mut release = sent + delay;
        if !self.imp.reorder {
            release = release.max(self.last_release);
        }
        self.last_release = self.last_release.max(release);
        Verdict::Release(release)
    }
}

/// A frame held until its release time.
#[derive(Debug)]
pub struct Held {
    /// Release time, ns.
    pub release: u64,
    /// Arrival order (ties keep it).
    pub seq: u64,
    /// The frame.
    pub frame: Vec<u8>,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.release, self.seq) == (o.release, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.release, self.seq).cmp(&(o.release, o.seq))
    }
}

/// Held frames by release time: a FIFO when release times never decrease (no reordering:
/// O(1)), a binary heap when they may (O(log n)).
pub enum ReleaseQueue {
    /// Release times are non-decreasing in arrival order.
    Fifo(VecDeque<Held>),
    /// Any order.
    Heap(BinaryHeap<Reverse<Held>>),
}

impl ReleaseQueue {
    /// A queue for a direction that does (`reorder`) or does not reorder.
    pub fn new(reorder: bool) -> Self {
        if reorder {
            ReleaseQueue::Heap(BinaryHeap::new())
        } else {
            ReleaseQueue::Fifo(VecDeque::new())
        }
    }

    /// Hold a frame.
    pub fn push(&mut self, h: Held) {
        match self {
            ReleaseQueue::Fifo(q) => {
                debug_assert!(q.back().is_none_or(|b| b.release <= h.release));
                q.push_back(h)
            }
            ReleaseQueue::Heap(q) => q.push(Reverse(h)),
        }
    }

    /// Release time of the next frame to leave.
    pub fn next_release(&self) -> Option<u64> {
        match self {
            ReleaseQueue::Fifo(q) => q.front().map(|h| h.release),
            ReleaseQueue::Heap(q) => q.peek().map(|r| r.0.release),
        }
    }

    /// Take the next frame if its release time is <= `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Held> {
        if self.next_release()? > now {
            return None;
        }
        match self {
            ReleaseQueue::Fifo(q) => q.pop_front(),
            ReleaseQueue::Heap(q) => q.pop().map(|r| r.0),
        }
    }

    /// Number of held frames.
    pub fn len(&self) -> usize {
        match self {
            ReleaseQueue::Fifo(q) => q.len(),
            ReleaseQueue::Heap(q) => q.len(),
        }
    }

    /// True if nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imp(delay: u64, jitter: u64, reorder: bool) -> Impairment {
        Impairment {
            delay_ns: delay,
            jitter_ns: jitter,
            dist: JitterDist::Normal,
            reorder,
            ..Impairment::passthrough()
        }
    }

    fn release(v: Verdict) -> u64 {
        match v {
            Verdict::Release(t) => t,
            other => panic!("expected a release, got {other:?}"),
        }
    }

    #[test]
    fn constant_delay() {
        let mut s = Scheduler::new(imp(50_000_000, 0, false), 1);
        assert_eq!(release(s.admit(1_000, 100)), 50_001_000);
        assert_eq!(release(s.admit(2_000, 100)), 50_002_000);
    }

    #[test]
    fn no_reorder_keeps_order() {
        let mut s = Scheduler::new(imp(10_000_000, 5_000_000, false), 2);
        let mut last = 0;
        for i in 0..10_000u64 {
            let t = release(s.admit(i * 10_000, 64));
            assert!(t >= last);
            last = t;
        }
    }

    #[test]
    fn reorder_uses_drawn_times() {
        let mut s = Scheduler::new(imp(10_000_000, 5_000_000, true), 2);
        let ts: Vec<u64> = (0..10_000u64)
            .map(|i| release(s.admit(i * 10_000, 64)))
            .collect();
        let inversions = ts.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(inversions > 1000, "only {inversions} inversions");
    }

    #[test]
    fn an_empirical_cdf_gives_the_delay_and_keeps_order_unless_reorder() {
        let cdf = DelayCdf::parse("0:10ms,0.9:11ms,1:100ms").unwrap();
        for reorder in [false, true] {
            let mut s = Scheduler::new(
                Impairment {
                    cdf: Some(cdf.clone()),
                    reorder,
                    ..Impairment::passthrough()
                },
                9,
            );
            // one frame every 10 ms: a tail draw (up to 100 ms) holds the frames behind it
            // unless reorder
            let ts: Vec<u64> = (0..5_000u64)
                .map(|i| release(s.admit(i * 10_000_000, 64)))
                .collect();
            let delays: Vec<u64> = ts
                .iter()
                .enumerate()
                .map(|(i, t)| t - i as u64 * 10_000_000)
                .collect();
            assert!(delays
                .iter()
                .all(|d| (10_000_000..=100_000_000).contains(d)));
            let inversions = ts.windows(2).filter(|w| w[1] < w[0]).count();
            let body = delays.iter().filter(|&&d| d <= 11_000_000).count() as f64 / 5e3;
            if reorder {
                assert!(inversions > 100, "{inversions} inversions");
                assert!((body - 0.9).abs() < 0.015, "body {body}");
            } else {
                assert_eq!(inversions, 0);
                assert!(body < 0.85, "body {body}: frames behind a late one wait");
            }
        }
    }

    #[test]
    fn a_held_delay_is_kept_for_every_frame_within_the_hold() {
        let cdf = DelayCdf::parse("0:5ms,1:45ms").unwrap();
        for reorder in [false, true] {
            let mut s = Scheduler::new(
                Impairment {
                    cdf: Some(cdf.clone()),
                    reorder,
                    hold_ns: 100_000_000,
                    ..Impairment::passthrough()
                },
                5,
            );
            // one frame every 1 ms for 1 s: 10 holds of 100 ms, 100 frames each
            let delays: Vec<u64> = (0..1_000u64)
                .map(|i| release(s.admit(i * 1_000_000, 64)) - i * 1_000_000)
                .collect();
            let holds: Vec<&[u64]> = delays.chunks(100).collect();
            for h in &holds {
                // without reorder, the first frames of a hold with a smaller delay wait for the
                // last ones of the previous hold (at most 45 - 5 ms: 40 frames)
                let kept = if reorder { &h[..] } else { &h[40..] };
                assert!(kept.iter().all(|&d| d == h[99]), "{reorder}: {h:?}");
                assert!((5_000_000..=45_000_000).contains(&h[99]));
            }
            // a new draw after each hold
            let mut drawn: Vec<u64> = holds.iter().map(|h| h[99]).collect();
            drawn.dedup();
            assert!(drawn.len() >= 9, "{drawn:?}");
        }
    }

    #[test]
    fn a_hold_starts_at_the_first_frame_after_the_previous_one_ends() {
        let mut s = Scheduler::new(
            Impairment {
                delay_ns: 20_000_000,
                jitter_ns: 10_000_000,
                dist: JitterDist::Uniform,
                reorder: true,
                hold_ns: 1_000,
                ..Impairment::passthrough()
            },
            6,
        );
        let d0 = release(s.admit(0, 64));
        assert_eq!(release(s.admit(999, 64)), d0 + 999);
        // the hold ended at 1000: a frame at 5000 draws anew and holds until 6000
        let d1 = release(s.admit(5_000, 64)) - 5_000;
        assert_ne!(d1, d0, "the same draw twice (seed)");
        assert_eq!(release(s.admit(5_999, 64)) - 5_999, d1);
        assert_ne!(release(s.admit(6_000, 64)) - 6_000, d1);
    }

    #[test]
    fn without_reorder_a_smaller_held_delay_still_keeps_order() {
        let cdf = DelayCdf::parse("0:1ms,1:100ms").unwrap();
        let mut s = Scheduler::new(
            Impairment {
                cdf: Some(cdf),
                hold_ns: 10_000_000,
                ..Impairment::passthrough()
            },
            7,
        );
        let ts: Vec<u64> = (0..10_000u64)
            .map(|i| release(s.admit(i * 100_000, 64)))
            .collect();
        assert!(ts.windows(2).all(|w| w[1] >= w[0]));
    }

    #[test]
    fn rate_serialises_and_tail_drops() {
        // 8 Mbit/s: a 1000-byte frame takes 1 ms; queue of 3000 bytes
        let mut s = Scheduler::new(
            Impairment {
                rate_bps: Some(8e6),
                queue_bytes: 3_000,
                ..Impairment::passthrough()
            },
            3,
        );
        assert_eq!(release(s.admit(0, 1000)), 1_000_000);
        assert_eq!(release(s.admit(0, 1000)), 2_000_000);
        assert_eq!(release(s.admit(0, 1000)), 3_000_000);
        assert_eq!(s.admit(0, 1000), Verdict::QueueFull);
        // after 1.5 ms, 1500 bytes are still queued: one more fits
        assert_eq!(release(s.admit(1_500_000, 1000)), 4_000_000);
    }

    #[test]
    fn loss_is_applied() {
        let mut s = Scheduler::new(
            Impairment {
                loss: LossModel::Random { p: 0.5 },
                ..Impairment::passthrough()
            },
            4,
        );
        let lost = (0..10_000)
            .filter(|_| s.admit(0, 64) == Verdict::Lost)
            .count();
        assert!((4_700..5_300).contains(&lost), "lost {lost}");
    }

    #[test]
    fn queues_release_in_time_order() {
        for reorder in [false, true] {
            let mut q = ReleaseQueue::new(reorder);
            let times: &[u64] = if reorder {
                &[30, 10, 20, 10]
            } else {
                &[10, 10, 20, 30]
            };
            for (i, &t) in times.iter().enumerate() {
                q.push(Held {
                    release: t,
                    seq: i as u64,
                    frame: vec![i as u8],
                });
            }
            assert_eq!(q.len(), 4);
            assert!(q.pop_due(9).is_none());
            let mut out = vec![];
            while let Some(h) = q.pop_due(100) {
                out.push((h.release, h.frame[0]));
            }
            let expect: Vec<(u64, u8)> = if reorder {
                vec![(10, 1), (10, 3), (20, 2), (30, 0)]
            } else {
                vec![(10, 0), (10, 1), (20, 2), (30, 3)]
            };
            assert_eq!(out, expect);
            assert!(q.is_empty());
        }
    }
}
