//! The H1 `# STATUS — <slug>` (SPEC §2): without it nothing else in the document is read.

use super::text::{describe, is_dash_like, slug_fault, snippet};

const EXPECTED: &str = "expected `# STATUS — <slug>` (U+2014 EM DASH) as the first non-blank line";

/// The slug of a valid H1 line, or the fault for `doc-h1-missing`.
pub fn parse(line: &str) -> Result<&str, String> {
    let found = format!("found `{}`", snippet(line));
    let Some(rest) = line.strip_prefix("# ") else {
        let why = if line.starts_with("##") {
            " (one `#`, then a space)"
        } else {
            ""
        };
        return Err(format!("{EXPECTED}, {found}{why}"));
    };
    let Some(rest) = rest.strip_prefix("STATUS ") else {
        return Err(format!(
            "{EXPECTED}, {found} (the word `STATUS` in capitals, then a space)"
        ));
    };
    let Some(slug) = rest.strip_prefix("\u{2014} ") else {
        return Err(match rest.chars().next() {
            Some(d) if is_dash_like(d) || d == '\u{FE58}' => {
                format!(
                    "{EXPECTED}, {found}: {} after `STATUS`; write U+2014 EM DASH",
                    describe(d)
                )
            }
            _ => format!("{EXPECTED}, {found}"),
        });
    };
    match slug_fault(slug) {
        Some(fault) => Err(format!("{EXPECTED}, {found}: {fault}")),
        None => Ok(slug),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn h1_rules() {
        assert_eq!(
            parse("# STATUS — invoice-export-csv"),
            Ok("invoice-export-csv")
        );
        assert!(
            parse("# STATUS – x")
                .unwrap_err()
                .contains("U+2013 EN DASH after `STATUS`")
        );
        assert!(
            parse("# STATUS - x")
                .unwrap_err()
                .contains("'-' after `STATUS`")
        );
        assert!(parse("## STATUS — x").unwrap_err().contains("one `#`"));
        assert!(parse("# Status — x").unwrap_err().contains("capitals"));
        assert!(parse("# STATUS — x y").unwrap_err().contains("a space"));
        assert!(parse("# STATUS — ").is_err());
        assert!(parse(" # STATUS — x").is_err());
    }
}
