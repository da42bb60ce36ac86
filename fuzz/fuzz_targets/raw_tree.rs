//! The raw tree parser (`src/repo/objects.rs`) against libgit2 on any bytes.
//!
//! Beyond "no panic": the walk ends; `find` returns the first entry of that name the walk
//! yields; and whenever both this parser and libgit2 read the bytes as a tree, they read the
//! same entries (name, normalised mode, id) in the same order: the gates' walks see what git
//! sees.
#![no_main]

use closegate::repo::fuzzing::{tree_entries, tree_find};
use git2::{ObjectType, Odb, Repository};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ours = tree_entries(data);
    if let Ok(entries) = &ours {
        for entry in entries {
            let first = entries.iter().find(|e| e.0 == entry.0).cloned();
            assert_eq!(tree_find(data, &entry.0), Ok(first));
        }
        assert_eq!(tree_find(data, b"\0"), Ok(None));
    }
    // libgit2 parses the tree when it is looked up: an in-memory repository per input.
    let repo = Repository::from_odb(Odb::new().unwrap()).unwrap();
    let odb = repo.odb().unwrap();
    let _mempack = odb.add_new_mempack_backend(1).unwrap();
    let id = odb.write(ObjectType::Tree, data).unwrap();
    if let (Ok(ours), Ok(tree)) = (&ours, repo.find_tree(id)) {
        let theirs: Vec<_> = tree
            .iter()
            .map(|e| (e.name_bytes().to_vec(), e.filemode(), e.id()))
            .collect();
        assert_eq!(ours, &theirs);
    }
});
