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
