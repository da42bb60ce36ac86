//! The four report formats against the contract (SPEC §1.3, §4.7, §11), from hand-built reports.

use closegate::doc::State;
use closegate::finding::{Code, Finding, Gate};
use closegate::render::{Format, render};
use closegate::report::{ArtifactStatus, CheckRun, ProtectedChange, Report};

const ESC: &str = "\x1b[2J\x1b]0;pwned\x07";

/// A FAIL report touching every section, with agent text full of control characters.
fn sample() -> Report {
    let mut report = Report {
        slug: Some(format!("demo{ESC}")),
        state: Some(State::CloseOk),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        branch: Some(format!("agent/x{ESC}")),
        worktree: Some("/tmp/wt/x".into()),
        base: Some("main".into()),
        ..Report::default()
    };
    report.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocStrayLine, format!("stray {ESC}line")).at_line(3)],
    );
    report.add_gate(
        Gate::Close,
        [Finding::new(
            Code::CloseCommitNotTip,
            "the branch moved: 100%, a:b\nsecond line",
        )
        .at_line(12)],
    );
    report.add_gate(
        Gate::Manifest,
        [Finding::new(Code::ArtifactMissing, "not in the tree").at_path("out, v1:a.txt")],
    );
    report.add_gate(
        Gate::Protected,
        [Finding::new(Code::ProtectedSurface, "tests modified").at_path("tests/a.rs")],
    );
    report.add_gate(
        Gate::Checks,
        [Finding::new(Code::CheckFailed, "check `test` exited 1")],
    );
    report.artifacts = vec![
        ArtifactStatus {
            path: "src/lib.rs".into(),
            present: true,
        },
        ArtifactStatus {
            path: "out, v1:a.txt".into(),
            present: false,
        },
    ];
    report.protected = vec![ProtectedChange {
        path: "tests/a.rs".into(),
        surface: "tests".into(),
        change: "modified",
    }];
    report.checks = vec![
        check("lint", Some(0), vec![]),
        check(
            "test",
            Some(1),
            vec!["assertion failed".into(), format!("{ESC}boom")],
        ),
    ];
    report.finish();
    report
}

fn check(name: &str, exit_code: Option<i32>, output: Vec<String>) -> CheckRun {
    CheckRun {
        name: name.into(),
        command: format!("run {name}"),
        exit_code,
        timed_out: false,
        duration_ms: 1234,
        output,
        reused: None,
        red_on_base: None,
        census: None,
        tally: None,
        census_note: None,
        snapshot: None,
        parallel: false,
        retries: 0,
        flaky: Vec::new(),
        rerun_passed: false,
    }
}

fn rendered(report: &Report, format: Format, color: bool) -> String {
    let mut out = Vec::new();
    render(report, format, color, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn human_begins_with_the_verdict_token() {
    let text = rendered(&sample(), Format::Human, false);
    assert_eq!(text.split_whitespace().next(), Some("FAIL"));
    let mut clean = Report::default();
    clean.add_gate(Gate::Doc, []);
    clean.finish();
    let text = rendered(&clean, Format::Human, false);
    assert_eq!(text.lines().next(), Some("VERIFIED"));
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["doc", "ok"])
    );
}

#[test]
fn human_lists_gates_findings_hints_and_sections() {
    let text = rendered(&sample(), Format::Human, false);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("state close-ok") && first.contains("commit 0123456"),
        "{first}"
    );
    assert!(
        text.lines().any(|l| l.trim() == "close      1 refusal"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim() == "doc        1 warning"),
        "{text}"
    );
    assert!(
        text.contains("refusal close-commit-not-tip (close) line 12\n"),
        "{text}"
    );
    assert!(
        text.contains("\n    second line\n"),
        "multi-line messages stay indented: {text}"
    );
    let fix = closegate::catalog::lookup("close-commit-not-tip")
        .unwrap()
        .fix;
    assert!(text.contains(&format!("    hint: {fix}\n")), "{text}");
    assert!(
        text.contains("\nartifacts\n") && text.contains("missing  out, v1:a.txt"),
        "{text}"
    );
    assert!(text.contains("\nprotected\n"), "{text}");
    assert!(
        text.contains("test  exit 1  1.2s") && text.contains("| assertion failed"),
        "{text}"
    );
    assert!(
        !text.contains("| run lint"),
        "passing checks keep no output: {text}"
    );
}

#[test]
fn human_never_prints_raw_control_characters() {
    let text = rendered(&sample(), Format::Human, false);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(
        text.contains("\\u{1b}[2J"),
        "escaped form is visible: {text}"
    );
}

#[test]
fn human_colour_only_when_asked_and_agent_text_stays_escaped() {
    let text = rendered(&sample(), Format::Human, true);
    assert!(text.contains("\x1b["), "colour was asked for");
    assert!(!text.contains(ESC) && !text.contains('\x07'), "{text:?}");
}

#[test]
fn json_has_every_report_key_in_contract_order() {
    let text = rendered(&sample(), Format::Json, false);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let positions: Vec<usize> = crate::fixture::REPORT_KEYS
        .iter()
        .map(|k| {
            text.find(&format!("\n  \"{k}\":"))
                .unwrap_or_else(|| panic!("no key {k}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "keys out of order: {text}"
    );
    assert_eq!(value["schema"], 1);
    assert_eq!(value["verdict"], "FAIL");
    assert_eq!(value["mergeable"], false);
    assert_eq!(value["state"], "close-ok");
    assert!(value["base_commit"].is_null() && value["approval"].is_null());
    assert!(!text.contains('\x1b'), "json escapes control characters");
}

#[test]
fn json_findings_omit_line_and_path_when_absent() {
    let text = rendered(&sample(), Format::Json, false);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let findings = value["findings"].as_array().unwrap();
    let failed = findings
        .iter()
        .find(|f| f["code"] == "check-failed")
        .unwrap();
    assert_eq!(
        failed.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["code", "gate", "message", "severity"]
    );
    let tip = findings
        .iter()
        .find(|f| f["code"] == "close-commit-not-tip")
        .unwrap();
    assert_eq!(
        (&tip["severity"], &tip["gate"], &tip["line"]),
        (&"refusal".into(), &"close".into(), &12.into())
    );
}

#[test]
fn github_prints_escaped_workflow_commands_then_the_verdict() {
    let text = rendered(&sample(), Format::Github, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(
        lines[1],
        "::error line=12,title=close-commit-not-tip::the branch moved: 100%25, a:b%0Asecond line"
    );
    assert_eq!(
        lines[2],
        "::error file=out%2C v1%3Aa.txt,title=artifact-missing::not in the tree"
    );
    assert!(
        lines[0].starts_with("::notice line=3,title=doc-stray-line::"),
        "{text}"
    );
    assert!(
        lines[3].starts_with("::warning file=tests/a.rs,"),
        "review is a warning: {text}"
    );
    assert_eq!(lines[5], "closegate: FAIL");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
}

#[test]
fn github_points_at_the_source_file_of_a_lint_report() {
    let mut report = Report {
        source: Some("docs/_EXEC_STATUS.md".into()),
        ..Report::default()
    };
    report.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocStateMissing, "no state").at_line(4)],
    );
    report.finish();
    let text = rendered(&report, Format::Github, false);
    assert!(
        text.starts_with(
            "::error file=docs/_EXEC_STATUS.md,line=4,title=doc-state-missing::no state\n"
        ),
        "{text}"
    );
}

#[test]
fn sarif_is_2_1_0_with_one_rule_per_code() {
    let mut report = sample();
    report.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocStrayLine, "again").at_line(5)],
    );
    let text = rendered(&report, Format::Sarif, false);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["version"], "2.1.0");
    assert_eq!(
        value["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let run = &value["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "closegate");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "doc-stray-line",
            "close-commit-not-tip",
            "artifact-missing",
            "protected-surface",
            "check-failed"
        ]
    );
    let info = closegate::catalog::lookup("close-commit-not-tip").unwrap();
    assert_eq!(rules[1]["shortDescription"]["text"], info.summary);
    assert!(
        rules[1]["help"]["text"]
            .as_str()
            .unwrap()
            .contains(info.fix)
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    let levels: Vec<&str> = results
        .iter()
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert_eq!(
        levels,
        ["note", "error", "error", "warning", "error", "note"]
    );
    let missing = &results[2]["locations"][0]["physicalLocation"];
    assert_eq!(missing["artifactLocation"]["uri"], "out%2C%20v1%3Aa.txt");
    assert!(missing.get("region").is_none(), "no line, no region");
    assert_eq!(results[5]["ruleIndex"], 0);
    assert!(
        results[4].get("locations").is_none(),
        "no path and no source: no location"
    );
}

#[test]
fn sarif_region_uses_the_line_and_the_source_file() {
    let mut report = Report {
        source: Some("_EXEC_STATUS.md".into()),
        ..Report::default()
    };
    report.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocH1Missing, "no h1").at_line(1)],
    );
    report.finish();
    let value: serde_json::Value =
        serde_json::from_str(&rendered(&report, Format::Sarif, false)).unwrap();
    let location = &value["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "_EXEC_STATUS.md");
    assert_eq!(location["region"]["startLine"], 1);
}

#[test]
fn a_finding_with_neither_line_nor_path_points_at_no_file() {
    let mut report = Report {
        source: Some("_EXEC_STATUS.md".into()),
        ..Report::default()
    };
    report.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocStrayLine, "stray").at_line(4)],
    );
    report.add_gate(Gate::Checks, [Finding::new(Code::ChecksNone, "no checks")]);
    report.finish();
    let github = rendered(&report, Format::Github, false);
    let lines: Vec<&str> = github.lines().collect();
    assert!(lines[0].contains("file=_EXEC_STATUS.md,line=4"), "{github}");
    assert!(
        !lines[1].contains("file="),
        "checks-none is about no file: {github}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&rendered(&report, Format::Sarif, false)).unwrap();
    let results = &sarif["runs"][0]["results"];
    assert!(results[0]["locations"].is_array());
    assert!(results[1].get("locations").is_none(), "{sarif}");
}

/// The official SARIF 2.1.0 schema (OASIS, `sarif-2.1/schema/sarif-schema-2.1.0.json`), kept as
/// a fixture so the test runs offline.
const SARIF_SCHEMA: &str = include_str!("../../testdata/schemas/sarif-schema-2.1.0.json");

/// Every way `log` breaks the SARIF 2.1.0 schema (formats such as `uri` and `date-time`
/// checked too), as `instance path: error` lines; empty when it is valid.
pub fn sarif_schema_errors(log: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(SARIF_SCHEMA).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V4);
    compiler.enable_format_assertions();
    compiler
        .add_resource("sarif-schema-2.1.0.json", schema)
        .expect("the SARIF schema loads");
    let index = compiler
        .compile("sarif-schema-2.1.0.json", &mut schemas)
        .expect("the SARIF schema compiles");
    match schemas.validate(log, index) {
        Ok(()) => Vec::new(),
        Err(error) => schema_error_lines(&error),
    }
}

/// The innermost errors under `error`, as `instance path: error` lines.
fn schema_error_lines(error: &boon::ValidationError) -> Vec<String> {
    if error.causes.is_empty() {
        return vec![format!("{}: {}", error.instance_location, error.kind)];
    }
    error.causes.iter().flat_map(schema_error_lines).collect()
}

#[test]
fn sarif_schema_fixture_is_the_official_2_1_0_schema() {
    let schema: serde_json::Value = serde_json::from_str(SARIF_SCHEMA).unwrap();
    assert_eq!(
        schema["id"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    );
    // The validator is not vacuous: a log without `runs`, or with a bad level, is refused.
    let bad = serde_json::json!({"version": "2.1.0"});
    assert!(!sarif_schema_errors(&bad).is_empty());
    let bad = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "results": [{"message": {"text": "m"}, "level": "fatal"}]}]});
    assert!(!sarif_schema_errors(&bad).is_empty());
    let bad = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "versionControlProvenance": [{"repositoryUri": "not a uri"}]}]});
    assert!(!sarif_schema_errors(&bad).is_empty(), "formats are checked");
}

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    let mut reports = vec![sample()];
    // A lint report: an absolute file, line locations only, no commit.
    let mut lint = Report {
        source: Some("/tmp/some where/_EXEC_STATUS.md".into()),
        ..Report::default()
    };
    lint.add_gate(
        Gate::Doc,
        [Finding::new(Code::DocH1Missing, "no h1").at_line(1)],
    );
    lint.finish();
    reports.push(lint);
    // An empty, verified report: no results, no rules.
    let mut empty = Report::default();
    empty.finish();
    reports.push(empty);
    for report in &reports {
        let text = rendered(report, Format::Sarif, false);
        let log: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors = sarif_schema_errors(&log);
        assert!(errors.is_empty(), "{errors:#?}\n{text}");
    }
}
