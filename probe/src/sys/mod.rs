//! The only module with `unsafe`: thin wrappers over the Linux system calls the probe needs.
//!
//! | file | system calls |
//! | --- | --- |
//! | `clock.rs` | clock_gettime, clock_getres, absolute clock_nanosleep, PR_SET_TIMERSLACK, adjtimex, USER_HZ |
//! | `process.rs` | getrusage, sched_setaffinity, SCHED_FIFO, the SIGINT/SIGTERM flag |
//! | `socket.rs` | socket options (buffers, path MTU, UDP_SEGMENT, UDP_GRO, SO_TIMESTAMPNS, SO_RXQ_OVFL), sockaddr conversion, AF_PACKET sockets, SIOCGIFHWADDR, PACKET_STATISTICS, ppoll |
//! | `mmsg.rs` | recvmmsg with per-datagram kernel timestamps, drop counter and GRO segment size, sendmmsg |
//! | `ring.rs` | the PACKET_MMAP TPACKET_V3 receive ring |
//!
//! Audit rule: every `unsafe` block has a SAFETY comment; every pointer handed to the kernel
//! points into memory owned by the struct that makes the call and outlives the call.

mod clock;
mod mmsg;
mod process;
mod ring;
mod socket;

pub use clock::*;
pub use mmsg::*;
pub use process::*;
pub use ring::*;
pub use socket::*;
