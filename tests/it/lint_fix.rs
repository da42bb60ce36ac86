//! `closegate lint --fix` (SPEC §17): mechanical fixes only, printed; never a change of meaning.

use closegate::doc::{self, ParseOptions, StatusDoc};
use proptest::prelude::*;

use crate::fixture::{closegate, parts};

/// The document an agent writes by hand: every mechanical fault of the issue at once.
const HAND_WRITTEN: &str = "# STATUS - csv-export\n\n\
- State: done\n\
- Abstract: adds the CSV export, proven by cargo test\n\
- last-commit: 1a2b3c4d - add the CSV export\n\
- Next / Blocked-on: none \u{2014} ship it\n\
- Artifacts:\n  - src/export.rs\n\
- updated: 2026-11-30 03:51:37\n\n\
CLOSE\u{2013}OK - csv-export - commit 1A2B3C4D - branch agent/csv - worktree /work/wt csv\n";

#[test]
fn fix_rewrites_the_hand_written_document_until_it_lints() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("_EXEC_STATUS.md");
    std::fs::write(&file, HAND_WRITTEN).unwrap();
    let (code, _, _) = parts(&closegate(dir.path(), &["lint", "_EXEC_STATUS.md"]));
    assert_eq!(code, 1, "refused as written");
    let (code, stdout, stderr) = parts(&closegate(
        dir.path(),
        &["lint", "--fix", "_EXEC_STATUS.md"],
    ));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("VERIFIED"), "{stdout}");
    for code in [
        "doc-h1-missing",
        "doc-key-unknown",
        "doc-state-legacy",
        "doc-key-alias",
        "doc-last-commit-malformed",
        "doc-updated-malformed",
        "doc-close-malformed",
    ] {
        assert!(stdout.contains(code), "{code} not printed: {stdout}");
    }
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        fixed,
        "# STATUS \u{2014} csv-export\n\n\
- state: close-ok\n\
- abstract: adds the CSV export, proven by cargo test\n\
- last commit: 1a2b3c4d \u{2014} add the CSV export\n\
- next / blocked-on: none \u{2014} ship it\n\
- artifacts:\n  - src/export.rs\n\
- updated: 2026-11-30T03:51:37\n\n\
CLOSE-OK \u{b7} csv-export \u{b7} commit 1a2b3c4d \u{b7} branch agent/csv \u{b7} worktree /work/wt csv\n"
    );
    let (code, stdout, _) = parts(&closegate(
        dir.path(),
        &["lint", "--format", "json", "_EXEC_STATUS.md"],
    ));
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["findings"], serde_json::json!([]));
    // A second run fixes nothing and leaves the file alone.
    let (code, stdout, _) = parts(&closegate(
        dir.path(),
        &["lint", "--fix", "_EXEC_STATUS.md"],
    ));
    assert_eq!(code, 0);
    assert!(stdout.contains("fixed nothing"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), fixed);
}

#[test]
fn fix_never_invents_content_and_reports_what_it_cannot_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.md");
    let text = "# STATUS \u{2014} x\n\n- state: close-ok\n- colour: blue\n";
    std::fs::write(&file, text).unwrap();
    let (code, stdout, _) = parts(&closegate(dir.path(), &["lint", "--fix", "s.md"]));
    assert_eq!(code, 1);
    assert!(stdout.starts_with("FAIL"), "{stdout}");
    assert!(stdout.contains("doc-key-unknown"), "{stdout}");
    assert!(stdout.contains("doc-abstract-missing"), "{stdout}");
    assert!(stdout.contains("fixed nothing"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let (code, _, stderr) = parts(&closegate(dir.path(), &["lint", "--fix", "-"]));
    assert_eq!(code, 2, "{stderr}");
}

/// SPEC §17: older key spellings are rewritten, `return` (SPEC §2: an older spelling of
/// `artifacts`) included; ASCII separators where the close line wants ` · ` (`.` and `*`, how a
/// middle dot is typed without one) are rebuilt like the others.
#[test]
fn fix_renames_return_and_rebuilds_a_close_line_typed_with_ascii_dots() {
    for sep in [".", "*"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.md");
        let text = format!(
            "# STATUS \u{2014} s\n\n- state: close-ok\n- abstract: a\n- return:\n  - a.txt\n\n\
             CLOSE-OK {sep} s {sep} commit abcdef0 {sep} branch agent/x.y {sep} worktree /tmp/w\n"
        );
        std::fs::write(&file, text).unwrap();
        let (code, stdout, stderr) = parts(&closegate(dir.path(), &["lint", "--fix", "s.md"]));
        assert!(stdout.contains("doc-key-alias"), "{stdout}{stderr}");
        assert!(stdout.contains("doc-close-malformed"), "{stdout}{stderr}");
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "# STATUS \u{2014} s\n\n- state: close-ok\n- abstract: a\n- artifacts:\n  - a.txt\n\n\
             CLOSE-OK \u{b7} s \u{b7} commit abcdef0 \u{b7} branch agent/x.y \u{b7} worktree /tmp/w\n"
        );
        let (code, stdout, _) = parts(&closegate(
            dir.path(),
            &["lint", "--format", "json", "s.md"],
        ));
        assert_eq!(code, 0, "{stdout}");
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["findings"], serde_json::json!([]), "{sep}");
    }
}

/// What a document means: the fields `--fix` must never change.
fn meaning(d: &StatusDoc) -> [Option<String>; 6] {
    let close = d.close.as_ref();
    [
        Some(d.slug.clone()),
        d.state.map(|s| s.as_str().to_string()),
        close.map(|c| c.commit.clone()),
        close.map(|c| c.branch.clone()),
        close.map(|c| c.worktree.clone()),
        d.artifacts.as_ref().map(|a| {
            a.iter()
                .map(|e| e.text.clone())
                .collect::<Vec<_>>()
                .join("\n")
        }),
    ]
}

fn lines() -> impl Strategy<Value = String> {
    let pieces: &[&str] = &[
        "# STATUS \u{2014} x\n",
        "# STATUS - x\n",
        "# status \u{2013} x-1\n",
        "# STATUS -- x\n",
        "- state: close-ok\n",
        "- state: done\n",
        "- State: stuck\n",
        "- STATE: ready\n",
        "- state: done (mostly)\n",
        "- abstract: a, proven by t\n",
        "- Abstract: b\n",
        "- last commit: abcdef1 \u{2014} s\n",
        "- last commit: ABCDEF1 - s - t\n",
        "- commit: abcdef1 \u{2013} s\n",
        "- last-commit: abcdef1 -\n",
        "- next / blocked-on: none - go\n",
        "- Next: none\n",
        "- blocked on: the owner\n",
        "- artifacts:\n",
        "- Artifacts:\n",
        "- return:\n",
        "  - src/a.rs\n",
        "  - `src/b.rs`\n",
        "- updated: 2026-11-30 03:51\n",
        "- updated: 2026-11-30 nope\n",
        "- Updated: 2026-11-30\n",
        "- colour: blue\n",
        "stray text\n",
        "\n",
        "CLOSE-OK \u{b7} x \u{b7} commit abcdef1 \u{b7} branch agent/x \u{b7} worktree /w x\n",
        "CLOSE-OK - x - commit ABCDEF1 - branch agent/x - worktree /w\n",
        "CLOSE\u{2013}OK \u{2022} x \u{2022} commit abcdef1 \u{2022} branch a/b \u{2022} worktree /w - y\n",
        "CLOSE_OK | x | commit abcdef12 | branch main | worktree /p\n",
        "CLOSE-OK . x . commit abcdef1 . branch agent/x.y . worktree /w\n",
        "CLOSE-OK * x * commit abcdef1 * branch b * worktree /w*\n",
        "CLOSE-OK \u{b7} x \u{b7} commit zzz \u{b7} branch b \u{b7} worktree /w\n",
        "CLOSE-OK x commit abcdef1 branch b worktree /w\n",
        "\r\n",
    ];
    proptest::collection::vec(proptest::sample::select(pieces), 0..14).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// `--fix` never changes the meaning: every field read both before and after is equal
    /// (older state spellings read as their word on both sides), and each fixed line no longer
    /// carries the code it was fixed for.
    #[test]
    fn fix_never_changes_the_meaning(text in lines()) {
        let legacy = ParseOptions { legacy: true };
        let (fixed, fixes) = doc::fix::fix(&text);
        prop_assert_eq!(fixed.matches('\n').count(), text.matches('\n').count());
        let before = doc::parse(text.as_bytes(), legacy);
        let after = doc::parse(fixed.as_bytes(), legacy);
        if let (Some(b), Some(a)) = (&before.doc, &after.doc) {
            for (x, y) in meaning(b).iter().zip(meaning(a).iter()) {
                if let (Some(x), Some(y)) = (x, y) {
                    prop_assert_eq!(x, y, "{:?}\n--\n{:?}", text, fixed);
                }
            }
        }
        let strict = doc::parse(fixed.as_bytes(), ParseOptions::default());
        for f in &fixes {
            for code in &f.codes {
                let still = strict.findings.iter().any(|g| g.code == *code && g.line == Some(f.line));
                prop_assert!(!still, "{} still at line {}: {:?}\n--\n{:?}", code, f.line, text, fixed);
            }
        }
        // Fixing is idempotent.
        let (again, more) = doc::fix::fix(&fixed);
        prop_assert_eq!(again, fixed);
        prop_assert!(more.is_empty());
    }
}
