//! `vnb-probe rtt` and `vnb-probe echo`: their flags, their conversion into options, and their
//! JSON fields.

use std::net::SocketAddr;

use clap::Args;

use crate::pacing::auto_spin_ns;
use crate::rtt::{EchoOpts, RttOpts};
use crate::units::parse_secs;

/// `rtt` fields, shown at the end of `vnb-probe rtt --help`.
pub const RTT_FIELDS: &str = "\
RTT FIELDS
  dst, src                      echo and local address:port
  payload_bytes                 probe UDP payload, bytes
  interval_ns                   probe interval, ns
  sent_packets                  probes sent
  received_packets              distinct replies
  lost_packets, loss_ratio      probes without reply by the end of --wait; lost / sent
  duplicate_packets             extra reply copies
  foreign_packets               datagrams that were not replies to our probes
  unreachable_events            ICMP errors on the socket (nothing listens at --dst's port); lost
  rtt{...}                      RTT minus the echo's processing time, ns
                                (p50_ns is the median)
  server_processing{...}        echo send - echo receive time, ns
  owd_up{...}, owd_down{...}    one-way delays per direction, ns (synchronised clocks only)
  send_lateness{...}            client send time - scheduled time, ns
  start_at_realtime_ns          --start-at-ns value, null if not given
  start_lateness_ns             first send - start_at, ns
  cpu_user_ns, cpu_system_ns    CPU time of the client, ns
  records[]                     one per probe (null with --no-records):
    seq, send_realtime_ns, send_lateness_ns, lost, rtt_ns, server_processing_ns, owd_up_ns,
    owd_down_ns, duplicates     (rtt/processing/owd null when lost)";

/// `echo` fields, shown at the end of `vnb-probe echo --help`.
pub const ECHO_FIELDS: &str = "\
ECHO FIELDS (printed when echo stops: --duration or SIGINT/SIGTERM)
  bind                          bound address:port (READY <addr:port> went to stderr)
  stop_reason                   duration | signal
  elapsed_ns                    READY to stop, ns
  requests_packets              valid RTT requests
  replies_packets               replies sent
  foreign_packets               datagrams that were not RTT requests (never answered)
  send_errors                   replies the kernel refused
  clients                       distinct client address:port (counted up to 65536)
  cpu_user_ns, cpu_system_ns    CPU time of the echo, ns";

/// `rtt` arguments.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct RttArgs {
    /// Echo ADDR:PORT.
    #[arg(long, value_parser = crate::units::parse_dst)]
    pub dst: SocketAddr,
    /// Interval between probes, seconds (send times anchored to the start).
    #[arg(long, value_parser = parse_secs, default_value = "0.01")]
    pub interval: u64,
    /// Number of probes.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub count: u64,
    /// Probe UDP payload, bytes (>= 34; the echo answers with the same size).
    #[arg(long, default_value_t = 34, value_parser = clap::value_parser!(u32).range(34..=65507))]
    pub size: u32,
    /// Seconds to wait for replies after the last probe; later replies count as lost.
    #[arg(long, value_parser = parse_secs, default_value = "1")]
    pub wait: u64,
    /// Start at this CLOCK_REALTIME instant (ns since the epoch).
    #[arg(long)]
    pub start_at_ns: Option<u64>,
    /// Leave out the per-probe records.
    #[arg(long)]
    pub no_records: bool,
    /// Busy-wait at most this many µs before each send time. Default: interval/20 within
    /// 10..=50 µs (50 at intervals up to 50 µs).
    #[arg(long)]
    pub max_spin_us: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `echo` arguments.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct EchoArgs {
    /// ADDR:PORT to bind (port 0: any; the bound address is in the READY line).
    #[arg(long, value_parser = crate::units::parse_addr)]
    pub bind: SocketAddr,
    /// Stop after S seconds (default: run until SIGINT/SIGTERM, then print the report).
    #[arg(long, value_parser = parse_secs)]
    pub duration: Option<u64>,
    /// Datagrams per recvmmsg/sendmmsg call at most.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl RttArgs {
    /// The client's options.
    pub fn opts(&self) -> RttOpts {
        RttOpts {
            dst: self.dst,
            interval_ns: self.interval,
            count: self.count,
            size: self.size as usize,
            wait_ns: self.wait,
            start_at_ns: self.start_at_ns,
            records: !self.no_records,
            max_spin_ns: self.max_spin_us.map_or_else(
                || auto_spin_ns(self.interval as f64),
                |u| u.saturating_mul(1000),
            ),
        }
    }
}

impl EchoArgs {
    /// The echo's options.
    pub fn opts(&self) -> EchoOpts {
        EchoOpts {
            bind: self.bind,
            duration_ns: self.duration,
            batch: self.batch as usize,
        }
    }
}
