//! The index file (`.git/index`, versions 2–4) as the fast worktree scan reads it: entries with
//! their stat data and flags, and the cache-tree extension, which libgit2 does not expose.
//!
//! Read the way git reads it (`Documentation/gitformat-index.txt`): the trailing checksum is
//! verified (a null one, `index.skipHash`, is accepted as git accepts it); a split index
//! (`link`) is merged with its shared index `sharedindex.<id>` through the replace and delete
//! bitmaps; a sparse index (`sdir`) keeps its folder entries (mode 040000, skip-worktree), which
//! the scan compares as whole trees. libgit2 reads neither of the last two ("unsupported mandatory
//! extension"). The other optional extensions (REUC, UNTR, FSMN, EOIE, IEOT, …) are skipped.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::Oid;
use sha1_checked::Sha1;
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

/// The length of a SHA-1 id and of the index's trailing checksum.
const HASH: usize = 20;

/// The largest index file read: 1 GiB, some ten million entries, far past any real worktree.
const MAX_INDEX: u64 = 1 << 30;

/// The mode of a sparse-index folder entry.
pub(super) const SPARSE_DIR: u32 = 0o040000;

impl Entry {
    /// A sparse index's entry for a whole folder outside the sparse checkout (`dir/`).
    pub(super) fn is_sparse_dir(&self) -> bool {
        self.mode == SPARSE_DIR
    }
}

/// An index as the scan needs it, a split one merged with its shared index.
#[derive(Debug)]
pub(super) struct Index {
    /// Sorted by path, then stage.
    pub(super) entries: Vec<Entry>,
    pub(super) cache_tree: Option<CacheTree>,
    /// Split (`link`) or sparse (`sdir`): a form libgit2 cannot read.
    pub(super) beyond_libgit2: bool,
}

/// Read the index of the git dir `git_dir`. `None` when there is no index file or it is in a
/// form this reader does not handle (then libgit2 decides); an error when it is corrupt (its
/// checksum, or a split index's shared index missing or not the one it names).
pub(super) fn read(git_dir: &Path) -> Result<Option<Index>> {
    let path = git_dir.join("index");
    let Some(bytes) = read_regular(&path)? else {
        return Ok(None);
    };
    if !checksum_ok(&bytes) {
        bail!("{} is corrupt: its checksum does not match", path.display());
    }
    let Some(parsed) = parse_index(&bytes) else {
        return Ok(None);
    };
    check_entries(&parsed, &path)?;
    let sparse = parsed.sparse || parsed.entries.iter().any(Entry::is_sparse_dir);
    let split = parsed.link.is_some();
    let Some(link) = parsed.link.filter(|l| !l.base.is_zero()) else {
        return Ok(Some(Index {
            entries: parsed.entries,
            cache_tree: parsed.cache_tree,
            beyond_libgit2: sparse || split,
        }));
    };
    let shared_path = git_dir.join(format!("sharedindex.{}", link.base));
    let Some(base) = read_shared(&path, &shared_path, &link)? else {
        return Ok(None);
    };
    let Some(entries) = merge(base.entries, parsed.entries, &link) else {
        bail!(
            "{} is corrupt: its link extension does not fit {}",
            path.display(),
            shared_path.display()
        );
    };
    Ok(Some(Index {
        entries,
        cache_tree: parsed.cache_tree.or(base.cache_tree),
        beyond_libgit2: true,
    }))
}

/// An error when a parsed index at `path` stopped at an entry whose name length is wrong, or
/// its entries are out of order: git refuses such an index (`check_ce_order`), and the scan's
/// binary searches rely on the order, so an index crafted out of it must not reach them.
fn check_entries(parsed: &Parsed, path: &Path) -> Result<()> {
    if parsed.bad_name_length {
        bail!("{} is corrupt: {BAD_NAME_LENGTH}", path.display());
    }
    if !in_order(&parsed.entries) {
        bail!(
            "{} is corrupt: its entries are out of order",
            path.display()
        );
    }
    Ok(())
}

/// The shared index at `shared_path` that the split index at `path` links to, checked to be the
/// one `link` names; `None` when it is in a form this reader does not handle.
fn read_shared(path: &Path, shared_path: &Path, link: &Link) -> Result<Option<Parsed>> {
    let Some(shared) = read_regular(shared_path)? else {
        bail!(
            "{} is a split index whose shared index {} is missing",
            path.display(),
            shared_path.display()
        );
    };
    if !checksum_ok(&shared) || shared[shared.len() - HASH..] != *link.base.as_bytes() {
        bail!(
            "{} is corrupt: its checksum is not the id it is named by",
            shared_path.display()
        );
    }
    let Some(base) = parse_index(&shared).filter(|b| b.link.is_none()) else {
        return Ok(None);
    };
    check_entries(&base, shared_path)?;
    Ok(Some(base))
}

/// The bytes of the index file at `path`, `None` when there is none. It lies in the agent's
/// admin dir: anything but a regular file (a FIFO would block the read, a link to `/dev/zero`
/// would never end) is an error naming it, judged on the handle opened without blocking.
fn read_regular(path: &Path) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    // A sparse file costs the agent nothing to make as large as it likes.
    if meta.len() > MAX_INDEX {
        bail!(
            "{} is {} bytes, larger than the 1 GiB an index is allowed here",
            path.display(),
            meta.len()
        );
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_INDEX + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MAX_INDEX {
        bail!("{} grew past 1 GiB while it was read", path.display());
    }
    Ok(Some(bytes))
}

/// Whether the entries are sorted by path (bytes), then stage, none twice. A split index's own
/// entries are too: replacements (empty names) come first and stay in order among themselves.
fn in_order(entries: &[Entry]) -> bool {
    let named = entries.iter().filter(|e| !e.path.is_empty());
    named
        .clone()
        .zip(named.skip(1))
        .all(|(a, b)| (&a.path, a.stage) < (&b.path, b.stage))
}

/// Whether the last 20 bytes are the SHA-1 of the rest, or all zero (`index.skipHash`). The
/// SHA-1 is computed with collision detection, as git and libgit2 compute it: a body built to
/// collide never passes (every object id libgit2 hashes for us is checked the same way).
fn checksum_ok(bytes: &[u8]) -> bool {
    let Some(split) = bytes.len().checked_sub(HASH) else {
        return false;
    };
    let (body, hash) = bytes.split_at(split);
    if hash.iter().all(|&b| b == 0) {
        return true;
    }
    let sum = Sha1::try_digest(body);
    !sum.has_collision() && sum.hash().as_slice() == hash
}

/// A split index's `link` extension: the shared index it builds on and the two bitmaps.
#[derive(Debug)]
struct Link {
    base: Oid,
    /// Positions in the shared index of entries this index deletes.
    delete: Vec<Range<usize>>,
    /// Positions in the shared index of entries this index replaces, in order: the first
    /// `replace.len()` entries of this index (with empty names) are the replacements.
    replace: Vec<Range<usize>>,
}

/// git's `merge_base_index`: the shared entries with replacements and deletions applied, then
/// this index's own entries added (an added entry replaces a shared one of the same path and
/// stage). `None` when the bitmaps do not fit the entries.
fn merge(base: Vec<Entry>, own: Vec<Entry>, link: &Link) -> Option<Vec<Entry>> {
    let mut base: Vec<Option<Entry>> = base.into_iter().map(Some).collect();
    let mut own = own.into_iter();
    for at in link.replace.iter().cloned().flatten() {
        let mut replacement = own.next()?;
        let slot = base.get_mut(at)?.as_mut()?;
        if !replacement.path.is_empty() {
            return None;
        }
        replacement.path = std::mem::take(&mut slot.path);
        *slot = replacement;
    }
    for at in link.delete.iter().cloned().flatten() {
        base.get_mut(at)?.take()?;
    }
    let mut all: Vec<Entry> = base.into_iter().flatten().collect();
    for added in own {
        if added.path.is_empty() {
            return None;
        }
        all.push(added);
    }
    // Stable: of two entries with one path and stage, the added one (later) is kept.
    all.sort_by(|a, b| (&a.path, a.stage).cmp(&(&b.path, b.stage)));
    let mut merged: Vec<Entry> = Vec::with_capacity(all.len());
    for entry in all {
        match merged.last_mut() {
            Some(last) if last.path == entry.path && last.stage == entry.stage => *last = entry,
            _ => merged.push(entry),
        }
    }
    Some(merged)
}

/// The set bits of an EWAH-compressed bitmap (git's `ewah/ewah_io.c` layout: bit count,
/// word count, the 64-bit words, the position of the last run-length word; all big-endian) as
/// ascending ranges, and the bytes it took. Ranges, not positions: a crafted run of ones can
/// claim four billion bits in twelve bytes, and the merge stops at the first one out of range.
fn ewah(bytes: &[u8]) -> Option<(Vec<Range<usize>>, usize)> {
    let bits = be32(bytes, 0)? as usize;
    let words = be32(bytes, 4)? as usize;
    let len = 8usize.checked_add(words.checked_mul(8)?)?.checked_add(4)?;
    let data = bytes.get(8..len - 4)?;
    let word = |i: usize| u64::from_be_bytes(data[i * 8..i * 8 + 8].try_into().unwrap());
    let mut set = Vec::new();
    let (mut i, mut pos) = (0usize, 0usize);
    while i < words {
        let marker = word(i);
        let run = ((marker >> 1) & 0xffff_ffff) as usize;
        let literals = (marker >> 33) as usize;
        let run_bits = run.checked_mul(64)?;
        if marker & 1 != 0 {
            if pos.checked_add(run_bits)? > bits {
                return None;
            }
            set.push(pos..pos + run_bits);
        }
        pos = pos.checked_add(run_bits)?;
        for k in 0..literals {
            let lit = word(i.checked_add(1 + k).filter(|&j| j < words)?);
            for bit in 0..64 {
                if lit & (1 << bit) != 0 {
                    set.push(pos + bit..pos + bit + 1);
                }
            }
            pos = pos.checked_add(64)?;
        }
        i += 1 + literals;
    }
    for range in &mut set {
        *range = range.start.min(bits)..range.end.min(bits);
    }
    set.retain(|r| !r.is_empty());
    Some((set, len))
}

/// What one index file holds.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) entries: Vec<Entry>,
    pub(super) cache_tree: Option<CacheTree>,
    link: Option<Link>,
    /// The `sdir` extension: folder entries may appear.
    sparse: bool,
    /// An entry's name length (the low 12 bits of its flags) is not the length of its name; the
    /// entries stop there.
    bad_name_length: bool,
}

const BAD_NAME_LENGTH: &str = "an entry's name length field does not match its name";

/// Whether the name length in an entry's flags fits its NUL-terminated name. git reads the name
/// (and finds the next entry) by the length, libgit2 partly by the NUL, and git2's `IndexEntry`
/// copies as many bytes as the length says: an index where the two disagree is read three ways
/// (found by the `index_file` fuzz target), so it is corrupt here, never left to libgit2.
fn name_length_fits(flags: u16, name: &[u8]) -> bool {
    match usize::from(flags & 0x0fff) {
        0x0fff => name.len() >= 0x0fff,
        n => n == name.len(),
    }
}

/// Parse an index file (versions 2–4), its checksum aside; `None` for anything this scan does
/// not handle.
pub(super) fn parse_index(bytes: &[u8]) -> Option<Parsed> {
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
        let stat = stat_data(bytes, start)?;
        let mode = be32(bytes, start + 24)?;
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
        let path = entry_path(bytes, start, &mut at, end, version, &previous)?;
        if !name_length_fits(flags, &path) {
            return Some(Parsed::of(entries, true));
        }
        let skip_worktree = extended & 0x4000 != 0;
        let kind = mode & 0o170000;
        // A folder entry is a sparse index's, always skip-worktree and named `dir/`.
        if kind == SPARSE_DIR
            && (!skip_worktree || path.last() != Some(&b'/') || mode != SPARSE_DIR)
        {
            return None;
        }
        entries.push(Entry {
            stage: (flags >> 12) & 3,
            assume_valid: flags & 0x8000 != 0,
            skip_worktree,
            intent_to_add: extended & 0x2000 != 0,
            path: path.clone(),
            oid,
            mode,
            stat,
        });
        previous = path;
    }
    let mut parsed = Parsed::of(entries, false);
    parse_extensions(bytes, at, end, &mut parsed)?;
    Some(parsed)
}

impl Parsed {
    /// The entries read, no extension yet.
    fn of(entries: Vec<Entry>, bad_name_length: bool) -> Parsed {
        Parsed {
            entries,
            cache_tree: None,
            link: None,
            sparse: false,
            bad_name_length,
        }
    }
}

/// The stat data of the entry at `start` (ctime, mtime, ino, uid, gid, size).
fn stat_data(bytes: &[u8], start: usize) -> Option<StatData> {
    let word = |i: usize| be32(bytes, start + 4 * i);
    Some(StatData {
        ctime: (word(0)?, word(1)?),
        mtime: (word(2)?, word(3)?),
        ino: word(5)?,
        uid: word(7)?,
        gid: word(8)?,
        size: word(9)?,
    })
}

/// The path of the entry at `start` whose name begins at `at` (moved past the name and, before
/// version 4, its padding): NUL-terminated, in version 4 prefix-compressed against `previous`.
fn entry_path(
    bytes: &[u8],
    start: usize,
    at: &mut usize,
    end: usize,
    version: u32,
    previous: &[u8],
) -> Option<Vec<u8>> {
    if version == 4 {
        let (strip, used) = varint(bytes.get(*at..end)?)?;
        *at += used;
        let nul = bytes.get(*at..end)?.iter().position(|&b| b == 0)?;
        let keep = previous.len().checked_sub(strip)?;
        let path = [&previous[..keep], &bytes[*at..*at + nul]].concat();
        *at += nul + 1;
        Some(path)
    } else {
        let nul = bytes.get(*at..end)?.iter().position(|&b| b == 0)?;
        let path = bytes[*at..*at + nul].to_vec();
        *at = start + (*at + nul - start + 8) / 8 * 8; // 1–8 NULs pad the entry to 8 bytes
        Some(path)
    }
}

/// The extensions whose headers start between `at` and `end` (where the checksum begins) that
/// the scan needs: the cache tree, a split index's link, a sparse index's marker. `None` for an
/// extension that is malformed, or unknown and required (its signature not upper case).
fn parse_extensions(bytes: &[u8], mut at: usize, end: usize, parsed: &mut Parsed) -> Option<()> {
    while at + 8 <= end {
        let signature = &bytes[at..at + 4];
        let size = be32(bytes, at + 4)? as usize;
        let data = bytes.get(at + 8..(at + 8).checked_add(size)?)?;
        match signature {
            b"TREE" => parsed.cache_tree = parse_cache_tree(&mut &data[..], 0),
            b"link" => parsed.link = Some(parse_link(data)?),
            b"sdir" => parsed.sparse = true,
            s if s[0].is_ascii_uppercase() => {} // optional extensions: not needed here
            _ => return None,
        }
        at += 8 + size;
    }
    Some(())
}

/// The `link` extension: the shared index's id, then (when anything is split off) the delete
/// and replace bitmaps.
fn parse_link(data: &[u8]) -> Option<Link> {
    let base = Oid::from_bytes(data.get(..HASH)?).ok()?;
    let rest = &data[HASH..];
    if rest.is_empty() {
        return Some(Link {
            base,
            delete: Vec::new(),
            replace: Vec::new(),
        });
    }
    let (delete, used) = ewah(rest)?;
    let (replace, used2) = ewah(&rest[used..])?;
    (used + used2 == rest.len()).then_some(Link {
        base,
        delete,
        replace,
    })
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
    use sha1_checked::Digest;

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
        let parsed = parse_index(&real_index()).expect("a plain v2 index");
        let paths: Vec<&[u8]> = parsed.entries.iter().map(|e| e.path.as_slice()).collect();
        assert_eq!(paths, [&b"a.txt"[..], b"src/b.rs", b"src/c/d.md"]);
        assert!(parsed.cache_tree.is_some_and(|t| t.oid.is_some()));
    }

    #[test]
    fn the_checksum_is_verified() {
        let mut bytes = real_index();
        assert!(checksum_ok(&bytes));
        bytes[20] ^= 1;
        assert!(!checksum_ok(&bytes));
        let len = bytes.len();
        bytes[len - HASH..].fill(0);
        assert!(checksum_ok(&bytes), "a null checksum is index.skipHash's");
        assert!(!checksum_ok(&[0; 19]));
    }

    /// Found by the `index_file` fuzz target: a v4 entry whose flags say its name is 263 bytes
    /// long while its NUL-terminated name has 10. git would read it by the length, libgit2 by
    /// the NUL, and git2's `IndexEntry` copies 263 bytes of a 10-byte name; it is corrupt.
    #[test]
    fn a_name_length_that_does_not_fit_the_name_is_corrupt() {
        for version in [2u32, 4] {
            let dir = tempfile::tempdir().unwrap();
            let mut body = b"DIRC".to_vec();
            body.extend(version.to_be_bytes());
            body.extend(1u32.to_be_bytes());
            body.extend([0u8; 24]); // ctime, mtime, dev, ino
            body.extend(0o100644u32.to_be_bytes());
            body.extend([0u8; 12]); // uid, gid, size
            body.extend([7u8; 20]);
            let name = b"src/a/y\x01\x07x";
            body.extend(0x0107u16.to_be_bytes());
            if version == 4 {
                body.push(0); // strip nothing of the previous name
            }
            body.extend(name);
            body.extend([0u8; 8]);
            let mut good = body.clone();
            let at = 12 + 60;
            good[at..at + 2].copy_from_slice(&(name.len() as u16).to_be_bytes());
            for (bytes, fits) in [(body, false), (good, true)] {
                let mut file = bytes.clone();
                file.extend(Sha1::digest(&bytes));
                std::fs::write(dir.path().join("index"), &file).unwrap();
                let read = read(dir.path());
                match fits {
                    true => assert_eq!(read.unwrap().unwrap().entries[0].path, name),
                    false => {
                        let err = format!("{:#}", read.unwrap_err());
                        assert!(err.contains("name length"), "v{version}: {err}");
                    }
                }
            }
        }
        assert!(name_length_fits(0x0fff, &[b'a'; 5000]));
        assert!(!name_length_fits(0x0fff, b"short"));
        assert!(
            name_length_fits(0x3005, b"short"),
            "stage bits are not the length"
        );
    }

    /// An EWAH bitmap as git's `ewah_serialize` lays it out.
    fn ewah_bytes(bits: u32, words: &[u64]) -> Vec<u8> {
        let mut out = bits.to_be_bytes().to_vec();
        out.extend((words.len() as u32).to_be_bytes());
        for w in words {
            out.extend(w.to_be_bytes());
        }
        out.extend(0u32.to_be_bytes());
        out
    }

    #[test]
    fn ewah_bitmaps_decode_runs_and_literals() {
        // No run, one literal word with bits 1 and 3.
        let bits = |bytes: &[u8]| {
            ewah(bytes).map(|(set, used)| (set.into_iter().flatten().collect::<Vec<_>>(), used))
        };
        let bytes = ewah_bytes(64, &[1 << 33, 0b1010]);
        assert_eq!(bits(&bytes), Some((vec![1, 3], bytes.len())));
        // A run of one word of ones, then one literal word with bit 0: 0..64 and 64.
        let bytes = ewah_bytes(70, &[1 | (1 << 1) | (1 << 33), 1]);
        let expected: Vec<usize> = (0..65).collect();
        assert_eq!(bits(&bytes), Some((expected, bytes.len())));
        // A run of zeros of two words, no literal: nothing set.
        assert_eq!(bits(&ewah_bytes(128, &[2 << 1])).map(|e| e.0), Some(vec![]));
        // A literal word that is not there.
        assert_eq!(bits(&ewah_bytes(64, &[1 << 33])), None);
        // Four billion bits of ones claimed in one word: a range, not a list.
        let words = u64::from(u32::MAX / 64);
        let (set, _) = ewah(&ewah_bytes(u32::MAX, &[1 | (words << 1)])).unwrap();
        assert_eq!(set.len(), 1);
        assert_eq!(set[0], 0..words as usize * 64);
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
            let _ = ewah(&noise);
            let _ = parse_link(&noise);
        }
    }
}
