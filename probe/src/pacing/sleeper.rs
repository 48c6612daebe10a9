//! Sleeping until an absolute time: clock_nanosleep to a margin before it, then a spin; the
//! margin tracks how late this machine's wake-ups come.

use crate::sys::{self, Clock};

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
    /// signal arrived. False if the deadline had passed already (nothing to wait for).
    pub fn until(&mut self, deadline: u64) -> bool {
        let now = sys::now_ns(self.clock);
        if deadline <= now {
            return false;
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
                break;
            }
            std::hint::spin_loop();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
