//! Pacing: a schedule of send slots anchored to the start (slot k at t0 + k·period, so timer
//! error never accumulates), the skip/catch-up rule after a stall, and a sleeper that uses an
//! absolute clock_nanosleep and spins only for the last few microseconds.

use crate::sys::{self, Clock};

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

/// Default pacing of `send`: at slot periods of at least this (<= 20K pps) every packet is sent
/// at its own slot time; at shorter periods the sender batches per [`AUTO_QUANTUM_NS`].
pub const AUTO_BATCH_BELOW_PERIOD_NS: f64 = 50_000.0;
/// The default pacing quantum above 20K pps: one wake-up per 50 µs instead of a spinning core.
pub const AUTO_QUANTUM_NS: u64 = 50_000;

/// Default pacing quantum for a slot period (0: every packet at its own slot time).
pub fn auto_quantum_ns(period_ns: f64) -> u64 {
    if period_ns >= AUTO_BATCH_BELOW_PERIOD_NS {
        0
    } else {
        AUTO_QUANTUM_NS
    }
}

/// Default spin bound for a slot period: spin fully at high rates, else period/20 in 10..=50 µs
/// (this VM's wake-ups are often 10-40 µs late; a shorter spin raises the median lateness from
/// under 1 µs to ~20 µs).
pub fn auto_spin_ns(period_ns: f64) -> u64 {
    if period_ns <= 50_000.0 {
        50_000
    } else {
        ((period_ns / 20.0) as u64).clamp(10_000, 50_000)
    }
}

/// Default busy-wait bound of `send`: none with a quantum (the wake-up only opens a batch whose
/// packets are up to a quantum late anyway), else [`auto_spin_ns`].
pub fn auto_send_spin_ns(period_ns: f64, quantum_ns: u64) -> u64 {
    if quantum_ns > 0 {
        0
    } else {
        auto_spin_ns(period_ns)
    }
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

/// Sleep until CLOCK_REALTIME reaches `t` (for --start-at-ns).
pub fn wait_realtime(t: u64, max_spin_ns: u64) {
    let mut sl = Sleeper::new(Clock::Realtime, max_spin_ns);
    while sys::real_ns() < t && !sys::stop_requested() {
        sl.until(t);
    }
}

/// Sleeps until absolute times with a self-tuning spin margin.
pub struct Sleeper {
    clock: Clock,
    margin_ns: u64,
    min_margin_ns: u64,
    max_margin_ns: u64,
}

impl Sleeper {
    /// `max_spin_ns` bounds the busy-wait before each deadline.
    pub fn new(clock: Clock, max_spin_ns: u64) -> Self {
        // best effort: without it the kernel may add 50 µs of slack to every sleep
        let _ = sys::set_timer_slack_ns(1);
        let min = 2_000.min(max_spin_ns);
        Sleeper {
            clock,
            margin_ns: 10_000.clamp(min, max_spin_ns.max(min)),
            min_margin_ns: min,
            max_margin_ns: max_spin_ns.max(min),
        }
    }

    /// Current spin margin, ns.
    pub fn margin_ns(&self) -> u64 {
        self.margin_ns
    }

    /// Return at (or just after) `deadline` on this sleeper's clock; returns early if a stop
    /// signal arrived.
    pub fn until(&mut self, deadline: u64) {
        let now = sys::now_ns(self.clock);
        if deadline <= now {
            return;
        }
        if deadline - now > self.margin_ns {
            let target = deadline - self.margin_ns;
            sys::sleep_until(self.clock, target);
            let woke = sys::now_ns(self.clock);
            let over = woke.saturating_sub(target);
            // track a high quantile of the wake-up delay: jump up at once, decay slowly
            let want = over + over / 4 + 1_000;
            if want > self.margin_ns {
                self.margin_ns = want.min(self.max_margin_ns);
            } else {
                self.margin_ns -= (self.margin_ns - want) / 64;
            }
            self.margin_ns = self.margin_ns.max(self.min_margin_ns);
        }
        while sys::now_ns(self.clock) < deadline {
            if sys::stop_requested() {
                return;
            }
            std::hint::spin_loop();
        }
    }
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
    fn auto_pacing_per_slot_up_to_20k_pps() {
        // 1K, 8.5K (100 Mbit/s of 1472 B), 10K, 20K pps: every packet at its own slot time
        for pps in [1_000.0, 8_491.8, 10_000.0, 20_000.0] {
            assert_eq!(auto_quantum_ns(1e9 / pps), 0, "{pps} pps");
        }
        // above 20K pps: batches per 50 µs
        for pps in [20_001.0, 100_000.0, 1e6] {
            assert_eq!(auto_quantum_ns(1e9 / pps), AUTO_QUANTUM_NS, "{pps} pps");
        }
    }

    #[test]
    fn auto_spin_is_small_and_off_with_a_quantum() {
        assert_eq!(auto_send_spin_ns(1e6, 0), 50_000); // 1K pps: period/20
        assert_eq!(auto_send_spin_ns(1e5, 0), 10_000); // 10K pps: floor 10 µs
        assert_eq!(auto_send_spin_ns(10_000.0, 0), 50_000); // per slot at 100K: spins
        assert_eq!(auto_send_spin_ns(1e9 / 8_491.8, 0), 10_000);
        assert_eq!(auto_send_spin_ns(10_000.0, 50_000), 0);
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

    #[test]
    fn sleeper_wakes_close() {
        // The property: never before the deadline. How late depends on the machine's load (one
        // preemption on a busy CI runner is milliseconds), so only the median is bounded, loosely.
        let mut sl = Sleeper::new(Clock::Monotonic, 50_000);
        let mut late = Vec::with_capacity(50);
        for _ in 0..50 {
            let d = sys::mono_ns() + 200_000;
            sl.until(d);
            let now = sys::mono_ns();
            assert!(now >= d, "woke {} ns early", d - now);
            late.push(now - d);
        }
        late.sort_unstable();
        assert!(late[25] < 2_000_000, "median lateness {} ns", late[25]);
    }
}
