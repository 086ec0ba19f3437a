//! The whole simulate path from text: parse, validate, build the classes, run, check
//! (schedlab_fuzz::simulate_checked; inputs capped so each runs in milliseconds and a
//! libFuzzer timeout means a hang, not a big workload).
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_model::{Overrides, Workload};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(w) = Workload::parse_str(text, Path::new("f.yaml"), &Overrides::default()) {
        schedlab_fuzz::simulate_checked(w);
    }
});
