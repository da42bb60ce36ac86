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

/// The hook script. `exe` is the closegate to call; `chained` runs the kept backup first;
/// `bases` are the refs (full names) guarded as the base and as the place the configuration is
/// read from: `refs/heads/main`, `refs/heads/master`, the configured base, and origin/HEAD with
/// its target when the configuration comes from there (`hook::refresh`).
///
/// Git starts the hook for every ref update, twice (`prepared`, then `committed`), so the script
/// answers what it can without starting closegate: the states other than `prepared` (git ignores
/// their exit code), and transactions that neither delete a branch nor move one of `bases` (tags,
/// remotes, a commit on a feature or an agent branch). The first line that does, or the 64th line
/// of a large transaction (sh reads byte by byte), hands every line read so far and the rest of the
/// input to closegate, which decides, with the hook's own path: closegate rewrites the `bases` line
/// when the configuration names a base the script does not hand over yet. Git tolerates a hook
/// that exits without reading all of its input.
pub fn script(exe: Option<&Path>, chained: bool, bases: &[String]) -> Vec<u8> {
    let word = match exe {
        Some(path) => sh_quote(path.as_os_str().as_bytes()),
        None => b"closegate".to_vec(),
    };
    script_with(&word, chained, bases)
}

/// [`script`] with the executable as the sh word assigned to `closegate=` (quoted already).
pub fn script_with(exe_word: &[u8], chained: bool, bases: &[String]) -> Vec<u8> {
    let mut text = Vec::new();
    text.extend_from_slice(b"#!/bin/sh\n");
    text.extend_from_slice(MARKER.as_bytes());
    text.extend_from_slice(ABOUT.as_bytes());
    if chained {
        text.extend_from_slice(CHAIN.as_bytes());
    }
    text.extend_from_slice(b"[ \"$1\" = prepared ] || exit 0\n");
    text.extend_from_slice(BASES.as_bytes());
    let mut words = String::from(" ");
    for base in bases {
        words.push_str(base);
        words.push(' ');
    }
    text.extend_from_slice(&sh_quote(words.as_bytes()));
    text.push(b'\n');
    text.extend_from_slice(SCAN.as_bytes());
    text.extend_from_slice(EXE.as_bytes());
    text.extend_from_slice(exe_word);
    text.extend_from_slice(FIND.as_bytes());
    text.extend_from_slice(
        b"{ printf '%s' \"$seen\"; cat; } | \"$closegate\" hook run reference-transaction \"$@\" \"$0\"\n",
    );
    text
}

/// The start of the line that names the guarded refs, and of the line naming the executable.
const BASES: &str = "bases=";
const EXE: &str = "closegate=";

/// What a hook closegate wrote was written with: the executable's sh word, whether it chains a
/// kept hook, and the guarded refs (full names; an older script's short names are branches).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baked {
    pub exe_word: Vec<u8>,
    pub chained: bool,
    pub bases: Vec<String>,
}

/// Read back what [`script`] wrote; `None` when `bytes` is not closegate's hook or lacks a line.
pub fn baked(bytes: &[u8]) -> Option<Baked> {
    if !is_ours(bytes) {
        return None;
    }
    let line = |start: &str| {
        bytes
            .split(|b| *b == b'\n')
            .find_map(|l| l.strip_prefix(start.as_bytes()))
    };
    let words = sh_unquote(line(BASES)?)?;
    let bases = String::from_utf8_lossy(&words)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| match w.starts_with("refs/") {
            true => w.to_string(),
            false => format!("refs/heads/{w}"),
        })
        .collect();
    let chained = bytes
        .windows(BACKUP_NAME.len())
        .any(|w| w == BACKUP_NAME.as_bytes());
    Some(Baked {
        exe_word: line(EXE)?.to_vec(),
        chained,
        bases,
    })
}

/// Pass what deletes no branch and moves no base without starting closegate. `wants` judges the
/// line in `old new ref`: one of `bases`, or a branch whose new value is all zeros (deleted, or
/// malformed: closegate then fails closed). Lines read are kept in `seen` for closegate.
const SCAN: &str = r#"wants() {
  case $bases in *" $ref "*) return 0 ;; esac
  case $ref in refs/heads/*) ;; *) return 1 ;; esac
  case $new in *[!0]*) return 1 ;; esac
  return 0
}
n=0
seen=
handoff=
while IFS=' ' read -r old new ref; do
  seen="$seen$old $new $ref
"
  if wants; then handoff=1; break; fi
  n=$((n + 1))
  if [ "$n" -ge 64 ]; then handoff=1; break; fi
done
if [ -z "$handoff" ] && [ -n "$ref" ] && wants; then
  seen="$seen$old $new $ref
"
  handoff=1
fi
[ -n "$handoff" ] || exit 0
"#;

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

/// Run the kept backup first, in every state, with the same arguments and input (kept in a
/// temporary file for closegate); refuse when it fails.
const CHAIN: &str = r#"case $0 in */*) hooks_dir=${0%/*} ;; *) hooks_dir=. ;; esac
backup="$hooks_dir/reference-transaction.closegate-backup"
input=$(mktemp "${TMPDIR:-/tmp}/closegate-hook.XXXXXX") || exit 1
trap 'rm -f "$input"' EXIT
cat >"$input" || exit 1
if [ -x "$backup" ]; then
  "$backup" "$@" <"$input" || {
    status=$?
    echo "closegate hook: the chained hook $backup failed with exit $status" >&2
    exit 1
  }
fi
exec <"$input"
"#;

/// The server hook's file name (SPEC §20).
pub const SERVER_HOOK_NAME: &str = "pre-receive";
/// Where `install --server --force` keeps a pre-receive hook closegate did not write.
pub const SERVER_BACKUP_NAME: &str = "pre-receive.closegate-backup";
/// The second line of the server hook closegate writes.
pub const SERVER_MARKER: &str =
    "# closegate pre-receive hook: written by `closegate hook install --server`";

/// The pre-receive hook (SPEC §20). Every push is handed to `closegate hook run pre-receive
/// <hook file>`, which runs the kept backup first when there is one (same input; it must accept)
/// and then judges the push.
///
/// When `exe` can stand in a `#!` line (absolute, no blank or control byte, the line under 128
/// bytes: what every kernel reads), the hook is that line and git starts closegate directly, with
/// no shell between: a pre-receive hook's time is the pusher's wait. If `exe` is later moved or
/// removed, git cannot start the hook and refuses every push ("cannot exec"): closed, as the gate
/// must fail. Otherwise the hook is a sh script that calls `exe`, or `closegate` on PATH, and
/// refuses the push when neither is there.
pub fn server_script(exe: Option<&Path>) -> Vec<u8> {
    if let Some(line) = exe.and_then(shebang) {
        let mut text = line;
        text.extend_from_slice(SERVER_MARKER.as_bytes());
        text.extend_from_slice(SERVER_ABOUT.as_bytes());
        text.extend_from_slice(SERVER_DIRECT.as_bytes());
        return text;
    }
    let mut text = Vec::new();
    text.extend_from_slice(b"#!/bin/sh\n");
    text.extend_from_slice(SERVER_MARKER.as_bytes());
    text.extend_from_slice(SERVER_ABOUT.as_bytes());
    text.extend_from_slice(b"closegate=");
    match exe {
        Some(path) => text.extend_from_slice(&sh_quote(path.as_os_str().as_bytes())),
        None => text.extend_from_slice(b"closegate"),
    }
    text.extend_from_slice(FIND.as_bytes());
    text.extend_from_slice(b"exec \"$closegate\" hook run pre-receive \"$0\"\n");
    text
}

/// The arguments a direct server hook's `#!` line passes. Linux hands them over as one argument
/// (`cli::parse` splits it), other kernels as three; either way the hook file comes next.
pub const SERVER_SHEBANG_ARGS: &str = "hook run pre-receive";

/// `#!<exe> hook run pre-receive\n`, when a kernel would run it as written.
fn shebang(exe: &Path) -> Option<Vec<u8>> {
    let raw = exe.as_os_str().as_bytes();
    let plain = raw.iter().all(|b| *b > b' ' && *b != 0x7f);
    if !exe.is_absolute() || !plain {
        return None;
    }
    let mut line = b"#!".to_vec();
    line.extend_from_slice(raw);
    line.push(b' ');
    line.extend_from_slice(SERVER_SHEBANG_ARGS.as_bytes());
    line.push(b'\n');
    (line.len() < 128).then_some(line)
}

/// After the description of a direct server hook: what happens when the executable moves.
const SERVER_DIRECT: &str = "\
# git starts the closegate named on the first line directly. If that file is moved or removed,
# every push is refused (git: \"cannot exec\"): run `closegate hook install --server` again.
";

/// What the server hook is for, after the marker line.
const SERVER_ABOUT: &str = "
# `closegate hook uninstall --server` removes it. It refuses a push that moves the base onto
# agent commits short of VERIFIED (an attestation, or the checks run here), or deletes an
# unmerged agent branch (SPEC §20). The report goes to the pusher as `remote:` lines.
";

/// Whether `bytes` is the server hook closegate wrote: its second line is `SERVER_MARKER`.
pub fn is_ours_server(bytes: &[u8]) -> bool {
    bytes.split(|b| *b == b'\n').nth(1) == Some(SERVER_MARKER.as_bytes())
}

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

/// Read back a word [`sh_quote`] wrote (quoted runs and `\'`); `None` for an unclosed quote.
fn sh_unquote(word: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = word;
    while let Some((&first, tail)) = rest.split_first() {
        match first {
            b'\'' => {
                let end = tail.iter().position(|b| *b == b'\'')?;
                out.extend_from_slice(&tail[..end]);
                rest = &tail[end + 1..];
            }
            b'\\' => {
                let (&next, tail) = tail.split_first()?;
                out.push(next);
                rest = tail;
            }
            _ => {
                out.push(first);
                rest = tail;
            }
        }
    }
    Some(out)
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
        let text = script(
            Some(Path::new("/opt/cg/closegate")),
            false,
            &["main".into(), "it's".into()],
        );
        assert!(is_ours(&text));
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(text.contains("closegate='/opt/cg/closegate'\n"));
        assert!(!text.contains("closegate-backup"));
        assert!(text.contains("[ \"$1\" = prepared ] || exit 0\n"));
        assert!(text.contains("\nbases=' main it'\\''s '\n"), "{text}");
        assert!(text.ends_with("| \"$closegate\" hook run reference-transaction \"$@\" \"$0\"\n"));
        let chained = String::from_utf8(script(None, true, &[])).unwrap();
        assert!(chained.contains("closegate=closegate\n"));
        assert!(chained.contains("reference-transaction.closegate-backup"));
    }

    #[test]
    fn what_a_script_was_written_with_reads_back() {
        let bases = ["refs/heads/main".to_string(), "refs/heads/it's".to_string()];
        let text = script(Some(Path::new("/opt/c g/closegate")), true, &bases);
        let baked = baked(&text).unwrap();
        assert_eq!(baked.bases, bases);
        assert!(baked.chained);
        assert_eq!(baked.exe_word, b"'/opt/c g/closegate'".to_vec());
        assert_eq!(script_with(&baked.exe_word, true, &bases), text);
        let plain = script(None, false, &[]);
        let baked = super::baked(&plain).unwrap();
        assert_eq!(
            (baked.exe_word, baked.chained),
            (b"closegate".to_vec(), false)
        );
        // an older script named branches by their short names
        let old = b"#!/bin/sh\n".iter().copied();
        let mut old: Vec<u8> = old.collect();
        old.extend_from_slice(MARKER.as_bytes());
        old.extend_from_slice(b"\nbases=' main master '\nclosegate='/x'\n");
        assert_eq!(
            super::baked(&old).unwrap().bases,
            ["refs/heads/main", "refs/heads/master"]
        );
        assert_eq!(super::baked(b"#!/bin/sh\nbases=' main '\n"), None);
    }

    #[test]
    fn the_server_hook_is_a_shebang_line_only_where_every_kernel_reads_one() {
        let direct = server_script(Some(Path::new("/opt/cg/closegate")));
        assert!(is_ours_server(&direct));
        let direct = String::from_utf8(direct).unwrap();
        assert!(direct.starts_with("#!/opt/cg/closegate hook run pre-receive\n"));
        let long = format!("/{}/closegate", "d".repeat(100));
        let odd = [
            "relative/closegate",
            "/a b/closegate",
            "/a\tb/closegate",
            "/a\u{7f}/closegate",
            long.as_str(),
        ];
        for exe in odd {
            let text = server_script(Some(Path::new(exe)));
            assert!(is_ours_server(&text), "{exe}");
            let text = String::from_utf8(text).unwrap();
            assert!(text.starts_with("#!/bin/sh\n"), "{exe}: {text}");
            assert!(text.ends_with("hook run pre-receive \"$0\"\n"), "{text}");
        }
        let path = String::from_utf8(server_script(None)).unwrap();
        assert!(path.contains("closegate=closegate\n"), "{path}");
    }

    #[test]
    fn a_foreign_hook_mentioning_closegate_is_not_ours() {
        assert!(!is_ours(
            b"#!/bin/sh\nclosegate hook run reference-transaction \"$@\"\n"
        ));
        assert!(!is_ours(b""));
    }
}
