//! How two versions of the tests compare: tests paired by name within a file, then a test gone
//! from its file looked for under its name in another file and, failing that, as the same body
//! under another name (a move); what is left over is dropped or added. A paired test is compared
//! assertion by assertion, marker by marker and row by row against what the whole commit still
//! holds, so an assertion or a case moved to another test or file is never taken for a removal.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::unit::{Assertion, Form, Row, Unit};
use super::{Kind, OUTSIDE, Parsed};

/// The old and new side of one readable file.
pub(crate) type Sides<'a> = (Option<&'a Parsed>, Option<&'a Parsed>);

/// One edit: the test, its kind and the detail line.
pub(crate) type Found = (String, Kind, String);

/// A test the diff shows moved or renamed with its body: where it went (the file's index and
/// its new name), keyed by the file it left and its old name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Move {
    pub file: usize,
    pub name: String,
    pub to_file: usize,
    pub to_name: String,
}

/// What the commit's tests hold, on the new side of every readable file.
struct Present<'a> {
    asserts: HashSet<&'a str>,
    rows: HashSet<&'a str>,
}

impl<'a> Present<'a> {
    fn of(files: &[Option<Sides<'a>>]) -> Present<'a> {
        let mut p = Present {
            asserts: HashSet::new(),
            rows: HashSet::new(),
        };
        let units = files
            .iter()
            .flatten()
            .filter_map(|(_, new)| *new)
            .flat_map(|n| n.tests.iter().chain(std::iter::once(&n.outside)));
        for u in units {
            p.asserts.extend(u.asserts.iter().map(|a| a.norm.as_str()));
            p.rows.extend(u.rows.iter().map(|r| r.norm.as_str()));
        }
        p
    }
}

/// A test of the new side that no old test of its file had the name of.
struct Newcomer<'a> {
    file: usize,
    unit: &'a Unit,
    claimed: bool,
}

/// The edits of each file (empty for an unreadable one), and where each moved test went.
pub(crate) fn classify(
    files: &[Option<Sides<'_>>],
    paths: &[String],
) -> (Vec<Vec<Found>>, Vec<Move>) {
    let present = Present::of(files);
    let mut out: Vec<Vec<Found>> = vec![Vec::new(); files.len()];
    let mut orphans = Vec::new();
    let mut newcomers = Vec::new();
    for (k, sides) in files.iter().enumerate() {
        let Some((old, new)) = sides else { continue };
        let old_tests = old.map_or(&[][..], |p| &p.tests);
        let new_tests = new.map_or(&[][..], |p| &p.tests);
        let (pairs, gone, came) = pair_by_name(old_tests, new_tests);
        for (o, n) in pairs {
            out[k].extend(label(&n.name, compare(o, n, &present)));
        }
        orphans.extend(gone.into_iter().map(|u| (k, u)));
        newcomers.extend(came.into_iter().map(|unit| Newcomer {
            file: k,
            unit,
            claimed: false,
        }));
        if let Some(old) = old {
            let empty = Unit::default();
            let new_outside = new.map_or(&empty, |n| &n.outside);
            out[k].extend(label(OUTSIDE, compare(&old.outside, new_outside, &present)));
        }
    }
    let mut moves = Vec::new();
    for (k, old) in orphans {
        let deleted = matches!(files[k], Some((_, None)));
        let (found, to) = follow(old, k, deleted, &mut newcomers, &present, paths);
        out[k].extend(found);
        moves.extend(to);
    }
    for n in newcomers.iter().filter(|n| !n.claimed) {
        out[n.file].push(added(n.unit));
    }
    (out, moves)
}

/// Names each edit with its test.
fn label(test: &str, edits: Vec<(Kind, String)>) -> impl Iterator<Item = Found> + '_ {
    edits
        .into_iter()
        .map(move |(k, d)| (test.to_string(), k, d))
}

/// Old and new tests paired by name (the n-th of a name with the n-th), then the old ones left
/// and the new ones left.
fn pair_by_name<'a>(
    old: &'a [Unit],
    new: &'a [Unit],
) -> (Vec<(&'a Unit, &'a Unit)>, Vec<&'a Unit>, Vec<&'a Unit>) {
    let mut by_name: HashMap<&str, Vec<&Unit>> = HashMap::new();
    for n in new.iter().rev() {
        by_name.entry(&n.name).or_default().push(n);
    }
    let mut pairs = Vec::new();
    let mut gone = Vec::new();
    for o in old {
        match by_name.get_mut(o.name.as_str()).and_then(|v| v.pop()) {
            Some(n) => pairs.push((o, n)),
            None => gone.push(o),
        }
    }
    let paired: HashSet<*const Unit> = pairs.iter().map(|(_, n)| *n as *const Unit).collect();
    let came = new
        .iter()
        .filter(|n| !paired.contains(&(*n as *const Unit)))
        .collect();
    (pairs, gone, came)
}

/// A test gone from its file: found again under its name elsewhere, or renamed with its body
/// unchanged, it moved (and where to); otherwise it is dropped.
fn follow(
    old: &Unit,
    file: usize,
    deleted: bool,
    newcomers: &mut [Newcomer<'_>],
    present: &Present<'_>,
    paths: &[String],
) -> (Vec<Found>, Option<Move>) {
    let free = |n: &Newcomer| !n.claimed;
    let same_name = newcomers
        .iter()
        .position(|n| free(n) && n.file != file && n.unit.name == old.name);
    let same_body = || {
        newcomers
            .iter()
            .position(|n| free(n) && n.unit.body == old.body && n.unit.markers == old.markers)
    };
    let Some(at) = same_name.or_else(same_body) else {
        let why = if deleted {
            "test file deleted; the test is nowhere in the commit's tests"
        } else {
            "test removed; it is nowhere in the commit's tests"
        };
        return (
            vec![(old.name.clone(), Kind::Dropped, why.to_string())],
            None,
        );
    };
    newcomers[at].claimed = true;
    let new = newcomers[at].unit;
    let edits = compare(old, new, present);
    if edits.is_empty() {
        let to = &paths[newcomers[at].file];
        let whither = match (new.name == old.name, newcomers[at].file == file) {
            (true, _) => format!("moved to `{to}`"),
            (false, true) => format!("renamed to `{}`, body unchanged", new.name),
            (false, false) => format!("moved to `{to}` as `{}`, body unchanged", new.name),
        };
        let to = Move {
            file,
            name: old.name.clone(),
            to_file: newcomers[at].file,
            to_name: new.name.clone(),
        };
        return (vec![(old.name.clone(), Kind::Moved, whither)], Some(to));
    }
    (label(&old.name, edits).collect(), None)
}

/// A new test: `added`, or `weakened` when it carries a focus that keeps others from running.
fn added(unit: &Unit) -> Found {
    match unit.markers.iter().find(|m| m.focus) {
        Some(m) => (
            unit.name.clone(),
            Kind::Weakened,
            format!(
                "new test with {}: the file's other tests stop running",
                m.shown
            ),
        ),
        None => (unit.name.clone(), Kind::Added, "new test".to_string()),
    }
}

/// The items of `old` not in `new` and of `new` not in `old`, as multisets keyed by `key`.
fn diff<'a, T>(old: &'a [T], new: &'a [T], key: impl Fn(&T) -> &str) -> (Vec<&'a T>, Vec<&'a T>) {
    let mut left: HashMap<&str, isize> = HashMap::new();
    for n in new {
        *left.entry(key(n)).or_default() += 1;
    }
    let mut removed = Vec::new();
    for o in old {
        match left.get_mut(key(o)) {
            Some(c) if *c > 0 => *c -= 1,
            _ => removed.push(o),
        }
    }
    let mut left: HashMap<&str, isize> = HashMap::new();
    for o in old {
        *left.entry(key(o)).or_default() += 1;
    }
    let mut added = Vec::new();
    for n in new {
        match left.get_mut(key(n)) {
            Some(c) if *c > 0 => *c -= 1,
            _ => added.push(n),
        }
    }
    (removed, added)
}

/// What an edit did, gathered before it is folded into kinds.
#[derive(Default)]
struct Tally {
    weak: Vec<String>,
    dropped: Vec<String>,
    strong: Vec<String>,
    reworded: Option<String>,
}

/// How a test changed between two versions; empty when it did not.
fn compare(old: &Unit, new: &Unit, present: &Present<'_>) -> Vec<(Kind, String)> {
    if old.body == new.body && old.markers == new.markers {
        return Vec::new();
    }
    let mut t = Tally::default();
    compare_asserts(old, new, present, &mut t);
    let (gone_markers, added_markers) = diff(&old.markers, &new.markers, |m| &m.shown);
    t.weak
        .extend(added_markers.iter().map(|m| format!("added {}", m.shown)));
    t.strong
        .extend(gone_markers.iter().map(|m| format!("removed {}", m.shown)));
    compare_rows(old, new, present, &mut t);
    let mut out = Vec::new();
    if !t.weak.is_empty() {
        out.push((Kind::Weakened, t.weak.join("; ")));
    }
    if !t.dropped.is_empty() {
        out.push((Kind::Dropped, t.dropped.join("; ")));
    }
    if out.is_empty() {
        out.push(if !t.strong.is_empty() {
            (Kind::Strengthened, t.strong.join("; "))
        } else if let Some(r) = t.reworded {
            (Kind::Reworded, r)
        } else if old.plain == new.plain {
            (Kind::Reworded, "only string literals changed".to_string())
        } else {
            let what = if old.name == OUTSIDE { "code" } else { "setup" };
            (
                Kind::Fixture,
                format!("{what} changed, no assertion touched"),
            )
        });
    }
    out
}

/// Removed assertions (not present elsewhere) paired with added ones: reworded, loosened,
/// tightened or changed; unpaired added ones strengthen.
fn compare_asserts(old: &Unit, new: &Unit, present: &Present<'_>, t: &mut Tally) {
    let (removed, added) = diff(&old.asserts, &new.asserts, |a| &a.norm);
    let mut used = vec![false; added.len()];
    for r in removed {
        if present.asserts.contains(r.norm.as_str()) {
            continue;
        }
        let free = |j: &usize| !used[*j];
        // Only its message changed: the strings of what it compares are its own.
        let reworded =
            |a: &Assertion| a.plain == r.plain && a.subject == r.subject && a.object == r.object;
        let partner = (0..added.len())
            .filter(free)
            .find(|&j| reworded(added[j]))
            .map(|j| (j, true))
            .or_else(|| {
                (0..added.len())
                    .filter(free)
                    .find(|&j| !r.subject.is_empty() && added[j].subject == r.subject)
                    .map(|j| (j, false))
            });
        let Some((j, same_plain)) = partner else {
            t.weak.push(format!("removed `{}`", r.shown));
            continue;
        };
        used[j] = true;
        let a = added[j];
        if same_plain {
            t.reworded
                .get_or_insert_with(|| format!("`{}` reworded to `{}`", r.shown, a.shown));
            continue;
        }
        match r.form.compare(a.form) {
            Some(Ordering::Less) => t
                .weak
                .push(format!("`{}` loosened to `{}`", r.shown, a.shown)),
            Some(Ordering::Greater) => t
                .strong
                .push(format!("`{}` tightened to `{}`", r.shown, a.shown)),
            None if r.form == a.form && same_object(r, a) => {
                t.reworded
                    .get_or_insert_with(|| format!("`{}` rewritten as `{}`", r.shown, a.shown));
            }
            _ => t
                .weak
                .push(format!("`{}` changed to `{}`", r.shown, a.shown)),
        }
    }
    for (j, a) in added.iter().enumerate() {
        if !used[j] {
            t.strong.push(format!("added `{}`", a.shown));
        }
    }
}

/// Whether two assertions of one form compare their subject with the same thing: the same
/// tokens, or, for an exact comparison, the same string literal in another literal's wrapper
/// (`assert_eq!(x, "a\n")` ported to `assert_data_eq!(x, str![[r#"a"#]])`).
fn same_object(r: &Assertion, a: &Assertion) -> bool {
    // googletest's `eq(x)` matcher says what a bare `x` says.
    let bare = |o: &'_ str| -> String {
        match o.strip_prefix("eq ( ").and_then(|o| o.strip_suffix(" )")) {
            Some(inner) if !inner.contains(" ) , ") => inner.to_string(),
            _ => o.to_string(),
        }
    };
    bare(&r.object) == bare(&a.object)
        || (r.form == Form::Exact && r.value.is_some() && r.value == a.value)
}

/// Removed rows (not present elsewhere): reworded when only their strings changed, extended
/// when a new row holds every element of theirs plus named ones ([`extends`]), else dropped;
/// added rows strengthen.
fn compare_rows(old: &Unit, new: &Unit, present: &Present<'_>, t: &mut Tally) {
    let (removed, added) = diff(&old.rows, &new.rows, |r| &r.norm);
    let mut used = vec![false; added.len()];
    for r in removed {
        if present.rows.contains(r.norm.as_str()) {
            continue;
        }
        match (0..added.len()).find(|&j| !used[j] && added[j].plain == r.plain) {
            Some(j) => {
                used[j] = true;
                t.reworded.get_or_insert_with(|| {
                    format!("case `{}` reworded to `{}`", r.shown, added[j].shown)
                });
            }
            None => match (0..added.len()).find(|&j| !used[j] && extends(added[j], r)) {
                Some(j) => {
                    used[j] = true;
                    let extra = extra_parts(added[j], r).join(", ");
                    t.strong
                        .push(format!("case `{}` extended with `{extra}`", r.shown));
                }
                None => t.dropped.push(format!("case `{}` dropped", r.shown)),
            },
        }
    }
    for (j, a) in added.iter().enumerate() {
        if !used[j] {
            t.strong.push(format!("added case `{}`", a.shown));
        }
    }
}

/// Words that, in the name of a field a row gains, may turn the case off or invert what it
/// expects (`skip: true`, `only`, `wantErr`, `shouldPanic`): such a row is no extension.
const OFF_WORDS: [&str; 12] = [
    "skip", "only", "xfail", "todo", "disable", "ignore", "pending", "flaky", "broken", "fail",
    "err", "panic",
];

/// Whether the added row `a` is the removed row `r` with named fields added (Go's
/// `line: line(),`, a JS object's new key): every element of `r` is in `a`, and each element
/// `a` adds is `name: value` (or `name = value`) with a name none of [`OFF_WORDS`] is in. A
/// positional element added is no extension: its meaning is the struct's, not the row's.
fn extends(a: &Row, r: &Row) -> bool {
    if r.parts.is_empty() || a.parts.len() <= r.parts.len() {
        return false;
    }
    let mut left: Vec<&String> = a.parts.iter().collect();
    for part in &r.parts {
        let Some(k) = left.iter().position(|p| *p == part) else {
            return false;
        };
        left.swap_remove(k);
    }
    left.iter().all(|p| {
        let mut words = p.split(' ');
        let (name, sep) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let named = matches!(sep, ":" | "=")
            && name
                .trim_matches(['"', '\''])
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.is_empty();
        let lower = name.to_ascii_lowercase();
        named && !OFF_WORDS.iter().any(|w| lower.contains(w))
    })
}

/// The elements `a` has beyond `r`'s.
fn extra_parts<'a>(a: &'a Row, r: &Row) -> Vec<&'a str> {
    let mut left: Vec<&str> = a.parts.iter().map(String::as_str).collect();
    for part in &r.parts {
        if let Some(k) = left.iter().position(|p| p == part) {
            left.remove(k);
        }
    }
    left
}
