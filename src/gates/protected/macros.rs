//! C and C++ code that redefines a macro the test harness defines (issue 37: jsmn's `jsmn.h`
//! redefining the harness's `check`, so every assertion passes): a `#define NAME` or `#undef
//! NAME` added to or removed from a source file off `tests`, where `NAME` is defined by a C
//! file on `tests` in the base's tree, changes what the tests assert. It is reported with the
//! other code that behaves differently under test ([`super::inline`]).

use std::collections::BTreeMap;

use anyhow::Result;
use git2::Oid;

use crate::config::Config;
use crate::repo::Repo;

/// C-family extensions.
const C_FILES: [&[u8]; 7] = [b".c", b".h", b".cc", b".cpp", b".hpp", b".cxx", b".hh"];

/// Whether `path` is a C or C++ file.
pub fn is_c(path: &[u8]) -> bool {
    C_FILES.iter().any(|e| path.ends_with(e))
}

/// The `#define`/`#undef` lines of `src`, each with the macro's name (trimmed, spaces folded).
fn directives(src: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(src);
    let mut out = Vec::new();
    for line in text.lines() {
        let folded = line.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(rest) = folded.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(rest) = rest
            .strip_prefix("define ")
            .or_else(|| rest.strip_prefix("undef "))
        else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push((name, folded));
        }
    }
    out
}

/// The `#define`/`#undef` lines added (`+ `) or removed (`- `) between the two versions.
pub fn changed_directives(base: Option<&[u8]>, commit: Option<&[u8]>) -> Vec<(String, String)> {
    let mut old = base.map(directives).unwrap_or_default();
    let new = commit.map(directives).unwrap_or_default();
    let mut out = Vec::new();
    for (name, line) in new {
        match old.iter().position(|(_, l)| *l == line) {
            Some(i) => {
                old.remove(i);
            }
            None => out.push((name, format!("+ {line}"))),
        }
    }
    out.extend(
        old.into_iter()
            .map(|(name, line)| (name, format!("- {line}"))),
    );
    out
}

/// The macros the C files on `tests` define in `commit`'s tree, each with the first file that
/// defines it.
pub fn harness_macros(
    repo: &Repo,
    config: &Config,
    commit: Oid,
) -> Result<BTreeMap<String, String>> {
    let mut found = BTreeMap::new();
    for change in repo.changes(None, commit)? {
        let path = change.new_bytes.as_slice();
        if !is_c(path) || !config.surfaces_for(path).iter().any(|s| s == "tests") {
            continue;
        }
        let Some(src) = repo.read_file(commit, path)? else {
            continue;
        };
        for (name, line) in directives(&src) {
            if line.starts_with("#define") || line.starts_with("# define") {
                found.entry(name).or_insert_with(|| change.new_path.clone());
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_and_removed_directives_are_named() {
        let base = b"#ifndef JSMN_H\n#define JSMN_H\nint x;\n";
        let commit = b"#ifndef JSMN_H\n#define JSMN_H\n#undef check\n#  define check(c)  (void)(c)\nint x;\n";
        let found = changed_directives(Some(base), Some(commit));
        assert_eq!(
            found,
            [
                ("check".to_string(), "+ #undef check".to_string()),
                (
                    "check".to_string(),
                    "+ # define check(c) (void)(c)".to_string()
                ),
            ]
        );
        assert!(changed_directives(Some(base), Some(base)).is_empty());
    }
}
