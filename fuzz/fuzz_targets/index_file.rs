//! The index file reader (`src/repo/index_file.rs`) against libgit2 on any bytes.
//!
//! The input is the index without its trailing checksum; the target appends the right one (so
//! the fuzzer explores the format, not SHA-1) and also tries the input as it is (so a wrong
//! checksum is refused). Beyond "no panic": a file whose last 20 bytes are not the SHA-1 of the
//! rest (nor zero) is an error; when both this reader and libgit2 read an index, they read the
//! same entries (path, id, stage, mode) in the same order: the fast scan sees what git sees.
#![no_main]

use std::cell::RefCell;

use closegate::repo::fuzzing::{IndexEntry, read_index};
use libfuzzer_sys::fuzz_target;
use sha1::{Digest, Sha1};

thread_local! {
    static DIR: RefCell<tempfile::TempDir> = RefCell::new(tempfile::tempdir().unwrap());
}

fuzz_target!(|data: &[u8]| {
    DIR.with_borrow(|dir| {
        let path = dir.path().join("index");
        let mut bytes = data.to_vec();
        bytes.extend_from_slice(&Sha1::digest(data));
        std::fs::write(&path, &bytes).unwrap();
        let ours = read_index(dir.path());
        if let (Ok(Some(ours)), Ok(theirs)) = (&ours, git2::Index::open(&path)) {
            let theirs: Vec<IndexEntry> = theirs
                .iter()
                .map(|e| IndexEntry {
                    path: e.path,
                    oid: e.id,
                    stage: (e.flags >> 12) & 3,
                    mode: e.mode,
                })
                .collect();
            assert_eq!(ours, &theirs);
        }
        // As written: only a right (or null) checksum reads.
        let tail = data.len().saturating_sub(20);
        let (body, hash) = data.split_at(tail);
        if hash.len() == 20 && hash.iter().any(|&b| b != 0) && Sha1::digest(body)[..] != *hash {
            std::fs::write(&path, data).unwrap();
            assert!(read_index(dir.path()).is_err(), "a wrong checksum was read");
        }
    });
});
