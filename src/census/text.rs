//! Text helpers of the census: a line as a terminal would show it, a test id fit to keep, and the
//! runners a check's `run` names.

use super::{ID_MAX, Mode, Runner};

/// The line as a terminal shows it: lossily decoded, ANSI escape sequences removed, only what
/// follows the last carriage return (a progress line rewritten in place), tabs kept.
pub(super) fn visible(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let bytes = match memchr::memrchr(b'\r', bytes) {
        // A trailing `\r` ends a CRLF line; one inside rewrote the line.
        Some(i) if i + 1 == bytes.len() => match memchr::memrchr(b'\r', &bytes[..i]) {
            Some(j) => &bytes[j + 1..i],
            None => &bytes[..i],
        },
        Some(i) => &bytes[i + 1..],
        None => bytes,
    };
    let text = String::from_utf8_lossy(bytes);
    if !text.contains('\x1b') {
        return text;
    }
    std::borrow::Cow::Owned(strip_escapes(&text))
}

/// `text` without ANSI escape sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC \`)
/// and two-character escapes.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A test id fit to keep: trimmed, control characters (tabs included) replaced by a space, at
/// most [`ID_MAX`] bytes; `None` when nothing is left.
pub(super) fn clean_id(id: &str) -> Option<String> {
    if is_clean(id) {
        return Some(id.to_string());
    }
    let mut out = String::with_capacity(id.len().min(ID_MAX));
    for c in id.trim().chars() {
        let c = if c.is_control() { ' ' } else { c };
        if out.len() + c.len_utf8() > ID_MAX {
            break;
        }
        out.push(c);
    }
    let kept = out.trim();
    if kept.is_empty() {
        return None;
    }
    Some(kept.to_string())
}

/// Whether `id` is kept as it is: printable ASCII, trimmed, not empty, at most [`ID_MAX`] bytes
/// (most ids; the rest go through [`clean_id`]).
pub(super) fn is_clean(id: &str) -> bool {
    let bytes = id.as_bytes();
    let trimmed =
        bytes.first().is_some_and(|b| *b != b' ') && bytes.last().is_some_and(|b| *b != b' ');
    trimmed && id.len() <= ID_MAX && bytes.iter().all(|b| (0x20..0x7f).contains(b))
}

/// Programs through which a check runs its tests without naming the runner.
const WRAPPERS: [&str; 16] = [
    "npm", "yarn", "pnpm", "npx", "bun", "make", "gmake", "tox", "nox", "just", "hatch", "poetry",
    "pdm", "uv", "task", "rake",
];

/// The mode `run` implies (see [`Mode::infer`]).
pub(super) fn infer(run: &str) -> Mode {
    let mut named: Vec<Runner> = Vec::new();
    let mut wrapped = false;
    for command in commands(run) {
        for (i, word) in command.iter().enumerate() {
            let base = word.rsplit('/').next().unwrap_or(word);
            let rest = &command[i + 1..];
            if let Some(runner) = runner_at(base, rest) {
                if !named.contains(&runner) {
                    named.push(runner);
                }
            } else if WRAPPERS.contains(&base) {
                wrapped = true;
            }
        }
    }
    if !named.is_empty() {
        named.sort();
        return Mode::Named(named);
    }
    if wrapped { Mode::Auto } else { Mode::Off }
}

/// The runner a word names, given the words after it in its command.
fn runner_at(base: &str, rest: &[&str]) -> Option<Runner> {
    // The first word after the program that is not an option (`cargo +nightly test`).
    let sub = || rest.iter().find(|w| !w.starts_with(['-', '+'])).copied();
    match base {
        "pytest" | "py.test" => Some(Runner::Pytest),
        "-m" => match rest.first().copied() {
            Some("pytest") => Some(Runner::Pytest),
            Some("unittest") => Some(Runner::Unittest),
            _ => None,
        },
        "cargo" if matches!(sub(), Some("test" | "t")) => Some(Runner::Libtest),
        "go" if sub() == Some("test") => Some(Runner::Go),
        "node"
            if rest
                .iter()
                .any(|w| *w == "--test" || w.starts_with("--test=")) =>
        {
            Some(Runner::Node)
        }
        "mocha" | "_mocha" => Some(Runner::Mocha),
        "jest" => Some(Runner::Jest),
        "vitest" => Some(Runner::Vitest),
        "tape" | "tap" => Some(Runner::Tap),
        "prove" => Some(Runner::Prove),
        _ => None,
    }
}

/// The simple commands of a shell line, each as its words: split at `;`, `&`, `|`, newlines and
/// parentheses, quotes removed (a word inside `sh -c '…'` counts as a word of its own).
fn commands(run: &str) -> Vec<Vec<&str>> {
    run.split([';', '&', '|', '\n', '(', ')', '`'])
        .map(|part| {
            part.split(|c: char| c.is_whitespace() || c == '\'' || c == '"')
                .filter(|w| !w.is_empty() && !is_assignment(w))
                .collect::<Vec<&str>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

/// `NAME=value` before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_drops_colour_and_rewrites() {
        assert_eq!(
            visible(b"\x1b[32m\xe2\x9c\x93\x1b[39m passes"),
            "\u{2713} passes"
        );
        assert_eq!(visible(b"50%\r100%\r"), "100%");
        assert_eq!(visible(b"ok\r"), "ok");
        assert_eq!(visible(b"\x1b]8;;http://x\x07link\x1b]8;;\x1b\\"), "link");
        assert_eq!(visible(b"\xff ok"), "\u{fffd} ok");
    }

    #[test]
    fn ids_are_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(clean_id("  a\tb\x07 "), Some("a b".to_string()));
        assert_eq!(clean_id(" \t "), None);
        let long = "é".repeat(ID_MAX);
        let kept = clean_id(&long).unwrap();
        assert!(kept.len() <= ID_MAX && kept.chars().all(|c| c == 'é'));
    }

    #[test]
    fn the_run_names_its_runner() {
        use Runner::*;
        let cases: [(&str, Mode); 14] = [
            ("cargo test --locked", Mode::Named(vec![Libtest])),
            (
                "CARGO_HOME=\"$HOME\"/x cargo +nightly test",
                Mode::Named(vec![Libtest]),
            ),
            (".venv/bin/python -m pytest -v", Mode::Named(vec![Pytest])),
            ("PYTHONPATH=src pytest", Mode::Named(vec![Pytest])),
            (
                "python3 -m unittest discover -q",
                Mode::Named(vec![Unittest]),
            ),
            (
                "export GOCACHE=/x; go test -json ./...",
                Mode::Named(vec![Go]),
            ),
            ("node --test", Mode::Named(vec![Node])),
            ("npx mocha test.js", Mode::Named(vec![Mocha])),
            (
                "cargo test && python -m pytest",
                Mode::Named(vec![Libtest, Pytest]),
            ),
            ("sh -c 'prove -r t'", Mode::Named(vec![Prove])),
            ("npm ci && npm test", Mode::Auto),
            ("make test", Mode::Auto),
            ("cargo build && ./run-tests.sh", Mode::Off),
            ("node index.js", Mode::Off),
        ];
        for (run, want) in cases {
            assert_eq!(infer(run), want, "{run}");
        }
    }
}
