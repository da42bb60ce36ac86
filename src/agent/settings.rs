//! Editing a harness's JSON settings file in place (SPEC §18, §27.3): our entries for the
//! client's stop events (its row's [`Shape`]) are inserted or removed as text, so every other byte of the file — other hooks, unknown keys,
//! the user's formatting — stays exactly as it was. The file is parsed with serde_json first
//! (anything that is not a JSON object is refused), then a small scanner finds the byte spans of
//! the values to edit.

use anyhow::{Result, bail};
use serde_json::Value;

pub use super::clients::Shape;

/// Whether a hook command is one of ours.
pub fn is_ours(command: &str) -> bool {
    command.contains("closegate") && command.contains("agent stop-hook")
}

/// One of closegate's hooks in a settings file, where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ours {
    pub event: &'static str,
    pub command: String,
    /// Its `timeout` in seconds, when it names one.
    pub timeout: Option<u64>,
    /// The index of its group in the event's list, and of the hook in the group.
    pub group: usize,
    pub handler: usize,
}

/// closegate's hooks for the events of `shape` in a settings file's text (none when it is not
/// JSON).
pub fn ours(text: &str, shape: &Shape) -> Vec<Ours> {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for &event in shape.events {
        let items = value["hooks"][event].as_array().into_iter().flatten();
        for (group, item) in items.enumerate() {
            let entries: Vec<&Value> = if shape.grouped {
                item["hooks"].as_array().into_iter().flatten().collect()
            } else {
                vec![item]
            };
            for (handler, hook) in entries.into_iter().enumerate() {
                let command = hook[shape.command_key].as_str().filter(|c| is_ours(c));
                if let Some(command) = command {
                    let timeout = hook[shape.timeout_key].as_u64();
                    found.push(Ours {
                        event,
                        command: command.to_string(),
                        timeout: timeout.map(|t| if shape.timeout_ms { t / 1000 } else { t }),
                        group,
                        handler,
                    });
                }
            }
        }
    }
    found
}

/// The `--time-limit` a hook command passes (the hook's default when it passes none).
pub fn time_limit_of(command: &str) -> u64 {
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        if word == "--time-limit" {
            return words.next().and_then(|n| n.parse().ok()).unwrap_or(600);
        }
        if let Some(n) = word.strip_prefix("--time-limit=") {
            return n.parse().unwrap_or(600);
        }
    }
    600
}

/// The `--max-blocks` a hook command passes (the hook's default, 3, when it passes none or a
/// value that is not a count).
pub fn max_blocks_of(command: &str) -> u32 {
    flag_of(command, "--max-blocks")
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_MAX_BLOCKS)
}

/// The stop hook's `--max-blocks` when none is given (SPEC §18).
pub const DEFAULT_MAX_BLOCKS: u32 = 3;

/// The value of `flag` in a hook command (`--flag V` or `--flag=V`), the first one.
fn flag_of<'c>(command: &'c str, flag: &str) -> Option<&'c str> {
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        if word == flag {
            return words.next();
        }
        if let Some(v) = word.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            return Some(v);
        }
    }
    None
}

/// closegate's entry: the command and the timeout (`timeout` seconds, written in the client's
/// unit) under the client's keys, and the shape's other members; keys in sorted order, which for
/// Claude Code and Codex is the order their files have always had.
pub fn entry(shape: &Shape, command: &str, timeout: u64) -> Value {
    let mut map = serde_json::Map::new();
    map.insert(shape.command_key.to_string(), Value::from(command));
    let unit = if shape.timeout_ms { 1000 } else { 1 };
    map.insert(shape.timeout_key.to_string(), Value::from(timeout * unit));
    for (key, json) in shape.extra {
        let value = serde_json::from_str(json).expect("a row's extra member is JSON");
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}

/// One item of an event's list: a group `{"hooks": [entry]}`, or the entry itself.
pub fn item(shape: &Shape, command: &str, timeout: u64) -> Value {
    let entry = entry(shape, command, timeout);
    if shape.grouped {
        serde_json::json!({ "hooks": [entry] })
    } else {
        entry
    }
}

/// The whole snippet for a fresh file: `{"hooks": {EVENT: [item], …}}` and the preamble.
pub fn snippet(shape: &Shape, command: &str, timeout: u64) -> Value {
    let hooks: serde_json::Map<String, Value> = shape
        .events
        .iter()
        .map(|event| {
            (
                event.to_string(),
                Value::Array(vec![item(shape, command, timeout)]),
            )
        })
        .collect();
    let mut whole: serde_json::Map<String, Value> =
        serde_json::from_str(&format!("{{{}}}", shape.preamble)).expect("a row's preamble is JSON");
    whole.insert("hooks".to_string(), Value::Object(hooks));
    Value::Object(whole)
}

/// A JSON value's span and, for containers, its members.
#[derive(Debug, Clone)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Members: (decoded key, key start, value).
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    Scalar,
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// After a member or an item: `,` (another follows, `false`) or `close` (the end, `true`),
    /// consumed; anything else is not JSON (`None`).
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let byte = *self.b.get(self.i)?;
        self.i += 1;
        match byte {
            b',' => Some(false),
            b if b == close => Some(true),
            _ => None,
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > 512 {
            return None;
        }
        self.ws();
        let start = self.i;
        let kind = match *self.b.get(self.i)? {
            b'{' => Kind::Object(self.members(depth)?),
            b'[' => Kind::Array(self.items(depth)?),
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                self.bare_scalar();
                if self.i == start {
                    return None;
                }
                Kind::Scalar
            }
        };
        Some(Node {
            start,
            end: self.i,
            kind,
        })
    }

    /// An object's members from its `{` to past its `}`: each key, where its string starts, and
    /// its value.
    fn members(&mut self, depth: usize) -> Option<Vec<(String, usize, Node)>> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Some(members);
        }
        loop {
            self.ws();
            let key_start = self.i;
            self.string()?;
            let key: String = serde_json::from_slice(&self.b[key_start..self.i]).ok()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return None;
            }
            self.i += 1;
            let value = self.value(depth + 1)?;
            members.push((key, key_start, value));
            if self.next_or_close(b'}')? {
                return Some(members);
            }
        }
    }

    /// An array's items from its `[` to past its `]`.
    fn items(&mut self, depth: usize) -> Option<Vec<Node>> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Some(items);
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.next_or_close(b']')? {
                return Some(items);
            }
        }
    }

    /// Past a number, `true`, `false` or `null` (or whatever stands there up to a delimiter).
    fn bare_scalar(&mut self) {
        while self.i < self.b.len()
            && !matches!(
                self.b[self.i],
                b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'
            )
        {
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<()> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        loop {
            match *self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }
}

fn scan(text: &str) -> Option<Node> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    let node = s.value(0)?;
    s.ws();
    (s.i == text.len()).then_some(node)
}

/// The last member named `key` of an object node.
fn member<'n>(node: &'n Node, key: &str) -> Option<(usize, &'n Node)> {
    let Kind::Object(members) = &node.kind else {
        return None;
    };
    members
        .iter()
        .rev()
        .find(|(k, _, _)| k == key)
        .map(|(_, at, v)| (*at, v))
}

/// Parse and check the shape: an object whose `hooks` (if any) is an object whose events (if
/// any) are arrays.
fn checked(text: &str, name: &str, shape: &Shape) -> Result<Node> {
    let text_trim = text.trim_start_matches('\u{feff}');
    if text_trim.len() != text.len() {
        bail!("{name} starts with a byte order mark; JSON settings files must not");
    }
    if let Err(e) = serde_json::from_str::<Value>(text) {
        bail!("{name} is not valid JSON: {e}");
    }
    let Some(root) = scan(text) else {
        bail!("{name} could not be read as JSON");
    };
    if !matches!(root.kind, Kind::Object(_)) {
        bail!("{name}: expected a JSON object at the top level");
    }
    if let Some((_, hooks)) = member(&root, "hooks") {
        if !matches!(hooks.kind, Kind::Object(_)) {
            bail!("{name}: `hooks` is not an object");
        }
        for event in shape.events {
            if let Some((_, list)) = member(hooks, event)
                && !matches!(list.kind, Kind::Array(_))
            {
                bail!("{name}: `hooks.{event}` is not an array");
            }
        }
    }
    Ok(root)
}

/// Whether the event's list already holds one of our hooks.
fn has_ours(text: &str, list: &Node, shape: &Shape) -> bool {
    let Kind::Array(groups) = &list.kind else {
        return false;
    };
    groups
        .iter()
        .any(|g| !ours_in_group(text, g, shape).is_empty())
}

/// Our entries inside one item of an event's list: a group's (`{"hooks": [...]}`), or the item
/// itself when the client has no groups.
fn ours_in_group<'n>(text: &str, group: &'n Node, shape: &Shape) -> Vec<&'n Node> {
    let is_ours_entry = |h: &&Node| {
        member(h, shape.command_key)
            .and_then(|(_, c)| serde_json::from_str::<String>(&text[c.start..c.end]).ok())
            .is_some_and(|c| is_ours(&c))
    };
    if !shape.grouped {
        return std::iter::once(group).filter(is_ours_entry).collect();
    }
    let Some((_, hooks)) = member(group, "hooks") else {
        return Vec::new();
    };
    let Kind::Array(items) = &hooks.kind else {
        return Vec::new();
    };
    items.iter().filter(is_ours_entry).collect()
}

/// Insert our entries, or rewrite them in place when their command or timeout differs (a
/// reinstall with another mode or time limit); `None` when they are all there as given (nothing
/// to write).
pub fn install(
    text: &str,
    name: &str,
    shape: &Shape,
    command: &str,
    timeout: u64,
) -> Result<Option<String>> {
    // A new (or empty) file starts as `{}` (with the shape's preamble), edited like any other, so
    // uninstall gives that back.
    let mut out = if text.trim().is_empty() {
        format!("{{{}}}\n", shape.preamble)
    } else {
        text.to_string()
    };
    let mut changed = false;
    let hook = serde_json::to_string(&entry(shape, command, timeout))?;
    let item = serde_json::to_string(&item(shape, command, timeout))?;
    for event in shape.events {
        // One edit at a time, rescanning after each: spans shift.
        loop {
            let root = checked(&out, name, shape)?;
            let edit = match member(&root, "hooks") {
                None => {
                    let value = format!("{{\"{event}\": [{item}]}}");
                    insert_member(&root, "hooks", &value).map(|(at, t)| (at..at, t))
                }
                Some((_, hooks)) => match member(hooks, event) {
                    None => {
                        insert_member(hooks, event, &format!("[{item}]")).map(|(at, t)| (at..at, t))
                    }
                    Some((_, list)) if has_ours(&out, list, shape) => {
                        stale_ours(&out, list, shape, &hook).map(|span| (span, hook.clone()))
                    }
                    Some((_, list)) => {
                        let (at, t) = insert_item(list, &item);
                        Some((at..at, t))
                    }
                },
            };
            let Some((range, insert)) = edit else {
                break;
            };
            out.replace_range(range, &insert);
            changed = true;
        }
    }
    checked(&out, name, shape)?;
    Ok(changed.then_some(out))
}

/// The span of the first of our entries in an event's list that is not `hook` (another command
/// or timeout).
fn stale_ours(
    text: &str,
    list: &Node,
    shape: &Shape,
    hook: &str,
) -> Option<std::ops::Range<usize>> {
    let Kind::Array(groups) = &list.kind else {
        return None;
    };
    let wanted: Value = serde_json::from_str(hook).ok()?;
    groups
        .iter()
        .flat_map(|g| ours_in_group(text, g, shape))
        .find_map(|found| {
            let value: Value = serde_json::from_str(&text[found.start..found.end]).ok()?;
            let same = value[shape.command_key] == wanted[shape.command_key]
                && value[shape.timeout_key] == wanted[shape.timeout_key];
            (!same).then_some(found.start..found.end)
        })
}

/// The insertion point and text of a new member `"key": value` in an object node.
fn insert_member(object: &Node, key: &str, value: &str) -> Option<(usize, String)> {
    let Kind::Object(members) = &object.kind else {
        return None;
    };
    let key = serde_json::to_string(key).ok()?;
    Some(match members.last() {
        Some((_, _, last)) => (last.end, format!(", {key}: {value}")),
        None => (object.start + 1, format!("{key}: {value}")),
    })
}

/// The insertion point and text of a new last item in an array node.
fn insert_item(array: &Node, item: &str) -> (usize, String) {
    match &array.kind {
        Kind::Array(items) if !items.is_empty() => {
            (items[items.len() - 1].end, format!(", {item}"))
        }
        _ => (array.start + 1, item.to_string()),
    }
}

/// Remove our entries; `None` when there are none. A group left with no hook is removed, an
/// event left with no group is removed, and `hooks` left empty is removed, so install then
/// uninstall gives back the original bytes.
pub fn uninstall(text: &str, name: &str, shape: &Shape) -> Result<Option<String>> {
    let mut out = text.to_string();
    let mut changed = false;
    // One removal at a time, rescanning after each: spans shift.
    loop {
        let root = checked(&out, name, shape)?;
        let Some(range) = next_removal(&out, &root, shape) else {
            break;
        };
        out.replace_range(range, "");
        changed = true;
    }
    Ok(changed.then_some(out))
}

/// The byte range of the next piece of ours to remove.
fn next_removal(text: &str, root: &Node, shape: &Shape) -> Option<std::ops::Range<usize>> {
    let (_, hooks) = member(root, "hooks")?;
    for event in shape.events {
        let Some((key_at, list)) = member(hooks, event) else {
            continue;
        };
        let Kind::Array(groups) = &list.kind else {
            continue;
        };
        if groups.is_empty() {
            continue;
        }
        for (gi, group) in groups.iter().enumerate() {
            let ours = ours_in_group(text, group, shape);
            if ours.is_empty() {
                continue;
            }
            if shape.grouped {
                let (_, inner) = member(group, "hooks")?;
                let Kind::Array(items) = &inner.kind else {
                    continue;
                };
                if ours.len() < items.len() {
                    let idx = items.iter().position(|i| i.start == ours[0].start)?;
                    return Some(item_range(items, idx));
                }
            }
            if groups.len() > 1 {
                return Some(item_range(groups, gi));
            }
            // The event's only group: remove the event member.
            return Some(member_range(hooks, key_at));
        }
    }
    if let Kind::Object(members) = &hooks.kind
        && members.is_empty()
    {
        let (key_at, _) = member(root, "hooks")?;
        return Some(member_range(root, key_at));
    }
    None
}

/// The range that removes item `idx` of `items` together with one separating comma.
fn item_range(items: &[Node], idx: usize) -> std::ops::Range<usize> {
    if idx > 0 {
        items[idx - 1].end..items[idx].end
    } else if items.len() > 1 {
        items[0].start..items[1].start
    } else {
        items[0].start..items[0].end
    }
}

/// The range that removes the member whose key starts at `key_at`, with one separating comma.
fn member_range(object: &Node, key_at: usize) -> std::ops::Range<usize> {
    let Kind::Object(members) = &object.kind else {
        return key_at..key_at;
    };
    let idx = members
        .iter()
        .position(|(_, at, _)| *at == key_at)
        .unwrap_or(0);
    if idx > 0 {
        members[idx - 1].2.end..members[idx].2.end
    } else if members.len() > 1 {
        members[0].1..members[1].1
    } else {
        members[0].1..members[0].2.end
    }
}

/// A JSON settings file's value; `None` when it is absent or not JSON (the client ignores it
/// then, and so do we: `install` refuses to edit it).
pub fn json_of(path: &std::path::Path) -> Option<(String, Value)> {
    let bytes = crate::input_file::read_if_present(path).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let value = serde_json::from_str(&text).ok()?;
    Some((text, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "closegate agent stop-hook --target claude-code";
    const SHAPE: &Shape = &crate::agent::clients::claude_code::ROW.shape;
    const EVENTS: &[&str] = SHAPE.events;

    #[test]
    fn install_then_uninstall_gives_back_the_original_bytes() {
        for original in [
            "{}",
            "{ }\n",
            "{\"model\":\"x\"}",
            "{\n    \"hooks\" : {\"Stop\":[ {\"hooks\":[{\"type\":\"command\",\"command\":\"say done\"}]} ]},\n \"x\": [1,2]\n}\n",
            "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": []}]}, \"z\": null}",
        ] {
            let installed = install(original, "f", SHAPE, CMD, 600).unwrap().unwrap();
            let value: Value = serde_json::from_str(&installed).unwrap();
            for event in EVENTS {
                let list = value["hooks"][event].as_array().unwrap();
                assert!(
                    list.iter().any(|g| g["hooks"][0]["command"] == CMD),
                    "{installed}"
                );
            }
            assert_eq!(
                install(&installed, "f", SHAPE, CMD, 600).unwrap(),
                None,
                "idempotent"
            );
            let removed = uninstall(&installed, "f", SHAPE).unwrap().unwrap();
            assert_eq!(
                removed, original,
                "round trip of {original:?} via {installed}"
            );
            assert_eq!(uninstall(original, "f", SHAPE).unwrap(), None);
        }
    }

    /// SPEC §26.3: reinstalling with another time limit rewrites our entries in place (same
    /// position, every other byte kept), never leaving the old timeout behind.
    #[test]
    fn reinstall_rewrites_our_entry_in_place() {
        let original = "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say\"}]}]}, \"z\": 1}";
        let first = install(original, "f", SHAPE, CMD, 630).unwrap().unwrap();
        let other = "closegate agent stop-hook --target claude-code --mode always";
        let second = install(&first, "f", SHAPE, other, 990).unwrap().unwrap();
        let value: Value = serde_json::from_str(&second).unwrap();
        for event in EVENTS {
            let groups = value["hooks"][event].as_array().unwrap();
            let ours: Vec<&Value> = groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .filter(|h| is_ours(h["command"].as_str().unwrap()))
                .collect();
            assert_eq!(ours.len(), 1, "{second}");
            assert_eq!(
                (ours[0]["command"].as_str(), ours[0]["timeout"].as_u64()),
                (Some(other), Some(990))
            );
        }
        assert_eq!(value["hooks"]["Stop"][0]["hooks"][0]["command"], "say");
        assert_eq!(install(&second, "f", SHAPE, other, 990).unwrap(), None);
        assert_eq!(uninstall(&second, "f", SHAPE).unwrap().unwrap(), original);
    }

    #[test]
    fn bad_files_are_refused() {
        for bad in [
            "[]",
            "{",
            "{\"hooks\": []}",
            "{\"hooks\": {\"Stop\": {}}}",
            "nul",
        ] {
            assert!(install(bad, "f", SHAPE, CMD, 600).is_err(), "{bad}");
        }
    }
}
