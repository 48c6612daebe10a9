//! The default pacing of `send`: quantum, sendmmsg batch and spin, chosen from the rate the user
//! asked for. Pure functions; every flag that sets one of them explicitly wins.
//!
//! What a wake-up costs decides it. On this machine (a KVM guest) one timer wake-up costs the
//! sender ≈ 15–20 µs of CPU (arming the TSC-deadline timer and the interrupt are VM exits, plus
//! two context switches), more than sending a datagram (≈ 3–6 µs incl. the peer's receive
//! softirq on veth). So a sender that wakes for every packet pays 3–5× a packet's cost in
//! timers, while one that wakes once per quantum sends that quantum's packets back to back — a
//! burst. iperf3 paces with a 1 ms timer: a burst of 1 ms of packets, two syscalls per packet.
//!
//! - **`--pps N`** asks for a *packet schedule* (packet-rate sweeps, jitter, IPDV: the spacing is
//!   what is measured). Up to 20 000 packets/s (slot period ≥ 50 µs) every packet leaves at its
//!   own slot time (an absolute sleep, then a spin of period/20 within 10..=50 µs): bursts of 1,
//!   lateness ≈ the timer's error. Above, one wake-up per 64 packets — a wake-up then costs < 10 %
//!   of the packets it sends — but at least one per ms: bursts of 64 packets, lateness ≤ the
//!   quantum (≤ 1 ms, i.e. never burstier than iperf3).
//! - **`--rate B`** asks for a *bit rate*, as iperf3's `-b` does, and gets iperf3's pacing: one
//!   wake-up per 1 ms sends everything due (one sendmmsg), no spin. Same bursts as iperf3, less
//!   CPU (one syscall per burst instead of two per packet). Below 1 000 packets/s every packet is
//!   alone in its millisecond anyway and is sent at its slot time.
//! - The sendmmsg batch holds twice the packets due per wake-up (64..=1024): a wake-up late by
//!   up to a quantum still sends in one call.

use serde::Serialize;

/// How the rate was given; the default pacing depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateGiven {
    /// `--pps`: a packet schedule.
    Pps,
    /// `--rate`: a bit rate, like iperf3's `-b`.
    Bps,
}

/// iperf3's pacing timer (`--pacing-timer`, default 1000 µs): the coarsest default quantum.
pub const IPERF3_PACING_NS: u64 = 1_000_000;
/// With `--pps`, slot periods of at least this (≤ 20 000 packets/s) are paced per packet.
pub const PER_SLOT_MIN_PERIOD_NS: f64 = 50_000.0;
/// With `--pps` above 20 000 packets/s, packets per wake-up the quantum aims at.
pub const PACKETS_PER_WAKEUP: f64 = 64.0;
/// sendmmsg batch bounds, packets (messages with GSO).
pub const MIN_BATCH: usize = 64;
/// See [`MIN_BATCH`].
pub const MAX_BATCH: usize = 1024;

/// Default quantum, ns (0: every packet at its own slot time).
pub fn default_quantum_ns(pps: f64, given: RateGiven) -> u64 {
    let period_ns = 1e9 / pps;
    match given {
        RateGiven::Pps if period_ns >= PER_SLOT_MIN_PERIOD_NS => 0,
        RateGiven::Pps => ((PACKETS_PER_WAKEUP * period_ns) as u64).min(IPERF3_PACING_NS),
        RateGiven::Bps if period_ns >= IPERF3_PACING_NS as f64 => 0,
        RateGiven::Bps => IPERF3_PACING_NS,
    }
}

/// Default sendmmsg batch: twice the packets due per wake-up, within 64..=1024.
pub fn default_batch(pps: f64, quantum_ns: u64) -> usize {
    let per_wakeup = (quantum_ns as f64 * pps / 1e9).ceil().max(1.0);
    ((2.0 * per_wakeup) as usize).clamp(MIN_BATCH, MAX_BATCH)
}

/// Spin bound for a slot period: period/20 within 10..=50 µs, 50 µs at periods ≤ 50 µs (this
/// VM's wake-ups are often 10-40 µs late; a shorter spin raises the median lateness from under
/// 1 µs to ~20 µs). Also the default of `rtt`.
pub fn auto_spin_ns(period_ns: f64) -> u64 {
    if period_ns <= 50_000.0 {
        50_000
    } else {
        ((period_ns / 20.0) as u64).clamp(10_000, 50_000)
    }
}

/// Default busy-wait bound of `send`: only a `--pps` schedule paced per packet spins, period/20
/// within 10..=50 µs (a quantum's packets are up to a quantum late anyway; a bit rate asks for
/// no more than iperf3 does).
pub fn default_spin_ns(pps: f64, quantum_ns: u64, given: RateGiven) -> u64 {
    if quantum_ns == 0 && given == RateGiven::Pps {
        ((1e9 / pps / 20.0) as u64).clamp(10_000, 50_000)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MBIT100_1472B: f64 = 100e6 / (1472.0 * 8.0); // 8 491.8 packets/s

    #[test]
    fn a_packet_schedule_is_paced_per_packet_up_to_20k() {
        // 1K, 8.5K (100 Mbit/s of 1472 B), 10K, 20K packets/s: slot periods 1 ms .. 50 µs
        for pps in [1_000.0, MBIT100_1472B, 10_000.0, 20_000.0] {
            assert_eq!(default_quantum_ns(pps, RateGiven::Pps), 0, "{pps} pps");
        }
        // spin: period/20 within 10..50 µs: 1K -> 50 µs, 10K -> 10 µs (5 µs raised to the floor),
        // 20K -> 10 µs (a 50 µs spin there would spin the whole period: a core at 100 %)
        assert_eq!(default_spin_ns(1_000.0, 0, RateGiven::Pps), 50_000);
        assert_eq!(default_spin_ns(10_000.0, 0, RateGiven::Pps), 10_000);
        assert_eq!(default_spin_ns(20_000.0, 0, RateGiven::Pps), 10_000);
        assert_eq!(default_batch(10_000.0, 0), 64); // one packet per wake-up: the floor
    }

    #[test]
    fn a_fast_packet_schedule_wakes_once_per_64_packets_at_most_every_ms() {
        // 64 periods, capped at iperf3's 1 ms: 20 001 pps -> 3.2 ms -> 1 ms (20 per wake-up),
        // 100K -> 640 µs, 300K -> 213.3 µs, 1M -> 64 µs
        assert_eq!(
            default_quantum_ns(20_001.0, RateGiven::Pps),
            IPERF3_PACING_NS
        );
        assert_eq!(default_quantum_ns(100_000.0, RateGiven::Pps), 640_000);
        assert_eq!(default_quantum_ns(300_000.0, RateGiven::Pps), 213_333);
        assert_eq!(default_quantum_ns(1e6, RateGiven::Pps), 64_000);
        // no spin with a quantum; a batch of 2 x 64 holds a wake-up one quantum late
        assert_eq!(default_spin_ns(100_000.0, 640_000, RateGiven::Pps), 0);
        assert_eq!(default_batch(100_000.0, 640_000), 128);
        assert_eq!(default_batch(300_000.0, 213_333), 128);
    }

    #[test]
    fn a_bit_rate_is_paced_like_iperf3() {
        // 100 Mbit/s of 1472 B: one wake-up per ms, ~8.5 packets each, batch at its floor
        let q = default_quantum_ns(MBIT100_1472B, RateGiven::Bps);
        assert_eq!(q, IPERF3_PACING_NS);
        assert_eq!(default_spin_ns(MBIT100_1472B, q, RateGiven::Bps), 0);
        assert_eq!(default_batch(MBIT100_1472B, q), 64);
        // 1 Gbit/s of 1472 B (84 918 pps): 85 per ms -> batch 170
        assert_eq!(default_batch(1e9 / (1472.0 * 8.0), q), 170);
        // 43.2 Mbit/s of 18 B = 300K pps: 300 per ms -> 600; 1M pps: capped at 1024
        assert_eq!(default_batch(300_000.0, q), 600);
        assert_eq!(default_batch(1e6, q), MAX_BATCH);
        // below 1 000 pps every packet is alone in its ms: sent at its slot, without a spin
        assert_eq!(default_quantum_ns(999.0, RateGiven::Bps), 0);
        assert_eq!(default_spin_ns(999.0, 0, RateGiven::Bps), 0);
        assert_eq!(default_quantum_ns(1_000.0, RateGiven::Bps), 0); // period exactly 1 ms
        assert_eq!(
            default_quantum_ns(1_001.0, RateGiven::Bps),
            IPERF3_PACING_NS
        );
    }

    #[test]
    fn never_burstier_than_iperf3() {
        // at any rate, either way of giving it, the default quantum is at most 1 ms
        for pps in [
            1.0, 999.0, 1e3, 8_491.8, 1e4, 2e4, 2.1e4, 6.4e4, 1e5, 3e5, 1e6, 1e9,
        ] {
            for given in [RateGiven::Pps, RateGiven::Bps] {
                assert!(
                    default_quantum_ns(pps, given) <= IPERF3_PACING_NS,
                    "{pps} {given:?}"
                );
            }
        }
    }
}
