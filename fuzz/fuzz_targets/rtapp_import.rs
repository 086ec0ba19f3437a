//! The rt-app importer: any input is imported or refused with a user error; never a
//! panic, and never the "internal error" that means it produced an invalid workload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_trace::import::rtapp::{import, Options};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = import(text, "f.json", &Options::default()) {
            assert!(!e.internal, "{e}");
        }
    }
});
