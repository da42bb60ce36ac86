//! The index file (`.git/index`, versions 2–4) as the fast worktree scan reads it: entries with
//! their stat data and flags, and the cache-tree extension, which libgit2 does not expose.

use git2::Oid;

/// The stat data git keeps per index entry (32-bit, as stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StatData {
    pub(super) ctime: (u32, u32),
    pub(super) mtime: (u32, u32),
    pub(super) ino: u32,
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) size: u32,
}

/// One index entry.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) path: Vec<u8>,
    pub(super) oid: Oid,
    pub(super) mode: u32,
    pub(super) stat: StatData,
    pub(super) stage: u16,
    pub(super) assume_valid: bool,
    pub(super) skip_worktree: bool,
    pub(super) intent_to_add: bool,
}

/// A node of the index's cache-tree extension: a folder whose tree id is known when valid.
#[derive(Debug)]
pub(super) struct CacheTree {
    pub(super) name: Vec<u8>,
    pub(super) oid: Option<Oid>,
    pub(super) children: Vec<CacheTree>,
}

/// Parse an index file (versions 2–4); `None` for anything this scan does not handle.
pub(super) fn parse_index(bytes: &[u8]) -> Option<(Vec<Entry>, Option<CacheTree>)> {
    const HASH: usize = 20;
    if bytes.len() < 12 + HASH || &bytes[..4] != b"DIRC" {
        return None;
    }
    let version = be32(bytes, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(bytes, 8)? as usize;
    let end = bytes.len() - HASH;
    let mut at = 12;
    // The count is the file's word: never reserve more than the bytes could hold (62 per entry).
    let mut entries = Vec::with_capacity(count.min(bytes.len() / 62));
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let word = |i: usize| be32(bytes, start + 4 * i);
        let stat = StatData {
            ctime: (word(0)?, word(1)?),
            mtime: (word(2)?, word(3)?),
            ino: word(5)?,
            uid: word(7)?,
            gid: word(8)?,
            size: word(9)?,
        };
        let mode = word(6)?;
        let oid = Oid::from_bytes(bytes.get(start + 40..start + 60)?).ok()?;
        let flags = be16(bytes, start + 60)?;
        at = start + 62;
        let mut extended = 0;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            extended = be16(bytes, at)?;
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(bytes.get(at..end)?)?;
            at += used;
            let nul = bytes.get(at..end)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let path = [&previous[..keep], &bytes[at..at + nul]].concat();
            at += nul + 1;
            path
        } else {
            let nul = bytes.get(at..end)?.iter().position(|&b| b == 0)?;
            let path = bytes[at..at + nul].to_vec();
            at = start + (at + nul - start + 8) / 8 * 8; // 1–8 NULs pad the entry to 8 bytes
            path
        };
        if mode & 0o170000 == 0o040000 {
            return None; // a sparse-index folder entry
        }
        entries.push(Entry {
            stage: (flags >> 12) & 3,
            assume_valid: flags & 0x8000 != 0,
            skip_worktree: extended & 0x4000 != 0,
            intent_to_add: extended & 0x2000 != 0,
            path: path.clone(),
            oid,
            mode,
            stat,
        });
        previous = path;
    }
    let mut cache_tree = None;
    while at + 8 <= end {
        let signature = &bytes[at..at + 4];
        let size = be32(bytes, at + 4)? as usize;
        let data = bytes.get(at + 8..at + 8 + size)?;
        match signature {
            b"TREE" => cache_tree = parse_cache_tree(&mut &data[..], 0),
            b"link" | b"sdir" => return None,
            s if s[0].is_ascii_uppercase() => {} // optional extensions: not needed here
            _ => return None,
        }
        at += 8 + size;
    }
    Some((entries, cache_tree))
}

/// How deep the cache-tree may nest (folders inside folders).
const MAX_DEPTH: usize = 4096;

/// One cache-tree node and its subtrees (pre-order): `name NUL count SP subtrees LF [oid]`.
fn parse_cache_tree(data: &mut &[u8], depth: usize) -> Option<CacheTree> {
    // Deeper than any path git accepts: a crafted extension must not overflow the stack.
    if depth > MAX_DEPTH {
        return None;
    }
    let nul = data.iter().position(|&b| b == 0)?;
    let name = data[..nul].to_vec();
    let lf = nul + 1 + data[nul + 1..].iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&data[nul + 1..lf]).ok()?;
    let (count, subtrees) = header.split_once(' ')?;
    let (count, subtrees): (i64, usize) = (count.parse().ok()?, subtrees.parse().ok()?);
    *data = &data[lf + 1..];
    let oid = if count >= 0 {
        let oid = Oid::from_bytes(data.get(..20)?).ok()?;
        *data = &data[20..];
        Some(oid)
    } else {
        None
    };
    let children = (0..subtrees)
        .map(|_| parse_cache_tree(data, depth + 1))
        .collect::<Option<Vec<_>>>()?;
    Some(CacheTree {
        name,
        oid,
        children,
    })
}

/// The offset varint of index version 4 (git's `decode_varint`): value and bytes used.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value = usize::from(*bytes.first()? & 0x7f);
    let mut used = 1;
    while bytes[used - 1] & 0x80 != 0 {
        let b = *bytes.get(used)?;
        value = value.checked_add(1)?.checked_mul(128)? | usize::from(b & 0x7f);
        used += 1;
    }
    Some((value, used))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A real index of version 2 with a few entries and a cache-tree, written by libgit2.
    fn real_index() -> Vec<u8> {
        static INDEX: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        INDEX.get_or_init(write_real_index).clone()
    }

    fn write_real_index() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        for (path, text) in [("a.txt", "a"), ("src/b.rs", "b"), ("src/c/d.md", "d")] {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write_tree().unwrap();
        index.write().unwrap();
        std::fs::read(dir.path().join(".git/index")).unwrap()
    }

    #[test]
    fn reads_a_real_index() {
        let (entries, cache_tree) = parse_index(&real_index()).expect("a plain v2 index");
        let paths: Vec<&[u8]> = entries.iter().map(|e| e.path.as_slice()).collect();
        assert_eq!(paths, [&b"a.txt"[..], b"src/b.rs", b"src/c/d.md"]);
        assert!(cache_tree.is_some_and(|t| t.oid.is_some()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// The index lives in the agent's admin dir: whatever its bytes, parsing never panics.
        #[test]
        fn never_panics_on_mutated_or_random_bytes(
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
            cut in any::<usize>(),
            noise in proptest::collection::vec(any::<u8>(), 0..256),
        ) {
            let mut bytes = real_index();
            for (at, byte) in edits {
                let len = bytes.len();
                bytes[at % len] = byte;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = parse_index(&bytes);
            let _ = parse_index(&noise);
        }
    }
}
