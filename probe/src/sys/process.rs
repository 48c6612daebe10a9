//! The process and its threads: CPU time (getrusage), CPU affinity, SCHED_FIFO, and the
//! SIGINT/SIGTERM flag every command's loop checks.

use std::io;
use std::mem::{size_of, zeroed};
use std::sync::atomic::{AtomicBool, Ordering};

/// (user, system) CPU time of this process in ns.
pub fn rusage_self_ns() -> (u64, u64) {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { zeroed() };
    // SAFETY: `ru` is a valid writable rusage; RUSAGE_SELF is always accepted.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Pin the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "cpu index too large",
        ));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET writes inside it (index checked
    // above); sched_setaffinity reads `size_of::<cpu_set_t>()` bytes from a valid pointer.
    let r = unsafe {
        let mut set: libc::cpu_set_t = zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Run the calling thread under SCHED_FIFO at `priority` (1..=99; needs root or CAP_SYS_NICE):
/// it then preempts ordinary tasks as soon as it wakes up.
pub fn set_fifo_priority(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that lives across the call; pid 0 = this thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Install SIGINT/SIGTERM handlers that set a flag (without SA_RESTART, so blocking calls return
/// EINTR and the loops notice at once). The probe then finishes and prints its report.
pub fn install_stop_handler() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: an all-zero sigaction is valid; we set a handler with the C ABI that only does
        // an atomic store; sigemptyset initialises the mask we own; the old-action pointer may be
        // null.
        unsafe {
            let mut sa: libc::sigaction = zeroed();
            sa.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True once SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}
