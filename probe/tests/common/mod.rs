//! What the integration test binaries share: running `vnb-probe`, waiting for a server's READY
//! line, reading its one JSON object, and one send -> recv run.
#![allow(dead_code)] // each test binary uses its own subset

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_vnb-probe");

/// Start a server subcommand, wait for its READY line, return (child, bound address).
pub fn start_server(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().unwrap();
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("no READY line: {line:?}"))
        .to_string();
    (child, addr)
}

pub fn json_of(out: &Output) -> Value {
    let s = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(s.lines().count(), 1, "stdout must be exactly one line: {s}");
    let v: Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["tool"], "vnb-probe");
    assert!(v["version"].is_string());
    assert!(v["clock"].is_object());
    v
}

pub fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run")
}

pub fn finish(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "server failed: {out:?}");
    json_of(&out)
}

pub fn send_recv(pps: &str, size: &str, dur: &str, extra: &[&str]) -> (Value, Value) {
    send_recv_at("127.0.0.1:0", pps, size, dur, extra)
}

pub fn send_recv_at(
    bind: &str,
    pps: &str,
    size: &str,
    dur: &str,
    extra: &[&str],
) -> (Value, Value) {
    send_recv_with(bind, &["--pps", pps], size, dur, extra)
}

/// One run with the rate given as a bit rate (`--rate`).
pub fn send_recv_rate(rate: &str, size: &str, dur: &str, extra: &[&str]) -> (Value, Value) {
    send_recv_with("127.0.0.1:0", &["--rate", rate], size, dur, extra)
}

/// Start `recv` on 127.0.0.1 waiting for one stream's FIN (30 s at most), with `extra` flags.
pub fn start_recv(extra: &[&str]) -> (Child, String) {
    start_recv_at("127.0.0.1:0", extra)
}

fn start_recv_at(bind: &str, extra: &[&str]) -> (Child, String) {
    let mut args = vec![
        "recv",
        "--bind",
        bind,
        "--expect-streams",
        "1",
        "--duration",
        "30",
        "--json",
    ];
    args.extend_from_slice(extra);
    start_server(&args)
}

/// Start `recv` with `recv_flags` (waits for 1 stream's FIN), run `send --dst <it> --json` with
/// `send_flags`, return both reports.
pub fn send_to_recv(recv_flags: &[&str], send_flags: &[&str]) -> (Value, Value) {
    let (rx, addr) = start_recv(recv_flags);
    let mut args = vec!["send", "--dst", &addr, "--json"];
    args.extend_from_slice(send_flags);
    (json_of(&run(&args)), finish(rx))
}

/// Start `recv` (waits for 1 stream's FIN), run `send` with `rate` flags, return both reports.
fn send_recv_with(
    bind: &str,
    rate: &[&str],
    size: &str,
    dur: &str,
    extra: &[&str],
) -> (Value, Value) {
    let (rx, addr) = start_recv_at(bind, &[]);
    let mut args = vec!["send", "--dst", &addr];
    args.extend_from_slice(rate);
    args.extend_from_slice(&["--size", size, "--duration", dur, "--json"]);
    args.extend_from_slice(extra);
    let s = run(&args);
    assert!(s.status.success(), "{s:?}");
    (json_of(&s), finish(rx))
}

/// A loopback address:port nothing listens at (bound, then released): datagrams to it draw ICMP
/// port unreachable.
pub fn closed_port() -> String {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().to_string()
}
