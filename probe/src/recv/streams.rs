//! The stream table of `recv`: a stream is (source address:port, stream id); a datagram is
//! matched to its stream (the FIN to the stream it ends), new streams are added up to
//! [`MAX_STREAMS`].

use std::collections::HashMap;
use std::net::SocketAddr;

use crate::accounting::StreamAcct;
use crate::packet::Packet;

/// Streams tracked at most; packets of further streams count as `overflow_stream_packets`.
pub const MAX_STREAMS: usize = 4096;

/// (source, stream id): id None for packets too short to carry one (18..21 bytes).
type Key = (SocketAddr, Option<u32>);

/// One stream and its accounting.
pub(super) struct Stream {
    pub(super) id: Option<u32>,
    pub(super) src: SocketAddr,
    pub(super) acct: StreamAcct,
}

/// All streams, in order of their first packet.
pub(super) struct Streams {
    list: Vec<Stream>,
    index: HashMap<Key, usize>,
    /// The last stream looked up: consecutive packets mostly belong to one stream.
    last: Option<(Key, usize)>,
    waiting_time_ns: u64,
    /// Packets of streams beyond MAX_STREAMS.
    pub(super) overflow: u64,
}

impl Streams {
    pub(super) fn new(waiting_time_ns: u64) -> Self {
        Streams {
            list: Vec::new(),
            index: HashMap::new(),
            last: None,
            waiting_time_ns,
            overflow: 0,
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Stream> {
        self.list.iter()
    }

    /// Streams whose FIN arrived.
    pub(super) fn fins_seen(&self) -> usize {
        self.list.iter().filter(|s| s.acct.fin_seen()).count()
    }

    /// The stream a data packet or FIN from `src` belongs to; None for anything else.
    pub(super) fn key(&self, src: SocketAddr, pkt: &Packet) -> Option<Key> {
        match *pkt {
            Packet::Data { stream, .. } => Some((src, stream)),
            // a FIN matches the stream with its id, else the id-less stream of the source
            Packet::Fin { stream, .. } => Some(
                if self.index.contains_key(&(src, Some(stream)))
                    || !self.index.contains_key(&(src, None))
                {
                    (src, Some(stream))
                } else {
                    (src, None)
                },
            ),
            _ => None,
        }
    }

    /// The stream of `key`, added if new; None (counted as overflow) beyond MAX_STREAMS.
    pub(super) fn get(&mut self, key: Key) -> Option<&mut Stream> {
        let ix = match self.last {
            Some((k, ix)) if k == key => ix,
            _ => {
                let ix = match self.index.get(&key) {
                    Some(&ix) => ix,
                    None => self.add(key)?,
                };
                self.last = Some((key, ix));
                ix
            }
        };
        Some(&mut self.list[ix])
    }

    fn add(&mut self, key: Key) -> Option<usize> {
        if self.list.len() >= MAX_STREAMS {
            self.overflow += 1;
            return None;
        }
        self.list.push(Stream {
            id: key.1,
            src: key.0,
            acct: StreamAcct::new(self.waiting_time_ns),
        });
        self.index.insert(key, self.list.len() - 1);
        Some(self.list.len() - 1)
    }
}
