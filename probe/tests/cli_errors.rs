//! Bad flag values as a user types them: every one gives a non-zero exit and an error line that
//! names the flag and the fix, never a panic or a backtrace. Only loopback addresses are used.

mod common;

use std::net::UdpSocket;
use std::process::Output;

use common::run;

/// The first line of stderr; asserts there is no panic and nothing on stdout.
fn error_line(out: &Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "stdout must stay empty on an error");
    err.lines().next().unwrap_or_default().to_string()
}

fn send(extra: &[&str]) -> Output {
    let mut args = vec!["send", "--dst", "127.0.0.1:9", "--duration", "0.1"];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn negative_values_name_the_flag_and_the_range() {
    // clap read "-5" as an unknown flag ("unexpected argument '-5' found"): no flag, no fix
    let cases: [(&[&str], &str, &str); 5] = [
        (&["--pps", "-5"], "--pps", "(0, 1e9]"),
        (&["--rate", "-1M"], "--rate", "> 0"),
        (&["--pps", "10", "--size", "-18"], "--size", "18..=65507"),
        (
            &["--pps", "10", "--stall-threshold-us", "-1"],
            "--stall-threshold-us",
            "-1",
        ),
        (
            &["--pps", "10", "--fin-count", "-1"],
            "--fin-count",
            "0..=100",
        ),
    ];
    for (extra, flag, fix) in cases {
        let line = error_line(&send(extra), 2);
        assert!(
            line.contains(flag) && line.contains(fix),
            "{extra:?}: {line}"
        );
    }
    let line = error_line(
        &run(&[
            "send",
            "--dst",
            "127.0.0.1:9",
            "--pps",
            "10",
            "--duration",
            "-1",
        ]),
        2,
    );
    assert!(
        line.contains("--duration") && line.contains("> 0"),
        "{line}"
    );
    let line = error_line(
        &run(&["rtt", "--dst", "127.0.0.1:9", "--interval", "-0.01"]),
        2,
    );
    assert!(
        line.contains("--interval") && line.contains("> 0"),
        "{line}"
    );
    let line = error_line(&run(&["cpushare", "--threshold-us", "-5"]), 2);
    assert!(line.contains("--threshold-us"), "{line}");
}

#[test]
fn a_schedule_without_a_packet_is_refused() {
    // --rate 100 is 100 bit/s: 0.69 packets/s of 18 bytes, no packet in 0.1 s. It exited 0 with
    // sent_packets 0: a rate whose unit was forgotten looked like a run that worked.
    let line = error_line(&send(&["--rate", "100"]), 2);
    assert!(
        line.contains("--rate 100") && line.contains("bit/s"),
        "{line}"
    );
    assert!(
        line.contains("100M") && line.contains("--duration"),
        "{line}"
    );
    let line = error_line(&send(&["--pps", "4"]), 2);
    assert!(
        line.contains("--pps 4") && line.contains("--duration"),
        "{line}"
    );
    // one packet is enough: round(0.69 x 1 s) = 1
    let out = run(&[
        "send",
        "--dst",
        "127.0.0.1:9",
        "--rate",
        "100",
        "--duration",
        "1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
    assert_eq!(v["slots_total_packets"], 1);
}

#[test]
fn addresses_need_an_ip_and_a_port() {
    let line = error_line(
        &run(&[
            "send",
            "--dst",
            "localhost:5000",
            "--pps",
            "1",
            "--duration",
            "1",
        ]),
        2,
    );
    assert!(
        line.contains("--dst") && line.contains("127.0.0.1:5000"),
        "{line}"
    );
    let line = error_line(
        &run(&[
            "send",
            "--dst",
            "127.0.0.1",
            "--pps",
            "1",
            "--duration",
            "1",
        ]),
        2,
    );
    assert!(line.contains("--dst") && line.contains(":PORT"), "{line}");
    // port 0 is no destination: the datagrams went nowhere and the run exited 0
    let line = error_line(
        &run(&[
            "send",
            "--dst",
            "127.0.0.1:0",
            "--pps",
            "1",
            "--duration",
            "1",
        ]),
        2,
    );
    assert!(line.contains("--dst") && line.contains("port 0"), "{line}");
    let line = error_line(&run(&["rtt", "--dst", "127.0.0.1:0"]), 2);
    assert!(line.contains("--dst") && line.contains("port 0"), "{line}");
    // a --bind of the other family than --dst
    let line = error_line(
        &run(&[
            "send",
            "--dst",
            "[::1]:9",
            "--bind",
            "127.0.0.1:0",
            "--pps",
            "1",
            "--duration",
            "1",
        ]),
        2,
    );
    assert!(line.contains("--bind") && line.contains("IPv6"), "{line}");
}

#[test]
fn usage_errors_show_the_subcommands_usage() {
    let out = send(&["--pps", "10", "--frame-size", "10"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("Usage: vnb-probe send"), "{err}");
}

#[test]
fn a_port_in_use_names_bind_and_the_fix() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for cmd in ["recv", "echo"] {
        let out = run(&[cmd, "--bind", &addr, "--duration", "0.1"]);
        let line = error_line(&out, 1);
        assert!(line.starts_with("vnb-probe: error: --bind"), "{line}");
        assert!(line.contains("in use") && line.contains(":0"), "{line}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
    let line = error_line(&send(&["--pps", "10", "--bind", &addr]), 1);
    assert!(
        line.starts_with("vnb-probe: error: --bind") && line.contains("in use"),
        "{line}"
    );
    // an address this host does not have
    let line = error_line(
        &run(&["recv", "--bind", "192.0.2.1:5000", "--duration", "0.1"]),
        1,
    );
    assert!(
        line.contains("--bind") && line.contains("not an address of this host"),
        "{line}"
    );
}
