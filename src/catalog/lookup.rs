//! Finding a catalog code by what a person typed (`closegate explain`, SPEC §14): ASCII case,
//! surrounding whitespace and backticks ignored, and the nearest codes when none matches.

use super::{CODES, CodeInfo};

/// The catalog entry for `code`, ignoring ASCII case and surrounding whitespace or backticks.
pub fn find(code: &str) -> Option<&'static CodeInfo> {
    let wanted = normalise(code);
    CODES.iter().find(|c| c.code.as_str() == wanted)
}

/// The `n` catalog codes nearest to `code`: containment first, then edit distance, then shared
/// prefix, then catalog order.
pub fn closest(code: &str, n: usize) -> Vec<&'static str> {
    let wanted = normalise(code);
    let mut ranked: Vec<(bool, usize, std::cmp::Reverse<usize>, usize, &str)> = CODES
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

/// The code as typed, trimmed of whitespace and backticks, in lower case.
fn normalise(code: &str) -> String {
    code.trim().trim_matches('`').to_ascii_lowercase()
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
}
