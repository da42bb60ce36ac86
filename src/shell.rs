//! Words for sh: how closegate spells a path or a branch inside a command a person can paste.
//!
//! Below every layer that prints a next step (the hook, `land`, `guess`, `render`), so each one
//! quotes the same way; escaping for the terminal stays with `render`.

/// `text` as one word of a command a person can paste into sh: bare when every character is
/// plainly safe, else single-quoted (`'` written `'\''`). Not escaped: callers that print to a
/// terminal escape the result.
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,@%=:".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_bare_and_others_are_single_quoted() {
        assert_eq!(shell_word("agent/x-1"), "agent/x-1");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
