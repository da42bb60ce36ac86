//! Raw trees for the gates' walks (SPEC §11: the cost of a check follows the change).
//!
//! Reading a tree through `git2::Tree` costs more than the tree: libgit2 looks every object up
//! in the pack index first, also the agent's fresh objects, which are loose until the next gc
//! (on a large repository each miss touches new pages of a large index); it inflates small
//! objects into an exactly sized buffer, where zlib cannot use its fast loop; and it allocates a
//! parsed entry per name. Here a tree is its raw bytes, read once per process: loose objects
//! straight from their file when the caller expects them loose, everything else (packs,
//! alternates, anything unusual) through libgit2's object database, which stays the authority:
//! whatever this module cannot read it leaves to libgit2.
//!
//! Every object is verified against its id (SPEC §11). A loose file is used only when its content
//! hashes to its name, and then it is the object whatever else holds that id (git itself reads
//! packs first, but two objects with one id have one content). A loose file that does not hash to
//! its name is never read here: libgit2 then looks the id up in git's order (packs first, then
//! loose) with strict hash verification, so a planted file at a packed object's id changes
//! nothing, and a corrupt object found only loose is an error naming it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result, bail};
use flate2::{Decompress, FlushDecompress, Status};
use git2::{ObjectType, Oid, Repository};

/// A tree's raw bytes: `<octal mode> <name>\0<20-byte id>`, repeated.
pub(super) type RawTree = Rc<[u8]>;

/// Where a lookup should try first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Likely {
    /// Written since the last gc (the agent's commit): its own file under `objects/`.
    Loose,
    /// Anything else: libgit2's object database (packs first).
    Packed,
}

/// The raw trees read so far, by id.
pub(super) struct Trees {
    objects_dir: PathBuf,
    cache: RefCell<HashMap<Oid, RawTree>>,
    /// `likely` per commit asked about (one stat each).
    commits: RefCell<HashMap<Oid, Likely>>,
    /// The bytes of the loose file read last: one buffer for every read, zeroed once.
    file: RefCell<Vec<u8>>,
}

impl Trees {
    pub(super) fn new(common_dir: &Path) -> Trees {
        Trees {
            objects_dir: common_dir.join("objects"),
            cache: RefCell::new(HashMap::new()),
            commits: RefCell::new(HashMap::new()),
            file: RefCell::new(Vec::new()),
        }
    }

    /// Where the trees of `commit` likely are: a commit still loose was written since the last
    /// gc, and so were the trees it changed.
    pub(super) fn likely(&self, commit: Oid) -> Likely {
        *self.commits.borrow_mut().entry(commit).or_insert_with(|| {
            if self.loose_path(commit).exists() {
                Likely::Loose
            } else {
                Likely::Packed
            }
        })
    }

    fn loose_path(&self, id: Oid) -> PathBuf {
        let hex = id.to_string();
        self.objects_dir.join(&hex[..2]).join(&hex[2..])
    }

    /// The tree `id`, read once.
    pub(super) fn get(&self, git: &Repository, id: Oid, likely: Likely) -> Result<RawTree> {
        if let Some(tree) = self.cache.borrow().get(&id) {
            return Ok(Rc::clone(tree));
        }
        let loose = match likely {
            Likely::Loose => read_loose(&self.loose_path(id), &mut self.file.borrow_mut()),
            Likely::Packed => None,
        };
        let bytes: RawTree = match loose {
            Some((ObjectType::Tree, bytes)) if hashes_to(&bytes, id) => bytes.into(),
            _ => {
                let odb = git.odb().context("cannot open the object database")?;
                let object = odb
                    .read(id)
                    .with_context(|| format!("cannot read tree {id}"))?;
                if object.kind() != ObjectType::Tree {
                    bail!("object {id} is a {}, not a tree", object.kind());
                }
                object.data().into()
            }
        };
        self.cache.borrow_mut().insert(id, Rc::clone(&bytes));
        Ok(bytes)
    }
}

/// Whether a tree's content hashes to `id` (SPEC §11: every object read is verified).
fn hashes_to(tree: &[u8], id: Oid) -> bool {
    Oid::hash_object(ObjectType::Tree, tree).is_ok_and(|hashed| hashed == id)
}

/// One entry of a raw tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RawEntry<'t> {
    pub name: &'t [u8],
    /// The mode normalised as libgit2's `git_tree_entry_filemode` does.
    pub mode: i32,
    /// The object id's 20 raw bytes.
    pub raw_id: &'t [u8],
}

impl RawEntry<'_> {
    pub fn is_tree(&self) -> bool {
        self.mode == MODE_TREE
    }

    pub fn id(&self) -> Oid {
        Oid::from_bytes(self.raw_id).expect("20 bytes make an id")
    }
}

const MODE_TREE: i32 = 0o040000;
const TYPE_BITS: i32 = 0o170000;

/// libgit2's `normalize_filemode`: any tree bits are a tree, the owner's x bit an executable
/// blob (`GIT_PERMS_IS_EXEC`: `0o100` alone; a group or other x bit is not).
fn normalize(mode: i32) -> i32 {
    match mode & TYPE_BITS {
        MODE_TREE => MODE_TREE,
        _ if mode & 0o100 != 0 => 0o100755,
        0o160000 => 0o160000,
        0o120000 => 0o120000,
        _ => 0o100644,
    }
}

/// The entries of a raw tree in stored order; an `Err` item where the bytes stop making sense.
pub(super) fn entries(raw: &[u8]) -> impl Iterator<Item = Result<RawEntry<'_>, ()>> + '_ {
    let mut rest = raw;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let parsed = parse_entry(rest);
        match parsed {
            Some((entry, tail)) => {
                rest = tail;
                Some(Ok(entry))
            }
            None => {
                rest = &[];
                Some(Err(()))
            }
        }
    })
}

fn parse_entry(bytes: &[u8]) -> Option<(RawEntry<'_>, &[u8])> {
    let space = bytes.iter().position(|&b| b == b' ')?;
    let (mode_text, rest) = (&bytes[..space], &bytes[space + 1..]);
    if mode_text.is_empty() || mode_text.len() > 7 {
        return None;
    }
    let mut mode = 0i32;
    for &digit in mode_text {
        if !(b'0'..=b'7').contains(&digit) {
            return None;
        }
        mode = mode * 8 + i32::from(digit - b'0');
    }
    let nul = rest.iter().position(|&b| b == 0)?;
    let name = &rest[..nul];
    let raw_id = rest.get(nul + 1..nul + 21)?;
    if name.is_empty() {
        return None;
    }
    let entry = RawEntry {
        name,
        mode: normalize(mode),
        raw_id,
    };
    Some((entry, &rest[nul + 21..]))
}

/// The entry called `name` in a raw tree; `Err` when the tree is corrupt before it.
pub(super) fn find<'t>(raw: &'t [u8], name: &[u8]) -> Result<Option<RawEntry<'t>>, ()> {
    for entry in entries(raw) {
        let entry = entry?;
        if entry.name == name {
            return Ok(Some(entry));
        }
    }
    Ok(None)
}

/// A loose object's type and content, or `None` when it is not a readable loose object here
/// (packed, in an alternate, corrupt): the caller then asks libgit2.
fn read_loose(path: &Path, buf: &mut Vec<u8>) -> Option<(ObjectType, Vec<u8>)> {
    let len = read_small(path, buf)?;
    inflate_loose(&buf[..len])
}

/// Read a file into `buf` (grown as needed, never shrunk: one buffer serves every read) in as
/// few system calls as may be: open, one read, close for the small files loose trees are
/// (`std::fs::read` adds a stat for the size and a read that finds the end, and zeroes a fresh
/// buffer each time). A read that does not fill the room left is taken as the end of the file,
/// which for a regular file it is; should it not be, the zlib stream ends short or the content
/// fails its size or its hash, and the object is read by libgit2 instead. Returns the length.
fn read_small(path: &Path, buf: &mut Vec<u8>) -> Option<usize> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    if buf.len() < 16 * 1024 {
        buf.resize(16 * 1024, 0);
    }
    let mut len = 0;
    loop {
        len += file.read(&mut buf[len..]).ok()?;
        if len < buf.len() {
            return Some(len);
        }
        buf.resize(buf.len() * 2, 0);
    }
}

/// Inflate `<type> <size>\0<content>` and check the size. The output buffer keeps room to spare
/// so zlib decodes in its fast loop to the last byte.
fn inflate_loose(compressed: &[u8]) -> Option<(ObjectType, Vec<u8>)> {
    const SLACK: usize = 512;
    let mut out = Vec::with_capacity(compressed.len().saturating_mul(4) + SLACK);
    let mut zlib = Decompress::new(true);
    loop {
        let read = usize::try_from(zlib.total_in()).ok()?;
        let status = zlib
            .decompress_vec(&compressed[read..], &mut out, FlushDecompress::Finish)
            .ok()?;
        match status {
            Status::StreamEnd => break,
            _ if out.len() + SLACK > out.capacity() => out.reserve(out.capacity()),
            // Input ran out before the stream ended: truncated.
            _ if usize::try_from(zlib.total_in()).ok()? >= compressed.len() => return None,
            _ => {}
        }
    }
    let nul = out.iter().position(|&b| b == 0)?;
    let header = std::str::from_utf8(&out[..nul]).ok()?;
    let (kind, size) = header.split_once(' ')?;
    let kind = match kind {
        "commit" => ObjectType::Commit,
        "tree" => ObjectType::Tree,
        "blob" => ObjectType::Blob,
        "tag" => ObjectType::Tag,
        _ => return None,
    };
    let size: usize = size.parse().ok()?;
    if out.len() - nul - 1 != size {
        return None;
    }
    out.drain(..=nul);
    Some((kind, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::ZlibEncoder;
    use std::io::Write;

    fn loose(text: &[u8]) -> Vec<u8> {
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(text).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn a_loose_object_inflates_to_its_content() {
        let content = b"hello\n".repeat(1000);
        let mut object = format!("blob {}\0", content.len()).into_bytes();
        object.extend_from_slice(&content);
        let (kind, bytes) = inflate_loose(&loose(&object)).unwrap();
        assert_eq!(kind, ObjectType::Blob);
        assert_eq!(bytes, content);
    }

    #[test]
    fn a_file_is_read_whole_at_every_size_around_the_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = Vec::new();
        // Small files after large ones too: the grown buffer serves them, its tail ignored.
        for len in [
            0,
            1,
            16 * 1024 - 1,
            16 * 1024,
            16 * 1024 + 1,
            40_000,
            64 * 1024,
            3,
            0,
        ] {
            let path = dir.path().join(format!("f{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let read = read_small(&path, &mut buf);
            assert_eq!(read, Some(len), "{len} bytes");
            assert_eq!(&buf[..len], &bytes[..], "{len} bytes");
        }
        assert_eq!(read_small(&dir.path().join("absent"), &mut buf), None);
    }

    #[test]
    fn a_wrong_size_a_bad_type_or_a_truncated_stream_is_left_to_libgit2() {
        assert_eq!(inflate_loose(&loose(b"blob 5\0hello!")), None);
        assert_eq!(inflate_loose(&loose(b"bolb 5\0hello")), None);
        let whole = loose(b"blob 5\0hello");
        assert_eq!(inflate_loose(&whole[..whole.len() - 6]), None);
        assert_eq!(inflate_loose(b"not zlib at all"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Any bytes: the parser ends (each item consumes input or ends the walk) and never
        /// panics; the inflater gives an answer or leaves the object to libgit2.
        #[test]
        fn arbitrary_bytes_neither_panic_nor_loop(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let items = entries(&bytes).take(bytes.len() + 1).count();
            proptest::prop_assert!(items <= bytes.len());
            let _ = find(&bytes, b"x");
            let _ = inflate_loose(&bytes);
            let _ = inflate_loose(&loose(&bytes));
        }
    }

    proptest::proptest! {
        // Each case initialises a repository: fewer cases, each of up to 20 entries.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Trees libgit2 builds from random entries parse as libgit2 reads them back.
        #[test]
        fn built_trees_parse_as_libgit2_reads_them(
            items in proptest::collection::btree_map(
                "[a-z0-9_-][a-z0-9._-]{0,11}",
                (0usize..4, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8)),
                1..20,
            )
        ) {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init_bare(dir.path()).unwrap();
            let mut builder = repo.treebuilder(None).unwrap();
            let modes = [0o100644, 0o100755, 0o120000, 0o040000];
            let empty_tree = repo.treebuilder(None).unwrap().write().unwrap();
            for (name, (mode, content)) in &items {
                let id = match modes[*mode] {
                    0o040000 => empty_tree,
                    _ => repo.blob(content).unwrap(),
                };
                builder.insert(name, id, modes[*mode]).unwrap();
            }
            let tree_id = builder.write().unwrap();
            let raw = repo.odb().unwrap().read(tree_id).unwrap().data().to_vec();
            let ours: Vec<_> = entries(&raw)
                .map(|e| e.map(|e| (e.name.to_vec(), e.mode, e.id())))
                .collect::<Result<_, ()>>()
                .unwrap();
            let tree = repo.find_tree(tree_id).unwrap();
            let theirs: Vec<_> = tree
                .iter()
                .map(|e| (e.name_bytes().to_vec(), e.filemode(), e.id()))
                .collect();
            proptest::prop_assert_eq!(ours, theirs);
        }
    }

    /// Found by the `raw_tree` fuzz target: a mode with only a group or other x bit (`100010`,
    /// `150210`) is a plain blob to libgit2, which only looks at the owner's x bit; this parser
    /// called it executable. Odd modes, each as libgit2 reads the same raw tree.
    #[test]
    fn odd_modes_normalise_as_libgit2_reads_them() {
        let modes = [
            "100010", "100001", "100100", "100011", "150210", "150100", "120001", "120100",
            "160010", "160100", "40010", "47777", "0", "7", "177777", "1000644",
        ];
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        for mode in modes {
            let mut raw = format!("{mode} name\0").into_bytes();
            raw.extend_from_slice(&[9u8; 20]);
            let id = repo.odb().unwrap().write(ObjectType::Tree, &raw).unwrap();
            let ours = entries(&raw).map(|e| e.unwrap().mode).collect::<Vec<_>>();
            let theirs = repo
                .find_tree(id)
                .map(|t| t.iter().map(|e| e.filemode()).collect::<Vec<_>>());
            match theirs {
                Ok(theirs) => assert_eq!(ours, theirs, "mode {mode}"),
                Err(_) => assert_eq!(ours.len(), 1, "mode {mode}: libgit2 refuses it"),
            }
        }
        assert_eq!(normalize(0o100010), 0o100644);
        assert_eq!(normalize(0o100100), 0o100755);
    }

    #[test]
    fn tree_entries_parse_and_normalise_like_libgit2() {
        let mut raw = Vec::new();
        for (mode, name) in [("40000", "dir"), ("100664", "file"), ("100775", "run")] {
            raw.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            raw.extend_from_slice(&[7u8; 20]);
        }
        let all: Vec<_> = entries(&raw).map(Result::unwrap).collect();
        let modes: Vec<_> = all.iter().map(|e| (e.name, e.mode)).collect();
        assert_eq!(
            modes,
            [
                (&b"dir"[..], 0o040000),
                (&b"file"[..], 0o100644),
                (&b"run"[..], 0o100755)
            ]
        );
        assert!(all[0].is_tree());
        let run = find(&raw, b"run").unwrap().unwrap();
        assert_eq!(run.id(), Oid::from_bytes(&[7; 20]).unwrap());
        assert_eq!(find(&raw, b"none"), Ok(None));
        assert_eq!(find(&raw[..raw.len() - 1], b"none"), Err(()));
        assert!(entries(&raw[..raw.len() - 1]).any(|e| e.is_err()));
        assert!(entries(b"100644 \0aaaaaaaaaaaaaaaaaaaa").any(|e| e.is_err()));
    }
}
