//! Clocks and sleeping: clock_gettime (vDSO), clock_getres, absolute clock_nanosleep, the timer
//! slack, adjtimex's sync flag and USER_HZ.

use std::io;
use std::mem::zeroed;

/// Which clock to read.
#[derive(Clone, Copy, Debug)]
pub enum Clock {
    /// CLOCK_REALTIME: wall clock, comparable between hosts whose clocks are synchronised.
    Realtime,
    /// CLOCK_MONOTONIC: for durations and pacing on one host.
    Monotonic,
}

impl Clock {
    fn id(self) -> libc::clockid_t {
        match self {
            Clock::Realtime => libc::CLOCK_REALTIME,
            Clock::Monotonic => libc::CLOCK_MONOTONIC,
        }
    }
}

pub(super) fn ts_to_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

pub(super) fn ns_to_ts(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Current time of `clock` in nanoseconds (vDSO, ~20 ns).
#[inline]
pub fn now_ns(clock: Clock) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec on our stack; the clock id is a constant the
    // kernel always supports, so the call cannot fail.
    unsafe { libc::clock_gettime(clock.id(), &mut ts) };
    ts_to_ns(&ts)
}

/// CLOCK_MONOTONIC in ns.
#[inline]
pub fn mono_ns() -> u64 {
    now_ns(Clock::Monotonic)
}

/// CLOCK_REALTIME in ns since the Unix epoch.
#[inline]
pub fn real_ns() -> u64 {
    now_ns(Clock::Realtime)
}

/// Resolution of `clock` in ns.
pub fn clock_res_ns(clock: Clock) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid writable timespec; clock id is valid.
    unsafe { libc::clock_getres(clock.id(), &mut ts) };
    ts_to_ns(&ts)
}

/// Sleep until `clock` reads `deadline_ns` (absolute, TIMER_ABSTIME). Returns early on a signal
/// (EINTR), so callers re-check their stop flag and loop.
pub fn sleep_until(clock: Clock, deadline_ns: u64) {
    let ts = ns_to_ts(deadline_ns);
    // SAFETY: `ts` is a valid timespec that lives across the call; the remaining-time pointer may
    // be null with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(clock.id(), libc::TIMER_ABSTIME, &ts, std::ptr::null_mut());
    }
}

/// Set this thread's timer slack (PR_SET_TIMERSLACK) so absolute sleeps wake on time.
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long by value; no pointers are involved.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `Some(true)` when the kernel says the clock is synchronised (NTP/PTP), `Some(false)` when it
/// says it is not, `None` if adjtimex failed.
pub fn clock_synchronized() -> Option<bool> {
    // SAFETY: an all-zero timex is valid; with modes == 0 adjtimex only reads.
    let mut tx: libc::timex = unsafe { zeroed() };
    // SAFETY: `tx` is a valid writable timex; modes = 0 means read-only, no privilege needed.
    let r = unsafe { libc::adjtimex(&mut tx) };
    if r < 0 {
        None
    } else {
        Some(r != libc::TIME_ERROR)
    }
}

/// USER_HZ: the unit of /proc/stat.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(b >= a);
        assert!(real_ns() > 1_600_000_000_000_000_000);
    }
}
