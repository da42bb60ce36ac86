//! Paths are bytes (SPEC §26.4): a tree path whose name is not UTF-8 is diffed, overlaid,
//! protected and reset like any other, and printed escaped (`\xff`), never skipped.
//!
//! Attacks, each a test below (the names hold bytes git2 writes into index entries as given):
//! - gut a test file whose name is not UTF-8 and break the code it tests: the overlay used to
//!   look the printed name up, find nothing and leave the gutted test in place (VERIFIED under
//!   `integrity` beside an honest new test);
//! - edit a file whose name is not UTF-8 on a surface whose glob matches it only by its bytes
//!   (`?`), where its printed form (four characters for one byte) does not match;
//! - a warm workspace or a pristine checkout that drops, or fails to write, such a name.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, parts};
use crate::scene::{Scene, status_doc};

/// The code under test: `add` adds.
pub const ADD: &[u8] = b"add() { echo $(($1 + $2)); }\n";
/// A wrong `add`: it multiplies.
pub const ADD_WRONG: &[u8] = b"add() { echo $(($1 * $2)); }\n";
pub const ADD_TEST: &[u8] = b". ./src/add.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3 is $(add 2 3), expected 5\"; exit 1; }\necho add ok\n";
/// A gutted test: it asserts nothing.
pub const GUTTED: &[u8] = b"echo add ok\n";
pub const SUB: &[u8] = b"sub() { echo $(($1 - $2)); }\n";
pub const SUB_TEST: &[u8] =
    b". ./src/sub.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo \"sub 5 3 wrong\"; exit 1; }\necho sub ok\n";

/// Runs every `tests/*_test.sh` present (the shell's glob hands names over as bytes).
pub const RUN: &str =
    r#"for t in tests/*_test.sh; do [ -f "$t" ] || continue; sh "$t" || exit 1; done"#;

/// The configuration: the suite as the one check, plus `extra`.
pub fn config(extra: &str) -> String {
    format!("[[checks]]\nname = \"suite\"\nrun = '{RUN}'\ntimeout_s = 60\n{extra}")
}

/// The test file whose name is not UTF-8: `tests/<0xff>_test.sh`.
const ODD_TEST: &[u8] = b"tests/\xff_test.sh";
/// Its printed form.
const ODD_TEST_TEXT: &str = "tests/\\xff_test.sh";

/// `main` with `config`, `src/add.sh` and `main_files`; `agent/x` one commit ahead with `agent`
/// (and `src/lib.rs`), in `wt/x` with a close-ok document claiming it.
pub fn scene(
    config: &str,
    main_files: &[(&[u8], Option<&[u8]>)],
    agent: &[(&[u8], Option<&[u8]>)],
) -> Scene {
    let mut files: Vec<(&[u8], Option<&[u8]>)> = vec![
        (b".closegate.toml", Some(config.as_bytes())),
        (b"src/add.sh", Some(ADD)),
    ];
    files.extend_from_slice(main_files);
    let mut work: Vec<(&[u8], Option<&[u8]>)> = vec![(b"src/lib.rs", Some(b"pub fn x() {}\n"))];
    work.extend_from_slice(agent);
    let s = Scene::new();
    s.fx.commit_raw("main", &files, "configure closegate");
    s.fx.checkout(&s.fx.root());
    let s = s.on_agent_raw(&work, "add x").worktree();
    claim(&s.wt, s.tip);
    s
}

/// Write the status document claiming `commit`.
pub fn claim(wt: &Path, commit: Oid) {
    let path = wt.canonicalize().unwrap().display().to_string();
    let doc = status_doc("close-ok", &commit.to_string()[..12], &path);
    std::fs::write(wt.join("_EXEC_STATUS.md"), doc).unwrap();
}

/// `closegate check --format json --no-record` in `wt`.
pub fn check(wt: &Path) -> (i32, Value) {
    let (code, stdout, stderr) = parts(&closegate(
        wt,
        &["check", "--format", "json", "--no-record"],
    ));
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{stdout}\n{stderr}"));
    (code, report)
}

/// The findings with `code`.
pub fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

#[test]
fn a_gutted_test_whose_name_is_not_utf8_is_put_back_on_the_overlay() {
    // Attack: break `add`, gut its test (named with a byte that is not UTF-8), and add an
    // honest test for a new `sub` so the reverse overlay fails on the base.
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let s = scene(
        &cfg,
        &[(ODD_TEST, Some(ADD_TEST))],
        &[
            (b"src/add.sh", Some(ADD_WRONG)),
            (ODD_TEST, Some(GUTTED)),
            (b"src/sub.sh", Some(SUB)),
            (b"tests/sub_test.sh", Some(SUB_TEST)),
        ],
    );
    let (code, report) = check(&s.wt);
    assert_eq!(
        report["checks"][0]["exit_code"], 0,
        "the gutted suite passes: {report}"
    );
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    let weakened = findings(&report, "tests-weakened");
    assert!(
        weakened.iter().any(|f| f["path"] == ODD_TEST_TEXT),
        "the gutted test is named, printed escaped: {report}"
    );
    let msg = weakened[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("add 2 3 is 6, expected 5"),
        "the overlay ran the base's test: {msg}"
    );
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
    let odd: Vec<_> = findings(&report, "protected-surface")
        .into_iter()
        .filter(|f| f["path"] == ODD_TEST_TEXT)
        .collect();
    assert_eq!(odd.len(), 1, "{report}");
    assert_eq!(odd[0]["severity"], "review", "never let through: {report}");
}

/// A new test whose name is not UTF-8 is overlaid, protected and judged like any other (SPEC
/// §26.4: paths are bytes), and — SPEC §27.1, bad input — the test-diff reader judges a file
/// whose name is not UTF-8 conservatively: its edit needs a human, and the finding says why.
/// (Under §26.4 this return went through; §27.1 made the reader's word part of the policy.)
#[test]
fn an_honest_new_test_whose_name_is_not_utf8_needs_a_human_under_integrity() {
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let s = scene(
        &cfg,
        &[(b"tests/add_test.sh", Some(ADD_TEST))],
        &[
            (b"src/sub.sh", Some(SUB)),
            (b"tests/\xfe_test.sh", Some(SUB_TEST)),
        ],
    );
    let (code, report) = check(&s.wt);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW")),
        "{report}"
    );
    let surface = findings(&report, "protected-surface");
    assert_eq!(surface.len(), 1, "{report}");
    assert_eq!(surface[0]["path"], "tests/\\xfe_test.sh");
    assert_eq!(surface[0]["severity"], "review");
    let message = surface[0]["message"].as_str().unwrap();
    assert!(message.contains("its name is not UTF-8"), "{message}");
}

#[test]
fn a_surface_glob_matches_a_name_that_is_not_utf8_by_its_bytes() {
    // Attack: edit the golden data file whose name is one byte, which `data/?.csv` matches while
    // its printed form `data/\xff.csv` (four characters where the glob wants one) does not.
    let cfg = "[protected]\ndata = [\"data/?.csv\"]\n";
    let s = scene(
        cfg,
        &[(b"data/\xff.csv", Some(b"1,2\n"))],
        &[(b"data/\xff.csv", Some(b"1,3\n"))],
    );
    let (_, report) = check(&s.wt);
    let hits = findings(&report, "protected-surface");
    assert_eq!(hits.len(), 1, "{report}");
    assert_eq!(hits[0]["path"], "data/\\xff.csv");
    assert_eq!(hits[0]["severity"], "review");
    assert_eq!(report["protected"][0]["surface"], "data", "{report}");
    assert_ne!(report["verdict"], "VERIFIED");
}

/// A repository whose `main` holds `tests/<0xff>_test.sh` and whose `agent/x` changes it.
fn odd_history() -> (Fixture, Oid, Oid) {
    let fx = Fixture::new();
    let base = fx.commit_raw("main", &[(ODD_TEST, Some(ADD_TEST))], "odd test");
    let tip = fx.commit_raw("agent/x", &[(ODD_TEST, Some(GUTTED))], "gut it");
    (fx, base, tip)
}

#[test]
fn changes_keep_the_bytes_and_print_them_escaped() {
    let (fx, base, tip) = odd_history();
    let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
    for changes in [
        repo.changes(Some(base), tip).unwrap(),
        repo.changes_by_libgit2(Some(base), tip).unwrap(),
    ] {
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].new_bytes, ODD_TEST);
        assert_eq!(changes[0].paths(), [ODD_TEST_TEXT]);
        assert_eq!(changes[0].touched(), [(ODD_TEST, ODD_TEST_TEXT)]);
    }
    // The approval prompt's stat finds the path by its bytes.
    let stats = repo.diff_stat(base, tip, &[ODD_TEST_TEXT]).unwrap();
    assert_eq!(stats, [(ODD_TEST_TEXT.to_string(), 0, 2, false)]);
}

#[test]
fn the_overlay_tree_puts_back_and_removes_names_that_are_not_utf8() {
    let (fx, base, _) = odd_history();
    let added = fx.commit_raw("agent/x", &[(b"tests/\xfe/\x80.sh", Some(b"x\n"))], "add");
    let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
    let paths = vec![ODD_TEST.to_vec(), b"tests/\xfe/\x80.sh".to_vec()];
    let tree = repo.overlay_tree(added, base, &paths, &[]).unwrap();
    let tree = fx.repo.find_tree(tree).unwrap();
    let entry = tree
        .get_path(Path::new(OsStr::from_bytes(ODD_TEST)))
        .unwrap();
    let blob = fx.repo.find_blob(entry.id()).unwrap();
    assert_eq!(blob.content(), ADD_TEST, "the base's version is back");
    assert!(
        tree.get_path(Path::new(OsStr::from_bytes(b"tests/\xfe")))
            .is_err()
    );
}

#[test]
fn a_warm_reset_and_a_pristine_checkout_write_and_remove_names_that_are_not_utf8() {
    let (fx, base, tip) = odd_history();
    let gone = fx.commit_raw("agent/x", &[(ODD_TEST, None)], "drop it");
    let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
    let outside = fx.tmp.path().join("ws");
    std::fs::create_dir_all(&outside).unwrap();
    let work = outside.join("checkout");
    let on_disk = |dir: &Path| std::fs::read(dir.join(OsStr::from_bytes(ODD_TEST))).ok();
    repo.reset_workspace(base, &work, &[]).unwrap();
    assert_eq!(on_disk(&work).as_deref(), Some(ADD_TEST));
    repo.reset_workspace(tip, &work, &[]).unwrap();
    assert_eq!(on_disk(&work).as_deref(), Some(GUTTED));
    repo.reset_workspace(gone, &work, &[]).unwrap();
    assert_eq!(on_disk(&work), None, "a dropped name is removed");
    let pristine = outside.join("pristine");
    repo.checkout_pristine(tip, &pristine).unwrap();
    assert_eq!(on_disk(&pristine).as_deref(), Some(GUTTED));
}
