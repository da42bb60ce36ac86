//! Writing a status document (SPEC §17): the document `close` writes from git, in the order the
//! grammar reads it, keeping the agent's own prose items as written. Pure text: what goes in is
//! given ([`Draft`]); nothing here reads git or a file.

use std::path::PathBuf;

use super::items::{self, Part, RawItem};
use super::{ParseOptions, State};

/// The keys `close` always writes itself; an existing item with one of them is replaced.
const WRITTEN: [&str; 3] = ["state", "last commit", "updated"];

/// What the document says: from git (state, work commit and its subject, branch, worktree, the
/// time), and the items the command line gives (each replaces the existing document's).
#[derive(Debug, Clone)]
pub struct Draft<'a> {
    pub slug: &'a str,
    pub state: State,
    /// The work commit's full id.
    pub work: String,
    pub subject: String,
    pub branch: String,
    pub worktree: PathBuf,
    pub updated: String,
    pub abstract_text: Option<&'a str>,
    pub done: &'a [String],
    pub blocked_on: Option<&'a str>,
    pub artifacts: &'a [String],
}

/// The document: H1, state, abstract, last commit, done, next / blocked-on, artifacts, evidence,
/// note, updated, any other item kept as written, then the close line for a returned state.
pub fn compose(w: &Draft<'_>, existing: Option<&str>) -> String {
    let slug = w.slug;
    let (kept, others) = kept_items(existing);
    let find = |key: &str| -> Vec<String> {
        kept.iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, item)| item.render(&written_key(&item.key)))
            .collect()
    };
    let mut out = format!("# STATUS — {slug}\n\n- state: {}\n", w.state.as_str());
    match &w.abstract_text {
        Some(text) => out.push_str(&prose("abstract", text)),
        None => find("abstract").iter().for_each(|s| out.push_str(s)),
    }
    let sha = &w.work;
    out.push_str(&format!("- last commit: {sha} — {}\n", w.subject));
    if w.done.is_empty() {
        find("done").iter().for_each(|s| out.push_str(s));
    } else {
        out.push_str("- done:\n");
        for claim in w.done {
            out.push_str(&format!("  - {}\n", one_line(claim)));
        }
    }
    match &w.blocked_on {
        Some(text) => out.push_str(&prose("next / blocked-on", text)),
        None => find("next / blocked-on")
            .iter()
            .for_each(|s| out.push_str(s)),
    }
    let artifacts = find("artifacts");
    if !w.artifacts.is_empty() {
        out.push_str("- artifacts:\n");
        for path in w.artifacts {
            out.push_str(&format!("  - {}\n", one_line(path)));
        }
    } else if !artifacts.is_empty() {
        artifacts.iter().for_each(|s| out.push_str(s));
    } else {
        out.push_str("- artifacts:\n");
    }
    for key in ["evidence", "note"] {
        find(key).iter().for_each(|s| out.push_str(s));
    }
    out.push_str(&format!("- updated: {}\n", w.updated));
    for line in others {
        out.push_str(&line);
        out.push('\n');
    }
    if w.state.is_returned() {
        out.push_str(&format!(
            "\nCLOSE-OK · {slug} · commit {sha} · branch {} · worktree {}\n",
            w.branch,
            w.worktree.display()
        ));
    }
    out
}

/// The existing document's items by canonical key (the keys `close` writes itself left out),
/// and every other item or non-blank line kept as written (close lines left out).
fn kept_items(existing: Option<&str>) -> (Vec<(&'static str, RawItem)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut others = Vec::new();
    let Some(text) = existing else {
        return (kept, others);
    };
    let (_, parts) = items::split(text);
    for part in parts {
        match part {
            Part::Item(item) => match items::canonical_key(&item.key) {
                Some(key) if WRITTEN.contains(&key) => {}
                Some(key) => kept.push((key, item)),
                None => others.push(item.render(&item.key).trim_end().to_string()),
            },
            Part::Other(line) => {
                if !line.trim().is_empty() && !items::is_close_like(&line) {
                    others.push(line);
                }
            }
        }
    }
    (kept, others)
}

/// The key an item is written with: as written when that is a valid spelling (the canonical key
/// or an older one the parser reads), else the canonical key (`- Note:` becomes `- note:`).
fn written_key(key: &str) -> String {
    const VALID: [&str; 10] = [
        "abstract",
        "done",
        "next / blocked-on",
        "next",
        "blocked-on",
        "blocked on",
        "artifacts",
        "return",
        "evidence",
        "note",
    ];
    if VALID.contains(&key) {
        key.to_string()
    } else {
        items::canonical_key(key).unwrap_or(key).to_string()
    }
}

/// A prose item: the first line after the key, every further line indented as a continuation.
fn prose(key: &str, text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim();
    let mut out = if first.is_empty() {
        format!("- {key}:\n")
    } else {
        format!("- {key}: {first}\n")
    };
    for line in lines {
        out.push_str(&format!("  {}\n", line.trim()));
    }
    out
}

/// Text for one sub-bullet: line breaks folded into spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The slug of the existing document's H1, when it has a valid one.
pub fn existing_slug(text: &str) -> Option<String> {
    super::parse(text.as_bytes(), ParseOptions::default())
        .doc
        .map(|d| d.slug)
}
