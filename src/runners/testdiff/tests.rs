//! Cross-language tests of the reader: unreadable input, the cross-file rules, the property
//! that a file compared with itself yields nothing, and the cost of a 1,000-line diff.

use super::*;

/// The edits of one file edited from `old` to `new`, as (test, kind, detail).
pub(super) fn edits(
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
) -> Vec<(String, &'static str, String)> {
    let file = FileDiff {
        path: path.as_bytes(),
        old: old.map(str::as_bytes),
        new: new.map(str::as_bytes),
    };
    let result = read(&[file]);
    let edits = result[0]
        .outcome
        .clone()
        .unwrap_or_else(|why| panic!("{path} unreadable: {why}"));
    edits
        .into_iter()
        .map(|e| (e.test, e.kind.as_str(), e.detail))
        .collect()
}

/// The (test, kind) pairs of one file's edit.
pub(super) fn kinds(path: &str, old: &str, new: &str) -> Vec<(String, &'static str)> {
    edits(path, Some(old), Some(new))
        .into_iter()
        .map(|(t, k, _)| (t, k))
        .collect()
}

/// Asserts that the edit gives exactly `want` and returns the details.
pub(super) fn expect(path: &str, old: &str, new: &str, want: &[(&str, &str)]) -> Vec<String> {
    let got = edits(path, Some(old), Some(new));
    let pairs: Vec<(&str, &str)> = got.iter().map(|(t, k, _)| (t.as_str(), *k)).collect();
    assert_eq!(pairs, want, "details: {got:?}");
    got.into_iter().map(|(_, _, d)| d).collect()
}
