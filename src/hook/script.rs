//! The text of the reference-transaction hook closegate writes, and how to recognise it.
//!
//! The script is plain POSIX sh so it runs wherever git runs hooks. It calls the closegate that
//! installed it by absolute path (so a test build or a `cargo install` outside PATH keeps working)
//! and falls back to `closegate` on PATH when that file is gone.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The hook's file name.
pub const HOOK_NAME: &str = "reference-transaction";
/// Where `install --force` keeps a hook closegate did not write.
pub const BACKUP_NAME: &str = "reference-transaction.closegate-backup";
/// The second line of every hook closegate writes; `uninstall` and `install` look for it.
pub const MARKER: &str =
    "# closegate reference-transaction hook: written by `closegate hook install`";

/// The hook script. `exe` is the closegate to call; `chained` runs the kept backup first.
pub fn script(exe: Option<&Path>, chained: bool) -> Vec<u8> {
    let mut text = Vec::new();
    text.extend_from_slice(b"#!/bin/sh\n");
    text.extend_from_slice(MARKER.as_bytes());
    text.extend_from_slice(ABOUT.as_bytes());
    text.extend_from_slice(b"closegate=");
    match exe {
        Some(path) => text.extend_from_slice(&sh_quote(path.as_os_str().as_bytes())),
        None => text.extend_from_slice(b"closegate"),
    }
    text.extend_from_slice(FIND.as_bytes());
    if chained {
        text.extend_from_slice(CHAIN.as_bytes());
    }
    text.extend_from_slice(b"exec \"$closegate\" hook run reference-transaction \"$@\"\n");
    text
}

/// What the hook is for and how to get past it, after the marker line.
const ABOUT: &str = "
# `closegate hook uninstall` removes it. In state `prepared` it refuses to delete or merge
# an agent branch that has not passed the gate (SPEC §9).
# bypass deliberately: git -c core.hooksPath=/dev/null <command>
";

/// Fall back to `closegate` on PATH; fail closed when there is none.
const FIND: &str = r#"
if [ ! -x "$closegate" ]; then
  closegate=closegate
  command -v closegate >/dev/null 2>&1 || {
    echo "closegate hook: cannot find the closegate executable; bypass deliberately: git -c core.hooksPath=/dev/null <command>" >&2
    exit 1
  }
fi
"#;

/// Run the kept backup first with the same arguments and input; refuse when it refuses.
const CHAIN: &str = r#"case $0 in */*) hooks_dir=${0%/*} ;; *) hooks_dir=. ;; esac
backup="$hooks_dir/reference-transaction.closegate-backup"
if [ -x "$backup" ]; then
  input=$(mktemp "${TMPDIR:-/tmp}/closegate-hook.XXXXXX") || exit 1
  trap 'rm -f "$input"' EXIT
  cat >"$input" || exit 1
  "$backup" "$@" <"$input" || {
    status=$?
    echo "closegate hook: the chained hook $backup failed with exit $status" >&2
    exit 1
  }
  "$closegate" hook run reference-transaction "$@" <"$input"
  exit $?
fi
"#;

/// Whether `bytes` is a hook closegate wrote: its second line is `MARKER`.
pub fn is_ours(bytes: &[u8]) -> bool {
    bytes.split(|b| *b == b'\n').nth(1) == Some(MARKER.as_bytes())
}

/// Single-quote bytes for sh: `'` becomes `'\''`.
fn sh_quote(raw: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in raw {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(sh_quote(b"/a b/it's"), b"'/a b/it'\\''s'".to_vec());
    }

    #[test]
    fn the_script_is_recognised_as_ours_and_names_the_executable() {
        let text = script(Some(Path::new("/opt/cg/closegate")), false);
        assert!(is_ours(&text));
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(text.contains("closegate='/opt/cg/closegate'\n"));
        assert!(!text.contains("closegate-backup"));
        assert!(text.ends_with("exec \"$closegate\" hook run reference-transaction \"$@\"\n"));
        let chained = String::from_utf8(script(None, true)).unwrap();
        assert!(chained.contains("closegate=closegate\n"));
        assert!(chained.contains("reference-transaction.closegate-backup"));
    }

    #[test]
    fn a_foreign_hook_mentioning_closegate_is_not_ours() {
        assert!(!is_ours(
            b"#!/bin/sh\nclosegate hook run reference-transaction \"$@\"\n"
        ));
        assert!(!is_ours(b""));
    }
}
