//! `[protected.policy] tests = "integrity"` (SPEC §27.1): a test edit goes through when (a) the
//! base's tests pass on the commit's code, (b) the test-diff reader finds no weakening edit, and
//! (c) nothing that decides what runs changed. In every test below the overlay does vouch — the
//! code change is real and the suite is honest — so only rules (b) and (c) stand between each
//! change and VERIFIED. The suite here is shell scripts, a language the test-diff reader does not
//! read: an added file goes through (nothing existing can be weakened by it), and any edit of an
//! existing one needs a human, saying the reader could not read it (SPEC §27.1: judged
//! conservatively). Under SPEC §26.4 a shell test with lines only added went through; §27.1
//! replaced that rule (an added `exit 0` line is an early exit), and the test below says so.
//!
//! Refusals, each a test: lines added, a removed line, a changed line, a deleted test file, an
//! added wiring file by name (`tests/conftest.py`, `tests/__init__.py`, `__mocks__/`,
//! `pytest.toml`), a Go `_test.go` declaring `TestMain` (added, or added to by only added lines),
//! a file a runner configuration names (Jest `setupFiles`, a mocha `--require`), a mode change, a
//! symlink.

use std::path::Path;

use serde_json::Value;

use crate::byte_paths::{ADD_TEST, SUB, SUB_TEST, check, claim, config, findings, scene};

/// The policy under test.
const POLICY: &str = "[protected.policy]\ntests = \"integrity\"\n";

/// A test for `add` with one more case appended: lines only added.
const ADD_TEST_MORE: &[u8] = b". ./src/add.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3 is $(add 2 3), expected 5\"; exit 1; }\necho add ok\n. ./src/sub.sh\n[ \"$(sub 7 7)\" = 0 ] || exit 1\n";

/// A return under the policy: `main` holds `tests/add_test.sh` and `main_files`; the agent adds
/// `sub` with its test and `agent`.
fn policy_return(
    main: &[(&[u8], Option<&[u8]>)],
    agent: &[(&[u8], Option<&[u8]>)],
) -> (i32, Value) {
    let mut base: Vec<(&[u8], Option<&[u8]>)> = vec![(b"tests/add_test.sh", Some(ADD_TEST))];
    base.extend_from_slice(main);
    let mut work: Vec<(&[u8], Option<&[u8]>)> = vec![
        (b"src/sub.sh", Some(SUB)),
        (b"tests/sub_test.sh", Some(SUB_TEST)),
    ];
    work.extend_from_slice(agent);
    let s = scene(&config(POLICY), &base, &work);
    check(&s.wt)
}

/// The severity of the `protected-surface` finding at `path`.
fn severity(report: &Value, path: &str) -> String {
    let found: Vec<_> = findings(report, "protected-surface")
        .into_iter()
        .filter(|f| f["path"] == path)
        .collect();
    assert_eq!(found.len(), 1, "{path}: {report}");
    found[0]["severity"].as_str().unwrap().to_string()
}

/// The overlays vouched, and `path` still needs a human.
fn refused(attack: (i32, Value), path: &str) {
    let (code, report) = attack;
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    // SPEC §27.1: the reverse overlay runs only when asked (`fail_to_pass`).
    assert_eq!(
        report["integrity"]["new_tests_on_base"],
        Value::Null,
        "{report}"
    );
    assert_eq!(severity(&report, path), "review", "{path}: {report}");
    assert_eq!(
        severity(&report, "tests/sub_test.sh"),
        "warning",
        "{report}"
    );
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW")),
        "{report}"
    );
}

#[test]
fn a_an_added_test_file_that_is_not_wiring_goes_through() {
    let (code, report) = policy_return(&[], &[]);
    assert_eq!(severity(&report, "tests/sub_test.sh"), "warning");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (0, Some("VERIFIED")),
        "{report}"
    );
}

/// SPEC §27.1 replaced §26.4's "lines only added" rule: an added line can be an early exit. A
/// shell test, which the reader does not read, needs a human, and the finding says why.
#[test]
fn b_lines_added_to_a_test_the_reader_cannot_read_need_a_human() {
    let attack = policy_return(&[], &[(b"tests/add_test.sh", Some(ADD_TEST_MORE))]);
    let (_, report) = &attack;
    let found = findings(report, "protected-surface");
    let message = found
        .iter()
        .find(|f| f["path"] == "tests/add_test.sh")
        .and_then(|f| f["message"].as_str())
        .unwrap_or("");
    assert!(message.contains("could not read it"), "{report}");
    refused(attack, "tests/add_test.sh");
}

#[test]
fn a_removed_line_needs_a_human_whatever_the_overlays_say() {
    // The `echo add ok` line goes: harmless here, and still a change to what the base tested.
    let fewer = b". ./src/add.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3 is $(add 2 3), expected 5\"; exit 1; }\n";
    refused(
        policy_return(&[], &[(b"tests/add_test.sh", Some(fewer))]),
        "tests/add_test.sh",
    );
}

#[test]
fn a_changed_line_needs_a_human() {
    let changed = b". ./src/add.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3 is $(add 2 3), expected 5\"; exit 1; }\necho add fine\n";
    refused(
        policy_return(&[], &[(b"tests/add_test.sh", Some(changed))]),
        "tests/add_test.sh",
    );
}

#[test]
fn a_deleted_test_file_needs_a_human() {
    let old = b"echo old ok\n";
    let attack = policy_return(
        &[(b"tests/old_test.sh", Some(old))],
        &[(b"tests/old_test.sh", None)],
    );
    refused(attack, "tests/old_test.sh");
}

#[test]
fn an_added_wiring_file_needs_a_human() {
    for wiring in [
        &b"tests/conftest.py"[..],
        b"tests/__init__.py",
        b"tests/__mocks__/add.js",
        b"tests/pytest.toml",
        b"tests/.pytest.ini",
        b"tests/setupTests.js",
    ] {
        let text = String::from_utf8_lossy(wiring).into_owned();
        refused(policy_return(&[], &[(wiring, Some(b"# wiring\n"))]), &text);
    }
}

#[test]
fn a_go_test_main_needs_a_human_added_or_added_to() {
    let main = b"package add\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n";
    refused(
        policy_return(&[], &[(b"tests/main_test.go", Some(main))]),
        "tests/main_test.go",
    );
    // Lines only added, but they declare TestMain: the file is now wiring.
    let before = b"package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n";
    let after = b"package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n\nfunc TestMain(m *testing.M) {}\n";
    let attack = policy_return(
        &[(b"tests/add_test.go", Some(before))],
        &[(b"tests/add_test.go", Some(after))],
    );
    refused(attack, "tests/add_test.go");
}

#[test]
fn a_file_a_runner_configuration_names_needs_a_human() {
    // Jest's `setupFiles` and mocha's `--require` name files that run before every test.
    let pkg = br#"{"jest": {"setupFiles": ["<rootDir>/tests/helpers/env.js"]}, "scripts": {"test": "mocha --require tests/hooks/root.js"}}"#;
    for (path, text) in [
        ("tests/helpers/env.js", "env"),
        ("tests/hooks/root.js", "hooks"),
    ] {
        let attack = policy_return(
            &[(b"package.json", Some(pkg))],
            &[(path.as_bytes(), Some(text.as_bytes()))],
        );
        refused(attack, path);
    }
    // Control: a test file no configuration names goes through.
    let (code, report) = policy_return(
        &[(b"package.json", Some(pkg))],
        &[(b"tests/helpers/other.js", Some(b"x"))],
    );
    assert_eq!(
        severity(&report, "tests/helpers/other.js"),
        "warning",
        "{report}"
    );
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_mode_change_or_a_symlink_needs_a_human() {
    // A test made executable (its lines only added to), and a new test that is a symlink.
    let s = scene(
        &config(POLICY),
        &[(b"tests/add_test.sh", Some(ADD_TEST))],
        &[],
    );
    let repo = &s.fx.repo;
    let tip = repo.find_commit(s.tip).unwrap();
    let mut index = git2::Index::new().unwrap();
    index.read_tree(&tip.tree().unwrap()).unwrap();
    for (path, bytes, mode) in [
        ("src/sub.sh", SUB, 0o100644),
        ("tests/sub_test.sh", SUB_TEST, 0o100644),
        ("tests/add_test.sh", ADD_TEST_MORE, 0o100755),
        ("tests/link_test.sh", &b"sub_test.sh"[..], 0o120000),
    ] {
        let mut entry = index.get_path(Path::new("src/add.sh"), 0).unwrap();
        entry.id = repo.blob(bytes).unwrap();
        entry.mode = mode;
        entry.path = path.as_bytes().to_vec();
        entry.flags = path.len() as u16;
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
    let sig = git2::Signature::new("Agent", "a@example.com", &git2::Time::new(1_700_009_000, 0));
    let sig = sig.unwrap();
    let head = Some("refs/heads/agent/x");
    let id = repo
        .commit(head, &sig, &sig, "add x", &tree, &[&tip])
        .unwrap();
    s.fx.checkout(&s.wt);
    claim(&s.wt, id);
    let (code, report) = check(&s.wt);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(
        report["integrity"]["new_tests_on_base"],
        Value::Null,
        "{report}"
    );
    assert_eq!(severity(&report, "tests/add_test.sh"), "review", "{report}");
    assert_eq!(
        severity(&report, "tests/link_test.sh"),
        "review",
        "{report}"
    );
    assert_eq!(
        severity(&report, "tests/sub_test.sh"),
        "warning",
        "{report}"
    );
    assert_eq!(code, 3, "{report}");
}
