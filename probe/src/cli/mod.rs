//! The command line: one file per subcommand with its clap flags, their conversion into that
//! command's options (the options type lives beside the command it drives) and the JSON fields
//! its `--help` documents; `parse.rs` holds the value parsers they share. Nothing below `cli`
//! imports it: the command line depends on the commands, never the reverse.

mod cpushare;
mod delay;
mod recv;
mod rtt;
mod send;

use clap::{CommandFactory, Parser, Subcommand};

pub use cpushare::CpuArgs;
pub use delay::DelayArgs;
pub use recv::RecvArgs;
pub use rtt::{EchoArgs, RttArgs};
pub use send::{gso_segments, SendArgs, GSO_MAX_MESSAGE_BYTES, GSO_MAX_SEGMENTS};

use crate::output::{emit, ClockInfo};

/// Fields common to every report, shown at the end of every subcommand's `--help`.
const COMMON: &str = "\
JSON OUTPUT (--json prints exactly one JSON object on stdout; units are in the names:
_ns nanoseconds, _bps bits/s, _pps packets/s, _bytes bytes, _packets packets, _ratio in [0,1];
every *_realtime_ns is CLOCK_REALTIME ns since the Unix epoch)
  tool                          \"vnb-probe\"
  version                       vnb-probe version
  build                         \"release\" (optimised) or \"debug\" (unoptimised: slower user-space work)
  command                       subcommand name
  clock.timestamps              \"CLOCK_REALTIME\": the clock of packet and *_realtime_ns stamps
  clock.durations               \"CLOCK_MONOTONIC\": the clock of durations and pacing
  clock.clocksource             kernel clocksource (tsc, kvm-clock, ...), null if unreadable
  clock.realtime_resolution_ns  CLOCK_REALTIME resolution, ns
  clock.monotonic_resolution_ns CLOCK_MONOTONIC resolution, ns
  clock.synchronized            kernel NTP/PTP sync flag (adjtimex), null if unknown
  clock.start_realtime_ns       CLOCK_REALTIME at command start, ns
  clock.start_monotonic_ns      CLOCK_MONOTONIC at command start, ns
A distribution object ({...}) has: count, min_ns, mean_ns, p50_ns (median), p90_ns, p99_ns,
p999_ns, max_ns, stddev_ns (unsigned, e.g. send_lateness, rtt) or count, min_ns, p1_ns, p50_ns,
p99_ns, max_ns, mean_ns, stddev_ns (signed, e.g. ipdv, owd); values are null when count is 0.
min and max are exact, percentiles are HdrHistogram values within 0.1 %.
EXIT CODES: 0 ok, 2 usage error, 1 runtime failure (one line on stderr).";

/// `--version`: an unoptimised build says so, and vnetbench stores that beside every run's results.
#[cfg(debug_assertions)]
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (debug build)");
#[cfg(not(debug_assertions))]
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn help(specific: &str) -> String {
    format!("{specific}\n\n{COMMON}")
}

/// vnetbench's native data-plane probe: constant-rate UDP with per-packet sequence numbers and
/// timestamps, exact loss/duplicate/reorder accounting, isochronous RTT, CPU share.
#[derive(Parser, Debug)]
#[command(name = "vnb-probe", version = VERSION, propagate_version = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Send constant-rate UDP (slots anchored to the start; FIN with the exact count at the end).
    #[command(after_long_help = help(send::FIELDS))]
    Send(SendArgs),
    /// Receive vnb-probe streams: loss, duplicates, reordering, jitter, IPDV, trace, OWD.
    #[command(after_long_help = help(recv::FIELDS))]
    Recv(RecvArgs),
    /// Answer RTT probes (many clients; garbage is counted, never answered).
    #[command(after_long_help = help(rtt::ECHO_FIELDS))]
    Echo(EchoArgs),
    /// Isochronous RTT probes to an echo; the echo's processing time is removed.
    #[command(after_long_help = help(rtt::RTT_FIELDS))]
    Rtt(RttArgs),
    /// Timestamp loop: gaps reveal time off the CPU; estimated CPU share vs /proc/stat steal.
    #[command(after_long_help = help(cpushare::FIELDS))]
    Cpushare(CpuArgs),
    /// Delay node: forward frames between two interfaces with delay, jitter, loss, rate.
    #[command(after_long_help = help(delay::FIELDS))]
    Delay(DelayArgs),
}

/// Exit 2 with clap's usage-error format (`error: ...`, the subcommand's usage line, `--help`
/// hint).
fn usage_error(sub: &str, msg: String) -> ! {
    let mut cli = Cli::command();
    cli.build(); // gives the subcommand its full name for the usage line: "vnb-probe send"
    match cli.find_subcommand_mut(sub) {
        Some(cmd) => cmd
            .error(clap::error::ErrorKind::ValueValidation, msg)
            .exit(),
        None => cli
            .error(clap::error::ErrorKind::ValueValidation, msg)
            .exit(),
    }
}

/// Run the subcommand and print its report; Err is a runtime failure (exit 1).
pub fn run(cli: Cli) -> Result<(), String> {
    let clock = ClockInfo::now();
    match cli.cmd {
        Cmd::Send(a) => {
            let o = a.opts().unwrap_or_else(|e| usage_error("send", e));
            emit(a.json, "send", &clock, &crate::send::run(&o)?);
        }
        Cmd::Recv(a) => emit(a.json, "recv", &clock, &crate::recv::run(&a.opts())?),
        Cmd::Echo(a) => emit(a.json, "echo", &clock, &crate::rtt::run_echo(&a.opts())?),
        Cmd::Rtt(a) => emit(a.json, "rtt", &clock, &crate::rtt::run_client(&a.opts())?),
        Cmd::Cpushare(a) => emit(
            a.json,
            "cpushare",
            &clock,
            &crate::cpushare::run(&a.opts())?,
        ),
        Cmd::Delay(a) => {
            let o = a.opts().unwrap_or_else(|e| usage_error("delay", e));
            emit(a.json, "delay", &clock, &crate::delay::run(&o)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
