//! Directory handles and the one folder reader, on rustix: no `unsafe` here.
//!
//! [`Dir`] is an open directory that everything is done relative to (`openat` with
//! `O_NOFOLLOW | O_DIRECTORY`, `fstatat` with `AT_SYMLINK_NOFOLLOW`, `unlinkat`, `mkdirat`,
//! `renameat`): a path swapped for a symbolic link mid-way is never followed (std's
//! `remove_dir_all` after CVE-2022-21658). The teardown's walk and removal use it.
//!
//! [`Folder`] is the one `readdir` loop of the crate: `getdents64` into a caller's buffer, each
//! name lent rather than copied (std's `ReadDir` allocates twice an item, which was a third of the
//! scan's walk). The scan's walk for untracked files and [`Dir::names`] both read through it.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, RawDir, RenameFlags};
use rustix::io::Errno;

pub use rustix::fs::Stat;

/// `bytes` as a C string; a NUL inside is an error, never a shorter path.
pub fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// How every directory handle is opened: never through a link, never inherited by a child.
const OPEN_DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// An open directory.
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Open `path` as a directory; a symbolic link in its last component is refused.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstring(path.as_os_str().as_bytes())?;
        let fd = rustix::fs::open(c.as_c_str(), OPEN_DIR, Mode::empty())?;
        Ok(Dir { fd })
    }

    /// Open the entry `name` of this directory as a directory, never through a link.
    pub fn open_child(&self, name: &CStr) -> io::Result<Dir> {
        let fd = rustix::fs::openat(&self.fd, name, OPEN_DIR, Mode::empty())?;
        Ok(Dir { fd })
    }

    /// The directory `name` of this one, created (mode 0777 less the umask) when `create` and
    /// missing; `None` when missing and not created. A link or anything but a directory at
    /// `name` is an error (`ELOOP`/`ENOTDIR`): it is never followed.
    pub fn child_dir(&self, name: &OsStr, create: bool) -> io::Result<Option<Dir>> {
        let c = cstring(name.as_bytes())?;
        if create {
            match rustix::fs::mkdirat(&self.fd, c.as_c_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        match self.open_child(&c) {
            Ok(dir) => Ok(Some(dir)),
            Err(e) if !create && e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Create the regular file `name` in this directory for writing, mode 0600; fails when
    /// anything, a link included, is there already.
    pub fn create_new(&self, name: &OsStr) -> io::Result<std::fs::File> {
        let c = cstring(name.as_bytes())?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let flags = flags | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, c.as_c_str(), flags, Mode::from_raw_mode(0o600))?;
        Ok(std::fs::File::from(fd))
    }

    /// Rename `from` to `to`, both in this directory (replacing a file, or a link itself, at `to`).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (a, b) = (cstring(from.as_bytes())?, cstring(to.as_bytes())?);
        rustix::fs::renameat(&self.fd, a.as_c_str(), &self.fd, b.as_c_str())?;
        Ok(())
    }

    /// Remove the file (or link) `name` of this directory.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        self.unlink_at(&cstring(name.as_bytes())?, false)
    }

    /// `fstat` of the directory itself.
    pub fn stat_self(&self) -> io::Result<Stat> {
        Ok(rustix::fs::fstat(&self.fd)?)
    }

    /// `fstatat` of the entry `name`, never through a link.
    pub fn stat_at(&self, name: &CStr) -> io::Result<Stat> {
        Ok(rustix::fs::statat(
            &self.fd,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// Remove the entry `name`: an empty directory when `dir`, else a file or link.
    pub fn unlink_at(&self, name: &CStr, dir: bool) -> io::Result<()> {
        let flags = if dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        Ok(rustix::fs::unlinkat(&self.fd, name, flags)?)
    }

    /// The names in this directory (`.` and `..` left out), sorted, read through a fresh handle
    /// so this one's offset is untouched.
    pub fn names(&self) -> io::Result<Vec<CString>> {
        let fresh = self.open_child(c".")?;
        let mut buf = Vec::new();
        let mut folder = Folder::from_fd(fresh.fd, &mut buf);
        let mut names = Vec::new();
        folder.each(|name, _| {
            names.push(name.to_owned());
            Ok::<(), io::Error>(())
        })?;
        names.sort();
        Ok(names)
    }
}

/// Rename `from` to `to`, failing when `to` exists (never replacing an empty directory there).
/// A file system without `RENAME_NOREPLACE` gets a check, then a rename (a narrow window).
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let a = cstring(from.as_os_str().as_bytes())?;
    let b = cstring(to.as_os_str().as_bytes())?;
    let flags = RenameFlags::NOREPLACE;
    match rustix::fs::renameat_with(CWD, a.as_c_str(), CWD, b.as_c_str(), flags) {
        Ok(()) => Ok(()),
        Err(Errno::INVAL | Errno::NOSYS) => {
            if to.symlink_metadata().is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "target exists",
                ));
            }
            std::fs::rename(from, to)
        }
        Err(e) => Err(e.into()),
    }
}

/// `lstat(2)` of the path in `path` (its bytes, no NUL), straight from the caller's buffer: a
/// NUL is pushed for the call and popped after. The scan's lstat pass calls this once per index
/// entry; rustix's `lstat` wants a `&CStr`, whose check for an inner NUL and the copies of its
/// result cost some 250 instructions a file more (callgrind, 100,000 files: +25 M), this ~15.
#[allow(unsafe_code)]
pub fn lstat_in(path: &mut Vec<u8>) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    path.push(0);
    // SAFETY: `path` is NUL-terminated for the call (a NUL inside only shortens the path lstat
    // sees); lstat writes nothing but `st`.
    let rc = unsafe { libc::lstat(path.as_ptr().cast(), st.as_mut_ptr()) };
    path.pop();
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: lstat succeeded, so it filled `st`.
    Ok(unsafe { st.assume_init() })
}

/// What a folder's item is, as far as a walk needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    NotDir,
    /// The file system did not say (`DT_UNKNOWN`): lstat it.
    Unknown,
}

/// The buffer a folder is read into: glibc's `opendir` uses 32 KiB too.
const FOLDER_BUFFER: usize = 32 * 1024;

/// An open folder being read (`getdents64`), its names lent from the caller's buffer.
pub struct Folder<'buf> {
    raw: RawDir<'buf, OwnedFd>,
}

impl<'buf> Folder<'buf> {
    /// Open the folder at `path` (as `opendir(3)` does: a link to a folder is followed) to read
    /// into `buf`, which a walk reuses from folder to folder.
    pub fn open(path: &CStr, buf: &'buf mut Vec<u8>) -> io::Result<Folder<'buf>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        Ok(Folder::from_fd(fd, buf))
    }

    /// Read the folder open as `fd` (from its current offset) into `buf`.
    pub fn from_fd(fd: OwnedFd, buf: &'buf mut Vec<u8>) -> Folder<'buf> {
        buf.clear();
        buf.reserve(FOLDER_BUFFER);
        Folder {
            raw: RawDir::new(fd, buf.spare_capacity_mut()),
        }
    }

    /// Call `f` with each name (never `.` or `..`) and its kind, stopping at its first error.
    /// A callback rather than an iterator: each name lives in the buffer only until the next.
    pub fn each<E: From<io::Error>>(
        &mut self,
        mut f: impl FnMut(&CStr, Kind) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(entry) = self.raw.next() {
            let entry = entry.map_err(io::Error::from)?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Directory => Kind::Dir,
                FileType::Unknown => Kind::Unknown,
                _ => Kind::NotDir,
            };
            f(name, kind)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::fs::MetadataExt;

    /// The names and kinds [`Folder`] yields, sorted by name; `None` when it cannot open.
    fn listing(folder: &Path) -> Option<Vec<(String, Kind)>> {
        let path = cstring(folder.as_os_str().as_bytes()).unwrap();
        let mut buf = Vec::new();
        let mut reader = Folder::open(&path, &mut buf).ok()?;
        let mut items = Vec::new();
        reader
            .each(|name, kind| {
                items.push((name.to_str().unwrap().to_string(), kind));
                Ok::<(), io::Error>(())
            })
            .unwrap();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        Some(items)
    }

    /// The folder reader lists what std's `ReadDir` lists, with the kinds `lstat` gives.
    #[test]
    fn the_folder_reader_agrees_with_std() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join(".hidden"), "").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("link")).unwrap();
        let mut by_std: Vec<(String, Kind)> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let kind = match e.file_type().unwrap().is_dir() {
                    true => Kind::Dir,
                    false => Kind::NotDir,
                };
                (e.file_name().into_string().unwrap(), kind)
            })
            .collect();
        by_std.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(by_std.len(), 4);
        assert_eq!(listing(root), Some(by_std));
        assert_eq!(listing(&root.join("gone")), None);
        assert_eq!(listing(&root.join("a.txt")), None);
    }

    /// A folder larger than one buffer is read to its end, every name once.
    #[test]
    fn a_folder_larger_than_the_buffer_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let long = "n".repeat(200);
        for i in 0..400 {
            std::fs::write(dir.path().join(format!("{long}{i:04}")), "").unwrap();
        }
        let names = Dir::open(dir.path()).unwrap().names().unwrap();
        assert_eq!(names.len(), 400);
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(names[7].to_str().unwrap(), format!("{long}0007"));
    }

    /// `lstat_in` reads the entry itself, keeps the caller's buffer as it was, and reports a
    /// missing path as an error.
    #[test]
    fn lstat_in_describes_the_entry_and_restores_the_buffer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "12345").unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("link")).unwrap();
        let mut path = dir.path().join("f").into_os_string().into_vec();
        let before = path.clone();
        let st = lstat_in(&mut path).unwrap();
        assert_eq!(path, before);
        assert_eq!((st.st_size, st.st_mode & libc::S_IFMT), (5, libc::S_IFREG));
        let mut link = dir.path().join("link").into_os_string().into_vec();
        let st = lstat_in(&mut link).unwrap();
        assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFLNK);
        let mut gone = dir.path().join("gone").into_os_string().into_vec();
        let err = lstat_in(&mut gone).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    /// A handle opens a folder but neither a link to one nor a file.
    #[test]
    fn a_handle_never_opens_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("link")).unwrap();
        std::fs::write(root.join("file"), "").unwrap();
        assert!(Dir::open(&root.join("link")).is_err());
        assert!(Dir::open(&root.join("file")).is_err());
        let handle = Dir::open(root).unwrap();
        let link = handle.open_child(c"link").err().unwrap();
        // O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR on Linux, ELOOP elsewhere.
        assert!(matches!(
            link.raw_os_error(),
            Some(libc::ENOTDIR | libc::ELOOP)
        ));
        assert!(handle.child_dir(OsStr::new("link"), true).is_err());
        assert!(handle.open_child(c"sub").is_ok());
        let nul = Dir::open(Path::new("a\0b")).err().unwrap();
        assert_eq!(nul.kind(), io::ErrorKind::InvalidInput);
    }

    /// `child_dir` creates when asked, finds what is there, and says `None` for what is not.
    #[test]
    fn child_dir_creates_or_finds() {
        let dir = tempfile::tempdir().unwrap();
        let handle = Dir::open(dir.path()).unwrap();
        assert!(
            handle
                .child_dir(OsStr::new("new"), false)
                .unwrap()
                .is_none()
        );
        assert!(handle.child_dir(OsStr::new("new"), true).unwrap().is_some());
        assert!(dir.path().join("new").is_dir());
        assert!(handle.child_dir(OsStr::new("new"), true).unwrap().is_some());
        assert!(
            handle
                .child_dir(OsStr::new("new"), false)
                .unwrap()
                .is_some()
        );
    }

    /// Files are created new (never over anything), renamed and removed through the handle.
    #[test]
    fn files_are_created_renamed_and_removed_through_the_handle() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let handle = Dir::open(dir.path()).unwrap();
        let mut file = handle.create_new(OsStr::new("a")).unwrap();
        file.write_all(b"text").unwrap();
        let mode = std::fs::metadata(dir.path().join("a")).unwrap().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::os::unix::fs::symlink("a", dir.path().join("link")).unwrap();
        for taken in ["a", "link"] {
            let err = handle.create_new(OsStr::new(taken)).err().unwrap();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        }
        handle.rename(OsStr::new("a"), OsStr::new("b")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"text");
        handle.remove_file(OsStr::new("link")).unwrap();
        handle.remove_file(OsStr::new("b")).unwrap();
        assert!(handle.names().unwrap().is_empty());
    }

    /// `stat_at` describes the entry itself (a link as a link); `stat_self` the directory.
    #[test]
    fn stats_describe_the_entry_not_a_link_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", dir.path().join("link")).unwrap();
        let handle = Dir::open(dir.path()).unwrap();
        let kind = |st: Stat| FileType::from_raw_mode(st.st_mode);
        assert_eq!(kind(handle.stat_at(c"link").unwrap()), FileType::Symlink);
        assert_eq!(kind(handle.stat_at(c"sub").unwrap()), FileType::Directory);
        let own = handle.stat_self().unwrap();
        assert_eq!(own.st_ino, std::fs::metadata(dir.path()).unwrap().ino());
        assert!(handle.stat_at(c"gone").is_err());
        handle.unlink_at(c"sub", true).unwrap();
        assert!(!dir.path().join("sub").exists());
    }

    /// `rename_noreplace` moves onto a free name and refuses an existing one, even an empty
    /// directory (which a plain rename of a directory would replace).
    #[test]
    fn rename_noreplace_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let err = rename_noreplace(&a, &b).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(a.is_dir());
        rename_noreplace(&a, &c).unwrap();
        assert!(c.is_dir() && !a.exists());
    }
}
