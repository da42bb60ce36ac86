//! The test-diff reader (SPEC §27.1 (b)) on any bytes, as each language it reads.
//!
//! Beyond "no panic": every file given gets exactly one result, under its own path, and each
//! edit names that file and says what it saw; a file read against itself (old and new the same
//! bytes) yields no edit at all, so never a `weakened` or `dropped` one. The first byte picks the
//! language (and where the rest is cut into old and new).
#![no_main]

use closegate::runners::testdiff::{FileDiff, read};
use libfuzzer_sys::fuzz_target;

const PATHS: [&str; 6] = [
    "t.rs",
    "test_t.py",
    "t.test.ts",
    "t_test.go",
    "t.c",
    "t.cpp",
];

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let path = PATHS[head as usize % PATHS.len()].as_bytes();
    let cut = (head as usize * 7919) % (rest.len() + 1);
    let (old, new) = rest.split_at(cut);
    for text in [old, new, rest] {
        let same = read(&[FileDiff {
            path,
            old: Some(text),
            new: Some(text),
        }]);
        assert_eq!(same.len(), 1);
        if let Ok(edits) = &same[0].outcome {
            assert!(edits.is_empty(), "{edits:?}");
        }
    }
    let pairs = [
        FileDiff {
            path,
            old: Some(old),
            new: Some(new),
        },
        FileDiff {
            path: b"other/t2.rs",
            old: Some(new),
            new: None,
        },
        FileDiff {
            path,
            old: None,
            new: Some(old),
        },
    ];
    let got = read(&pairs);
    assert_eq!(got.len(), 3);
    for (result, file) in got.iter().zip(&pairs) {
        assert_eq!(result.path, file.path);
        if let Ok(edits) = &result.outcome {
            assert!(
                edits
                    .iter()
                    .all(|e| e.path == file.path && !e.detail.is_empty())
            );
        }
    }
});
