//! Agent text made safe for the page's HTML and SVG (SPEC §25): one escaping, shared by the page
//! and its charts.

use crate::render::escape;

/// Text for HTML: control and bidi characters made visible (as the terminal output does), then
/// `& < > " '` as entities, so it is text in an element and in a quoted attribute alike.
pub fn esc(text: &str) -> String {
    let visible = escape(text);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
