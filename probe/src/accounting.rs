//! Per-stream accounting of a constant-rate UDP stream, pure (no I/O), so crafted sequences can be
//! tested exactly:
//!
//! * duplicates: an exact set of received sequence numbers (sparse bitmap, 64 Ki seqs per chunk);
//! * loss: sender's count from FIN − unique packets that arrived within the waiting time
//!   (RFC 7680). Without a FIN the expected count is the seen range (max − min + 1);
//! * reordering (RFC 4737): a packet is reordered when its seq is below NextExp (= max seen + 1);
//!   its extent is its arrival position minus the position of the earliest packet that arrived
//!   with a larger seq. Duplicates and late packets are left out, as RFC 4737 does;
//! * RFC 3550 interarrival jitter, IPDV over consecutive seqs (RFC 5481), one-way delay;
//! * waiting time: a packet is late (and lost) if its delay exceeds the stream's minimum delay by
//!   more than the waiting time; the clock offset between sender and receiver cancels out.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use crate::stats::{NsHist, NsSummary, SignedHist, SignedSummary};

const CHUNK_BITS: u32 = 16;
const CHUNK_SEQS: u64 = 1 << CHUNK_BITS;
const CHUNK_WORDS: usize = (CHUNK_SEQS / 64) as usize;
/// At most this many chunks (8 KiB each, 64 MiB, 537 M seqs) are kept; the lowest are dropped.
const MAX_CHUNKS: usize = 8192;
/// In-order arrivals remembered for reorder extents (older ones give a capped extent).
const REORDER_WINDOW: usize = 1 << 16;
/// Seqs remembered for IPDV pairs.
const IPDV_RING: usize = 4096;

/// Exact set of u64 sequence numbers, sparse.
#[derive(Default)]
pub struct SeqSet {
    chunks: BTreeMap<u64, Box<[u64; CHUNK_WORDS]>>,
    /// Seqs below this were forgotten (memory cap).
    floor: u64,
}

/// Result of inserting into a [`SeqSet`].
#[derive(Debug, PartialEq, Eq)]
pub enum Insert {
    /// Not seen before.
    New,
    /// Seen before.
    Duplicate,
    /// Below the memory floor: cannot tell.
    Untracked,
}

impl SeqSet {
    /// Insert `seq`.
    pub fn insert(&mut self, seq: u64) -> Insert {
        if seq < self.floor {
            return Insert::Untracked;
        }
        let key = seq >> CHUNK_BITS;
        let off = (seq & (CHUNK_SEQS - 1)) as usize;
        if !self.chunks.contains_key(&key) && self.chunks.len() >= MAX_CHUNKS {
            let (&lowest, _) = self.chunks.iter().next().expect("non-empty");
            if key < lowest {
                return Insert::Untracked;
            }
            self.chunks.remove(&lowest);
            self.floor = (lowest + 1) << CHUNK_BITS;
        }
        let c = self
            .chunks
            .entry(key)
            .or_insert_with(|| Box::new([0u64; CHUNK_WORDS]));
        let (w, bit) = (off / 64, 1u64 << (off % 64));
        if c[w] & bit != 0 {
            Insert::Duplicate
        } else {
            c[w] |= bit;
            Insert::New
        }
    }

    /// Number of members in `[lo, hi]` (inclusive, so the range may end at u64::MAX).
    pub fn count_in_range(&self, lo: u64, hi: u64) -> u64 {
        if hi < lo {
            return 0;
        }
        let mut n = 0u64;
        for (&key, c) in self.chunks.range((lo >> CHUNK_BITS)..=(hi >> CHUNK_BITS)) {
            let base = key << CHUNK_BITS;
            if base >= lo && base + (CHUNK_SEQS - 1) <= hi {
                n += c.iter().map(|w| w.count_ones() as u64).sum::<u64>();
            } else {
                for (wi, w) in c.iter().enumerate() {
                    let mut w = *w;
                    while w != 0 {
                        let b = w.trailing_zeros() as u64;
                        let s = base + wi as u64 * 64 + b;
                        if s >= lo && s <= hi {
                            n += 1;
                        }
                        w &= w - 1;
                    }
                }
            }
        }
        n
    }
}

/// Accounting state of one stream.
pub struct StreamAcct {
    waiting_time_ns: u64,
    seen: SeqSet,
    /// Datagrams received, duplicates included.
    pub received: u64,
    /// Payload bytes received, duplicates included.
    pub received_bytes: u64,
    /// Distinct seqs.
    pub unique: u64,
    /// Payload bytes of distinct seqs.
    pub unique_bytes: u64,
    /// Copies of a seq already seen.
    pub duplicates: u64,
    /// Distinct packets that arrived after the waiting time (counted as lost).
    pub late: u64,
    /// Seqs below the memory floor (pathological reordering).
    pub untracked: u64,
    min_seq: Option<u64>,
    max_seq: Option<u64>,
    /// Reordered packets (RFC 4737).
    pub reordered: u64,
    reorder_extent: NsHist,
    /// Reordered packets whose extent exceeded the remembered window.
    pub reorder_extent_capped: u64,
    arrivals: u64,
    inorder: VecDeque<(u64, u64)>,
    inorder_dropped: bool,
    jitter: f64,
    jitter_sum: f64,
    jitter_n: u64,
    prev_transit: Option<i64>,
    base_transit: Option<i64>,
    min_transit: Option<i64>,
    owd: SignedHist,
    ipdv: SignedHist,
    ring: Vec<(u64, i64, bool)>,
    /// First receive time (CLOCK_REALTIME ns).
    pub first_rx_ns: Option<u64>,
    /// Last receive time (CLOCK_REALTIME ns).
    pub last_rx_ns: Option<u64>,
    fin: Option<(u64, u64)>,
    /// FIN datagrams received.
    pub fins: u64,
}

/// Loss and reordering numbers of one stream (the JSON `streams[]` fields about counting).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Counts {
    /// Packets the sender says it sent (from FIN), null without FIN.
    pub sent_packets: Option<u64>,
    /// Packets expected: sent_packets if a FIN arrived, else max_seq − min_seq + 1.
    pub expected_packets: u64,
    /// "fin" or "seq_range": where expected_packets comes from.
    pub expected_source: &'static str,
    /// Lowest seq expected (FIN's first_seq, else lowest seen).
    pub first_seq: Option<u64>,
    /// Highest seq seen.
    pub max_seq_seen: Option<u64>,
    /// Datagrams received, duplicates included.
    pub received_packets: u64,
    /// Distinct sequence numbers received.
    pub unique_packets: u64,
    /// Extra copies of an already received seq (never reduce loss).
    pub duplicate_packets: u64,
    /// Distinct packets that arrived later than the waiting time (counted in lost_packets).
    pub late_packets: u64,
    /// Distinct packets with a seq outside the FIN's range (not ours or a sender bug).
    pub out_of_range_packets: u64,
    /// expected − (distinct in range − late): never negative.
    pub lost_packets: u64,
    /// lost_packets / expected_packets.
    pub loss_ratio: f64,
    /// RFC 4737 reordered packets.
    pub reordered_packets: u64,
    /// reordered_packets / unique_packets.
    pub reordered_ratio: f64,
    /// Reordered packets whose extent was beyond the 65536-arrival window.
    pub reorder_extent_capped_packets: u64,
}

impl StreamAcct {
    /// New stream with the RFC 7680 waiting time in ns.
    pub fn new(waiting_time_ns: u64) -> Self {
        StreamAcct {
            waiting_time_ns,
            seen: SeqSet::default(),
            received: 0,
            received_bytes: 0,
            unique: 0,
            unique_bytes: 0,
            duplicates: 0,
            late: 0,
            untracked: 0,
            min_seq: None,
            max_seq: None,
            reordered: 0,
            reorder_extent: NsHist::new(),
            reorder_extent_capped: 0,
            arrivals: 0,
            inorder: VecDeque::new(),
            inorder_dropped: false,
            jitter: 0.0,
            jitter_sum: 0.0,
            jitter_n: 0,
            prev_transit: None,
            base_transit: None,
            min_transit: None,
            owd: SignedHist::new(),
            ipdv: SignedHist::new(),
            ring: vec![(u64::MAX, 0, false); IPDV_RING],
            first_rx_ns: None,
            last_rx_ns: None,
            fin: None,
            fins: 0,
        }
    }

    /// A data packet with sequence `seq`, sender stamp `tx_ns`, receive stamp `rx_ns` (both
    /// CLOCK_REALTIME ns) and `len` payload bytes.
    pub fn on_data(&mut self, seq: u64, tx_ns: u64, rx_ns: u64, len: usize) {
        self.received += 1;
        self.received_bytes += len as u64;
        if self.first_rx_ns.is_none() {
            self.first_rx_ns = Some(rx_ns);
        }
        self.last_rx_ns = Some(self.last_rx_ns.map_or(rx_ns, |l| l.max(rx_ns)));
        match self.seen.insert(seq) {
            Insert::Duplicate => {
                self.duplicates += 1;
                return;
            }
            Insert::Untracked => {
                self.untracked += 1;
                return;
            }
            Insert::New => {}
        }
        self.unique += 1;
        self.unique_bytes += len as u64;
        self.min_seq = Some(self.min_seq.map_or(seq, |m| m.min(seq)));

        // wrapping: correct while the stamps are within 2^63 ns; a garbage stamp must not overflow
        let transit = rx_ns.wrapping_sub(tx_ns) as i64;
        let min_t = self.min_transit.map_or(transit, |m| m.min(transit));
        self.min_transit = Some(min_t);
        if transit.saturating_sub(min_t) as u64 > self.waiting_time_ns {
            self.late += 1;
            return;
        }

        // RFC 4737 reordering, on unique in-time arrivals.
        let pos = self.arrivals;
        self.arrivals += 1;
        match self.max_seq {
            Some(max) if seq < max => {
                self.reordered += 1;
                // earliest arrival with a larger seq = first in-order entry with seq > this seq
                let i = self.inorder.partition_point(|&(_, s)| s <= seq);
                if i < self.inorder.len() && (i > 0 || !self.inorder_dropped) {
                    self.reorder_extent.record(pos - self.inorder[i].0);
                } else {
                    self.reorder_extent_capped += 1;
                }
            }
            _ => {
                self.max_seq = Some(seq);
                if self.inorder.len() == REORDER_WINDOW {
                    self.inorder.pop_front();
                    self.inorder_dropped = true;
                }
                self.inorder.push_back((pos, seq));
            }
        }

        // RFC 3550 jitter, in arrival order.
        if let Some(p) = self.prev_transit {
            let d = transit.saturating_sub(p).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
            self.jitter_sum += self.jitter;
            self.jitter_n += 1;
        }
        self.prev_transit = Some(transit);

        // One-way delay, relative to the first packet's (precision stays relative to variation).
        let base = *self.base_transit.get_or_insert(transit);
        self.owd.record(transit.saturating_sub(base));

        // IPDV (RFC 5481) for consecutive seqs, whichever of the pair arrives second.
        let slot = |s: u64| (s % IPDV_RING as u64) as usize;
        if seq > 0 {
            let (s, t, ok) = self.ring[slot(seq - 1)];
            if ok && s == seq - 1 {
                self.ipdv.record(transit.saturating_sub(t));
            }
        }
        if seq < u64::MAX {
            let (s, t, ok) = self.ring[slot(seq + 1)];
            if ok && s == seq + 1 {
                self.ipdv.record(t.saturating_sub(transit));
            }
        }
        self.ring[slot(seq)] = (seq, transit, true);
    }

    /// A FIN: the sender sent `sent` packets starting at `first_seq`.
    pub fn on_fin(&mut self, sent: u64, first_seq: u64) {
        self.fins += 1;
        self.fin = Some((sent, first_seq));
    }

    /// True once a FIN arrived.
    pub fn fin_seen(&self) -> bool {
        self.fin.is_some()
    }

    /// Loss, duplicates and reordering.
    pub fn counts(&self) -> Counts {
        let (sent, expected, source, first, in_range) = match self.fin {
            Some((sent, first)) => {
                let in_range = if sent == 0 {
                    0
                } else {
                    self.seen
                        .count_in_range(first, first.saturating_add(sent - 1))
                };
                (Some(sent), sent, "fin", Some(first), in_range)
            }
            None => {
                let exp = match (self.min_seq, self.max_seq) {
                    // the whole u64 space (2^64 seqs) is one more than u64 holds
                    (Some(lo), Some(hi)) => (hi - lo).saturating_add(1),
                    (Some(_), None) => 0,
                    _ => 0,
                };
                (None, exp, "seq_range", self.min_seq, self.unique)
            }
        };
        let out_of_range = self.unique - in_range;
        let good = in_range.saturating_sub(self.late);
        let lost = expected.saturating_sub(good);
        Counts {
            sent_packets: sent,
            expected_packets: expected,
            expected_source: source,
            first_seq: first,
            max_seq_seen: self.max_seq,
            received_packets: self.received,
            unique_packets: self.unique,
            duplicate_packets: self.duplicates,
            late_packets: self.late,
            out_of_range_packets: out_of_range,
            lost_packets: lost,
            loss_ratio: if expected > 0 {
                lost as f64 / expected as f64
            } else {
                0.0
            },
            reordered_packets: self.reordered,
            reordered_ratio: if self.unique > 0 {
                self.reordered as f64 / self.unique as f64
            } else {
                0.0
            },
            reorder_extent_capped_packets: self.reorder_extent_capped,
        }
    }

    /// Distribution of reorder extents (in packets; the `_ns` names of the generic summary are
    /// renamed by the caller).
    pub fn reorder_extent(&self) -> NsSummary {
        self.reorder_extent.summary()
    }

    /// (final smoothed RFC 3550 jitter, mean of the smoothed value over the run), ns.
    pub fn jitter_ns(&self) -> (f64, f64) {
        let mean = if self.jitter_n > 0 {
            self.jitter_sum / self.jitter_n as f64
        } else {
            0.0
        };
        (self.jitter, mean)
    }

    /// IPDV distribution.
    pub fn ipdv(&self) -> SignedSummary {
        self.ipdv.summary()
    }

    /// One-way delay distribution (absolute: meaningful with synchronised clocks only).
    pub fn owd(&self) -> SignedSummary {
        self.owd.summary_shifted(self.base_transit.unwrap_or(0))
    }

    /// Packet delay variation (delay − minimum delay, RFC 5481 PDV): clock offset cancels.
    pub fn pdv(&self) -> SignedSummary {
        match (self.owd.min(), self.base_transit) {
            (Some(m), Some(_)) => self.owd.summary_shifted(m.saturating_neg()),
            _ => SignedSummary::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: u64 = 1_000_000_000;

    fn feed(a: &mut StreamAcct, seqs: &[u64]) {
        for (i, &s) in seqs.iter().enumerate() {
            // 1 ms spacing, constant 100 µs delay. Sequence numbers wrap modulo 2^64 and so does
            // this made-up send time (s × 1 ms is past u64 ns for seqs near 2^64), as a sender's
            // clock would not: it only has to be 1 ms per seq apart.
            let tx = 1_000_000_000u64.wrapping_add(s.wrapping_mul(1_000_000));
            let rx = 1_000_000_000 + i as u64 * 1_000_000 + 100_000;
            a.on_data(s, tx, rx.max(tx + 100_000), 100);
        }
    }

    #[test]
    fn brief_example_exact() {
        // 0..9: 3 missing, 5 duplicated, 7 arrives after 8
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[0, 1, 2, 4, 5, 5, 6, 8, 7, 9]);
        a.on_fin(10, 0);
        let c = a.counts();
        assert_eq!(c.sent_packets, Some(10));
        assert_eq!(c.received_packets, 10);
        assert_eq!(c.unique_packets, 9);
        assert_eq!(c.duplicate_packets, 1);
        assert_eq!(c.lost_packets, 1);
        assert_eq!(c.reordered_packets, 1);
        assert!((c.loss_ratio - 0.1).abs() < 1e-12);
        let e = a.reorder_extent();
        assert_eq!(e.count, 1);
        assert_eq!(e.max_ns, Some(1)); // 7 arrived 1 position after 8
    }

    #[test]
    fn duplicates_never_reduce_loss() {
        // iperf3 counts dups as out-of-order and subtracts them from loss; we must not.
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[0, 0, 0, 1, 1, 3, 3]);
        a.on_fin(5, 0); // 2 and 4 lost
        let c = a.counts();
        assert_eq!(c.unique_packets, 3);
        assert_eq!(c.duplicate_packets, 4);
        assert_eq!(c.lost_packets, 2);
        assert_eq!(c.reordered_packets, 0);
    }

    #[test]
    fn rfc4737_extent_example() {
        // RFC 4737 §4.2.1-like: 1,2,4,5,3 -> 3 reordered with extent 2 (arrived at 4, earliest
        // larger (4) arrived at 2)
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[1, 2, 4, 5, 3, 6]);
        let c = a.counts();
        assert_eq!(c.reordered_packets, 1);
        assert_eq!(a.reorder_extent().max_ns, Some(2));
        assert_eq!(c.expected_source, "seq_range");
        assert_eq!(c.expected_packets, 6);
        assert_eq!(c.lost_packets, 0);
    }

    #[test]
    fn several_reordered() {
        // 0 3 1 2 4 -> 1 and 2 reordered, extents 1 and 2
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[0, 3, 1, 2, 4]);
        let c = a.counts();
        assert_eq!(c.reordered_packets, 2);
        let e = a.reorder_extent();
        assert_eq!(e.min_ns, Some(1));
        assert_eq!(e.max_ns, Some(2));
    }

    #[test]
    fn reverse_order() {
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[4, 3, 2, 1, 0]);
        a.on_fin(5, 0);
        let c = a.counts();
        assert_eq!(c.reordered_packets, 4);
        assert_eq!(c.lost_packets, 0);
        assert_eq!(a.reorder_extent().max_ns, Some(4));
    }

    #[test]
    fn crossing_2_pow_32() {
        let start = (1u64 << 32) - 5;
        let seqs: Vec<u64> = (start..start + 10).filter(|&s| s != 1 << 32).collect();
        let mut a = StreamAcct::new(W);
        feed(&mut a, &seqs);
        a.on_fin(10, start);
        let c = a.counts();
        assert_eq!(c.unique_packets, 9);
        assert_eq!(c.lost_packets, 1);
        assert_eq!(c.reordered_packets, 0);
        assert_eq!(c.duplicate_packets, 0);
        assert_eq!(c.out_of_range_packets, 0);
    }

    #[test]
    fn crossing_2_pow_64_neighbourhood() {
        let start = u64::MAX - 3;
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[start, start + 2, start + 1, start + 3]);
        a.on_fin(4, start);
        let c = a.counts();
        assert_eq!(c.lost_packets, 0);
        assert_eq!(c.reordered_packets, 1);
    }

    #[test]
    fn seq_range_spanning_all_of_u64_saturates() {
        // without a FIN, expected = max − min + 1, which is 2^64 for seqs 0 and u64::MAX
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[0, u64::MAX]);
        let c = a.counts();
        assert_eq!(c.expected_source, "seq_range");
        assert_eq!(c.expected_packets, u64::MAX);
        assert_eq!(c.lost_packets, u64::MAX - 2);
    }

    #[test]
    fn late_packets_count_as_lost() {
        let mut a = StreamAcct::new(5_000_000); // 5 ms waiting time
        a.on_data(0, 0, 100_000, 10);
        a.on_data(2, 2_000_000, 2_100_000, 10);
        a.on_data(1, 1_000_000, 20_000_000, 10); // 19 ms after its expected arrival
        a.on_fin(3, 0);
        let c = a.counts();
        assert_eq!(c.late_packets, 1);
        assert_eq!(c.lost_packets, 1);
        assert_eq!(c.unique_packets, 3);
        assert_eq!(c.reordered_packets, 0); // late packets are not reordered, they are lost
    }

    #[test]
    fn out_of_range_does_not_hide_loss() {
        let mut a = StreamAcct::new(W);
        feed(&mut a, &[0, 1, 2, 1000]);
        a.on_fin(4, 0);
        let c = a.counts();
        assert_eq!(c.out_of_range_packets, 1);
        assert_eq!(c.lost_packets, 1);
    }

    #[test]
    fn jitter_and_ipdv() {
        let mut a = StreamAcct::new(W);
        // delays alternate 100 µs / 300 µs -> |D| = 200 µs every packet
        for s in 0..1000u64 {
            let tx = 10_000_000_000 + s * 1_000_000;
            let d = if s % 2 == 0 { 100_000 } else { 300_000 };
            a.on_data(s, tx, tx + d, 18);
        }
        let (j, _) = a.jitter_ns();
        assert!((j - 200_000.0).abs() < 1_000.0, "{j}");
        let ip = a.ipdv();
        assert_eq!(ip.count, 999);
        assert_eq!(ip.min_ns, Some(-200_000));
        assert_eq!(ip.max_ns, Some(200_000));
        let owd = a.owd();
        assert_eq!(owd.min_ns, Some(100_000));
        assert_eq!(owd.max_ns, Some(300_000));
        let pdv = a.pdv();
        assert_eq!(pdv.min_ns, Some(0));
        assert_eq!(pdv.max_ns, Some(200_000));
    }

    #[test]
    fn ipdv_pairs_with_reordering() {
        let mut a = StreamAcct::new(W);
        a.on_data(1, 1000, 2000, 18);
        a.on_data(0, 0, 1500, 18); // pair (0,1): ipdv = 1000 - 1500 = -500
        a.on_data(2, 2000, 3000, 18); // pair (1,2): 1000 - 1000 = 0
        let ip = a.ipdv();
        assert_eq!(ip.count, 2);
        assert_eq!(ip.min_ns, Some(-500));
        assert_eq!(ip.max_ns, Some(0));
    }

    #[test]
    fn seqset_range_counts() {
        let mut s = SeqSet::default();
        for v in [0u64, 5, 65_535, 65_536, 200_000, 1 << 40] {
            assert_eq!(s.insert(v), Insert::New);
        }
        assert_eq!(s.insert(5), Insert::Duplicate);
        assert_eq!(s.count_in_range(0, u64::MAX), 6);
        assert_eq!(s.count_in_range(1, 65_536), 3);
        assert_eq!(s.count_in_range(1, 4), 0);
        assert_eq!(s.count_in_range(65_536, 65_536), 1);
        assert_eq!(s.count_in_range(5, 4), 0);
        let mut t = SeqSet::default();
        t.insert(u64::MAX);
        assert_eq!(t.count_in_range(u64::MAX - 3, u64::MAX), 1);
    }

    use proptest::prelude::*;

    proptest! {
        // Garbage send stamps (any u64) never overflow (debug builds check) and keep counts whole.
        #[test]
        fn garbage_stamps_never_overflow(pkts in proptest::collection::vec((0u64..64, any::<u64>(), any::<u64>()), 1..200)) {
            let mut a = StreamAcct::new(W);
            for &(seq, tx, rx) in &pkts { a.on_data(seq, tx, rx, 18); }
            let (_owd, _pdv) = (a.owd(), a.pdv());
            let c = a.counts();
            prop_assert_eq!(c.received_packets, pkts.len() as u64);
            prop_assert_eq!(c.unique_packets + c.duplicate_packets, pkts.len() as u64);
        }

        // Any permutation with duplicates and drops of 0..n: counts equal a brute-force model.
        #[test]
        fn matches_model(n in 1u64..300, drops in proptest::collection::vec(any::<u16>(), 0..40),
                         dups in proptest::collection::vec(any::<u16>(), 0..40),
                         swaps in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..40),
                         start in prop_oneof![Just(0u64), Just((1u64 << 32) - 100), Just(u64::MAX - 1000)]) {
            let mut seqs: Vec<u64> = (0..n).collect();
            for d in &drops { let i = *d as usize % seqs.len().max(1); if !seqs.is_empty() { seqs.remove(i); } }
            for d in &dups { if !seqs.is_empty() { let i = *d as usize % seqs.len(); let v = seqs[i]; seqs.insert(i + 1, v); } }
            for (x, y) in &swaps { if !seqs.is_empty() { let l = seqs.len(); seqs.swap(*x as usize % l, *y as usize % l); } }
            let mut a = StreamAcct::new(u64::MAX / 4);
            for &s in &seqs { a.on_data(start + s, 0, 1000, 18); }
            a.on_fin(n, start);
            let c = a.counts();
            // model
            let mut seen = std::collections::HashSet::new();
            let mut dupl = 0u64;
            let mut maxs: Option<u64> = None;
            let mut reord = 0u64;
            for &s in &seqs {
                if !seen.insert(s) { dupl += 1; continue; }
                match maxs { Some(m) if s < m => reord += 1, _ => maxs = Some(s) }
            }
            prop_assert_eq!(c.unique_packets, seen.len() as u64);
            prop_assert_eq!(c.duplicate_packets, dupl);
            prop_assert_eq!(c.lost_packets, n - seen.len() as u64);
            prop_assert_eq!(c.reordered_packets, reord);
            prop_assert_eq!(c.received_packets, seqs.len() as u64);
        }
    }
}
