//! `vnb-probe` entry point: parse the command line (exit 2 on usage errors), run, print one
//! report (exit 0) or one error line on stderr (exit 1).
#![forbid(unsafe_code)]

use clap::Parser;
use vnb_probe::cli::{run, Cli};

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("vnb-probe: error: {e}");
        std::process::exit(1);
    }
}
