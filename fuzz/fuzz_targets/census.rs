//! The test census (SPEC §26.4) on any output, for every runner and under `auto`.
//!
//! Beyond "no panic": every id kept is clean (non-empty, trimmed, no control character, at most
//! `ID_MAX` bytes), ids are sorted and distinct and a named count equals their number; the stored
//! form decodes to the same census; feeding the output in two pieces cut anywhere gives the
//! census of feeding it whole; and a census compared with itself misses nothing.
#![no_main]

use closegate::runners::Runner;
use closegate::runners::census::{ID_MAX, Mode, Reader, Stored, Tally, compare};
use libfuzzer_sys::fuzz_target;

fn census(mode: &Mode, pieces: &[&[u8]]) -> Tally {
    let mut reader = Reader::new(mode).expect("a mode that reads");
    for piece in pieces {
        reader.feed(piece);
    }
    reader.finish()
}

fuzz_target!(|data: &[u8]| {
    let cut = data.first().map_or(0, |b| *b as usize) % (data.len() + 1);
    let mut modes = vec![Mode::Auto];
    modes.extend(Runner::with_census().map(|r| Mode::Named(vec![r])));
    for mode in &modes {
        let whole = census(mode, &[data]);
        assert_eq!(census(mode, &[&data[..cut], &data[cut..]]), whole);
        for count in &whole.counts {
            if let Some(ids) = &count.ids {
                assert_eq!(count.passed, ids.len() as u64);
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                for id in ids.iter() {
                    assert!(!id.is_empty() && id.len() <= ID_MAX && id.trim() == id);
                    assert!(!id.chars().any(char::is_control));
                }
            }
        }
        let json = serde_json::to_string(&Stored::of(&whole)).unwrap();
        assert_eq!(serde_json::from_str::<Stored>(&json).unwrap().tally(), whole);
        if let Some(c) = compare(mode, &whole, &whole) {
            assert_eq!(c.missing_count, 0);
            assert_eq!(c.base, c.commit);
        }
    }
});
