//! `rtt` and `echo`: isochronous round-trip probes in irtt's model. Each probe carries its seq
//! and the client's send time; the echo stamps its kernel receive time and its send time, so
//! its processing time is removed from the RTT.

mod client;
mod echo;

pub use client::{run_client, ProbeRecord, RttOpts, RttReport};
pub use echo::{run_echo, EchoOpts, EchoReport};
