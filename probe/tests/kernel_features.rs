//! Tests that need a kernel feature or a privilege a machine may lack (AF_PACKET, UDP GSO, IPv6
//! loopback). Each checks what it needs first; when it is missing, the test is reported as
//! *ignored with the reason* (`test NAME ... ignored (REASON)`), never counted as passed. Any
//! other failure of the check is a failure.
//!
//! A custom harness (libtest-mimic, `harness = false` in Cargo.toml): the standard one can only
//! ignore a test at compile time.

mod common;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use vnb_probe::sys::{self, packet_socket, set_udp_segment, RxRing};

use common::send_recv_at;

type Outcome = Result<Completion, Failed>;

fn main() {
    let args = Arguments::from_args();
    let tests = vec![
        Trial::ignorable_test("rx_ring_delivers_frames_with_kernel_timestamps", rx_ring),
        Trial::ignorable_test("udp_segment_cuts_one_send_into_datagrams", udp_segment),
        Trial::ignorable_test(
            "ipv6_loopback_counts_exactly_with_and_without_gso",
            ipv6_loopback,
        ),
        Trial::ignorable_test(
            "a_payload_above_the_path_mtu_is_refused_naming_size",
            payload_above_mtu,
        ),
    ];
    libtest_mimic::run(&args, tests).exit();
}

/// Ok(None) when the error means "not permitted here" (missing capability), else the error.
fn permission_denied(e: io::Error) -> Result<(), Failed> {
    match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => Ok(()),
        _ => Err(format!("unexpected error: {e}").into()),
    }
}

fn rx_ring() -> Outcome {
    let sock = match packet_socket("lo", true) {
        Ok(s) => s,
        Err(e) => {
            permission_denied(e)?;
            return Ok(Completion::ignored_with(
                "no AF_PACKET socket on lo: needs CAP_NET_RAW (run as root)",
            ));
        }
    };
    let mut ring = RxRing::new(&sock, 1 << 16, 4, 1522, 1)?;
    let rx = UdpSocket::bind("127.0.0.1:0")?;
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    let marker = b"vnb-rx-ring-test-marker";
    let t0 = sys::real_ns();
    for _ in 0..3 {
        tx.send_to(marker, rx.local_addr()?)?;
    }
    // the frames come within a block's retire time (1 ms); wait up to 2 s on a loaded machine
    let (mut seen, deadline) = (0, sys::mono_ns() + 2_000_000_000);
    while seen < 3 && sys::mono_ns() < deadline {
        let got = ring.next_block(|frame, ts, truncated| {
            if frame.windows(marker.len()).any(|w| w == marker) {
                assert!(!truncated);
                assert!(
                    ts >= t0 - 1_000_000 && ts <= sys::real_ns(),
                    "timestamp {ts} vs {t0}"
                );
                // Ethernet (14) + IPv4 (20) + UDP (8) + payload
                assert_eq!(frame.len(), 14 + 20 + 8 + marker.len());
                seen += 1;
            }
        });
        if got.is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert_eq!(seen, 3);
    Ok(Completion::Completed)
}

fn udp_segment() -> Outcome {
    let rx = UdpSocket::bind("127.0.0.1:0")?;
    rx.set_read_timeout(Some(Duration::from_millis(500)))?;
    let tx = UdpSocket::bind("127.0.0.1:0")?;
    tx.connect(rx.local_addr()?)?;
    if let Err(e) = set_udp_segment(&tx, 100) {
        if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
            return Ok(Completion::ignored_with(
                "this kernel has no UDP GSO (UDP_SEGMENT, Linux >= 4.18)",
            ));
        }
        return Err(format!("setsockopt UDP_SEGMENT: {e}").into());
    }
    // one send of 3 x 100 + 40 bytes: four datagrams, the last one short
    let msg: Vec<u8> = (0..340u32).map(|i| (i / 100) as u8).collect();
    assert_eq!(tx.send(&msg)?, 340);
    let mut buf = [0u8; 2048];
    for (i, want) in [100, 100, 100, 40].into_iter().enumerate() {
        let n = rx.recv(&mut buf)?;
        assert_eq!(n, want);
        assert!(buf[..n].iter().all(|&b| b as usize == i));
    }
    // a send of at most one segment stays one datagram; 0 turns GSO off
    assert_eq!(tx.send(&[9u8; 60])?, 60);
    assert_eq!(rx.recv(&mut buf)?, 60);
    set_udp_segment(&tx, 0)?;
    assert_eq!(tx.send(&[7u8; 250])?, 250);
    assert_eq!(rx.recv(&mut buf)?, 250);
    Ok(Completion::Completed)
}

fn ipv6_loopback() -> Outcome {
    let any: SocketAddr = "[::1]:0".parse().expect("valid");
    if let Err(e) = UdpSocket::bind(any) {
        return Ok(Completion::ignored_with(format!(
            "no IPv6 loopback (::1) on this machine: {e}"
        )));
    }
    for extra in [vec![], vec!["--gso", "--pacing-quantum-us", "5000"]] {
        let (s, r) = send_recv_at("[::1]:0", "20000", "1200", "0.5", &extra);
        assert!(s["dst"].as_str().unwrap().starts_with("[::1]:"), "{s}");
        assert_eq!(s["gso"], !extra.is_empty());
        let sent = s["sent_packets"].as_u64().unwrap();
        let msgs = s["sent_messages"].as_u64().unwrap();
        if extra.is_empty() {
            assert_eq!(msgs, sent);
        } else {
            assert_eq!(s["gso_segments"], 54); // 54 x 1200 = 64800 <= 65507
            assert!(msgs * 2 <= sent, "{msgs} messages for {sent} packets");
        }
        let st = &r["streams"][0];
        assert_eq!(st["expected_source"], "fin");
        assert_eq!(st["sent_packets"].as_u64(), Some(sent));
        assert_eq!(st["duplicate_packets"], 0);
        assert_eq!(r["foreign_packets"], 0);
        let lost = st["lost_packets"].as_u64().unwrap();
        assert_eq!(lost + st["unique_packets"].as_u64().unwrap(), sent);
        assert!(lost <= r["kernel_drops_packets"].as_u64().unwrap());
        assert_eq!(
            st["received_bytes"].as_u64().unwrap(),
            st["received_packets"].as_u64().unwrap() * 1200
        );
    }
    Ok(Completion::Completed)
}

/// Run `script` with `sh` in a new network namespace of its own (only its loopback exists), the
/// probe binary as $P; None when no namespace can be made here (unshare missing or not root).
fn in_own_netns(script: &str) -> Option<std::process::Output> {
    let out = std::process::Command::new("unshare")
        .args(["--net", "sh", "-ec", script])
        .env("P", common::BIN)
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    (!err.contains("unshare failed") && !err.contains("unshare:")).then_some(out)
}

/// Before the check, a payload larger than the path MTU left as IP fragments (a --size 1473 at
/// MTU 1500 is two frames per "packet") while the report said one 1519-byte frame each. The
/// loopback of a namespace the test makes gets MTU 1500; nothing leaves it.
fn payload_above_mtu() -> Outcome {
    let script = "ip link set lo mtu 1500 up
        $P send --dst 127.0.0.1:9 --pps 10 --duration 0.2 --size 1472 --json > /dev/null
        echo ok-1472
        $P send --dst 127.0.0.1:9 --pps 10 --duration 0.2 --size 1473 --json || echo exit=$?
        $P rtt --dst 127.0.0.1:9 --count 1 --wait 0.1 --size 1500 --json || echo exit=$?";
    let Some(out) = in_own_netns(script) else {
        return Ok(Completion::ignored_with(
            "cannot make a network namespace (unshare --net needs root and util-linux)",
        ));
    };
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["ok-1472", "exit=1", "exit=1"],
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("vnb-probe: error: --size 1473: 1473 + 28 bytes"));
    assert!(lines[0].contains("path MTU of 1500") && lines[0].contains("--size 1472 or less"));
    assert!(lines[1].contains("--size 1500") && lines[1].contains("--size 1472 or less"));
    Ok(Completion::Completed)
}
