//! Packet codec: the byte layout every vnb-probe datagram uses (all integers big-endian).
//!
//! ```text
//! offset size field
//!  0      1   magic 0x56 ('V')
//!  1      1   version (high nibble, = 1) | kind (low nibble)
//!  2      8   seq             DATA: sequence number (u64)   FIN: packets sent (count)
//!                             RTT_REQ/RTT_REPLY: probe sequence number
//! 10      8   tx_realtime_ns  sender's CLOCK_REALTIME when the packet was handed to the kernel
//! ---- 18 bytes: the minimum (UDP payload of a 64-byte Ethernet frame: 14+20+8+18+4) ----
//! DATA    18  4   stream_id (u32), present when the payload is >= 22 bytes; zero padding after
//! FIN     18  4   stream_id;  22 8 first_seq (u64)            FIN is always 30 bytes
//! RTT_*   18  8   server_rx_realtime_ns; 26 8 server_tx_realtime_ns (0 in a request);
//!                 zero padding after; a request is >= 34 bytes and the echo answers with
//!                 the same length (no amplification)
//! ```
//! Kinds: 1 DATA, 2 FIN, 3 RTT_REQ, 4 RTT_REPLY. Anything else is "foreign".

/// First byte of every packet.
pub const MAGIC: u8 = 0x56;
/// Protocol version (high nibble of byte 1).
pub const VERSION: u8 = 1;
/// Smallest datagram: magic, version|kind, seq, timestamp.
pub const MIN_LEN: usize = 18;
/// DATA packets of at least this size carry a stream id.
pub const STREAM_ID_LEN: usize = 22;
/// Size of a FIN packet.
pub const FIN_LEN: usize = 30;
/// Smallest RTT request/reply.
pub const RTT_MIN_LEN: usize = 34;

/// Packet kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Constant-rate data.
    Data = 1,
    /// End of stream with the sender's count.
    Fin = 2,
    /// RTT probe from the client.
    RttReq = 3,
    /// RTT probe answered by the echo.
    RttReply = 4,
}

/// A decoded packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packet {
    /// Data packet.
    Data {
        /// Sequence number.
        seq: u64,
        /// Sender timestamp (CLOCK_REALTIME ns).
        tx_ns: u64,
        /// Stream id if the packet is long enough to carry one.
        stream: Option<u32>,
    },
    /// End of stream.
    Fin {
        /// Packets the sender sent (not counting FINs).
        sent: u64,
        /// Sender timestamp.
        tx_ns: u64,
        /// Stream id.
        stream: u32,
        /// Sequence number of the first data packet.
        first_seq: u64,
    },
    /// RTT request or reply.
    Rtt {
        /// True for a reply.
        reply: bool,
        /// Probe sequence number.
        seq: u64,
        /// Client send timestamp.
        client_tx_ns: u64,
        /// Echo receive timestamp (0 in a request).
        server_rx_ns: u64,
        /// Echo send timestamp (0 in a request).
        server_tx_ns: u64,
    },
}

/// Why a datagram was not ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// Shorter than the minimum for its kind.
    TooShort,
    /// Wrong magic byte.
    BadMagic,
    /// Unknown version.
    BadVersion,
    /// Unknown kind.
    BadKind,
}

#[inline]
fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

#[inline]
fn be32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_be_bytes(a)
}

/// Decode a datagram. Never panics, whatever the bytes.
pub fn decode(b: &[u8]) -> Result<Packet, Foreign> {
    if b.len() < MIN_LEN {
        return Err(Foreign::TooShort);
    }
    if b[0] != MAGIC {
        return Err(Foreign::BadMagic);
    }
    if b[1] >> 4 != VERSION {
        return Err(Foreign::BadVersion);
    }
    let seq = be64(b, 2);
    let tx_ns = be64(b, 10);
    match b[1] & 0x0f {
        1 => Ok(Packet::Data {
            seq,
            tx_ns,
            stream: if b.len() >= STREAM_ID_LEN {
                Some(be32(b, 18))
            } else {
                None
            },
        }),
        2 => {
            if b.len() < FIN_LEN {
                return Err(Foreign::TooShort);
            }
            Ok(Packet::Fin {
                sent: seq,
                tx_ns,
                stream: be32(b, 18),
                first_seq: be64(b, 22),
            })
        }
        k @ (3 | 4) => {
            if b.len() < RTT_MIN_LEN {
                return Err(Foreign::TooShort);
            }
            Ok(Packet::Rtt {
                reply: k == 4,
                seq,
                client_tx_ns: tx_ns,
                server_rx_ns: be64(b, 18),
                server_tx_ns: be64(b, 26),
            })
        }
        _ => Err(Foreign::BadKind),
    }
}

/// Write the 2-byte header and seq/timestamp. `b` must be at least 18 bytes.
#[inline]
pub fn put_header(b: &mut [u8], kind: Kind, seq: u64, tx_ns: u64) {
    b[0] = MAGIC;
    b[1] = (VERSION << 4) | kind as u8;
    b[2..10].copy_from_slice(&seq.to_be_bytes());
    b[10..18].copy_from_slice(&tx_ns.to_be_bytes());
}

/// Write only seq and timestamp (the rest of a data packet stays as prepared).
#[inline]
pub fn put_seq_ts(b: &mut [u8], seq: u64, tx_ns: u64) {
    b[2..10].copy_from_slice(&seq.to_be_bytes());
    b[10..18].copy_from_slice(&tx_ns.to_be_bytes());
}

/// Prepare a data packet of `b.len()` bytes (>= 18): header, stream id if room, zero padding.
pub fn encode_data(b: &mut [u8], seq: u64, tx_ns: u64, stream: u32) {
    b.fill(0);
    put_header(b, Kind::Data, seq, tx_ns);
    if b.len() >= STREAM_ID_LEN {
        b[18..22].copy_from_slice(&stream.to_be_bytes());
    }
}

/// Encode a FIN (30 bytes).
pub fn encode_fin(sent: u64, tx_ns: u64, stream: u32, first_seq: u64) -> [u8; FIN_LEN] {
    let mut b = [0u8; FIN_LEN];
    put_header(&mut b, Kind::Fin, sent, tx_ns);
    b[18..22].copy_from_slice(&stream.to_be_bytes());
    b[22..30].copy_from_slice(&first_seq.to_be_bytes());
    b
}

/// Encode an RTT request into `b` (>= 34 bytes; the rest zeroed).
pub fn encode_rtt_req(b: &mut [u8], seq: u64, client_tx_ns: u64) {
    b.fill(0);
    put_header(b, Kind::RttReq, seq, client_tx_ns);
}

/// Turn a request (already copied into `b`) into a reply with the echo's timestamps.
pub fn make_rtt_reply(b: &mut [u8], server_rx_ns: u64, server_tx_ns: u64) {
    b[1] = (VERSION << 4) | Kind::RttReply as u8;
    b[18..26].copy_from_slice(&server_rx_ns.to_be_bytes());
    b[26..34].copy_from_slice(&server_tx_ns.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn data_18_bytes_has_no_stream() {
        let mut b = [0u8; 18];
        encode_data(&mut b, u64::MAX - 1, 123, 7);
        assert_eq!(b[0], 0x56);
        assert_eq!(b[1], 0x11);
        assert_eq!(
            decode(&b),
            Ok(Packet::Data {
                seq: u64::MAX - 1,
                tx_ns: 123,
                stream: None
            })
        );
    }

    #[test]
    fn data_with_stream() {
        let mut b = vec![0u8; 1472];
        encode_data(&mut b, 1 << 40, 9, 42);
        assert_eq!(
            decode(&b),
            Ok(Packet::Data {
                seq: 1 << 40,
                tx_ns: 9,
                stream: Some(42)
            })
        );
    }

    #[test]
    fn fin_roundtrip() {
        let b = encode_fin(1000, 5, 3, (1 << 32) - 5);
        assert_eq!(
            decode(&b),
            Ok(Packet::Fin {
                sent: 1000,
                tx_ns: 5,
                stream: 3,
                first_seq: (1 << 32) - 5
            })
        );
        assert_eq!(decode(&b[..29]), Err(Foreign::TooShort));
    }

    #[test]
    fn rtt_roundtrip() {
        let mut b = [0u8; 64];
        encode_rtt_req(&mut b, 77, 1000);
        assert!(matches!(
            decode(&b),
            Ok(Packet::Rtt {
                reply: false,
                seq: 77,
                ..
            })
        ));
        make_rtt_reply(&mut b, 2000, 2500);
        assert_eq!(
            decode(&b),
            Ok(Packet::Rtt {
                reply: true,
                seq: 77,
                client_tx_ns: 1000,
                server_rx_ns: 2000,
                server_tx_ns: 2500
            })
        );
        assert_eq!(decode(&b[..33]), Err(Foreign::TooShort));
    }

    #[test]
    fn garbage() {
        assert_eq!(decode(&[]), Err(Foreign::TooShort));
        assert_eq!(decode(&[0u8; 17]), Err(Foreign::TooShort));
        assert_eq!(decode(&[0u8; 18]), Err(Foreign::BadMagic));
        let mut b = [0u8; 18];
        b[0] = MAGIC;
        b[1] = 0x21;
        assert_eq!(decode(&b), Err(Foreign::BadVersion));
        b[1] = 0x1f;
        assert_eq!(decode(&b), Err(Foreign::BadKind));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn decode_never_panics_with_our_magic(kind in 0u8..16, rest in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut b = vec![MAGIC, 0x10 | kind];
            b.extend(rest);
            let _ = decode(&b);
        }

        #[test]
        fn data_roundtrip(seq in any::<u64>(), ts in any::<u64>(), stream in any::<u32>(), len in 18usize..2000) {
            let mut b = vec![0u8; len];
            encode_data(&mut b, seq, ts, stream);
            let want = if len >= STREAM_ID_LEN { Some(stream) } else { None };
            prop_assert_eq!(decode(&b), Ok(Packet::Data { seq, tx_ns: ts, stream: want }));
        }
    }
}
