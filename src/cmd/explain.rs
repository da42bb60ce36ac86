//! `closegate explain`: what a finding code means, what causes it and how to fix it (SPEC §14).

use std::io::Write;

use crate::catalog::{self, CodeInfo};
use crate::finding::Severity;
use crate::render::escape;

/// Explain a finding code: its severity, gate, what usually causes it and how to fix it.
///
/// Exit 0 when the code is known; 2 (with the closest codes) when it is not.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding code, e.g. `close-commit-not-tip` (ASCII case is ignored).
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,

    /// Print every code, one per line: code, severity and gate in aligned columns.
    #[arg(long)]
    pub list: bool,
}

/// How many near codes an unknown code's error names.
const SUGGESTIONS: usize = 3;

pub fn run(args: Args) -> anyhow::Result<i32> {
    if args.list {
        write!(crate::term::human(), "{}", list())?;
        return Ok(0);
    }
    let code = args.code.unwrap_or_default();
    match find(&code) {
        Some(info) => {
            write!(crate::term::human(), "{}", describe(info))?;
            Ok(0)
        }
        None => anyhow::bail!(
            "unknown finding code '{}'; closest: {} (`closegate explain --list` shows all)",
            escape(&code),
            closest(&code, SUGGESTIONS).join(", ")
        ),
    }
}

/// The catalog entry for `code`, ignoring ASCII case and surrounding whitespace or backticks.
pub fn find(code: &str) -> Option<&'static CodeInfo> {
    let wanted = normalise(code);
    catalog::CODES.iter().find(|c| c.code.as_str() == wanted)
}

/// The explanation `closegate explain CODE` prints.
pub fn describe(info: &CodeInfo) -> String {
    format!(
        "{code}\n\
         severity  {severity} ({effect})\n\
         gate      {gate}\n\
         when      {summary}\n\
         cause     {cause}\n\
         fix       {fix}\n",
        code = info.code,
        severity = info.severity.as_str(),
        effect = effect(info.severity),
        gate = info.gate.as_str(),
        summary = info.summary,
        cause = info.cause,
        fix = info.fix,
    )
}

/// Every code with its severity and gate, one per line, in catalog order.
pub fn list() -> String {
    let width = catalog::CODES
        .iter()
        .map(|c| c.code.as_str().len())
        .max()
        .unwrap_or(0);
    catalog::CODES
        .iter()
        .map(|c| {
            format!(
                "{:<width$}  {:<8}  {}\n",
                c.code.as_str(),
                c.severity.as_str(),
                c.gate.as_str()
            )
        })
        .collect()
}

/// The `n` catalog codes nearest to `code`: containment first, then edit distance, then shared
/// prefix, then catalog order.
pub fn closest(code: &str, n: usize) -> Vec<&'static str> {
    let wanted = normalise(code);
    let mut ranked: Vec<(bool, usize, std::cmp::Reverse<usize>, usize, &str)> = catalog::CODES
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let contains = !wanted.is_empty() && c.code.as_str().contains(&wanted);
            let prefix = shared_prefix(&wanted, c.code.as_str());
            (
                !contains,
                levenshtein(&wanted, c.code.as_str()),
                std::cmp::Reverse(prefix),
                i,
                c.code.as_str(),
            )
        })
        .collect();
    ranked.sort();
    ranked.into_iter().take(n).map(|r| r.4).collect()
}

fn normalise(code: &str) -> String {
    code.trim().trim_matches('`').to_ascii_lowercase()
}

fn effect(severity: Severity) -> &'static str {
    match severity {
        Severity::Refusal => "verdict FAIL",
        Severity::Review => "verdict PENDING_REVIEW",
        Severity::Gap => "verdict UNVERIFIED",
        Severity::Warning => "never changes the verdict",
    }
}

fn shared_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Edit distance (insertions, deletions, substitutions) over chars, one row at a time.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }

    #[test]
    fn closest_ranks_typos_first() {
        assert_eq!(closest("close-commit-unknwn", 3)[0], "close-commit-unknown");
        assert_eq!(closest("doc-soft-claims", 1), ["doc-soft-claim"]);
        assert_eq!(closest("TEARDOWN-MOVED", 1), ["teardown-moved"]);
    }

    #[test]
    fn closest_prefers_containment() {
        let near = closest("dirty", 3);
        assert!(near.contains(&"teardown-dirty") && near.contains(&"close-worktree-dirty"));
    }

    #[test]
    fn find_ignores_case_and_backticks() {
        assert_eq!(
            find("`Close-Commit-Not-Tip`").unwrap().code.as_str(),
            "close-commit-not-tip"
        );
        assert!(find("close-commit").is_none());
    }

    #[test]
    fn list_has_every_code_with_severity_and_gate() {
        let list = list();
        assert_eq!(list.lines().count(), catalog::CODES.len());
        let line = list
            .lines()
            .find(|l| l.starts_with("checks-none "))
            .unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            ["checks-none", "gap", "checks"]
        );
    }
}
