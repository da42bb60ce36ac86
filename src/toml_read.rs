//! Typed reading of the trusted TOML files (configuration, task contracts), with messages that
//! name the key.

use toml::Value;

/// An array of strings.
pub fn strings(value: &Value, key: &str) -> Result<Vec<String>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| wrong_type(key, "an array of strings", value))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_string)
                .ok_or_else(|| wrong_type(key, "an array of strings", item))
        })
        .collect()
}

/// `` `key` must be EXPECTED, found TYPE ``.
pub fn wrong_type(key: &str, expected: &str, found: &Value) -> String {
    format!("`{key}` must be {expected}, found {}", found.type_str())
}

/// A TOML syntax error as `line N: reason`.
pub fn syntax_error(err: &toml::de::Error, text: &str) -> String {
    let reason = err
        .message()
        .trim_end()
        .trim_end_matches('.')
        .replace('\n', "; ");
    match err.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            format!("line {line}: {reason}")
        }
        None => reason,
    }
}
