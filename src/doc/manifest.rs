//! The artifact manifest `artifacts` / `return` (SPEC §2): one relative path per sub-bullet,
//! the list the teardown reads. A trailing `/` marks a directory and is kept.

use std::collections::HashMap;

use super::Entry;
use super::scan::{Item, Line};
use super::text::{describe, snippet};
use crate::catalog::Code;
use crate::finding::Finding;

/// The valid, distinct paths of the manifest; invalid and repeated entries are reported.
pub fn artifacts(item: &Item<'_>, out: &mut Vec<Finding>) -> Vec<Entry> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut paths = Vec::new();
    for entry in entries(item, out) {
        if let Some(fault) = path_fault(entry.text) {
            let msg = format!(
                "artifact `{}` is not a relative path inside the repository: {fault}",
                snippet(entry.text)
            );
            out.push(Finding::new(Code::DocArtifactPathInvalid, msg).at_line(entry.no));
            continue;
        }
        if let Some(first) = seen.get(entry.text) {
            let msg = format!(
                "artifact `{}` on line {} repeats line {first}; list each path once",
                snippet(entry.text),
                entry.no
            );
            out.push(Finding::new(Code::DocArtifactDuplicated, msg).at_line(entry.no));
            continue;
        }
        seen.insert(entry.text, entry.no);
        paths.push(Entry {
            text: entry.text.to_string(),
            line: entry.no,
        });
    }
    paths
}

/// The raw entries: the inline value (when present) and every `- ` sub-bullet, backticks
/// stripped. Other continuation lines are not paths: reported as stray and ignored.
fn entries<'a>(item: &Item<'a>, out: &mut Vec<Finding>) -> Vec<Line<'a>> {
    let mut found = Vec::new();
    if !item.value.is_empty() {
        found.push(Line {
            no: item.line,
            text: unquote(item.value),
        });
    }
    for line in &item.cont {
        let text = line.text.trim();
        match text.strip_prefix("- ").or((text == "-").then_some("")) {
            Some(path) => found.push(Line {
                no: line.no,
                text: unquote(path.trim()),
            }),
            None => {
                let msg = format!(
                    "expected a sub-bullet `  - path` under `- {}:`, found `{}`; the line is ignored",
                    item.key,
                    snippet(text)
                );
                out.push(Finding::new(Code::DocStrayLine, msg).at_line(line.no));
            }
        }
    }
    found
}

/// Strip one pair of surrounding backticks.
fn unquote(text: &str) -> &str {
    text.strip_prefix('`')
        .and_then(|t| t.strip_suffix('`'))
        .unwrap_or(text)
}

/// Why `path` cannot name a file of the commit's tree, if it cannot.
pub fn path_fault(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("the entry is empty".to_string());
    }
    if path.contains('\0') {
        return Some("it contains a NUL character".to_string());
    }
    if let Some(c) = path.chars().find(|c| c.is_control()) {
        return Some(format!("it contains the control character {}", describe(c)));
    }
    if path.contains('\\') {
        return Some("it contains a backslash; separate components with '/'".to_string());
    }
    if path.starts_with('/') {
        return Some("it is absolute; write it relative to the repository root".to_string());
    }
    let dir = path.strip_suffix('/').unwrap_or(path);
    if let Some(c) = dir.split('/').find(|c| *c == "." || *c == "..") {
        return Some(format!("it has a `{c}` component"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::path_fault;

    #[test]
    fn path_rules() {
        for ok in [
            "invoice/export.go",
            "docs/",
            "a b/c.txt",
            ".github/workflows/ci.yml",
            "a..b",
        ] {
            assert_eq!(path_fault(ok), None, "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "./a",
            "a/.",
            "a\\b",
            "a\0b",
            "a\u{1b}b",
            "a/./",
        ] {
            assert!(path_fault(bad).is_some(), "{bad:?}");
        }
    }
}
