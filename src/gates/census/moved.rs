//! Which base test a move the diff shows accounts for (SPEC §27.1): a census id missing from
//! the commit's run is the same test as one the test-diff reader saw moved or renamed with its
//! body only when the commit's run passed it where it went — by the id with the move applied
//! (the renamed test's Go subtests and pytest parameters, a renamed method that a subclass or an
//! importing module also runs), or by the old test's id at its file and the new test's id at
//! its file. A moved test that no longer runs is not paired away.

use std::collections::BTreeSet;

use super::names;
use crate::runners::census::Tally;

/// A test the diff shows moved or renamed with its body: the file it left and its name there,
/// the file it went to and its name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub from_path: String,
    pub from: String,
    pub to_path: String,
    pub to: String,
}

/// The ids that passed on the merge base and on the commit, every runner of a census together.
pub(super) struct Ran<'a> {
    base: BTreeSet<&'a str>,
    commit: BTreeSet<&'a str>,
}

impl<'a> Ran<'a> {
    pub(super) fn of(base: &'a Tally, commit: &'a Tally) -> Ran<'a> {
        let ids = |t: &'a Tally| {
            let each = t.counts.iter().filter_map(|c| c.ids.as_deref());
            each.flatten().map(String::as_str).collect()
        };
        Ran {
            base: ids(base),
            commit: ids(commit),
        }
    }
}

/// Whether the missing base id `id` is the test `m` moved, still running (SPEC §27.1: paired
/// by identity or by a move the diff shows, never by shape): either the id with the move
/// applied — the new name for the old, the new file for the old — is new in the commit's run
/// and passed there (a renamed Go test's subtests, a renamed method a subclass or an importing
/// module inherits), or the id names the old test at its file and an id of the commit's run
/// names the new test at its file (a unit test moved to another binary).
pub(super) fn moved_and_ran(m: &Moved, id: &str, ran: &Ran<'_>) -> bool {
    let renamed = renamings(m, id);
    if renamed
        .iter()
        .any(|r| ran.commit.contains(r.as_str()) && !ran.base.contains(r.as_str()))
    {
        return true;
    }
    let Some(tail) = tail_of(id, &m.from, &m.from_path) else {
        return false;
    };
    ran.commit
        .iter()
        .any(|c| !ran.base.contains(c) && tail_of(c, &m.to, &m.to_path) == Some(tail))
}

/// The id `id` with the move `m` applied, each way the runners spell a test: the whole name,
/// with `::` as unittest's `.`, its last segment; the file too when the id names it.
fn renamings(m: &Moved, id: &str) -> Vec<String> {
    let last = |n: &str| n.rsplit("::").next().unwrap_or(n).to_string();
    let pairs = [
        (m.from.clone(), m.to.clone()),
        (m.from.replace("::", "."), m.to.replace("::", ".")),
        (last(&m.from), last(&m.to)),
    ];
    let mut out = Vec::new();
    for (from, to) in pairs {
        let Some(at) = segment(id, &from) else {
            continue;
        };
        let mut r = format!("{}{to}{}", &id[..at], &id[at + from.len()..]);
        if m.from_path != m.to_path && r.contains(m.from_path.as_str()) {
            r = r.replacen(m.from_path.as_str(), &m.to_path, 1);
        }
        out.push(r);
    }
    out
}

/// Where `name` stands last in `id` as a whole segment: after the start or a separator, before
/// the end, a separator, a subtest (`/`) or a parameter (`[`).
fn segment(id: &str, name: &str) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    let seps = [':', '.', '/', ' ', '>', '#', '['];
    id.rmatch_indices(name).map(|(at, _)| at).find(|&at| {
        let before = id[..at].chars().next_back();
        let after = id[at + name.len()..].chars().next();
        before.is_none_or(|c| seps.contains(&c)) && after.is_none_or(|c| seps.contains(&c))
    })
}

/// Whether census id `id` is the test `test` of the file `path`, or one of its subtests or
/// parameters (`pkg::TestX/case`, `t.py::test_x[1]`, `suite > x #2`): [`names`] of the id or
/// of the id cut at a subtest or parameter, and the id's file (pytest's, jest's, vitest's,
/// prove's) or Go package agrees with `path`.
pub fn names_at(id: &str, test: &str, path: &str) -> bool {
    tail_of(id, test, path).is_some()
}

/// What follows the test `test` of `path` in `id` — its subtest or parameter, empty for the
/// test itself — when `id` names it ([`names_at`]).
fn tail_of<'a>(id: &'a str, test: &str, path: &str) -> Option<&'a str> {
    if !file_agrees(id, path) {
        return None;
    }
    let head = cuts(id).find(|head| names(head, test))?;
    Some(&id[head.len()..])
}

/// `id`, then `id` cut before each subtest `/` after its last `::`, its parameter `[` and a
/// repeat's ` #N`, longest first.
fn cuts(id: &str) -> impl Iterator<Item = &str> {
    let from = id.rfind("::").map_or(0, |i| i + 2);
    let tail = id[from..]
        .char_indices()
        .filter(|(_, c)| *c == '/' || *c == '[')
        .map(move |(i, _)| &id[..from + i]);
    let repeat = id.rfind(" #").map(|i| &id[..i]);
    let mut all: Vec<&str> = std::iter::once(id).chain(tail).chain(repeat).collect();
    all.sort_by_key(|s| std::cmp::Reverse(s.len()));
    all.dedup();
    all.into_iter()
}

/// Whether the file or package an id names (if it names one) is `path`'s: pytest's
/// `FILE::…`, jest's, vitest's and prove's `FILE > …`; Go's `PACKAGE::…` ends in `path`'s
/// folder. Ids that name no file (libtest's binary, mocha's suites, unittest's module) agree.
fn file_agrees(id: &str, path: &str) -> bool {
    let head = [" > ", "::"]
        .iter()
        .filter_map(|sep| id.split_once(sep).map(|(h, _)| h))
        .min_by_key(|h| h.len());
    let Some(head) = head else {
        return true;
    };
    let named_file = head.rsplit('/').next().is_some_and(|f| {
        f.rsplit_once('.').is_some_and(|(_, ext)| {
            crate::runners::Language::of_path(format!("x.{ext}").as_bytes()).is_some() || ext == "t"
        })
    });
    let same =
        |a: &str, b: &str| a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"));
    if named_file {
        return same(head, path);
    }
    if path.ends_with(".go") && id.contains("::") {
        return match path.rsplit_once('/') {
            Some((dir, _)) => head == dir || head.ends_with(&format!("/{dir}")),
            None => true,
        };
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::runners::Runner;
    use crate::runners::census::Count;

    fn tally(ids: &[&str]) -> Tally {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        Tally {
            counts: vec![Count {
                runner: Runner::Go,
                passed: ids.len() as u64,
                ids: Some(Arc::from(ids)),
            }],
        }
    }

    fn moved(from_path: &str, from: &str, to_path: &str, to: &str) -> Moved {
        Moved {
            from_path: from_path.into(),
            from: from.into(),
            to_path: to_path.into(),
            to: to.into(),
        }
    }

    /// Whether `id`, missing from the commit's run, is set aside as `m` moved.
    fn set_aside(m: &Moved, id: &str, base: &[&str], commit: &[&str]) -> bool {
        let (b, c) = (tally(base), tally(commit));
        moved_and_ran(m, id, &Ran::of(&b, &c))
    }

    #[test]
    fn a_renamed_go_test_takes_its_subtests_along() {
        let m = moved(
            "funcr/funcr_test.go",
            "TestRender",
            "funcr/funcr_test.go",
            "TestRenderRenamed",
        );
        let base = [
            "m/funcr::TestRender",
            "m/funcr::TestRender/empty",
            "m/funcr::TestRender/empty/JSON",
        ];
        let commit = [
            "m/funcr::TestRenderRenamed",
            "m/funcr::TestRenderRenamed/empty",
            "m/funcr::TestRenderRenamed/empty/JSON",
        ];
        for id in base {
            assert!(set_aside(&m, id, &base, &commit), "{id}");
        }
        // A subtest the renamed test no longer runs is not paired away.
        let fewer = [
            "m/funcr::TestRenderRenamed",
            "m/funcr::TestRenderRenamed/empty",
        ];
        assert!(!set_aside(
            &m,
            "m/funcr::TestRender/empty/JSON",
            &base,
            &fewer
        ));
    }

    #[test]
    fn a_renamed_method_counts_where_a_subclass_or_an_importer_runs_it() {
        let m = moved(
            "tests/test_timed.py",
            "TestTimedSerializer::test_max_age",
            "tests/test_timed.py",
            "TestTimedSerializer::test_max_age_renamed",
        );
        let base = [
            "tests/test_timed.py::TestTimedSerializer::test_max_age",
            "tests/test_url_safe.py::TestTimedSerializer::test_max_age",
            "tests/test_url_safe.py::TestURLSafeTimedSerializer::test_max_age[zlib]",
        ];
        let commit = [
            "tests/test_timed.py::TestTimedSerializer::test_max_age_renamed",
            "tests/test_url_safe.py::TestTimedSerializer::test_max_age_renamed",
            "tests/test_url_safe.py::TestURLSafeTimedSerializer::test_max_age_renamed[zlib]",
        ];
        for id in base {
            assert!(set_aside(&m, id, &base, &commit), "{id}");
        }
    }

    #[test]
    fn unittest_and_libtest_ids_follow_a_rename() {
        let m = moved(
            "test_calc.py",
            "TestCalc::test_mul",
            "test_calc.py",
            "TestCalc::test_multiply",
        );
        let id = "test_calc.TestCalc.test_mul";
        assert!(set_aside(
            &m,
            id,
            &[id],
            &["test_calc.TestCalc.test_multiply"]
        ));
        let m = moved("src/lib.rs", "tests::adds", "src/lib.rs", "tests::sums");
        let id = "crate::tests::adds";
        assert!(set_aside(&m, id, &[id], &["crate::tests::sums"]));
    }

    #[test]
    fn a_test_moved_to_another_binary_counts_when_it_runs_there() {
        let m = moved("src/lib.rs", "tests::adds", "tests/sum.rs", "adds");
        let id = "crate::tests::adds";
        assert!(set_aside(&m, id, &[id], &["sum::adds"]));
        assert!(
            !set_aside(&m, id, &[id], &["sum::other"]),
            "the moved test must run"
        );
    }

    /// Attacks: a moved test that no longer runs, a dropped test that shares a moved test's
    /// name, a new name that is an old test's, ids at another file or package.
    #[test]
    fn a_move_accounts_for_no_other_test() {
        let m = moved("tests/test_a.py", "test_x", "tests/test_a.py", "test_y");
        let base = [
            "tests/test_a.py::test_x",
            "tests/test_b.py::test_x",
            "tests/test_b.py::test_y",
        ];
        // test_b's test_x dropped: its renaming is test_b's own old test_y, not a new id.
        let commit = ["tests/test_a.py::test_y", "tests/test_b.py::test_y"];
        assert!(set_aside(&m, base[0], &base, &commit));
        assert!(!set_aside(&m, base[1], &base, &commit));
        // The moved test ran nowhere (moved to a file the runner does not collect).
        assert!(!set_aside(&m, base[0], &base[..1], &[]));
        // Go: a package other than the moved test's folder.
        let m = moved("a/x_test.go", "TestX", "a/x_test.go", "TestY");
        let base = ["m/b::TestX", "m/a::TestX"];
        assert!(!set_aside(
            &m,
            "m/b::TestX",
            &base,
            &["m/a::TestY", "m/b::TestZ"]
        ));
        assert!(set_aside(
            &m,
            "m/a::TestX",
            &base,
            &["m/a::TestY", "m/b::TestZ"]
        ));
    }

    #[test]
    fn names_at_matches_the_file_and_the_subtests() {
        assert!(names_at("t/a.py::test_x[1]", "test_x", "t/a.py"));
        assert!(!names_at("t/b.py::test_x[1]", "test_x", "t/a.py"));
        assert!(names_at(
            "m/funcr::TestX/case/JSON",
            "TestX",
            "funcr/x_test.go"
        ));
        assert!(!names_at("m/other::TestX", "TestX", "funcr/x_test.go"));
        assert!(names_at(
            "src/a.test.js > sum > adds",
            "sum > adds",
            "src/a.test.js"
        ));
        assert!(!names_at(
            "src/b.test.js > sum > adds",
            "sum > adds",
            "src/a.test.js"
        ));
        assert!(names_at("suite > adds #2", "suite > adds", "test.js"));
        assert!(!names_at("m::TestXY", "TestX", "x_test.go"));
    }
}
