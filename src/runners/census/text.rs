//! Text helpers of the census: a line as a terminal would show it, and a test id fit to keep.

use super::ID_MAX;

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
}
