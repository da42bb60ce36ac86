//! The close line (SPEC §3) on any text, line by line and as an agent's final message.
//!
//! Beyond "no panic": an accepted line is exactly the canonical line rebuilt from its fields
//! (trailing blanks aside) and that line parses to the same fields: nothing the parser accepts
//! is read loosely; its branch is a valid branch name and it is a close-line candidate.
#![no_main]

use closegate::doc::close_line::{branch_fault, find_in_message, is_candidate, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for (i, line) in text.split('\n').enumerate() {
        let Ok(close) = parse(line, i + 1) else {
            continue;
        };
        let canonical = format!(
            "CLOSE-OK \u{b7} {} \u{b7} commit {} \u{b7} branch {} \u{b7} worktree {}",
            close.slug, close.commit, close.branch, close.worktree
        );
        assert_eq!(canonical, line.trim_end_matches([' ', '\t']));
        assert_eq!(parse(&canonical, i + 1), Ok(close.clone()));
        assert!(is_candidate(line));
        assert!(branch_fault(&close.branch).is_none());
        assert_eq!(close.line, i + 1);
    }
    if let Some(Ok(close)) = find_in_message(text) {
        let line = text
            .split('\n')
            .nth(close.line - 1)
            .expect("the line it names");
        assert_eq!(parse(line.trim(), close.line), Ok(close));
    }
});
