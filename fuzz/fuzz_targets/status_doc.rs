//! The status-document parser (SPEC §2) and `lint --fix` (SPEC §17) on any bytes.
//!
//! Beyond "no panic": every finding is a catalogued code of the doc gate at a line the document
//! has, findings come in line order, a refused document yields exactly one finding; `--fix`
//! never adds or removes a line and fixing its own output changes nothing.
#![no_main]

use closegate::catalog;
use closegate::doc::{ParseOptions, fix::fix, parse};
use closegate::finding::Gate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    for legacy in [false, true] {
        let parsed = parse(data, ParseOptions { legacy });
        for f in &parsed.findings {
            // A `Code` is in the catalog by construction; its gate must be the doc gate's.
            assert_eq!(f.code.gate(), Gate::Doc, "{} from the doc parser", f.code);
            let line = f.line.expect("every doc finding has a line");
            assert!(
                (1..=lines).contains(&line),
                "{} at line {line} of {lines}",
                f.code
            );
        }
        assert!(parsed.findings.is_sorted_by_key(|f| f.line));
        if parsed.doc.is_none() {
            assert_eq!(
                parsed.findings.len(),
                1,
                "a refused document has one finding"
            );
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (once, fixes) = fix(text);
    assert_eq!(once.split('\n').count(), text.split('\n').count());
    for f in &fixes {
        assert!(f.codes.iter().all(|c| catalog::lookup(c.as_str()).is_some()));
        assert_ne!(f.before, f.after);
    }
    let (twice, again) = fix(&once);
    assert_eq!(twice, once, "fixing the fixed text changed it again");
    assert!(again.is_empty());
    let _ = parse(once.as_bytes(), ParseOptions::default());
});
