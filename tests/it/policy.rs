//! `[protected.policy]`: a surface where honest additions pass and every change to what is
//! already there still goes to a human, through the real binary on real repositories.

use serde_json::Value;

use crate::fixture::{closegate, parts};
use crate::teardown::{PASSING_CONFIG, Scene, write_status};

/// Files to commit: (path, `Some(content)` or `None` to delete).
type Files<'a> = &'a [(&'a str, Option<&'a str>)];

const SMOKE: &str = "#[test]\nfn smoke() { assert_eq!(1 + 1, 2); }\n";

/// `main` holds `tests/smoke.rs`; `agent/x` then commits `files` on top of its first commit.
fn scene(policy: Option<&str>, files: &[(&str, Option<&str>)]) -> Scene {
    let config = match policy {
        Some(p) => format!("{PASSING_CONFIG}\n[protected.policy]\ntests = \"{p}\"\n"),
        None => PASSING_CONFIG.to_string(),
    };
    let base = [
        (".gitignore", Some("target/\n")),
        (".closegate.toml", Some(config.as_str())),
        ("tests/smoke.rs", Some(SMOKE)),
    ];
    let s = Scene::new()
        .on_main(&base, "configure closegate, add the smoke test")
        .add_x()
        .worktree();
    write_status(&s.wt, "x", "close-ok", s.tip, "add x");
    let s = s.on_agent(files, "change tests");
    s.fx.checkout(&s.wt);
    write_status(&s.wt, "x", "close-ok", s.tip, "change tests");
    s
}

fn check(s: &Scene) -> (i32, Value) {
    let (code, out, err) = parts(&closegate(
        &s.wt,
        &["check", "--no-record", "--format", "json"],
    ));
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, report)
}

/// The protected-surface findings as `severity path` lines.
fn surface_findings(report: &Value) -> Vec<String> {
    let findings = report["findings"].as_array().unwrap();
    findings
        .iter()
        .filter(|f| f["code"] == "protected-surface")
        .map(|f| {
            format!(
                "{} {}",
                f["severity"].as_str().unwrap(),
                f["path"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn an_added_test_passes_under_policy_modify() {
    let s = scene(Some("modify"), &[("tests/new_test.rs", Some(SMOKE))]);
    let (code, report) = check(&s);
    assert_eq!(
        (code, report["verdict"].as_str()),
        (0, Some("VERIFIED")),
        "{report}"
    );
    assert_eq!(surface_findings(&report), ["warning tests/new_test.rs"]);
    assert_eq!(
        report["protected"],
        serde_json::json!([]),
        "nothing to approve"
    );
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("policy `modify`"), "{message}");
}

#[test]
fn without_the_policy_an_added_test_still_needs_review() {
    let s = scene(None, &[("tests/new_test.rs", Some(SMOKE))]);
    let (code, report) = check(&s);
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW"))
    );
    assert_eq!(surface_findings(&report), ["review tests/new_test.rs"]);
    let s = scene(Some("all"), &[("tests/new_test.rs", Some(SMOKE))]);
    assert_eq!(check(&s).0, 3, "`all` is the default spelled out");
}

#[test]
fn changing_an_existing_test_still_needs_review_under_modify() {
    let weakened = "#[test]\nfn smoke() {}\n";
    let cases: [(Files, &[&str], &str); 3] = [
        (
            &[("tests/smoke.rs", Some(weakened))],
            &["review tests/smoke.rs"],
            "modified",
        ),
        (
            &[("tests/smoke.rs", None)],
            &["review tests/smoke.rs"],
            "deleted",
        ),
        // A rename of the existing test into a new name: both sides count, neither is an
        // addition.
        (
            &[
                ("tests/smoke.rs", None),
                ("tests/renamed_smoke.rs", Some(SMOKE)),
            ],
            &["review tests/smoke.rs", "review tests/renamed_smoke.rs"],
            "renamed",
        ),
    ];
    for (files, expected, change) in cases {
        let s = scene(Some("modify"), files);
        let (code, report) = check(&s);
        assert_eq!(code, 3, "{change}: {report}");
        assert_eq!(surface_findings(&report), expected, "{change}");
        assert!(
            report["protected"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["change"] == change),
            "{change}: {report}"
        );
    }
}

#[test]
fn an_addition_that_rewires_existing_tests_still_needs_review() {
    for path in [
        "tests/conftest.py",
        "tests/__init__.py",
        "src/__mocks__/db.js",
    ] {
        let s = scene(Some("modify"), &[(path, Some("import os\n"))]);
        let (code, report) = check(&s);
        if path.starts_with("src/") {
            // Not on the `tests` surface at all: nothing to review.
            assert_eq!(code, 0, "{path}: {report}");
            continue;
        }
        assert_eq!(code, 3, "{path}: {report}");
        assert_eq!(surface_findings(&report), [format!("review {path}")]);
    }
    // Always on `ci`, whatever the policy of the surface it also lies on.
    let s = scene(
        Some("modify"),
        &[("tests/.gitattributes", Some("* -text\n"))],
    );
    let (code, report) = check(&s);
    assert_eq!(code, 3, "{report}");
    assert_eq!(surface_findings(&report), ["review tests/.gitattributes"]);
}

#[test]
fn a_bad_policy_is_an_exit_2_error_naming_the_key() {
    let cases = [
        (
            "tests = \"additions\"",
            "`protected.policy.tests` must be one of \"all\", \"modify\"",
        ),
        (
            "nosuch = \"modify\"",
            "unknown key `protected.policy.nosuch`",
        ),
        ("tests = true", "protected.policy.tests"),
        ("ci = \"modify\"", "`protected.policy.ci`"),
    ];
    for (line, fragment) in cases {
        let config = format!("{PASSING_CONFIG}\n[protected.policy]\n{line}\n");
        let s = Scene::honest_return_with(Some(&config));
        let (code, out, err) = parts(&closegate(&s.wt, &["check", "--no-record"]));
        assert_eq!(code, 2, "{line}: {out}{err}");
        assert!(err.contains(".closegate.toml"), "{err}");
        assert!(err.contains(fragment), "{line}: {err}");
        let (code, out, err) = parts(&closegate(&s.fx.root(), &["validate"]));
        assert_ne!(code, 0, "validate refuses it too: {out}{err}");
        assert!(
            format!("{out}{err}").contains("protected.policy"),
            "{out}{err}"
        );
    }
}
