//! Fuzz the status-document parser: no input may panic it, with or without `--legacy`, and
//! every finding it reports carries a line number.
#![no_main]

use closegate::doc::{ParseOptions, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for legacy in [false, true] {
        let parsed = parse(data, ParseOptions { legacy });
        assert!(parsed.findings.iter().all(|f| f.line.is_some()));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = closegate::doc::close_line::find_in_message(text);
    }
});
