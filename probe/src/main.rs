//! `vnb-probe` entry point: parse the command line (exit 2 on usage errors), run, print one
//! report (exit 0) or one error line on stderr (exit 1).
#![forbid(unsafe_code)]

use clap::{CommandFactory, Parser};
use vnb_probe::cli::{auto_spin_ns, gso_segments, Cli, Cmd};
use vnb_probe::output::{emit, ClockInfo};
use vnb_probe::pacing::{auto_quantum_ns, auto_send_spin_ns};
use vnb_probe::{cpushare, delay, receiver, rtt, sender};

fn usage_error(msg: String) -> ! {
    Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, msg)
        .exit()
}

fn run(cli: Cli) -> Result<(), String> {
    let clock = ClockInfo::now();
    match cli.cmd {
        Cmd::Send(a) => {
            let v6 = a.dst.is_ipv6();
            let size = match a.frame_size {
                Some(f) => {
                    let over = 14 + 4 + 8 + if v6 { 40 } else { 20 };
                    let p = (f as i64) - over as i64;
                    if !(18..=65507).contains(&p) {
                        usage_error(format!(
                            "--frame-size {f} leaves a UDP payload of {p} bytes; it must be \
                             18..=65507 (frame >= {})",
                            over + 18
                        ));
                    }
                    p as usize
                }
                None => a.size as usize,
            };
            let pps = match (a.pps, a.rate) {
                (Some(p), _) => p,
                (None, Some(r)) => r / (size as f64 * 8.0),
                (None, None) => usage_error("give --pps or --rate".into()),
            };
            let gso_segments = if a.gso {
                gso_segments(size, a.gso_segments).unwrap_or_else(|e| usage_error(e))
            } else {
                1
            };
            let quantum_ns = a
                .pacing_quantum_us
                .map_or_else(|| auto_quantum_ns(1e9 / pps), |u| u.saturating_mul(1000));
            let o = sender::SendOpts {
                dst: a.dst,
                bind: a.bind,
                pps,
                size,
                duration_ns: a.duration,
                stream: a.stream,
                first_seq: a.first_seq,
                catch_up: a.catch_up,
                stall_ns: a.stall_threshold_us.saturating_mul(1000),
                batch: a.batch as usize,
                start_at_ns: a.start_at_ns,
                fin_count: a.fin_count,
                max_spin_ns: a.max_spin_us.map_or_else(
                    || auto_send_spin_ns(1e9 / pps, quantum_ns),
                    |u| u.saturating_mul(1000),
                ),
                quantum_ns,
                quantum_auto: a.pacing_quantum_us.is_none(),
                sndbuf_bytes: a.sndbuf,
                gso: a.gso,
                gso_segments,
                raw: a.raw_iface.map(|iface| sender::RawOut {
                    iface,
                    dst_mac: a.dst_mac.expect("clap: --raw-iface requires --dst-mac"),
                }),
            };
            let r = sender::run(&o)?;
            emit(a.json, "send", &clock, &r);
        }
        Cmd::Recv(a) => {
            let o = receiver::RecvOpts {
                bind: a.bind,
                duration_ns: a.duration,
                idle_timeout_ns: a.idle_timeout,
                expect_streams: a.expect_streams,
                fin_linger_ns: a.fin_linger,
                waiting_time_ns: a.waiting_time,
                trace_bin_ns: a.trace_bin_us.saturating_mul(1000),
                rcvbuf_bytes: a.rcvbuf,
                batch: a.batch as usize,
                busy_poll: a.busy_poll,
            };
            let r = receiver::run(&o)?;
            emit(a.json, "recv", &clock, &r);
        }
        Cmd::Echo(a) => {
            let o = rtt::EchoOpts {
                bind: a.bind,
                duration_ns: a.duration,
                batch: a.batch as usize,
            };
            let r = rtt::run_echo(&o)?;
            emit(a.json, "echo", &clock, &r);
        }
        Cmd::Rtt(a) => {
            let o = rtt::RttOpts {
                dst: a.dst,
                interval_ns: a.interval,
                count: a.count,
                size: a.size as usize,
                wait_ns: a.wait,
                start_at_ns: a.start_at_ns,
                records: !a.no_records,
                max_spin_ns: a.max_spin_us.map_or_else(
                    || auto_spin_ns(a.interval as f64),
                    |u| u.saturating_mul(1000),
                ),
            };
            let r = rtt::run_client(&o)?;
            emit(a.json, "rtt", &clock, &r);
        }
        Cmd::Cpushare(a) => {
            let o = cpushare::CpuOpts {
                duration_ns: a.duration,
                threshold_ns: a.threshold_us.saturating_mul(1000),
                cpu: a.cpu,
                max_gaps: a.max_gaps,
            };
            let r = cpushare::run(&o)?;
            emit(a.json, "cpushare", &clock, &r);
        }
        Cmd::Delay(a) => {
            let o = a.opts().unwrap_or_else(|e| usage_error(e));
            let r = delay::run(&o)?;
            emit(a.json, "delay", &clock, &r);
        }
    }
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("vnb-probe: error: {e}");
        std::process::exit(1);
    }
}
