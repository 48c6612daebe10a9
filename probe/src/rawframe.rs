//! Raw Ethernet/IPv4/UDP frames for `send --raw-iface`: the probe's datagrams written straight to
//! an interface through an AF_PACKET socket, the way a hardware or pktgen generator offers load.
//! The sender's own IP/UDP stack and qdisc are skipped, so a cheap generator leaves the CPU to
//! what is being measured (e.g. a delay node); receivers see ordinary UDP datagrams.

use std::net::{Ipv4Addr, SocketAddrV4};

/// Ethernet (14) + IPv4 (20) + UDP (8) header bytes in front of the payload.
pub const HEADER_LEN: usize = 42;

/// Parse a MAC address "aa:bb:cc:dd:ee:ff" (or with '-').
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.trim().split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("not a MAC address: {s:?} (e.g. 02:00:00:00:00:01)"));
    }
    let mut mac = [0u8; 6];
    for (m, p) in mac.iter_mut().zip(&parts) {
        *m = u8::from_str_radix(p, 16)
            .ok()
            .filter(|_| p.len() == 2)
            .ok_or_else(|| format!("not a MAC address: {s:?} (e.g. 02:00:00:00:00:01)"))?;
    }
    Ok(mac)
}

/// Format a MAC address as "aa:bb:cc:dd:ee:ff".
pub fn format_mac(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The Internet checksum (RFC 1071) of `bytes`.
fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in bytes.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Addresses of the frames one sender writes.
#[derive(Clone, Copy, Debug)]
pub struct Endpoints {
    /// Source MAC (the sending interface's).
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address and UDP port.
    pub src: SocketAddrV4,
    /// Destination IPv4 address and UDP port.
    pub dst: SocketAddrV4,
}

/// Write the 42-byte Ethernet + IPv4 + UDP header for a UDP payload of `payload_len` bytes into
/// `b[..42]`. IPv4 header checksum computed; UDP checksum 0 (= none, valid for IPv4); DF set,
/// TTL 64, IP id 0 (DF packets need none).
pub fn write_header(b: &mut [u8], ep: &Endpoints, payload_len: usize) {
    let udp_len = (8 + payload_len) as u16;
    let ip_len = 20 + udp_len;
    b[0..6].copy_from_slice(&ep.dst_mac);
    b[6..12].copy_from_slice(&ep.src_mac);
    b[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut b[14..34];
    ip[0] = 0x45; // version 4, 5 words
    ip[1] = 0; // DSCP/ECN
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[4..6].copy_from_slice(&0u16.to_be_bytes()); // id
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
    ip[8] = 64; // TTL
    ip[9] = 17; // UDP
    ip[10..12].copy_from_slice(&[0, 0]);
    ip[12..16].copy_from_slice(&ep.src.ip().octets());
    ip[16..20].copy_from_slice(&ep.dst.ip().octets());
    let csum = ones_complement_sum(ip);
    ip[10..12].copy_from_slice(&csum.to_be_bytes());
    let udp = &mut b[34..42];
    udp[0..2].copy_from_slice(&ep.src.port().to_be_bytes());
    udp[2..4].copy_from_slice(&ep.dst.port().to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].copy_from_slice(&[0, 0]);
}

/// The source address of raw frames: `bind` with its port, or port 9 (discard) if it gave 0.
pub fn source(bind: Ipv4Addr, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(bind, if port == 0 { 9 } else { port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep() -> Endpoints {
        Endpoints {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src: "198.18.0.1:5000".parse().unwrap(),
            dst: "198.18.0.2:7000".parse().unwrap(),
        }
    }

    #[test]
    fn mac_parse_and_format_round_trip() {
        let m = parse_mac("0a:1B:2c:3d:4e:5f").unwrap();
        assert_eq!(m, [0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f]);
        assert_eq!(format_mac(&m), "0a:1b:2c:3d:4e:5f");
        assert_eq!(parse_mac("02-00-00-00-00-01").unwrap(), [2, 0, 0, 0, 0, 1]);
        for bad in [
            "",
            "02:00:00:00:00",
            "02:00:00:00:00:0g",
            "002:00:00:00:00:01",
        ] {
            assert!(parse_mac(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn header_fields_and_checksum() {
        let mut b = [0u8; 60];
        write_header(&mut b, &ep(), 18);
        assert_eq!(&b[0..6], &[2, 0, 0, 0, 0, 2]);
        assert_eq!(&b[6..12], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&b[12..14], &[0x08, 0x00]);
        assert_eq!(u16::from_be_bytes([b[16], b[17]]), 20 + 8 + 18);
        assert_eq!(b[23], 17);
        assert_eq!(&b[26..30], &[198, 18, 0, 1]);
        assert_eq!(&b[30..34], &[198, 18, 0, 2]);
        // a correct header sums to 0xffff, i.e. its checksum over itself is 0
        assert_eq!(ones_complement_sum(&b[14..34]), 0);
        assert_eq!(u16::from_be_bytes([b[34], b[35]]), 5000);
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), 7000);
        assert_eq!(u16::from_be_bytes([b[38], b[39]]), 8 + 18);
    }

    #[test]
    fn checksum_matches_a_known_header() {
        // RFC 1071 style example: the classic 20-byte header with checksum b861
        let hdr = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ones_complement_sum(&hdr), 0xb861);
    }

    #[test]
    fn port_zero_becomes_discard() {
        assert_eq!(source(Ipv4Addr::new(198, 18, 0, 1), 0).port(), 9);
        assert_eq!(source(Ipv4Addr::new(198, 18, 0, 1), 4000).port(), 4000);
    }
}
