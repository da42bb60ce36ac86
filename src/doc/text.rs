//! Small text helpers shared by the grammar: naming look-alike characters by code point,
//! quoting agent text in messages without echoing megabytes, and the slug rule.

/// Longest piece of agent-written text a message quotes; longer text is cut with `…`.
const SNIPPET_CHARS: usize = 80;

/// Names of the characters an agent most often writes instead of the intended one.
const NAMES: &[(char, &str)] = &[
    ('\u{00A0}', "NO-BREAK SPACE"),
    ('\u{00B7}', "MIDDLE DOT"),
    ('\u{0387}', "GREEK ANO TELEIA"),
    ('\u{2002}', "EN SPACE"),
    ('\u{2003}', "EM SPACE"),
    ('\u{2009}', "THIN SPACE"),
    ('\u{200A}', "HAIR SPACE"),
    ('\u{200B}', "ZERO WIDTH SPACE"),
    ('\u{2010}', "HYPHEN"),
    ('\u{2011}', "NON-BREAKING HYPHEN"),
    ('\u{2012}', "FIGURE DASH"),
    ('\u{2013}', "EN DASH"),
    ('\u{2014}', "EM DASH"),
    ('\u{2015}', "HORIZONTAL BAR"),
    ('\u{2022}', "BULLET"),
    ('\u{2027}', "HYPHENATION POINT"),
    ('\u{202F}', "NARROW NO-BREAK SPACE"),
    ('\u{2212}', "MINUS SIGN"),
    ('\u{2219}', "BULLET OPERATOR"),
    ('\u{22C5}', "DOT OPERATOR"),
    ('\u{2E31}', "WORD SEPARATOR MIDDLE DOT"),
    ('\u{3000}', "IDEOGRAPHIC SPACE"),
    ('\u{30FB}', "KATAKANA MIDDLE DOT"),
    ('\u{FE58}', "SMALL EM DASH"),
    ('\u{FE63}', "SMALL HYPHEN-MINUS"),
    ('\u{FEFF}', "ZERO WIDTH NO-BREAK SPACE"),
    ('\u{FF0D}', "FULLWIDTH HYPHEN-MINUS"),
    ('\u{FF65}', "HALFWIDTH KATAKANA MIDDLE DOT"),
];

/// A character as a message shows it: `'x'` for printable ASCII, else `U+2013 EN DASH`.
pub fn describe(c: char) -> String {
    if c.is_ascii_graphic() {
        return format!("'{c}'");
    }
    if c == ' ' {
        return "a space".to_string();
    }
    match NAMES.iter().find(|(n, _)| *n == c) {
        Some((_, name)) => format!("U+{:04X} {name}", c as u32),
        None => format!("U+{:04X}", c as u32),
    }
}

/// Whether `c` is one of the dash-like characters of SPEC §3 (U+002D, U+2010–U+2015, U+2212).
pub fn is_dash_like(c: char) -> bool {
    matches!(c, '-' | '\u{2010}'..='\u{2015}' | '\u{2212}')
}

/// Whether `c` looks like a middle dot (or is a character agents use as a field separator).
pub fn is_dot_like(c: char) -> bool {
    matches!(
        c,
        '\u{00B7}'
            | '\u{0387}'
            | '\u{2022}'
            | '\u{2027}'
            | '\u{2219}'
            | '\u{22C5}'
            | '\u{2E31}'
            | '\u{30FB}'
            | '\u{FF65}'
    )
}

/// Agent text quoted for a message: at most `SNIPPET_CHARS` characters, cut with `…`.
pub fn snippet(text: &str) -> String {
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Why `slug` is not 1–100 of `[A-Za-z0-9._-]` starting with a letter or digit, if it is not.
pub fn slug_fault(slug: &str) -> Option<String> {
    let Some(first) = slug.chars().next() else {
        return Some("the slug is empty".to_string());
    };
    if let Some(bad) = slug.chars().find(|c| !is_slug_char(*c)) {
        return Some(format!(
            "slug `{}` contains {}; a slug is [A-Za-z0-9._-] only",
            snippet(slug),
            describe(bad)
        ));
    }
    if !first.is_ascii_alphanumeric() {
        return Some(format!(
            "slug `{}` must start with a letter or digit",
            snippet(slug)
        ));
    }
    if slug.len() > 100 {
        return Some(format!(
            "slug is {} characters long, at most 100 are allowed",
            slug.len()
        ));
    }
    None
}

fn is_slug_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Find `phrase` (lowercase ASCII) in `lower` at word boundaries; `lower` is ASCII-lowercased.
pub fn contains_phrase(lower: &str, phrase: &str) -> bool {
    lower.match_indices(phrase).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_look_alikes_by_code_point() {
        assert_eq!(describe('\u{2013}'), "U+2013 EN DASH");
        assert_eq!(describe('-'), "'-'");
        assert_eq!(describe('\u{1F600}'), "U+1F600");
    }

    #[test]
    fn snippet_cuts_long_text_on_a_char_boundary() {
        let long = "é".repeat(200);
        assert_eq!(snippet(&long).chars().count(), SNIPPET_CHARS + 1);
        assert_eq!(snippet("short"), "short");
    }

    #[test]
    fn slug_rules() {
        assert_eq!(slug_fault("invoice-export-csv"), None);
        assert!(slug_fault("").is_some());
        assert!(slug_fault("-x").is_some());
        assert!(slug_fault("a b").is_some());
        assert!(slug_fault(&"a".repeat(101)).is_some());
        assert_eq!(slug_fault(&"a".repeat(100)), None);
    }

    #[test]
    fn phrases_match_at_word_boundaries() {
        assert!(contains_phrase("it probably works", "probably"));
        assert!(!contains_phrase("improbably", "probably"));
        assert!(contains_phrase("(probably)", "probably"));
    }
}
