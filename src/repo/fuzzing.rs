//! Entry points into the two parsers private to `repo`, the index file and raw trees, for the
//! cargo-fuzz targets (`fuzz/`) and the tests that compare them with real git. Nothing in
//! closegate itself calls them, and only the `fuzzing` feature builds them (Cargo.toml).

use std::path::Path;

use anyhow::Result;
use git2::Oid;

/// One index entry, as the `index_file` target compares it with libgit2's reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub path: Vec<u8>,
    pub oid: Oid,
    pub stage: u16,
    pub mode: u32,
}

/// What the fast scan reads from the index of the git dir `git_dir` (checksum, order, split
/// index and all); `None` when it leaves the index to libgit2.
pub fn read_index(git_dir: &Path) -> Result<Option<Vec<IndexEntry>>> {
    let Some(index) = super::index_file::read(git_dir)? else {
        return Ok(None);
    };
    let entries = index.entries.into_iter().map(|e| IndexEntry {
        path: e.path,
        oid: e.oid,
        stage: e.stage,
        mode: e.mode,
    });
    Ok(Some(entries.collect()))
}

/// One raw tree entry: name, mode as libgit2 normalises it, id.
pub type TreeEntry = (Vec<u8>, i32, Oid);

/// The entries of a raw tree, `Err` at the first corrupt one.
#[allow(clippy::result_unit_err)] // objects.rs's own `Err(())`: the fuzz target only compares
pub fn tree_entries(raw: &[u8]) -> Result<Vec<TreeEntry>, ()> {
    super::objects::entries(raw)
        .map(|e| e.map(|e| (e.name.to_vec(), e.mode, e.id())))
        .collect()
}

/// The entry called `name` in a raw tree; `Err` when the tree is corrupt before it.
#[allow(clippy::result_unit_err)]
pub fn tree_find(raw: &[u8], name: &[u8]) -> Result<Option<TreeEntry>, ()> {
    let found = super::objects::find(raw, name)?;
    Ok(found.map(|e| (e.name.to_vec(), e.mode, e.id())))
}
