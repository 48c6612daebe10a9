//! Fine-grained throughput trace: bytes and packets per fixed time bin (default 1 ms), by kernel
//! receive timestamp, starting at the first data packet.

use serde::Serialize;

/// At most this many bins are kept (1 hour of 1 ms bins); later packets set `truncated`.
pub const MAX_BINS: usize = 3_600_000;

/// The trace being built.
pub struct Trace {
    bin_ns: u64,
    origin: Option<u64>,
    bytes: Vec<u64>,
    packets: Vec<u64>,
    truncated: bool,
    before_origin: u64,
}

/// The JSON `trace` object.
#[derive(Serialize, Debug)]
pub struct TraceReport {
    /// Bin width, ns (0: trace disabled).
    pub bin_ns: u64,
    /// CLOCK_REALTIME of the start of bin 0 (= first data packet's kernel receive time), ns.
    pub origin_realtime_ns: Option<u64>,
    /// UDP payload bytes received in each bin (duplicates included).
    pub bytes: Vec<u64>,
    /// Data packets received in each bin.
    pub packets: Vec<u64>,
    /// True if the run outlasted MAX_BINS bins and later packets were not traced.
    pub truncated: bool,
    /// Packets stamped before the origin (kernel stamps of different CPUs), put in bin 0.
    pub before_origin_packets: u64,
}

impl Trace {
    /// `bin_ns` = 0 disables the trace.
    pub fn new(bin_ns: u64) -> Self {
        Trace {
            bin_ns,
            origin: None,
            bytes: Vec::new(),
            packets: Vec::new(),
            truncated: false,
            before_origin: 0,
        }
    }

    /// Count one packet of `len` payload bytes received at `rx_ns`.
    #[inline]
    pub fn add(&mut self, rx_ns: u64, len: usize) {
        if self.bin_ns == 0 {
            return;
        }
        let origin = *self.origin.get_or_insert(rx_ns);
        let idx = if rx_ns < origin {
            self.before_origin += 1;
            0
        } else {
            ((rx_ns - origin) / self.bin_ns) as usize
        };
        if idx >= MAX_BINS {
            self.truncated = true;
            return;
        }
        if idx >= self.bytes.len() {
            self.bytes.resize(idx + 1, 0);
            self.packets.resize(idx + 1, 0);
        }
        self.bytes[idx] += len as u64;
        self.packets[idx] += 1;
    }

    /// Finish.
    pub fn report(self) -> TraceReport {
        TraceReport {
            bin_ns: self.bin_ns,
            origin_realtime_ns: self.origin,
            bytes: self.bytes,
            packets: self.packets,
            truncated: self.truncated,
            before_origin_packets: self.before_origin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins() {
        let mut t = Trace::new(1_000_000);
        t.add(5_000_000, 100);
        t.add(5_999_999, 100);
        t.add(6_000_000, 50);
        t.add(9_500_000, 1);
        t.add(4_000_000, 7);
        let r = t.report();
        assert_eq!(r.origin_realtime_ns, Some(5_000_000));
        assert_eq!(r.bytes, vec![207, 50, 0, 0, 1]);
        assert_eq!(r.packets, vec![3, 1, 0, 0, 1]);
        assert_eq!(r.before_origin_packets, 1);
    }

    #[test]
    fn disabled() {
        let mut t = Trace::new(0);
        t.add(1, 1);
        assert!(t.report().bytes.is_empty());
    }
}
