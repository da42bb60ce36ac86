//! A status document as raw items, for the commands that rewrite one (`close`, `lint --fix`):
//! the H1, then each `- KEY: VALUE` item with its continuation lines exactly as written, then
//! whatever follows. Nothing here judges; `parse` does.

/// One header item: the key as written, the text after `:` on its first line, and its
/// continuation lines (indented, or blank lines between them) verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawItem {
    pub key: String,
    pub value: String,
    pub rest: Vec<String>,
}

/// A line of the body: an item, or any other line kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Item(RawItem),
    Other(String),
}

/// The canonical key a written key stands for: exact, an older spelling, or the same words in
/// another case or with other spaces, hyphens or underscores. `None` for anything else.
pub fn canonical_key(key: &str) -> Option<&'static str> {
    let folded: String = key
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == '_' || c == '-' { ' ' } else { c })
        .collect();
    let words: Vec<&str> = folded.split_whitespace().collect();
    let joined = words.join(" ");
    Some(match joined.as_str() {
        "state" => "state",
        "abstract" => "abstract",
        "last commit" | "commit" | "commits" => "last commit",
        "done" => "done",
        "next / blocked on" | "next/blocked on" | "next" | "blocked on" | "next blocked on" => {
            "next / blocked-on"
        }
        "artifacts" | "return" => "artifacts",
        "evidence" => "evidence",
        "note" => "note",
        "updated" => "updated",
        _ => return None,
    })
}

/// The H1 line (if the first non-blank line looks like one) and the parts after it.
pub fn split(text: &str) -> (Option<String>, Vec<Part>) {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut h1 = None;
    let mut parts = Vec::new();
    for line in lines.by_ref() {
        if line.trim().is_empty() {
            continue;
        }
        if line.trim_start().starts_with('#') {
            h1 = Some(line.to_string());
        } else {
            parts.push(classify(line));
        }
        break;
    }
    for line in lines {
        // A blank line stays with the item above (a continuation may follow it, SPEC §2);
        // `render` drops the blank lines an item ends with.
        let continues = line.starts_with("  ") || line.starts_with('\t') || line.trim().is_empty();
        match parts.last_mut() {
            Some(Part::Item(item)) if continues => item.rest.push(line.to_string()),
            _ => parts.push(classify(line)),
        }
    }
    (h1, parts)
}

fn classify(line: &str) -> Part {
    if let Some(body) = line.strip_prefix("- ")
        && let Some((key, value)) = body.split_once(':')
        && !key.contains('`')
        && key.len() <= 40
    {
        return Part::Item(RawItem {
            key: key.to_string(),
            value: value.trim_start().to_string(),
            rest: Vec::new(),
        });
    }
    Part::Other(line.to_string())
}

impl RawItem {
    /// The item as lines, with `key` as the key.
    pub fn render(&self, key: &str) -> String {
        let mut out = if self.value.is_empty() {
            format!("- {key}:\n")
        } else {
            format!("- {key}: {}\n", self.value)
        };
        let mut rest = self.rest.clone();
        while rest.last().is_some_and(|l| l.trim().is_empty()) {
            rest.pop();
        }
        for line in rest {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// Whether a line is meant as a close line (SPEC §3).
pub fn is_close_like(line: &str) -> bool {
    let t = line.trim();
    let dashy = |c: char| c == '-' || ('\u{2010}'..='\u{2015}').contains(&c) || c == '\u{2212}';
    t.strip_prefix("CLOSE")
        .and_then(|r| r.chars().next())
        .is_some_and(dashy)
        || line.contains(" · commit ")
}
