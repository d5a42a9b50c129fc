//! Fuzz target: the classifier is total and deterministic on any bytes (CLASSIFY-5).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nomos_classify::classify;

fuzz_target!(|data: &[u8]| {
    let command = String::from_utf8_lossy(data);
    let first = classify(&command);
    let second = classify(&command);
    assert_eq!(first, second, "classification is not deterministic");
    if first.reason.starts_with("could not parse") {
        assert_eq!(first.class, nomos_classify::CommandClass::Destructive);
    }
});
