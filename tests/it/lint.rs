//! `closegate lint` through the real binary: exit codes, stdin, JSON fields, escaping.

use crate::fixture::{closegate, closegate_stdin, parts};

const VALID: &str = "# STATUS — t\n\n- state: close-ok\n- abstract: shipped\n- artifacts:\n  - src/a.rs\n\nCLOSE-OK · t · commit abcdef0 · branch h/t · worktree /w t\n";

fn first_word(stdout: &str) -> &str {
    stdout.split_whitespace().next().unwrap_or("")
}

#[test]
fn valid_default_file_exits_0_with_verified() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("_EXEC_STATUS.md"), VALID).unwrap();
    let (code, stdout, stderr) = parts(&closegate(tmp.path(), &["lint"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(first_word(&stdout), "VERIFIED");
}

#[test]
fn refused_document_exits_1_with_fail() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.md"), VALID.replace("close-ok", "done")).unwrap();
    let (code, stdout, stderr) = parts(&closegate(tmp.path(), &["lint", "s.md"]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(first_word(&stdout), "FAIL");
    let (code, stdout, _) = parts(&closegate(tmp.path(), &["lint", "s.md", "--legacy"]));
    assert_eq!(
        (code, first_word(&stdout)),
        (0, "VERIFIED"),
        "--legacy turns the refusal into a warning"
    );
}

#[test]
fn unreadable_file_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = parts(&closegate(tmp.path(), &["lint", "nope.md"]));
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.starts_with("closegate: ") && stderr.contains("nope.md"),
        "{stderr}"
    );
    let (code, _, stderr) = parts(&closegate(tmp.path(), &["lint"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("_EXEC_STATUS.md"), "{stderr}");
}

#[test]
fn stdin_and_json_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = VALID.replace("- abstract: shipped", "- abstract: shipped\n- colour: blue");
    let out = closegate_stdin(
        tmp.path(),
        &["lint", "-", "--format", "json"],
        Some(doc.as_bytes()),
    );
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["verdict"], "FAIL");
    assert_eq!(v["mergeable"], false);
    assert_eq!(v["slug"], "t");
    assert_eq!(v["state"], "close-ok");
    // SPEC §4.7: `commit` is a full sha or null; lint resolves nothing, so the close line's
    // abbreviation `abcdef0` is not reported as one.
    assert_eq!(
        (v["commit"].as_str(), v["branch"].as_str()),
        (None, Some("h/t"))
    );
    assert_eq!(v["worktree"], "/w t");
    assert!(v["base"].is_null() && v["base_commit"].is_null() && v["approval"].is_null());
    let f = &v["findings"][0];
    assert_eq!(
        (f["code"].as_str(), f["severity"].as_str()),
        (Some("doc-key-unknown"), Some("refusal"))
    );
    assert_eq!(
        (f["gate"].as_str(), f["line"].as_u64()),
        (Some("doc"), Some(5))
    );
}

/// A close line naming a full sha: `commit` carries it (SPEC §4.7: a full sha or null).
#[test]
fn a_full_claimed_sha_is_the_json_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let full = "abcdef0".repeat(6)[..40].to_string();
    let doc = VALID.replace("commit abcdef0", &format!("commit {full}"));
    let out = closegate_stdin(
        tmp.path(),
        &["lint", "-", "--format", "json"],
        Some(doc.as_bytes()),
    );
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["commit"].as_str(), Some(full.as_str()));
}

#[test]
fn h1_missing_leaves_document_fields_null() {
    let tmp = tempfile::tempdir().unwrap();
    let out = closegate_stdin(
        tmp.path(),
        &["lint", "-", "--format", "json"],
        Some(b"hello\n"),
    );
    let (code, stdout, _) = parts(&out);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["slug"].is_null() && v["state"].is_null() && v["commit"].is_null());
    assert_eq!(v["findings"][0]["code"], "doc-h1-missing");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = VALID.replace(
        "- abstract: shipped",
        "- abstract: shipped\n- \u{1b}[2J\u{1b}]0;owned\u{7}: x\nstray \u{1b}[31mred",
    );
    for format in ["human", "json", "github"] {
        let out = closegate_stdin(
            tmp.path(),
            &["lint", "-", "--format", format],
            Some(doc.as_bytes()),
        );
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(!out.stdout.contains(&0x1b), "raw ESC in {format} output");
        assert!(!out.stdout.contains(&0x07), "raw BEL in {format} output");
    }
}
