//! The workload parser and validation on JSON text (the `.json` path selects the JSON parser): any input gives a workload or an
//! error message, never a panic, a hang or unbounded memory (libFuzzer's -rss_limit_mb
//! and -timeout catch the last two).
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_model::{Overrides, Workload};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        match Workload::parse_str(text, Path::new("f.json"), &Overrides::default()) {
            Ok(w) => assert!(!w.tasks.is_empty()),
            Err(e) => assert!(e.to_string().starts_with("f.json")),
        }
    }
});
