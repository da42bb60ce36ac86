//! The record and what counts in it (SPEC §6, §8, §12): authenticated records under a record key
//! (forged, reordered and deleted lines, with and without a key), provenance (`--config`,
//! `--base`), contracts bound to branches, required artifacts the branch must produce, approvals
//! bound to the configuration, and the false-green rate on a known mix of returns.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use git2::{ObjectType, Oid};
use serde_json::{Value, json};

use crate::fixture::{git, hermetic, parts, report_codes};
use crate::scene::{Scene, StatusDoc};

const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";

fn blob_id(bytes: &[u8]) -> String {
    Oid::hash_object(ObjectType::Blob, bytes)
        .unwrap()
        .to_string()
}

/// A repository whose `main` carries `config` (and `main_files`), with or without a record key in
/// the test's temporary directory (named by `CLOSEGATE_RECORD_KEY_FILE`).
fn scene(keyed: bool) -> Scene {
    scene_with(keyed, CONFIG, &[])
}

fn scene_with(keyed: bool, config: &str, main_files: &[(&str, Option<&str>)]) -> Scene {
    let mut files = vec![(".closegate.toml", Some(config))];
    files.extend_from_slice(main_files);
    let s = Scene::new().on_main(&files, "configure closegate");
    if keyed { s.key_init() } else { s }
}

/// The record tests' verbs on a scene.
trait RecordScene {
    fn git(&self, cwd: &Path, args: &[&str]) -> Output;
    fn agent(&self, slug: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid);
    fn doc(&self, wt: &Path, slug: &str, state: &str, sha: &str, branch: &str, artifacts: &[&str]);
    fn check(&self, wt: &Path, extra: &[&str]) -> (i32, Value);
    fn stage(&self, slug: &str) -> String;
    fn stats(&self) -> Value;
    fn log_path(&self) -> PathBuf;
    fn lines(&self) -> Vec<String>;
    fn records(&self) -> Vec<Value>;
    fn write_lines(&self, lines: &[String]);
    fn forge(&self, record: &Value);
    fn install_hook(&self);
    fn delete_branch(&self, branch: &str) -> bool;
    fn config_blob(&self) -> String;
}

impl RecordScene for Scene {
    /// Run `git` in `cwd` with this scene's key (the hook inherits it).
    fn git(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(cwd);
        self.env(&mut cmd, cwd);
        cmd.output().unwrap()
    }

    /// `agent/<slug>` with `src/lib.rs` and `files`, a worktree `wt/<slug>` and an honest
    /// close-ok document naming the tip.
    fn agent(&self, slug: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let body = format!("pub fn {}() {{}}\n", slug.replace('-', "_"));
        let mut all = vec![("src/lib.rs", Some(body.as_str()))];
        all.extend_from_slice(files);
        let branch = format!("agent/{slug}");
        let tip = self.fx.commit(&branch, &all, &format!("add {slug}"));
        let wt = self.fx.worktree(slug, &branch);
        self.doc(&wt, slug, "close-ok", &tip.to_string()[..12], &branch, &[]);
        (wt, tip)
    }

    /// Write a status document: `state`, the close line naming `sha` (as written) on `branch`.
    fn doc(&self, wt: &Path, slug: &str, state: &str, sha: &str, branch: &str, artifacts: &[&str]) {
        let subject = self
            .fx
            .repo
            .revparse_single(sha)
            .ok()
            .and_then(|o| o.peel_to_commit().ok())
            .map_or("made up".to_string(), |c| c.summary().unwrap().to_string());
        let path = wt.canonicalize().unwrap().display().to_string();
        let mut listed = vec!["src/lib.rs"];
        listed.extend_from_slice(artifacts);
        let mut doc = StatusDoc::complete(slug, state)
            .last_commit(sha, &subject)
            .done("it exists, proven by the smoke check")
            .artifacts(&listed);
        if matches!(state, "close-ok" | "stop-2-ready") {
            doc = doc.close(sha, branch, &path);
        }
        doc.write(wt);
    }

    /// `closegate check --format json` in `wt` (recorded): exit code and report.
    fn check(&self, wt: &Path, extra: &[&str]) -> (i32, Value) {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = self.run(wt, &args);
        let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, report)
    }

    fn stage(&self, slug: &str) -> String {
        let (code, out, err) = self.run(&self.fx.root(), &["board", "--json"]);
        assert_eq!(code, 0, "{err}");
        let board: Value = serde_json::from_str(&out).unwrap();
        let rows = board["worktrees"].as_array().unwrap();
        let row = rows.iter().find(|r| r["slug"] == slug).unwrap();
        row["stage"].as_str().unwrap().to_string()
    }

    fn stats(&self) -> Value {
        let (code, out, err) = self.run(&self.fx.root(), &["log", "--stats", "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    }

    fn log_path(&self) -> PathBuf {
        self.fx.git_dir().join("closegate/audit.jsonl")
    }

    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }

    fn records(&self) -> Vec<Value> {
        let lines = self.lines();
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Rewrite the whole log, as an agent that can write the common dir can.
    fn write_lines(&self, lines: &[String]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(self.log_path(), text).unwrap();
    }

    /// Append a hand-written line, as an agent without the key would.
    fn forge(&self, record: &Value) {
        let mut lines = self.lines();
        lines.push(record.to_string());
        self.write_lines(&lines);
    }

    fn install_hook(&self) {
        let (code, _, err) = self.run(&self.fx.root(), &["hook", "install"]);
        assert_eq!(code, 0, "{err}");
    }

    /// Delete `branch` through the installed hook (`git update-ref -d`: the branch is checked
    /// out in its worktree, which `git branch -D` refuses on its own): whether it went through.
    /// A refusal must be the hook's.
    fn delete_branch(&self, branch: &str) -> bool {
        let refname = format!("refs/heads/{branch}");
        let out = self.git(&self.fx.root(), &["update-ref", "-d", &refname]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || stderr.contains("refusing to delete agent branch"),
            "{stderr}"
        );
        out.status.success()
    }

    fn config_blob(&self) -> String {
        blob_id(CONFIG.as_bytes())
    }
}

/// The fields a forged record copies from what closegate writes, so that only the mac can tell.
fn forged(event: &str, slug: &str, tip: Oid, verdict: &str, config: &str) -> Value {
    json!({
        "ts": "2026-11-29T12:00:00Z", "event": event, "slug": slug,
        "commit": tip.to_string(), "claimed_commit": &tip.to_string()[..12],
        "branch": format!("agent/{slug}"), "verdict": verdict, "claimed": "close-ok",
        "codes": [], "by": "Mallory", "contract": null, "config": config,
        "config_source": "base", "base": "main", "base_source": "configured",
    })
}

fn hmac_hex(key: &[u8], message: &[u8]) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(message);
    let bytes = mac.finalize().into_bytes();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn key_init_makes_a_private_32_byte_key_and_never_overwrites_it() {
    let tmp = tempfile::tempdir().unwrap();
    let named = tmp.path().join("secret/record.key");
    let init = |env: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(["key", "init"]).current_dir(tmp.path());
        hermetic(&mut cmd, tmp.path());
        if let Some(path) = env {
            cmd.env("CLOSEGATE_RECORD_KEY_FILE", path);
        }
        parts(&cmd.output().unwrap())
    };
    let (code, out, err) = init(Some(&named));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&named.display().to_string()), "{out}");
    let key = std::fs::read(&named).unwrap();
    assert_eq!(key.len(), 32);
    let mode = std::fs::metadata(&named).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let (code, _, err) = init(Some(&named));
    assert_eq!(code, 1, "a second init is refused: {err}");
    assert!(err.contains("never overwritten"), "{err}");
    assert_eq!(std::fs::read(&named).unwrap(), key, "the key is unchanged");

    // Without the variable: $XDG_CONFIG_HOME/closegate/record.key (the hermetic XDG dir is
    // the temporary directory). A second key is not the first: the bytes are random.
    let (code, out, err) = init(None);
    assert_eq!(code, 0, "{out}{err}");
    let default = tmp.path().join("closegate/record.key");
    let other = std::fs::read(&default).unwrap();
    assert_eq!(other.len(), 32);
    assert_ne!(other, key);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("closegate"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["record.key"], "no temporary file is left");
}

#[test]
fn a_key_named_by_the_variable_that_is_missing_is_an_error_not_plain_records() {
    let s = scene(true);
    std::fs::remove_file(&s.key).unwrap();
    let (wt, _) = s.agent("x", &[]);
    let (code, _, err) = s.run(&wt, &["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("CLOSEGATE_RECORD_KEY_FILE"), "{err}");
    std::fs::write(&s.key, b"short").unwrap();
    let (code, _, err) = s.run(&wt, &["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected exactly 32"), "{err}");
}

#[test]
fn keyed_lines_carry_a_chained_mac_over_the_line_without_it() {
    let s = scene(true);
    let (wt, tip) = s.agent("x", &[]);
    assert_eq!(s.check(&wt, &[]).0, 0);
    assert_eq!(s.check(&wt, &[]).0, 0);
    let key = std::fs::read(&s.key).unwrap();
    let records = s.records();
    assert_eq!(records.len(), 2);
    let mut prev = String::new();
    for record in &records {
        let mac = record["mac"].as_str().unwrap().to_string();
        assert_eq!(record["prev"], prev.as_str());
        let mut unsigned = record.clone();
        unsigned.as_object_mut().unwrap().remove("mac");
        let message = serde_json::to_string(&unsigned).unwrap();
        assert_eq!(hmac_hex(&key, message.as_bytes()), mac);
        prev = mac;
    }
    // Provenance and the claimed commit as the close line wrote it.
    let first = &records[0];
    assert_eq!(first["config"], s.config_blob());
    assert_eq!(first["config_source"], "base");
    assert_eq!(first["base"], "main");
    let main = s.fx.repo.refname_to_id("refs/heads/main").unwrap();
    assert_eq!(first["base_commit"], main.to_string());
    assert_eq!(first["base_source"], "configured");
    assert_eq!(first["commit"], tip.to_string());
    assert_eq!(first["claimed_commit"], &tip.to_string()[..12]);
    let (code, out, err) = s.run(&s.fx.root(), &["log", "--verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("verified: all 2 lines"), "{out}");
}

/// A PENDING_REVIEW return (the branch edits a test), checked once under the key.
fn review_scene(keyed: bool) -> (Scene, PathBuf, Oid) {
    let s = scene(keyed);
    let (wt, tip) = s.agent("x", &[("tests/x_test.sh", Some("true\n"))]);
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 3, "{report}");
    (s, wt, tip)
}

#[test]
fn with_a_key_forged_lines_decide_nothing() {
    let (s, wt, tip) = review_scene(true);
    s.install_hook();
    let genuine_mac = s.records()[0]["mac"].as_str().unwrap().to_string();
    // An approval with no mac, and a passing check carrying a mac copied from a genuine line.
    s.forge(&forged("approve", "x", tip, "VERIFIED", &s.config_blob()));
    let mut check = forged("check", "x", tip, "VERIFIED", &s.config_blob());
    check["mac"] = json!(genuine_mac);
    check["prev"] = json!("");
    s.forge(&check);

    // Approval lookup: still PENDING_REVIEW.
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 3, "{report}");
    assert!(report["approval"].is_null());
    // Board: the last counted verdict is the genuine review.
    assert_eq!(s.stage("x"), "REVIEW");
    // Hook: deleting the branch that never passed is refused.
    assert!(
        !s.delete_branch("agent/x"),
        "the forged check opened the hook"
    );
    // Stats: the forged lines are left out and counted as such.
    let stats = s.stats();
    assert_eq!(stats["forged_lines"], 2, "{stats}");
    assert_eq!(stats["false_green"]["returns"], 1);
    assert_eq!(stats["false_green"]["pending_review"], 1);
    assert_eq!(stats["false_green"]["false_green"], 0);
    // Listing marks them; verify names the first break.
    let (_, out, _) = s.run(&s.fx.root(), &["log"]);
    let marked: Vec<&str> = out.lines().filter(|l| l.contains("forged")).collect();
    assert_eq!(marked.len(), 2, "{out}");
    assert!(
        marked[0].contains("approve") && marked[1].contains("check"),
        "{out}"
    );
    let (code, out, _) = s.run(&s.fx.root(), &["log", "--verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("first break: audit.jsonl line 2: forged: no mac"),
        "{out}"
    );
    assert!(out.contains("line 3: forged: mac does not verify"), "{out}");

    // A genuine approval works, and then the hook opens.
    let (code, out, err) = s.run(&wt, &["approve", "--yes", "--by", "Ada"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(s.check(&wt, &[]).0, 0);
    assert_eq!(s.stage("x"), "COMPLETED");
    assert!(s.delete_branch("agent/x"));
}

#[test]
fn without_a_key_records_are_plain_and_a_forged_line_counts() {
    let (s, wt, tip) = review_scene(false);
    assert!(
        s.records()[0].get("mac").is_none(),
        "plain records carry no mac"
    );
    s.forge(&forged("approve", "x", tip, "VERIFIED", &s.config_blob()));
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(
        code, 0,
        "without a key anyone who can write the log approves: {report}"
    );
    assert_eq!(report["approval"]["by"], "Mallory");
    let (code, _, err) = s.run(&s.fx.root(), &["log", "--verify"]);
    assert_eq!(code, 2, "nothing to verify against: {err}");
    assert!(err.contains("closegate key init"), "{err}");
}

#[test]
fn deleted_reordered_and_replayed_lines_break_the_chain() {
    let s = scene(true);
    let (wt, _) = s.agent("x", &[]);
    for _ in 0..3 {
        assert_eq!(s.check(&wt, &[]).0, 0);
    }
    let lines = s.lines();
    let verify = |s: &Scene| s.run(&s.fx.root(), &["log", "--verify"]);

    // Deleted: the line after the gap no longer chains.
    s.write_lines(&[lines[0].clone(), lines[2].clone()]);
    let (code, out, _) = verify(&s);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("first break: audit.jsonl line 2: prev does not match the mac of line 1"),
        "{out}"
    );
    // Each remaining line is still authentic: it counts (nothing is forged).
    assert_eq!(s.stats()["forged_lines"], 0);
    assert_eq!(s.stats()["records"], 2);
    assert_eq!(s.stage("x"), "COMPLETED");

    // Reordered: the first line's prev is not empty.
    s.write_lines(&[lines[1].clone(), lines[0].clone(), lines[2].clone()]);
    let (code, out, _) = verify(&s);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("first break: audit.jsonl line 1: prev is not empty"),
        "{out}"
    );

    // Replayed: a genuine line appended again.
    s.write_lines(&[
        lines[0].clone(),
        lines[1].clone(),
        lines[2].clone(),
        lines[1].clone(),
    ]);
    let (code, out, _) = verify(&s);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("first break: audit.jsonl line 4"), "{out}");

    // A lost tail leaves no trace (README says so).
    s.write_lines(&lines[..2]);
    assert_eq!(verify(&s).0, 0);

    // Without a key the same deletion cannot be seen at all.
    let plain = scene(false);
    let (wt, _) = plain.agent("x", &[]);
    for _ in 0..3 {
        assert_eq!(plain.check(&wt, &[]).0, 0);
    }
    let lines = plain.lines();
    plain.write_lines(&[lines[0].clone(), lines[2].clone()]);
    assert_eq!(verify(&plain).0, 2);
    assert_eq!(plain.stats()["records"], 2);
}

#[test]
fn records_under_config_or_another_base_are_listed_but_never_trusted() {
    let s = scene(false);
    s.install_hook();
    let (wt, _) = s.agent("x", &[]);
    let file = s.fx.tmp.path().join("lax.toml");
    std::fs::write(&file, "[[checks]]\nname = \"lax\"\nrun = \"true\"\n").unwrap();
    let (code, report) = s.check(&wt, &["--config", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    // Another base: a branch at main's tip (the agent's own branch as base would make its
    // commit add nothing: close-no-change, SPEC §17).
    crate::fixture::git(&s.fx.root(), &["branch", "other", "main"]);
    let (code, report) = s.check(&wt, &["--base", "other"]);
    assert_eq!(code, 0, "{report}");
    let records = s.records();
    assert_eq!(records[0]["config_source"], "file");
    assert_eq!(
        records[0]["config"],
        blob_id(&std::fs::read(&file).unwrap())
    );
    assert_eq!(records[1]["config_source"], "base");
    assert_eq!(records[1]["base"], "other");
    assert_eq!(records[1]["base_source"], "other");
    // Kept and listed, but the hook, the board, approvals and the stats do not trust them.
    let (_, out, _) = s.run(&s.fx.root(), &["log"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].ends_with("untrusted (made with --config)"),
        "{out}"
    );
    assert!(
        lines[1].ends_with("untrusted (made with another --base)"),
        "{out}"
    );
    assert_eq!(s.stage("x"), "VERIFYING");
    assert_eq!(s.stats()["false_green"]["returns"], 0);
    assert!(!s.delete_branch("agent/x"));
    let (code, out, _) = s.run(
        &wt,
        &[
            "approve",
            "--yes",
            "--by",
            "Ada",
            "--config",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("approval refused"), "{out}");

    // `--base main` names the configured base: that record counts.
    let (code, _) = s.check(&wt, &["--base", "main"]);
    assert_eq!(code, 0);
    assert_eq!(s.records().last().unwrap()["base_source"], "configured");
    assert_eq!(s.stage("x"), "COMPLETED");
    assert_eq!(s.stats()["false_green"]["returns"], 1);
    assert!(s.delete_branch("agent/x"));
}

const INV_CONTRACT: &str = "branch = \"agent/inv\"\nscope = [\"invoice/**\", \"src/**\"]\n";

#[test]
fn a_contract_bound_to_a_branch_applies_whatever_slug_the_agent_writes() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene_with(
        false,
        CONFIG,
        &[(".closegate/contracts/inv.toml", Some(INV_CONTRACT))],
    );
    let (wt, tip) = s.agent("inv", &[("db/schema.sql", Some("drop table x;\n"))]);
    let sha = &tip.to_string()[..12];
    // Honest slug: the contract applies and refuses the out-of-scope path.
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 1);
    assert_eq!(report_codes(&report), ["contract-out-of-scope"]);
    assert_eq!(report["findings"][0]["path"], "db/schema.sql");
    assert_eq!(report["contract"], blob_id(INV_CONTRACT.as_bytes()));
    // Switching the slug does not escape the contract bound to the branch.
    s.doc(&wt, "inv-2", "close-ok", sha, "agent/inv", &[]);
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 1, "{report}");
    let codes = report_codes(&report);
    assert!(
        codes.contains(&"contract-slug-mismatch".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"contract-out-of-scope".to_string()),
        "{codes:?}"
    );
    assert_eq!(report["contract"], blob_id(INV_CONTRACT.as_bytes()));

    // Another branch claiming the bound contract's slug is refused too.
    let (other, tip) = s.agent("other", &[("invoice/a.go", Some("package a\n"))]);
    s.doc(
        &other,
        "inv",
        "close-ok",
        &tip.to_string()[..12],
        "agent/other",
        &[],
    );
    let (code, report) = s.check(&other, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report_codes(&report), ["contract-slug-mismatch"]);
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("bound to branch `agent/inv`"), "{message}");
}

#[test]
fn require_contract_makes_a_return_without_one_a_gap() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let config = format!("require_contract = true\n{CONFIG}");
    let s = scene_with(
        false,
        &config,
        &[(".closegate/contracts/inv.toml", Some(INV_CONTRACT))],
    );
    let (wt, _) = s.agent("free", &[]);
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 4, "{report}");
    assert_eq!(report_codes(&report), ["contract-missing"]);
    assert_eq!(report["findings"][0]["severity"], "gap");
    assert_eq!(report["findings"][0]["gate"], "contract");
    let (wt, _) = s.agent("inv", &[("invoice/a.go", Some("package a\n"))]);
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 0, "{report}");
    // Not returned: no contract is needed yet.
    let (wt, tip) = s.agent("busy", &[]);
    s.doc(
        &wt,
        "busy",
        "in-progress",
        &tip.to_string()[..12],
        "agent/busy",
        &[],
    );
    let (_, report) = s.check(&wt, &[]);
    assert_eq!(report_codes(&report), ["state-not-returned"]);
}

#[test]
fn a_required_artifact_the_branch_did_not_change_is_missing() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let contract = "required_artifacts = [\"invoice/export.go\"]\n";
    let s = scene_with(
        false,
        CONFIG,
        &[
            ("invoice/export.go", Some("package invoice\n")),
            (".closegate/contracts/x.toml", Some(contract)),
        ],
    );
    let (wt, tip) = s.agent("x", &[]);
    s.doc(
        &wt,
        "x",
        "close-ok",
        &tip.to_string()[..12],
        "agent/x",
        &["invoice/export.go"],
    );
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        report_codes(&report),
        ["artifact-unchanged", "contract-artifact-missing"]
    );
    let message = report["findings"][1]["message"].as_str().unwrap();
    assert!(
        message.contains("the branch did not produce it"),
        "{message}"
    );

    let tip = s.fx.commit(
        "agent/x",
        &[("invoice/export.go", Some("package invoice\n// csv\n"))],
        "export csv",
    );
    s.fx.checkout(&wt);
    s.doc(
        &wt,
        "x",
        "close-ok",
        &tip.to_string()[..12],
        "agent/x",
        &["invoice/export.go"],
    );
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_configuration_change_on_the_base_voids_an_approval() {
    let (s, wt, _) = review_scene(true);
    let (code, out, err) = s.run(&wt, &["approve", "--yes", "--by", "Ada"]);
    assert_eq!(code, 0, "{out}{err}");
    let approval = s
        .records()
        .into_iter()
        .rfind(|r| r["event"] == "approve")
        .unwrap();
    assert_eq!(approval["config"], s.config_blob());
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["approval"]["by"], "Ada");

    // The base's configuration gains a surface: the approval was given under other rules.
    let changed = format!("{CONFIG}\n[protected]\nmigrations = [\"db/**\"]\n");
    s.fx.commit("main", &[(".closegate.toml", Some(&changed))], "protect db");
    let (code, report) = s.check(&wt, &[]);
    assert_eq!(code, 3, "{report}");
    assert!(report["approval"].is_null());
    assert_eq!(report["config"], blob_id(changed.as_bytes()));
    let (code, out, err) = s.run(&wt, &["approve", "--yes", "--by", "Ada"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(s.check(&wt, &[]).0, 0);
}

#[test]
fn guard_claiming_verified_without_a_status_document_is_a_recorded_overclaim() {
    let s = scene(false);
    let (wt, tip) = s.agent("x", &[]);
    std::fs::remove_file(wt.join("_EXEC_STATUS.md")).unwrap();
    let wt_arg = wt.to_str().unwrap();
    let out = s.output(&wt, &["guard", "--worktree", wt_arg], Some(b"VERIFIED\n"));
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("claim-overclaimed"), "{stdout}");
    let records = s.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["event"], "guard");
    assert_eq!(records[0]["claimed"], "VERIFIED");
    assert_eq!(records[0]["verdict"], "UNVERIFIED");
    assert_eq!(records[0]["accepted"], false);
    assert_eq!(records[0]["commit"], tip.to_string());
    assert_eq!(
        records[0]["codes"],
        json!(["state-not-returned", "claim-overclaimed"])
    );
}

/// The false-green rate on a known mix (SPEC §6): re-checks and duplicates are one return,
/// made-up commits are distinct returns, a review-only return is not false, a guard overclaim
/// without a document is one, and records under `--config` or not returned judge nothing.
#[test]
fn stats_count_returns_exactly_as_defined() {
    let s = scene(false);
    // a-1: honest, checked twice, and a guard claiming VERIFIED on it: one VERIFIED return.
    let (a1, _) = s.agent("a-1", &[]);
    assert_eq!(s.check(&a1, &[]).0, 0);
    assert_eq!(s.check(&a1, &[]).0, 0);
    let out = s.output(
        &a1,
        &["guard", "--worktree", a1.to_str().unwrap()],
        Some(b"VERIFIED\n"),
    );
    assert_eq!(out.status.code(), Some(0));
    // a-2: two returns naming two made-up commits (the second checked twice): two FAILs.
    let (a2, _) = s.agent("a-2", &[]);
    s.doc(&a2, "a-2", "close-ok", "deadbeef01", "agent/a-2", &[]);
    assert_eq!(s.check(&a2, &[]).0, 1);
    s.doc(&a2, "a-2", "close-ok", "deadbeef02", "agent/a-2", &[]);
    assert_eq!(s.check(&a2, &[]).0, 1);
    assert_eq!(s.check(&a2, &[]).0, 1);
    // b-1: review only, then approved: PENDING_REVIEW, not a false green.
    let (b1, _) = s.agent("b-1", &[("tests/b_test.sh", Some("true\n"))]);
    assert_eq!(s.check(&b1, &[]).0, 3);
    assert_eq!(s.run(&b1, &["approve", "--yes", "--by", "Ada"]).0, 0);
    // b-2: dirty when it returned (FAIL), fixed and re-checked (VERIFIED): judged by the first.
    let (b2, _) = s.agent("b-2", &[]);
    s.fx.write(&b2, "src/lib.rs", "uncommitted\n");
    assert_eq!(s.check(&b2, &[]).0, 1);
    s.fx.checkout(&b2);
    assert_eq!(s.check(&b2, &[]).0, 0);
    // c-1: a guard claiming VERIFIED on a worktree with no status document: UNVERIFIED.
    let (c1, _) = s.agent("c-1", &[]);
    std::fs::remove_file(c1.join("_EXEC_STATUS.md")).unwrap();
    let out = s.output(
        &c1,
        &["guard", "--worktree", c1.to_str().unwrap()],
        Some(b"VERIFIED\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    // d-1: not returned; e-1: checked only under --config. Neither is a return.
    let (d1, tip) = s.agent("d-1", &[]);
    s.doc(
        &d1,
        "d-1",
        "in-progress",
        &tip.to_string()[..12],
        "agent/d-1",
        &[],
    );
    assert_eq!(s.check(&d1, &[]).0, 4);
    let (e1, _) = s.agent("e-1", &[]);
    let lax = s.fx.tmp.path().join("lax.toml");
    std::fs::write(&lax, CONFIG).unwrap();
    assert_eq!(s.check(&e1, &["--config", lax.to_str().unwrap()]).0, 0);

    let stats = s.stats();
    assert_eq!(
        stats["events"],
        json!({"approve": 1, "check": 10, "guard": 2}),
        "{stats}"
    );
    assert_eq!(
        stats["false_green"],
        json!({"returns": 6, "false_green": 4, "pending_review": 1, "rate": 4.0 / 6.0}),
        "{stats}"
    );
    let by_prefix = &stats["false_green_by_prefix"];
    assert_eq!(
        by_prefix["a"],
        json!({"returns": 3, "false_green": 2, "pending_review": 0, "rate": 2.0 / 3.0})
    );
    assert_eq!(
        by_prefix["b"],
        json!({"returns": 2, "false_green": 1, "pending_review": 1, "rate": 0.5})
    );
    assert_eq!(
        by_prefix["-"],
        json!({"returns": 1, "false_green": 1, "pending_review": 0, "rate": 1.0})
    );
    assert!(
        by_prefix.get("d").is_none() && by_prefix.get("e").is_none(),
        "{stats}"
    );
    // README's worked example shows exactly these lines.
    let (_, out, _) = s.run(&s.fx.root(), &["log", "--stats"]);
    let rates = "\
false-green rate: 66.7% (4 of 6 returns claimed done were FAIL or UNVERIFIED; 1 awaiting review)
  -                    100.0% (1 of 1 returns claimed done were FAIL or UNVERIFIED; 0 awaiting review)
  a                    66.7% (2 of 3 returns claimed done were FAIL or UNVERIFIED; 0 awaiting review)
  b                    50.0% (1 of 2 returns claimed done were FAIL or UNVERIFIED; 1 awaiting review)
";
    assert!(out.ends_with(rates), "{out}");
    let manual = crate::manual::readme();
    assert!(
        manual.contains(rates),
        "the manual's worked example is stale"
    );
}

#[test]
fn concurrent_keyed_appends_keep_one_unbroken_chain() {
    let s = scene(true);
    let (wt, _) = s.agent("many", &[]);
    let children: Vec<_> = (0..8)
        .map(|_| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
            cmd.args(["check", "--no-checks"]).current_dir(&wt);
            s.env(&mut cmd, &wt);
            cmd.stdout(std::process::Stdio::null()).spawn().unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    assert_eq!(s.lines().len(), 8);
    let (code, out, err) = s.run(&s.fx.root(), &["log", "--verify"]);
    assert_eq!(
        code, 0,
        "the previous mac is read under the append's lock: {out}{err}"
    );
}

/// SPEC §6: a record made with another `--base` is never trusted — another branch, even one
/// that points at the configured base's commit today (it need not tomorrow). `--base main`,
/// the configured base itself, counts.
#[test]
fn another_base_at_the_same_commit_is_still_another_base() {
    let s = scene(false);
    let (wt, _) = s.agent("x", &[]);
    git(&s.fx.root(), &["branch", "other", "main"]);
    for (base, source) in [("other", "other"), ("main", "configured")] {
        let (code, report) = s.check(&wt, &["--base", base]);
        assert_eq!(code, 0, "{report}");
        let record = s.records().pop().unwrap();
        assert_eq!(record["base"], base);
        assert_eq!(record["base_source"], source, "--base {base}");
    }
}
