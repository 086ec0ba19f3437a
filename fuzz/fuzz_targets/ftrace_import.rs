//! The kernel-trace importer (`trace-cmd report` text, raw ftrace text): any input is
//! imported or refused with a user error; never a panic, and never the "internal error"
//! that means it produced an invalid workload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_trace::import::kernel::{import, Options};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for opts in [
            Options::default(),
            Options {
                ignore_unknown: true,
                periodic_only: true,
                ..Options::default()
            },
        ] {
            if let Err(e) = import(text, "f.txt", &opts) {
                assert!(!e.internal, "{e}");
            }
        }
    }
});
