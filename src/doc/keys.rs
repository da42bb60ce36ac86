//! The closed key set (SPEC §2): exact matching, older spellings, near misses and duplicates.

use super::scan::Item;
use super::text::snippet;
use crate::catalog::Code;
use crate::finding::Finding;

/// The canonical keys of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    State,
    Abstract,
    LastCommit,
    Done,
    Next,
    Artifacts,
    Evidence,
    Note,
    Updated,
}

impl Key {
    const ALL: [Key; 9] = [
        Key::State,
        Key::Abstract,
        Key::LastCommit,
        Key::Done,
        Key::Next,
        Key::Artifacts,
        Key::Evidence,
        Key::Note,
        Key::Updated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Key::State => "state",
            Key::Abstract => "abstract",
            Key::LastCommit => "last commit",
            Key::Done => "done",
            Key::Next => "next / blocked-on",
            Key::Artifacts => "artifacts",
            Key::Evidence => "evidence",
            Key::Note => "note",
            Key::Updated => "updated",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Older spellings read as the canonical key with `doc-key-alias`.
const ALIASES: &[(&str, Key)] = &[
    ("last-commit", Key::LastCommit),
    ("commit", Key::LastCommit),
    ("commits", Key::LastCommit),
    ("next", Key::Next),
    ("blocked-on", Key::Next),
    ("blocked on", Key::Next),
    ("return", Key::Artifacts),
];

/// Whether `key`, as written, is one of the older spellings of SPEC §2.
pub fn is_alias(key: &str) -> bool {
    ALIASES.iter().any(|(alias, _)| *alias == key)
}

/// The first item of each canonical key, after aliases; duplicates and unknown keys dropped.
#[derive(Debug, Default)]
pub struct Header<'s, 'a> {
    slots: [Option<&'s Item<'a>>; 9],
}

impl<'s, 'a> Header<'s, 'a> {
    pub fn get(&self, key: Key) -> Option<&'s Item<'a>> {
        self.slots[key.index()]
    }
}

/// Resolve every item's key, reporting aliases, unknown keys and duplicates.
pub fn resolve<'s, 'a>(items: &'s [Item<'a>], findings: &mut Vec<Finding>) -> Header<'s, 'a> {
    let mut header = Header::default();
    for item in items {
        let Some(key) = canonical(item, findings) else {
            continue;
        };
        match header.slots[key.index()] {
            Some(first) => findings.push(duplicated(key, first, item)),
            None => header.slots[key.index()] = Some(item),
        }
    }
    header
}

/// The canonical key of an item, reporting an alias or an unknown key.
fn canonical(item: &Item<'_>, findings: &mut Vec<Finding>) -> Option<Key> {
    if let Some(key) = Key::ALL.into_iter().find(|k| k.name() == item.key) {
        return Some(key);
    }
    if let Some((alias, key)) = ALIASES.iter().find(|(a, _)| *a == item.key) {
        let msg = format!(
            "older key spelling `{alias}` read as `{}`; write `{}`",
            key.name(),
            key.name()
        );
        findings.push(Finding::new(Code::DocKeyAlias, msg).at_line(item.line));
        return Some(*key);
    }
    findings.push(unknown(item));
    None
}

fn unknown(item: &Item<'_>) -> Finding {
    let found = snippet(item.key);
    let msg = match near_miss(item.key) {
        Some(key) => format!(
            "key `{found}` is not in the closed key set; keys match exactly (case, spaces and \
             punctuation): write `{}`",
            key.name()
        ),
        None => format!(
            "key `{found}` is not in the closed key set; expected one of: {}",
            known_keys()
        ),
    };
    Finding::new(Code::DocKeyUnknown, msg).at_line(item.line)
}

/// The known key that `key` equals once case, spaces and punctuation are ignored.
fn near_miss(key: &str) -> Option<Key> {
    let folded = fold(key);
    if folded.is_empty() {
        return None;
    }
    folded_names()
        .iter()
        .find(|(name, _)| *name == folded)
        .map(|(_, k)| *k)
}

/// Every key and alias spelling, folded once (a document may hold thousands of unknown keys).
fn folded_names() -> &'static [(String, Key)] {
    static FOLDED: std::sync::OnceLock<Vec<(String, Key)>> = std::sync::OnceLock::new();
    FOLDED.get_or_init(|| {
        let names = Key::ALL.iter().map(|k| (k.name(), *k));
        names
            .chain(ALIASES.iter().copied())
            .map(|(name, key)| (fold(name), key))
            .collect()
    })
}

/// The closed key set as one comma-separated list, built once.
fn known_keys() -> &'static str {
    static KNOWN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| {
        let names: Vec<&str> = Key::ALL.iter().map(|k| k.name()).collect();
        names.join(", ")
    })
}

fn fold(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn duplicated(key: Key, first: &Item<'_>, again: &Item<'_>) -> Finding {
    let written = if again.key == key.name() {
        format!("`{}`", key.name())
    } else {
        format!("`{}` (read as `{}`)", snippet(again.key), key.name())
    };
    let msg = format!(
        "key {written} on line {} repeats the key of line {}; only line {} is read, delete one",
        again.line, first.line, first.line
    );
    Finding::new(Code::DocKeyDuplicated, msg).at_line(again.line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_name_the_known_key() {
        assert_eq!(near_miss("State"), Some(Key::State));
        assert_eq!(near_miss("last_commit"), Some(Key::LastCommit));
        assert_eq!(near_miss("Next/Blocked-On"), Some(Key::Next));
        assert_eq!(near_miss("Commit"), Some(Key::LastCommit));
        assert_eq!(near_miss("status"), None);
        assert_eq!(near_miss("--"), None);
    }
}
