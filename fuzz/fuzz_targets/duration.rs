//! Duration strings: parsing never panics, every accepted value is within the time
//! limit, and the printed forms (`format_ns`, the importers' `pretty`) read back exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_model::limits::MAX_TIME_NS;
use schedlab_model::{format_ns, parse_duration};
use schedlab_trace::import::pretty;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(ns) = parse_duration(text) {
            assert!(ns <= MAX_TIME_NS, "{text:?} gave {ns}");
            assert_eq!(parse_duration(&format_ns(ns)), Ok(ns));
            assert_eq!(parse_duration(&pretty(ns)), Ok(ns));
        }
    }
});
