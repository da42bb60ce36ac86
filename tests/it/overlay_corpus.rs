//! Test integrity (SPEC §23) on real projects from the corpus (`shared/corpus/`): a Rust crate
//! (termtree), a Python package (idna) and a Node package (is-number), each with its own suite
//! run by its own tools in closegate's sandbox. A missing corpus or toolchain skips the test with
//! one line saying so (`fixture::require`); under `CLOSEGATE_TESTS_REQUIRE_ALL=1` (CI) it fails.
//!
//! Each test plays one agent: a weakening one (termtree), an honest one with a real test for a
//! real change (idna), one whose new test also passes on the old code (is-number), and an honest
//! one on a base whose suite is already red (idna).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::fixture::{self, Part, git, hermetic, parts};
use crate::scene::StatusDoc;

/// The corpus of real projects; `None` (the test skipped, saying so) when it is absent.
pub fn corpus() -> Option<PathBuf> {
    fixture::require(Part::Corpus)
}

/// The absolute path of `tool` on PATH; `None` (the test skipped, saying so) when it is absent.
pub fn require(tool: &'static str) -> Option<PathBuf> {
    fixture::require(Part::Tool(tool))
}

/// A directory that outlives one test run and is readable inside the sandbox (not under /tmp,
/// which the sandbox replaces): tool caches and installed dependencies.
pub fn shared_cache(name: &str) -> PathBuf {
    let dir = fixture::readable_by_checks().join("corpus").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One corpus project unpacked, with the trusted configuration committed on `main`.
pub struct Project {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Project {
    /// `None` (the test skipped, saying so) when the corpus is absent.
    pub fn new(name: &str, config: &str) -> Option<Project> {
        let corpus = corpus()?;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let out = Command::new("sh")
            .arg(corpus.join("unpack.sh"))
            .arg(name)
            .arg(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "unpack {name}: {out:?}");
        let p = Project {
            tmp,
            root,
            env: Vec::new(),
        };
        p.write(&p.root, ".closegate.toml", config);
        git(&p.root, &["add", ".closegate.toml"]);
        git(&p.root, &["commit", "-q", "-m", "configure closegate"]);
        Some(p)
    }

    pub fn write(&self, dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Commit `files` (path, new text) on `main`, as another agent's landed work.
    pub fn land(&self, files: &[(&str, &str)]) {
        for (path, text) in files {
            self.write(&self.root, path, text);
            git(&self.root, &["add", path]);
        }
        git(&self.root, &["commit", "-q", "-m", "land"]);
    }

    /// The agent's worktree `wt/x` on `agent/x`: `edit` applied, committed as "add x", and a
    /// close-ok document naming `artifact`.
    pub fn agent(&self, artifact: &str, edit: impl Fn(&Path)) -> PathBuf {
        let wt = self.tmp.path().join("wt/x");
        let wt_s = wt.to_str().unwrap();
        git(
            &self.root,
            &["worktree", "add", "-q", "-b", "agent/x", wt_s],
        );
        edit(&wt);
        git(&wt, &["add", "-A"]);
        git(&wt, &["commit", "-q", "-m", "add x"]);
        let sha = git(&wt, &["rev-parse", "HEAD"]);
        let path = wt.canonicalize().unwrap().display().to_string();
        let sha = &sha.trim()[..12];
        StatusDoc::complete("x", "close-ok")
            .last_commit(sha, "add x")
            .artifacts(&[artifact])
            .close(sha, "agent/x", &path)
            .write(&wt);
        wt
    }

    pub fn check(&self, wt: &Path, args: &[&str]) -> (i32, Value) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(["check", "--format", "json"]).args(args);
        cmd.current_dir(wt);
        hermetic(&mut cmd, self.tmp.path());
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        let (code, out, err) = parts(&cmd.output().unwrap());
        let report = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{out}\n{err}"));
        (code, report)
    }
}

/// Replace `from` by `to` in the file `rel` of `dir` (which must contain it).
pub fn edit(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{rel} has no {from:?}");
    std::fs::write(path, text.replace(from, to)).unwrap();
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report}"))
}

/// termtree with `config_head` and one check, `cargo test --locked --offline --quiet` (network
/// off, a shared target directory), its crates fetched once from the registry (the check itself
/// runs offline) and the caller's Rust toolchain handed to the check.
pub fn termtree(config_head: &str) -> Option<Project> {
    corpus()?;
    let cargo = require("cargo")?;
    let home = std::env::var("HOME").unwrap();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or(format!("{home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{home}/.rustup"));
    let target = shared_cache("termtree-target");
    let config = format!(
        "{config_head}[[checks]]\nname = \"cargo-test\"\n\
         run = \"cargo test --locked --offline --quiet\"\ntimeout_s = 600\nnetwork = false\n\
         writable = ['{}']\n",
        target.display()
    );
    let mut p = Project::new("termtree", &config)?;
    let out = Command::new(&cargo)
        .args(["fetch", "--locked"])
        .current_dir(&p.root)
        .env("CARGO_HOME", &cargo_home)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo fetch: {out:?}");
    p.env = vec![
        ("CARGO_HOME".into(), cargo_home.clone()),
        ("RUSTUP_HOME".into(), rustup_home),
        ("CARGO_TARGET_DIR".into(), target.display().to_string()),
        (
            "PATH".into(),
            format!("{}:/usr/bin:/bin", cargo.parent().unwrap().display()),
        ),
    ];
    Some(p)
}

/// Rust: the agent breaks termtree's last-item glyph and rewrites the expected snapshots in
/// `src/tests.rs` until `cargo test` passes. The overlay puts the base's `src/tests.rs` back on
/// the agent's code: `cargo test` fails there, `tests-weakened` names the check.
#[test]
fn termtree_an_agent_that_edits_expected_values_is_tests_weakened() {
    let Some(p) = termtree("[protected]\ntests = [\"src/tests.rs\"]\n\n") else {
        return;
    };
    let wt = p.agent("src/lib.rs", |wt| {
        edit(wt, "src/lib.rs", "last_item: \"└\"", "last_item: \"+\"");
        let tests = std::fs::read_to_string(wt.join("src/tests.rs")).unwrap();
        std::fs::write(wt.join("src/tests.rs"), tests.replace('└', "+")).unwrap();
    });
    let (code, report) = p.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    let weakened = finding(&report, "tests-weakened");
    assert_eq!(weakened["path"], "src/tests.rs");
    let msg = weakened["message"].as_str().unwrap();
    assert!(msg.contains("`cargo-test`"), "{msg}");
    assert_eq!(report["verdict"], "PENDING_REVIEW");
    assert_eq!(code, 3);
}

/// The idna suite through the standard library's unittest (no install needed). The run string
/// names no folder: a folder named there (`-s tests`) would put every test on surface `ci`,
/// which policy `integrity` never lets through.
fn idna_config(extra: &str) -> String {
    format!(
        "[[checks]]\nname = \"unittest\"\nrun = \"/usr/bin/python3 -m unittest discover -q\"\n\
         timeout_s = 300\nnetwork = false\n{extra}"
    )
}

/// A real feature with a real test: `idna.is_ascii_label` and `tests/test_ascii_label.py`.
fn idna_feature(wt: &Path) {
    let code = "\n\ndef is_ascii_label(label: str) -> bool:\n    \"\"\"Whether `label` is a non-empty ASCII label.\"\"\"\n    return bool(label) and all(ord(c) < 128 for c in label)\n";
    let core = std::fs::read_to_string(wt.join("idna/core.py")).unwrap();
    std::fs::write(wt.join("idna/core.py"), core + code).unwrap();
    let test = "import unittest\n\nfrom idna.core import is_ascii_label\n\n\nclass AsciiLabelTests(unittest.TestCase):\n    def test_ascii(self):\n        self.assertTrue(is_ascii_label(\"example\"))\n\n    def test_not_ascii(self):\n        self.assertFalse(is_ascii_label(\"b\\u00fccher\"))\n        self.assertFalse(is_ascii_label(\"\"))\n";
    std::fs::write(wt.join("tests/test_ascii_label.py"), test).unwrap();
}

/// Python: an honest agent adds a function and its test. The base's tests pass on the agent's
/// code, the new test fails on the base's code; with policy `integrity` no human is needed.
#[test]
fn idna_a_real_test_for_a_real_change_passes_on_the_commit_and_fails_on_the_base() {
    if require("python3").is_none() {
        return;
    }
    let Some(p) = Project::new(
        "idna",
        // The reverse overlay too (SPEC §27.1 runs it only when asked): the README's example.
        &idna_config(
            "[protected.policy]\ntests = \"integrity\"\n[protected.integrity]\nfail_to_pass = true\n",
        ),
    ) else {
        return;
    };
    let wt = p.agent("idna/core.py", idna_feature);
    let (code, report) = p.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
    assert!(
        !codes(&report).contains(&"tests-weakened".into()),
        "{report}"
    );
    assert!(
        !codes(&report).contains(&"tests-pass-on-base".into()),
        "{report}"
    );
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
}

/// Python: the base is already red (a landed change broke `idna.encode`); an agent's unrelated
/// change fails the suite too, and the check entry says the base fails as well.
#[test]
fn idna_a_red_base_is_red_on_base() {
    if require("python3").is_none() {
        return;
    }
    let Some(p) = Project::new("idna", &idna_config("")) else {
        return;
    };
    let core = std::fs::read_to_string(p.root.join("idna/core.py")).unwrap();
    let broken = core.replace("def encode(", "def encode_unused(");
    assert_ne!(core, broken);
    let broken =
        format!("{broken}\n\ndef encode(*args, **kwargs):\n    raise IDNAError(\"broken\")\n");
    p.land(&[("idna/core.py", &broken)]);
    let wt = p.agent("README.rst", |wt| {
        let readme = std::fs::read_to_string(wt.join("README.rst")).unwrap();
        std::fs::write(wt.join("README.rst"), readme + "\nA note.\n").unwrap();
    });
    let (code, report) = p.check(&wt, &["--no-record"]);
    assert_eq!(report["verdict"], "FAIL", "{report}");
    assert_eq!(code, 1);
    assert_eq!(report["checks"][0]["red_on_base"], true, "{report}");
    let msg = finding(&report, "check-failed")["message"]
        .as_str()
        .unwrap();
    assert!(msg.contains("also fails on the base ("), "{msg}");
}

/// Node: is-number's mocha suite (`test.js` at the root). The agent adds a test that also passes
/// on the old code: `tests-pass-on-base`. Dependencies are installed once, outside the
/// sandbox, into a cache the check links in.
#[test]
fn is_number_a_test_that_passes_on_the_old_code_is_tests_pass_on_base() {
    let Some(corpus) = corpus() else {
        return;
    };
    let Some(npm) = require("npm") else {
        return;
    };
    if require("node").is_none() {
        return;
    }
    let modules = node_modules_for_is_number(&corpus, &npm);
    let config = format!(
        "[protected]\ntests = [\"test.js\"]\n\n[[checks]]\nname = \"npm-test\"\n\
         run = \"ln -s '{}' node_modules && npm test\"\ntimeout_s = 300\nnetwork = false\n\
         [protected.integrity]\nfail_to_pass = true\n",
        modules.display()
    );
    let Some(p) = Project::new("is-number", &config) else {
        return;
    };
    let wt = p.agent("index.js", |wt| {
        edit(wt, "index.js", "module.exports = function(num) {", "module.exports = function isNumber(num) {");
        let test = "\ndescribe('agent', function() {\n  it('still says 1 is a number', function() {\n    assert(isNumber(1));\n  });\n});\n";
        let text = std::fs::read_to_string(wt.join("test.js")).unwrap();
        std::fs::write(wt.join("test.js"), text + test).unwrap();
    });
    let (_, report) = p.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "pass", "{report}");
    let warned = finding(&report, "tests-pass-on-base");
    // SPEC §27.1: asked for (`fail_to_pass`), a new test that passes on the old code holds it.
    assert_eq!(warned["severity"], "review");
    assert!(warned["message"].as_str().unwrap().contains("`npm-test`"));
}

/// `node_modules` for is-number, installed once per build directory from the npm registry.
pub fn node_modules_for_is_number(corpus: &Path, npm: &Path) -> PathBuf {
    let dir = shared_cache("is-number");
    let modules = dir.join("node_modules");
    if modules.join(".bin/mocha").exists() {
        return modules;
    }
    let src = dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    let out = Command::new("sh")
        .arg(corpus.join("unpack.sh"))
        .args(["is-number"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new(npm)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "npm install failed: {out:?}");
    let _ = std::fs::remove_dir_all(&modules);
    std::fs::rename(src.join("node_modules"), &modules).unwrap();
    modules
}
