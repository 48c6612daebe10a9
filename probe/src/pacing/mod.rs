//! Pacing: a schedule of send slots anchored to the start (slot k at t0 + k·period, so timer
//! error never accumulates), the skip/catch-up rule after a stall, when to wake for a slot;
//! `sleeper.rs` sleeps until then (absolute clock_nanosleep, a short spin), `choice.rs` picks the
//! default pacing from the rate.

mod choice;
mod sleeper;

pub use choice::*;
pub use sleeper::{wait_realtime, Sleeper, SpinMargin};

/// Slots anchored at `t0` (CLOCK_MONOTONIC ns).
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    /// Time of slot 0.
    pub t0: u64,
    /// Slot period, ns (may be fractional).
    pub period_ns: f64,
    /// Number of slots.
    pub total: u64,
}

impl Schedule {
    /// Time of slot `k`.
    #[inline]
    pub fn slot_time(&self, k: u64) -> u64 {
        self.t0 + (k as f64 * self.period_ns) as u64
    }

    /// Number of slots whose time is <= `now` (capped at `total`).
    #[inline]
    pub fn due_end(&self, now: u64) -> u64 {
        if now < self.t0 {
            return 0;
        }
        let mut k = (((now - self.t0) as f64 / self.period_ns).floor() as u64).saturating_add(1);
        // correct float rounding so that slot_time(k-1) <= now < slot_time(k)
        while k > 0 && self.slot_time(k - 1) > now {
            k -= 1;
        }
        while k < self.total && self.slot_time(k) <= now {
            k += 1;
        }
        k.min(self.total)
    }
}

/// What to do at time `now` when `next` is the first slot not yet handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Overdue slots to skip (counted as missed).
    pub skip: u64,
    /// Slots to send now, starting at `next + skip`.
    pub send: u64,
}

/// The stall rule: slots older than `stall_ns` are overdue; at most `catch_up` of the newest
/// overdue slots are still sent, the rest are skipped. Due slots within `stall_ns` are sent,
/// at most `batch` in one step.
pub fn plan(s: &Schedule, next: u64, now: u64, stall_ns: u64, catch_up: u64, batch: u64) -> Step {
    let due = s.due_end(now);
    if due <= next {
        return Step { skip: 0, send: 0 };
    }
    let overdue_end = if now > stall_ns {
        // slots with time < now - stall_ns
        s.due_end(now - stall_ns - 1).clamp(next, due)
    } else {
        next
    };
    let overdue = overdue_end - next;
    let skip = overdue - overdue.min(catch_up);
    let send = (due - next - skip).min(batch);
    Step { skip, send }
}

/// When to wake for slot `k`: its slot time, or with a quantum the first quantum boundary (on a
/// grid anchored at `t0`) at or after it, so one wake-up sends every slot of the quantum.
#[inline]
pub fn wake_time(s: &Schedule, k: u64, quantum_ns: u64) -> u64 {
    let slot = s.slot_time(k);
    if quantum_ns == 0 {
        return slot;
    }
    s.t0 + (slot - s.t0).div_ceil(quantum_ns) * quantum_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_slots_do_not_drift() {
        let s = Schedule {
            t0: 1_000,
            period_ns: 1e9 / 3.0,
            total: u64::MAX,
        };
        assert_eq!(s.slot_time(0), 1_000);
        assert_eq!(s.slot_time(3), 1_000 + 1_000_000_000);
        assert_eq!(s.slot_time(3_000_000), 1_000 + 1_000_000_000_000_000);
    }

    #[test]
    fn due_end_exact() {
        let s = Schedule {
            t0: 100,
            period_ns: 10.0,
            total: 5,
        };
        assert_eq!(s.due_end(99), 0);
        assert_eq!(s.due_end(100), 1);
        assert_eq!(s.due_end(109), 1);
        assert_eq!(s.due_end(110), 2);
        assert_eq!(s.due_end(10_000), 5);
    }

    #[test]
    fn on_time_sends_one() {
        let s = Schedule {
            t0: 0,
            period_ns: 1000.0,
            total: 100,
        };
        assert_eq!(plan(&s, 5, 5_000, 10_000, 0, 64), Step { skip: 0, send: 1 });
        assert_eq!(plan(&s, 6, 5_999, 10_000, 0, 64), Step { skip: 0, send: 0 });
    }

    #[test]
    fn stall_skips_by_default() {
        // 1 µs period, stalled 50 µs, stall threshold 10 µs: slots 0..39 overdue are skipped
        let s = Schedule {
            t0: 0,
            period_ns: 1000.0,
            total: 1000,
        };
        let st = plan(&s, 0, 50_000, 10_000, 0, 64);
        // due: 0..=50 (51 slots); overdue: time < 40_000 -> 0..=39 (40)
        assert_eq!(st, Step { skip: 40, send: 11 });
    }

    #[test]
    fn catch_up_is_bounded() {
        let s = Schedule {
            t0: 0,
            period_ns: 1000.0,
            total: 1000,
        };
        let st = plan(&s, 0, 50_000, 10_000, 5, 1000);
        assert_eq!(st, Step { skip: 35, send: 16 });
        // batch caps a step
        let st = plan(&s, 0, 50_000, 10_000, 5, 8);
        assert_eq!(st, Step { skip: 35, send: 8 });
    }

    #[test]
    fn end_of_schedule() {
        let s = Schedule {
            t0: 0,
            period_ns: 1000.0,
            total: 10,
        };
        assert_eq!(
            plan(&s, 10, 1_000_000, 10_000, 0, 64),
            Step { skip: 0, send: 0 }
        );
    }

    #[test]
    fn wake_time_per_slot_and_per_quantum() {
        let s = Schedule {
            t0: 1_000,
            period_ns: 10_000.0,
            total: 100,
        };
        assert_eq!(wake_time(&s, 3, 0), 31_000);
        // quantum 50 µs: slots 1..=5 (t0+10..50 µs) wake at t0+50 µs, slot 6 at t0+100 µs
        assert_eq!(wake_time(&s, 0, 50_000), 1_000);
        assert_eq!(wake_time(&s, 1, 50_000), 51_000);
        assert_eq!(wake_time(&s, 5, 50_000), 51_000);
        assert_eq!(wake_time(&s, 6, 50_000), 101_000);
        // a wake-up never precedes its slot and is at most a quantum after it
        for k in 0..100 {
            let w = wake_time(&s, k, 30_000);
            assert!(w >= s.slot_time(k) && w - s.slot_time(k) < 30_000);
            assert_eq!((w - s.t0) % 30_000, 0);
        }
    }

    #[test]
    fn quantum_wake_sends_the_whole_quantum_and_stays_anchored() {
        // 100K pps with a 50 µs quantum: each wake-up on time sends exactly 5 slots, and the
        // slots sent over a long run equal the schedule (no drift, nothing skipped)
        let s = Schedule {
            t0: 0,
            period_ns: 10_000.0,
            total: 100_000,
        };
        let q = 50_000;
        let (mut next, mut sent, mut wakes) = (0u64, 0u64, 0u64);
        while next < s.total {
            let now = wake_time(&s, next, q);
            let st = plan(&s, next, now, 5_000_000, 0, 64);
            assert_eq!(st.skip, 0);
            next += st.send;
            sent += st.send;
            wakes += 1;
        }
        assert_eq!(sent, 100_000);
        // slot 0 alone at t0, then 5 per quantum
        assert_eq!(wakes, 1 + 99_999_u64.div_ceil(5));
    }

    #[test]
    fn stall_in_quantum_mode_still_skips_and_counts() {
        // 100K pps, quantum 50 µs, stall threshold 2 quanta: waking 1 ms late skips the slots
        // older than 100 µs and sends the rest of what is due
        let s = Schedule {
            t0: 0,
            period_ns: 10_000.0,
            total: 1_000,
        };
        let st = plan(&s, 0, 1_000_000, 100_000, 0, 1024);
        // due 0..=100 (101), overdue: time < 900 µs -> 0..=89 (90)
        assert_eq!(st, Step { skip: 90, send: 11 });
    }
}
