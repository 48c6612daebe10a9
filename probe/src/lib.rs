//! vnb-probe: vnetbench's native data-plane probe. One module per job; `sys` is the only module
//! with `unsafe`.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod accounting;
pub mod cli;
pub mod cpushare;
pub mod delay;
pub mod net;
pub mod output;
pub mod pacing;
pub mod packet;
pub mod rawframe;
pub mod recv;
pub mod rtt;
pub mod send;
pub mod stats;
#[allow(unsafe_code)]
pub mod sys;
pub mod trace;
pub mod units;
