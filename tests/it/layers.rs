//! The layers, written once (the table under "Layers" in src/lib.rs's doc) and held to the code
//! (issue 31): every `crate::` path in src/ — in a `use` (grouped or not, `pub use` too) or in
//! code — and every `super::` chain that climbs to the crate root names a top-level module of its
//! own layer or a lower one, and no import cycle joins two top-level modules. docs/architecture.md
//! carries the same table, generated (`CLOSEGATE_BLESS=1 cargo test layer_table`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges still in the code that another helper's branch removes, each with that helper. An edge
/// listed here is left out of the check; the test fails when a listed edge is no longer a
/// violation (gone, or neither upward nor closing a cycle within its layer), so the list cannot
/// go stale: it is emptied when those branches are merged.
const KNOWN_PENDING: &[(&str, &str, &str)] = &[];

const START: &str = "<!-- layers:start -->\n";
const END: &str = "<!-- layers:end -->";

/// One layer of the table: its rank (1 is the bottom), its name and its modules.
#[derive(Debug, PartialEq)]
struct Layer {
    rank: usize,
    name: String,
    modules: Vec<String>,
}

/// One reference to a crate-root item from a file of src/, at a 1-based line.
#[derive(Debug, PartialEq)]
struct Ref {
    name: String,
    line: usize,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The table's rows as markdown (the `//! ` dropped): the lines starting with `|` under the
/// `## Layers` heading of `lib`'s doc.
fn table_text(lib: &str) -> String {
    let doc: Vec<&str> = lib
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let from = doc
        .iter()
        .position(|l| *l == "## Layers")
        .expect("src/lib.rs's doc has no `## Layers` heading");
    let rows: Vec<&str> = doc[from..]
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .copied()
        .collect();
    rows.iter().map(|r| format!("{r}\n")).collect()
}

/// The layers of a table: rows whose first cell is `N name`, modules the backticked words of the
/// second cell.
fn layers(table: &str) -> Vec<Layer> {
    let mut out = Vec::new();
    for row in table.lines() {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some((rank, name)) = cells.get(1).and_then(|c| c.split_once(' ')) else {
            continue;
        };
        let Ok(rank) = rank.parse() else { continue };
        let modules = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        out.push(Layer {
            rank,
            name: name.to_string(),
            modules,
        });
    }
    out
}

/// `text` with comments, string and character literals blanked (newlines kept, so lines count
/// the same).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let end = literal_end(&c, i);
        if end > i {
            blank(&mut out, &c[i..end]);
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Where the comment or literal starting at `i` ends (exclusive); `i` when none starts there.
fn literal_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    match at(i) {
        '/' if at(i + 1) == '/' => (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len()),
        '/' if at(i + 1) == '*' => block_comment_end(c, i),
        '"' => quoted_end(c, i + 1, '"'),
        '\'' if at(i + 1) == '\\' => quoted_end(c, i + 1, '\''),
        '\'' if at(i + 2) == '\'' => i + 3,
        'r' if raw_start(c, i) => raw_end(c, i + 1).unwrap_or(i),
        _ => i,
    }
}

/// Whether the `r` at `i` may open a raw string: it starts a word, or follows a `b` or `c`
/// that does.
fn raw_start(c: &[char], i: usize) -> bool {
    let starts = |k: usize| k == 0 || !is_ident(c[k - 1]);
    starts(i) || (i > 0 && (c[i - 1] == 'b' || c[i - 1] == 'c') && starts(i - 1))
}

/// The end of a (nested) block comment opening at `i`.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let (mut depth, mut k) = (0, i);
    while k + 1 < c.len() {
        match (c[k], c[k + 1]) {
            ('/', '*') => (depth, k) = (depth + 1, k + 2),
            ('*', '/') => {
                (depth, k) = (depth - 1, k + 2);
                if depth == 0 {
                    return k;
                }
            }
            _ => k += 1,
        }
    }
    c.len()
}

/// The end of a literal whose body starts at `k` and closes with `close`, `\` escaping.
fn quoted_end(c: &[char], mut k: usize, close: char) -> usize {
    while k < c.len() {
        match c[k] {
            '\\' => k += 2,
            ch if ch == close => return k + 1,
            _ => k += 1,
        }
    }
    c.len()
}

/// The end of a raw string whose `#`s or `"` start at `k` (just after the `r`).
fn raw_end(c: &[char], k: usize) -> Option<usize> {
    let hashes = c[k..].iter().take_while(|&&ch| ch == '#').count();
    if c.get(k + hashes) != Some(&'"') {
        return None; // `r#ident` or a plain `r`
    }
    let body = k + hashes + 1;
    (body..c.len())
        .find(|&e| {
            c[e] == '"'
                && c[e + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes
        })
        .map(|e| e + 1 + hashes)
        .or(Some(c.len()))
}

/// Tokens of stripped text: identifiers (a `$crate` kept whole), `::` and single punctuation,
/// each with its line.
fn tokens(text: &str) -> Vec<(String, usize)> {
    let c: Vec<char> = text.chars().collect();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    while i < c.len() {
        let start = i;
        if c[i] == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if c[i].is_whitespace() {
            i += 1;
            continue;
        } else if is_ident(c[i]) || (c[i] == '$' && c.get(i + 1).is_some_and(|&ch| is_ident(ch))) {
            i += 1;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            i += 1;
        }
        out.push((c[start..i].iter().collect(), line));
    }
    out
}

/// Every crate-root item the file's code names: the first segment after `crate::` (`$crate::`),
/// each first segment of a grouped `crate::{…}`, and the segment after a `super::` chain that
/// climbs to the crate root from a file `depth` modules deep (`src/a.rs` is 1, `src/a/b.rs` 2),
/// counting the inline `mod x { … }` blocks it sits in. A `super::` or `self::` path inside the
/// module does not count.
fn refs(text: &str, depth: usize) -> Vec<Ref> {
    let t = tokens(&strip(text));
    let tok = |k: usize| t.get(k).map_or("", |(s, _)| s.as_str());
    let mut out = Vec::new();
    let mut mods: Vec<usize> = Vec::new(); // brace depth at which each inline module opened
    let mut braces = 0usize;
    let mut k = 0;
    while k < t.len() {
        match tok(k) {
            "{" => braces += 1,
            "}" => {
                braces = braces.saturating_sub(1);
                if mods.last() == Some(&braces) {
                    mods.pop();
                }
            }
            "mod" if tok(k + 2) == "{" => {
                mods.push(braces);
                braces += 1;
                k += 3;
                continue;
            }
            "crate" | "$crate" if tok(k + 1) == "::" && tok(k.wrapping_sub(1)) != "::" => {
                k = segment(&t, k + 2, &mut out);
                continue;
            }
            "super" if tok(k.wrapping_sub(1)) != "::" => {
                let mut n = 0;
                while tok(k + 2 * n) == "super" && tok(k + 2 * n + 1) == "::" {
                    n += 1;
                }
                if n > 0 && n == depth + mods.len() {
                    k = segment(&t, k + 2 * n, &mut out);
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Record the crate-root item(s) named at token `k` (an identifier, `*`, or a `{…}` group);
/// returns the token to go on from.
fn segment(t: &[(String, usize)], k: usize, out: &mut Vec<Ref>) -> usize {
    let Some((first, line)) = t.get(k) else {
        return k;
    };
    if first != "{" {
        out.push(Ref {
            name: first.clone(),
            line: *line,
        });
        return k + 1;
    }
    let (mut depth, mut k, mut item_start) = (1, k + 1, true);
    while k < t.len() && depth > 0 {
        let (s, line) = &t[k];
        match s.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 1 => item_start = true,
            _ if item_start && depth == 1 => {
                item_start = false;
                if s != "self" {
                    out.push(Ref {
                        name: s.clone(),
                        line: *line,
                    });
                }
            }
            _ => {}
        }
        k += 1;
    }
    k
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The top-level module of a file under src/ and how many modules deep the file is; `None` for
/// the crate root (lib.rs) and the binary (main.rs), which sit above every layer.
fn module_of(rel: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.last()?;
    if parts.len() == 1 && (last == "lib.rs" || last == "main.rs") {
        return None;
    }
    let top = parts[0].trim_end_matches(".rs").to_string();
    let depth = if last == "mod.rs" {
        parts.len() - 1
    } else {
        parts.len()
    };
    Some((top, depth))
}

/// The modules lib.rs declares (`mod x;`, `pub mod x;`).
fn declared(lib: &str) -> Vec<String> {
    let t = tokens(&strip(lib));
    (0..t.len())
        .filter(|&k| t[k].0 == "mod" && t.get(k + 2).is_some_and(|(s, _)| s == ";"))
        .map(|k| t[k + 1].0.clone())
        .collect()
}

/// One import between two top-level modules, with every place it is made.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// The imports between top-level modules in src/, and the references to names the table lacks.
fn edges(rank: &BTreeMap<String, usize>) -> (Edges, Vec<String>) {
    let src = root().join("src");
    let (mut edges, mut unknown) = (Edges::new(), Vec::new());
    for path in rust_files(&src) {
        let rel = path.strip_prefix(&src).unwrap();
        let Some((from, depth)) = module_of(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        for r in refs(&text, depth) {
            let place = format!("src/{}:{}", rel.display(), r.line);
            if !rank.contains_key(&r.name) {
                unknown.push(format!(
                    "{place}: `crate::{}` is not in the layer table",
                    r.name
                ));
            } else if r.name != from {
                edges.entry((from.clone(), r.name)).or_default().push(place);
            }
        }
    }
    (edges, unknown)
}

/// Whether `to` reaches `from` through `edges` (so `from -> to` closes a cycle).
fn reaches(edges: &Edges, to: &str, from: &str) -> bool {
    path(edges, to, from).is_some()
}

/// A shortest path of modules from `a` to `b` through `edges`.
fn path(edges: &Edges, a: &str, b: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([a]);
    let mut seen = BTreeSet::from([a]);
    while let Some(m) = queue.pop_front() {
        if m == b {
            let mut out = vec![b.to_string()];
            let mut at = b;
            while let Some(p) = prev.get(at) {
                out.push(p.to_string());
                at = p;
            }
            out.reverse();
            return Some(out);
        }
        for (x, y) in edges.keys() {
            if x == m && seen.insert(y) {
                prev.insert(y, x);
                queue.push_back(y);
            }
        }
    }
    None
}

/// The name → rank map of the table, failing on a module named twice.
fn ranks(table: &[Layer]) -> BTreeMap<String, usize> {
    let mut rank = BTreeMap::new();
    for layer in table {
        for m in &layer.modules {
            let before = rank.insert(m.clone(), layer.rank);
            assert!(before.is_none(), "`{m}` is in the layer table twice");
        }
    }
    rank
}

/// The imports of `edges` that do not point up a layer.
fn level(edges: &Edges, rank: &BTreeMap<String, usize>) -> Edges {
    edges
        .iter()
        .filter(|((from, to), _)| rank.get(to) <= rank.get(from))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The violations among `edges`: upward imports, and the cycles among the rest (each once). An
/// upward import closes a cycle whenever anything above reaches down to it; it is named once,
/// as upward, so what remains downward or within a layer can only cycle within a layer.
fn violations(
    edges: &Edges,
    rank: &BTreeMap<String, usize>,
    names: &BTreeMap<usize, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut cycles = BTreeSet::new();
    let level = level(edges, rank);
    for ((from, to), places) in edges {
        let (a, b) = (rank[from], rank[to]);
        if b > a {
            for place in places {
                out.push(format!(
                    "{place}: {from} ({a} {}) imports {to} ({b} {}), a higher layer",
                    names[&a], names[&b]
                ));
            }
        }
        if let Some(mut back) = path(&level, to, from).filter(|_| b <= a) {
            back.insert(0, from.clone());
            let mut key = back[..back.len() - 1].to_vec();
            key.sort();
            if cycles.insert(key) {
                out.push(format!("import cycle {}:", back.join(" -> ")));
                for pair in back.windows(2) {
                    let places = &level[&(pair[0].clone(), pair[1].clone())];
                    out.push(format!(
                        "  {} -> {} at {}",
                        pair[0],
                        pair[1],
                        places.join(", ")
                    ));
                }
            }
        }
    }
    out
}

/// Take the `pending` edges out of `edges`; a problem for each that is no longer a violation
/// (gone, or neither upward nor closing a cycle within its layer), so the list cannot outlive
/// the fix.
fn set_aside(
    edges: &mut Edges,
    pending: &[(&str, &str, &str)],
    rank: &BTreeMap<String, usize>,
) -> Vec<String> {
    let (full, level) = (edges.clone(), level(edges, rank));
    let mut out = Vec::new();
    for (from, to, helper) in pending {
        let key = (from.to_string(), to.to_string());
        let upward = rank.get(*to) > rank.get(*from);
        if !(full.contains_key(&key) && (upward || reaches(&level, to, from))) {
            out.push(format!(
                "KNOWN_PENDING lists {from} -> {to} ({helper}), which is no longer a violation: drop it"
            ));
        }
        edges.remove(&key);
    }
    out
}

/// The table's modules that lib.rs does not declare (moved or gone), one problem each.
fn undeclared(table: &[Layer], declared: &[String]) -> Vec<String> {
    table
        .iter()
        .flat_map(|l| &l.modules)
        .filter(|m| !declared.contains(m))
        .map(|m| format!("src/lib.rs: the layer table names `{m}`, which is not a module there"))
        .collect()
}

#[test]
fn no_import_points_up_a_layer_or_closes_a_cycle() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let table = layers(&table_text(&lib));
    let rank = ranks(&table);
    let names: BTreeMap<usize, String> = table.iter().map(|l| (l.rank, l.name.clone())).collect();
    let mut problems: Vec<String> = declared(&lib)
        .into_iter()
        .filter(|m| !rank.contains_key(m))
        .map(|m| format!("src/lib.rs: module `{m}` is not in the layer table"))
        .collect();
    problems.extend(undeclared(&table, &declared(&lib)));
    let (mut all, unknown) = edges(&rank);
    problems.extend(unknown);
    problems.extend(set_aside(&mut all, KNOWN_PENDING, &rank));
    problems.extend(violations(&all, &rank, &names));
    assert!(
        problems.is_empty(),
        "layer violations:\n{}",
        problems.join("\n")
    );
}

/// docs/architecture.md carries src/lib.rs's layer table; `CLOSEGATE_BLESS=1 cargo test
/// layer_table` rewrites it.
#[test]
fn architecture_layer_table_matches_lib_rs() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let table = table_text(&lib);
    let path = root().join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc
        .find(START)
        .expect("docs/architecture.md has no layers:start marker")
        + START.len();
    let end = start
        + doc[start..]
            .find(END)
            .expect("docs/architecture.md has no layers:end marker");
    if std::env::var_os("CLOSEGATE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    assert!(
        doc[start..end] == table,
        "docs/architecture.md's layer table is stale; run `CLOSEGATE_BLESS=1 cargo test layer_table`"
    );
}

fn names(text: &str, depth: usize) -> Vec<String> {
    refs(text, depth).into_iter().map(|r| r.name).collect()
}

#[test]
fn parser_reads_plain_grouped_nested_and_pub_uses() {
    let text = "use crate::a::B;\npub use crate::b;\npub(crate) use crate::{c, d::{e, f::G}, self};\n\
                use crate::{\n    h::{i, j},\n    k,\n};\n";
    let got = refs(text, 1);
    let pairs: Vec<(&str, usize)> = got.iter().map(|r| (r.name.as_str(), r.line)).collect();
    assert_eq!(
        pairs,
        [("a", 1), ("b", 2), ("c", 3), ("d", 3), ("h", 5), ("k", 6)]
    );
}

#[test]
fn parser_reads_paths_in_code_and_macros() {
    let text = "fn f() { crate::cmd::log::instant(x); let y = <crate::a::T as X>::new(); }\n\
                macro_rules! m { () => { $crate::m2::f() } }\n";
    assert_eq!(names(text, 1), ["cmd", "a", "m2"]);
}

#[test]
fn parser_skips_comments_strings_and_chars() {
    let text = "// use crate::a;\n/// see crate::b\n/* crate::c /* crate::d */ crate::e */\n\
                let s = \"crate::f \\\" crate::g\";\nlet r = r#\"crate::h \"# ;\n\
                let q = '\"'; let l: &'static str = x; crate::i::j();\nlet b = br\"crate::k\";\n";
    assert_eq!(names(text, 1), ["i"]);
}

#[test]
fn parser_counts_super_only_when_it_climbs_to_the_crate_root() {
    let text = "use super::x;\nuse super::super::y;\nmod tests {\n    use super::super::z;\n    use super::w;\n}\n";
    assert_eq!(names(text, 1), ["x", "z"]);
    assert_eq!(names(text, 2), ["y"]);
    assert_eq!(
        names("use self::a; use a::crate_b; fn f() { x::crate::c(); }", 1),
        Vec::<String>::new()
    );
}

#[test]
fn parser_reads_the_table_and_the_declared_modules() {
    let lib = "//! Doc.\n//!\n//! ## Layers\n//!\n//! | layer | modules |\n//! |---|---|\n\
               //! | 1 sys | `sys`, `x` |\n//! | 2 core | `a` |\n\n// mod hidden;\npub mod a;\nmod b;\n";
    let table = layers(&table_text(lib));
    assert_eq!(table.len(), 2);
    assert_eq!((table[0].rank, table[0].name.as_str()), (1, "sys"));
    assert_eq!(table[0].modules, ["sys", "x"]);
    assert_eq!(declared(lib), ["a", "b"]);
    assert_eq!(
        undeclared(&table, &declared(lib)),
        [
            "src/lib.rs: the layer table names `sys`, which is not a module there",
            "src/lib.rs: the layer table names `x`, which is not a module there",
        ]
    );
}

#[test]
fn a_cycle_and_an_upward_edge_are_named_with_their_places() {
    let rank: BTreeMap<String, usize> = [("a", 1), ("b", 1), ("c", 2)]
        .map(|(m, r)| (m.to_string(), r))
        .into();
    let names = BTreeMap::from([(1, "low".to_string()), (2, "high".to_string())]);
    let mut edges = Edges::new();
    for (from, to, place) in [
        ("a", "b", "src/a.rs:3"),
        ("b", "a", "src/b.rs:4"),
        ("a", "c", "src/a.rs:9"),
    ] {
        edges.insert((from.into(), to.into()), vec![place.into()]);
    }
    let got = violations(&edges, &rank, &names);
    assert_eq!(
        got,
        [
            "import cycle a -> b -> a:",
            "  a -> b at src/a.rs:3",
            "  b -> a at src/b.rs:4",
            "src/a.rs:9: a (1 low) imports c (2 high), a higher layer",
        ]
    );
}

#[test]
fn a_pending_edge_that_is_no_longer_a_violation_is_named() {
    let rank: BTreeMap<String, usize> = [("a", 1), ("b", 1), ("c", 2)]
        .map(|(m, r)| (m.to_string(), r))
        .into();
    let mut edges = Edges::new();
    for (from, to) in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "b")] {
        edges.insert((from.into(), to.into()), vec![]);
    }
    let pending = [
        ("b", "a", "x"),
        ("a", "c", "y"),
        ("c", "b", "z"),
        ("b", "c", "w"),
    ];
    let got = set_aside(&mut edges, &pending, &rank);
    assert_eq!(
        got,
        [
            "KNOWN_PENDING lists c -> b (z), which is no longer a violation: drop it",
            "KNOWN_PENDING lists b -> c (w), which is no longer a violation: drop it",
        ]
    );
    assert_eq!(edges.len(), 1, "{edges:?}");
}
