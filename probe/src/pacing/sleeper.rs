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

/// How long before a deadline to stop sleeping and start spinning: a high quantile of how late
/// this machine's timed wake-ups come (up at once, down slowly), within 2 µs..`max_spin_ns`.
/// The sender's sleeper and the delay node's ppoll waits use it.
#[derive(Clone, Copy, Debug)]
pub struct SpinMargin {
    ns: u64,
    min: u64,
    max: u64,
}

impl SpinMargin {
    /// Start at 10 µs, bounded by `max_spin_ns`.
    pub fn new(max_spin_ns: u64) -> Self {
        SpinMargin {
            ns: 10_000.min(max_spin_ns),
            min: 2_000.min(max_spin_ns),
            max: max_spin_ns,
        }
    }

    /// The current margin, ns.
    pub fn ns(&self) -> u64 {
        self.ns
    }

    /// A timed wake-up came `late_ns` after its target.
    pub fn observe(&mut self, late_ns: u64) {
        let want = late_ns + late_ns / 4 + 1_000;
        if want > self.ns {
            self.ns = want.min(self.max);
        } else {
            self.ns -= (self.ns - want) / 64;
        }
        self.ns = self.ns.max(self.min);
    }
}

/// Sleeps until absolute times: clock_nanosleep to a [`SpinMargin`] before, then spins.
pub struct Sleeper {
    clock: Clock,
    margin: SpinMargin,
}

impl Sleeper {
    /// `max_spin_ns` bounds the busy-wait before each deadline.
    pub fn new(clock: Clock, max_spin_ns: u64) -> Self {
        // best effort: without it the kernel may add 50 µs of slack to every sleep
        let _ = sys::set_timer_slack_ns(1);
        Sleeper {
            clock,
            margin: SpinMargin::new(max_spin_ns),
        }
    }

    /// Current spin margin, ns.
    pub fn margin_ns(&self) -> u64 {
        self.margin.ns()
    }

    /// Return at (or just after) `deadline` on this sleeper's clock; returns early if a stop
    /// signal arrived. False if the deadline had passed already (nothing to wait for).
    pub fn until(&mut self, deadline: u64) -> bool {
        let now = sys::now_ns(self.clock);
        if deadline <= now {
            return false;
        }
        if deadline - now > self.margin.ns() {
            let target = deadline - self.margin.ns();
            sys::sleep_until(self.clock, target);
            self.margin
                .observe(sys::now_ns(self.clock).saturating_sub(target));
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
