//! Verdict integrity (SPEC §16 tier 2, §4.3, §4.5, §5, §9, §11): nothing the agent writes into
//! the shared repository — tags, `origin/HEAD`, loose objects, orphan or shallow histories,
//! attributes, the scripts the checks run — decides its verdict. Each test plays the agent.

use std::io::Write;
use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, git_output, parts, report_codes};
use crate::hook::{PASSING_CONFIG, status_doc};

/// `main` carrying `config` and `main_files`, and `agent/x` one commit ("add x") ahead with
/// `src/lib.rs` plus `agent_files`, checked out in `wt/x` with an honest close-ok document.
struct Return {
    fx: Fixture,
    tip: Oid,
    wt: PathBuf,
}

impl Return {
    fn new(
        config: &str,
        main_files: &[(&str, Option<&str>)],
        agent: &[(&str, Option<&str>)],
    ) -> Return {
        let fx = Fixture::new();
        let mut files = vec![(".closegate.toml", Some(config))];
        files.extend_from_slice(main_files);
        fx.commit("main", &files, "configure closegate");
        fx.checkout(&fx.root());
        let mut files = vec![("src/lib.rs", Some("pub fn x() {}\n"))];
        files.extend_from_slice(agent);
        let tip = fx.commit("agent/x", &files, "add x");
        let wt = fx.worktree("x", "agent/x");
        let r = Return { fx, tip, wt };
        r.claim(tip);
        r
    }

    /// Write the status document claiming `commit` (subject "add x").
    fn claim(&self, commit: Oid) {
        let path = self.wt.canonicalize().unwrap().display().to_string();
        let doc = status_doc("close-ok", &commit.to_string()[..12], &path);
        std::fs::write(self.wt.join("_EXEC_STATUS.md"), doc).unwrap();
    }

    fn root(&self) -> PathBuf {
        self.fx.root()
    }

    fn main_tip(&self) -> Oid {
        self.fx.repo.refname_to_id("refs/heads/main").unwrap()
    }

    /// `closegate check --format json --no-record` in the worktree, plus `args`.
    fn check(&self, args: &[&str]) -> (i32, Value, String) {
        check_json(&self.wt, args)
    }
}

fn check_json(cwd: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["check", "--format", "json", "--no-record"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = parts(&closegate(cwd, &all));
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{stdout}\n{stderr}"));
    (code, report, stderr)
}

/// The `(path, surface)` pairs of the report's protected list.
fn protected(report: &Value) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = report["protected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().into(),
                p["surface"].as_str().unwrap().into(),
            )
        })
        .collect();
    all.sort();
    all
}

fn message<'a>(report: &'a Value, code: &str) -> &'a str {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} in {report}"))
}

const TEST_EDIT: (&str, Option<&str>) = ("tests/a_test.rs", Some("#[test] fn t() {}\n"));

// ---- the base is a branch (SPEC §5) ----

#[test]
fn a_tag_named_main_does_not_shadow_the_base_branch() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    git(&r.root(), &["tag", "main", &r.tip.to_string()]);
    for args in [&[][..], &["--base", "main"][..]] {
        let (code, report, _) = r.check(args);
        assert_eq!(code, 3, "{report}");
        assert_eq!(report["base_commit"], r.main_tip().to_string());
        assert_eq!(
            protected(&report),
            [("tests/a_test.rs".into(), "tests".into())]
        );
    }
}

#[test]
fn tags_and_object_ids_are_never_a_base() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    git(&r.root(), &["tag", "release", &r.main_tip().to_string()]);
    let main = r.main_tip().to_string();
    for base in [
        "release",
        "refs/tags/release",
        main.as_str(),
        "main~0",
        "HEAD",
    ] {
        let (code, report, _) = r.check(&["--base", base]);
        assert_eq!(code, 4, "--base {base}: {report}");
        assert!(
            report_codes(&report).contains(&"base-unknown".to_string()),
            "{base}"
        );
    }
    for base in ["refs/heads/main", "main"] {
        let (_, report, _) = r.check(&["--base", base]);
        assert_eq!(report["base_commit"], main, "--base {base}");
    }
}

#[test]
fn origin_head_is_consulted_after_main_and_only_into_remotes_origin() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    let root = r.root();
    // The agent aims origin/HEAD at a remote-tracking ref holding its own commit.
    git(
        &root,
        &["update-ref", "refs/remotes/origin/evil", &r.tip.to_string()],
    );
    git(
        &root,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/evil",
        ],
    );
    let (code, report, _) = r.check(&[]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["base"], "main");
    assert_eq!(report["base_commit"], r.main_tip().to_string());

    // Without main or master: origin/HEAD counts only as a symref into refs/remotes/origin/.
    git(
        &root,
        &[
            "update-ref",
            "refs/remotes/origin/main",
            &r.main_tip().to_string(),
        ],
    );
    git(&root, &["checkout", "-q", "--detach"]);
    git(&root, &["branch", "-D", "main"]);
    git(
        &root,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/heads/agent/x",
        ],
    );
    let (_, report, _) = r.check(&[]);
    assert!(
        report_codes(&report).contains(&"base-unknown".to_string()),
        "{report}"
    );
    git(
        &root,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    let (code, report, _) = r.check(&[]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["base"], "origin/main");
}

// ---- no merge base is a gap, never silence (SPEC §4.5) ----

#[test]
fn an_orphan_branch_is_base_unrelated_not_verified() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    let root = r.root();
    let tree = git(&root, &["rev-parse", &format!("{}^{{tree}}", r.tip)]);
    let orphan = git(&root, &["commit-tree", tree.trim(), "-m", "add x"]);
    let orphan = Oid::from_str(orphan.trim()).unwrap();
    git(&r.wt, &["reset", "-q", "--hard", &orphan.to_string()]);
    r.claim(orphan);
    let (code, report, _) = r.check(&[]);
    assert_eq!(code, 4, "{report}");
    assert_eq!(report["verdict"], "UNVERIFIED");
    let finding = &report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "base-unrelated")
        .cloned()
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(
        (finding["severity"].as_str(), finding["gate"].as_str()),
        (Some("gap"), Some("protected"))
    );
    assert!(
        !finding["message"].as_str().unwrap().contains("shallow"),
        "{finding}"
    );
}

#[test]
fn a_shallow_clone_hiding_the_fork_point_says_shallow() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    // One more commit on each side, so depth 1 hides the fork point.
    r.fx.commit("main", &[("docs.md", Some("more\n"))], "more docs");
    let tip = r.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn y() {}\n"))],
        "add x",
    );
    let url = format!("file://{}", r.root().display());
    let clone = r.fx.tmp.path().join("clone");
    git(
        r.fx.tmp.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    git(&clone, &["branch", "agent/x", "origin/agent/x"]);
    let doc = r.fx.tmp.path().join("status.md");
    std::fs::write(
        &doc,
        status_doc("close-ok", &tip.to_string()[..12], "/nowhere"),
    )
    .unwrap();
    let (_, report, _) = check_json(
        &clone,
        &["--no-worktree", "--status", doc.to_str().unwrap()],
    );
    assert_ne!(report["verdict"], "VERIFIED", "{report}");
    let msg = message(&report, "base-unrelated");
    assert!(msg.contains("shallow"), "{msg}");
    assert!(msg.contains("--unshallow"), "{msg}");
}

// ---- every object read is verified, in git's order (SPEC §11) ----

/// A loose object file holding `kind` `content` (zlib, as git writes it).
fn loose_bytes(kind: &str, content: &[u8]) -> Vec<u8> {
    let mut raw = format!("{kind} {}\0", content.len()).into_bytes();
    raw.extend_from_slice(content);
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&raw).unwrap();
    enc.finish().unwrap()
}

fn plant(git_dir: &Path, id: Oid, bytes: &[u8]) -> PathBuf {
    let hex = id.to_string();
    let dir = git_dir.join("objects").join(&hex[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(&hex[2..]);
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_loose_object_planted_at_a_packed_trees_id_changes_nothing() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    let root = r.root();
    git(&root, &["repack", "-adq"]);
    // A fresh (loose) commit of the packed tree that edits the tests …
    let tree = r.fx.repo.find_commit(r.tip).unwrap().tree_id();
    let main_tree = r.fx.repo.find_commit(r.main_tip()).unwrap().tree_id();
    let commit = git(
        &root,
        &[
            "commit-tree",
            &tree.to_string(),
            "-p",
            "main",
            "-m",
            "add x",
        ],
    );
    let commit = Oid::from_str(commit.trim()).unwrap();
    git(
        &root,
        &["update-ref", "refs/heads/agent/x", &commit.to_string()],
    );
    git(&r.wt, &["reset", "-q", "--hard"]);
    r.claim(commit);
    // … and, at that tree's id, a loose file holding the base's tree: no change to see.
    let base_tree =
        r.fx.repo
            .odb()
            .unwrap()
            .read(main_tree)
            .unwrap()
            .data()
            .to_vec();
    plant(&r.fx.git_dir(), tree, &loose_bytes("tree", &base_tree));
    let git_sees = git(&root, &["diff", "--name-only", "main", &commit.to_string()]);
    assert!(git_sees.contains("tests/a_test.rs"), "{git_sees}");
    let (code, report, stderr) = r.check(&[]);
    assert_eq!(code, 3, "{report}\n{stderr}");
    assert!(
        protected(&report).contains(&("tests/a_test.rs".into(), "tests".into())),
        "{report}"
    );
}

#[test]
fn a_loose_object_that_does_not_hash_to_its_name_is_an_error_naming_it() {
    let r = Return::new(PASSING_CONFIG, &[], &[TEST_EDIT]);
    // The agent's tree is loose (never packed); rewrite its file with another tree.
    let tree = r.fx.repo.find_commit(r.tip).unwrap().tree_id();
    let main_tree = r.fx.repo.find_commit(r.main_tip()).unwrap().tree_id();
    let base_tree =
        r.fx.repo
            .odb()
            .unwrap()
            .read(main_tree)
            .unwrap()
            .data()
            .to_vec();
    plant(&r.fx.git_dir(), tree, &loose_bytes("tree", &base_tree));
    let (code, stdout, stderr) = parts(&closegate(&r.wt, &["check", "--no-record"]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains(&tree.to_string()), "{stderr}");
}

// ---- what grades the work is always protected (SPEC §4.5) ----

#[test]
fn attributes_modules_and_the_scripts_checks_run_are_always_on_ci() {
    let config = "[protected]\nci = [\"nothing/**\"]\n\n[[checks]]\nname = \"smoke\"\n\
                  run = \"sh scripts/check.sh && ./tools/lint --dir=suite/ 'expected.out'\"\n";
    let main_files = [
        ("scripts/check.sh", Some("exit 0\n")),
        ("tools/lint", Some("true\n")),
        ("suite/a.txt", Some("a\n")),
        ("expected.out", Some("expected\n")),
    ];
    let agent = [
        (".gitattributes", Some("*.txt eol=crlf\n")),
        ("deep/.gitattributes", Some("* -text\n")),
        (".gitmodules", Some("")),
        ("scripts/check.sh", Some("exit 0 # rewritten\n")),
        ("tools/lint", Some("exit 0\n")),
        ("suite/a.txt", Some("b\n")),
        ("expected.out", Some("whatever\n")),
        ("scripts/other.sh", Some("not named by a check\n")),
    ];
    let r = Return::new(config, &main_files, &agent);
    let (code, report, stderr) = r.check(&["--no-checks"]);
    assert_eq!(code, 3, "{report}\n{stderr}");
    let ci = |p: &str| (p.to_string(), "ci".to_string());
    // `--dir=suite/` is an option word: it names no path (SPEC §4.5), so `suite/a.txt` is not
    // on `ci`; `'expected.out'`, a command word, is.
    assert_eq!(
        protected(&report),
        [
            ci(".gitattributes"),
            ci(".gitmodules"),
            ci("deep/.gitattributes"),
            ci("expected.out"),
            ci("scripts/check.sh"),
            ci("tools/lint"),
        ]
    );
}

// ---- the close line names a commit, never peeled (SPEC §4.3) ----

#[test]
fn an_annotated_tag_in_the_close_line_is_close_commit_unknown() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    git(
        &r.root(),
        &["tag", "-a", "v1", "-m", "v1", &r.tip.to_string()],
    );
    let tag = git(&r.root(), &["rev-parse", "refs/tags/v1"]);
    let tag = Oid::from_str(tag.trim()).unwrap();
    assert_ne!(tag, r.tip);
    r.claim(tag);
    let (code, report, _) = r.check(&[]);
    assert_eq!(code, 1, "{report}");
    assert!(
        message(&report, "close-commit-unknown").contains("tag"),
        "{report}"
    );
    // A tree id is not a commit either.
    let tree = r.fx.repo.find_commit(r.tip).unwrap().tree_id();
    r.claim(tree);
    let (_, report, _) = r.check(&[]);
    assert!(
        message(&report, "close-commit-unknown").contains("tree"),
        "{report}"
    );
}

// ---- patterns cover what a checkout would put under them (SPEC §4.5) ----

fn contract_return(config: &str, contract: &str, agent: &[(&str, Option<&str>)]) -> Return {
    let main = [
        (".closegate/contracts/x.toml", Some(contract)),
        ("db/schema.sql", Some("s\n")),
    ];
    Return::new(config, &main, agent)
}

#[test]
fn a_pattern_without_glob_characters_covers_everything_under_it() {
    let config = "[protected]\ndata = [\"data\", \"docs/spec.md\"]\n";
    let agent = [
        ("db/x.sql", Some("drop\n")),
        ("data/set/a.csv", Some("1\n")),
        ("docs/spec.md", Some("spec\n")),
        ("database.md", Some("not under db\n")),
        ("src/lib.rs", Some("pub fn x() {}\n")),
    ];
    let r = contract_return(config, "prohibited = [\"db\"]\n", &agent);
    let (code, report, _) = r.check(&["--no-checks"]);
    assert_eq!(code, 1, "{report}");
    assert!(
        message(&report, "contract-prohibited").contains("db/x.sql"),
        "{report}"
    );
    let prohibited = report_codes(&report)
        .iter()
        .filter(|c| *c == "contract-prohibited")
        .count();
    assert_eq!(prohibited, 1, "database.md is not under db: {report}");
    let data: Vec<_> = protected(&report)
        .into_iter()
        .filter(|(_, s)| s == "data")
        .collect();
    assert_eq!(
        data,
        [
            ("data/set/a.csv".into(), "data".into()),
            ("docs/spec.md".into(), "data".into())
        ]
    );
}

#[test]
fn with_core_ignorecase_patterns_ignore_case() {
    let config = "[protected]\nmigrations = [\"db/migrations/**\"]\n";
    let agent = [
        ("DB/Migrations/001.sql", Some("drop\n")),
        ("Tests/a.rs", Some("t\n")),
    ];
    let r = contract_return(config, "prohibited = [\"db/**\"]\n", &agent);
    let (_, report, _) = r.check(&["--no-checks"]);
    assert!(
        !report_codes(&report).contains(&"contract-prohibited".to_string()),
        "{report}"
    );
    git(&r.root(), &["config", "core.ignorecase", "true"]);
    let (code, report, _) = r.check(&["--no-checks"]);
    assert_eq!(code, 1, "{report}");
    assert!(message(&report, "contract-prohibited").contains("DB/Migrations/001.sql"));
    let surfaces: Vec<_> = protected(&report).into_iter().map(|(_, s)| s).collect();
    assert!(surfaces.contains(&"migrations".to_string()), "{report}");
    assert!(surfaces.contains(&"tests".to_string()), "{report}");
}

// ---- the hook (SPEC §9), through the git CLI ----

fn install(root: &Path) {
    let (code, _, stderr) = parts(&closegate(root, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
}

fn pass(wt: &Path) {
    let (code, stdout, stderr) = parts(&closegate(wt, &["check"]));
    assert_eq!(code, 0, "check did not verify:\n{stdout}\n{stderr}");
}

fn branch_exists(r: &Return, name: &str) -> bool {
    r.fx.repo
        .find_reference(&format!("refs/heads/{name}"))
        .is_ok()
}

#[test]
fn a_trailing_status_only_commit_is_covered_at_merge_and_delete() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    git(&r.wt, &["add", "_EXEC_STATUS.md"]);
    git(&r.wt, &["commit", "-q", "-m", "status"]);
    pass(&r.wt);
    let tip = r.fx.repo.refname_to_id("refs/heads/agent/x").unwrap();
    assert_ne!(
        tip, r.tip,
        "the record names the close line's commit, not the tip"
    );
    // board: the tip's verdict is its parent's
    let (_, board, _) = parts(&closegate(&r.root(), &["board", "--json"]));
    let board: Value = serde_json::from_str(&board).unwrap();
    let rows = board["worktrees"].as_array().unwrap();
    let row = rows.iter().find(|w| w["branch"] == "agent/x").unwrap();
    assert_eq!(row["stage"], "COMPLETED", "{board}");
    // A second branch at the same tip has no decision of its own: agent/x's verdict never counts
    // for it (SPEC §26.1), so deleting it unmerged is refused.
    git(&r.root(), &["branch", "agent/y", "agent/x"]);
    let (code, _, stderr) = parts(&git_output(&r.root(), &["branch", "-D", "agent/y"]));
    assert_ne!(
        code, 0,
        "another branch's verdict covered agent/y: {stderr}"
    );
    assert!(stderr.contains("agent/y"), "{stderr}");
    // delete: agent/x itself at its trailing status-only commit (the worktree steps off it first)
    git(&r.wt, &["checkout", "-q", "--detach"]);
    let (code, _, stderr) = parts(&git_output(&r.root(), &["branch", "-D", "agent/x"]));
    assert_eq!(code, 0, "{stderr}");
    // merge: the branch again, at the same tip (its records are this branch's)
    git(&r.root(), &["branch", "agent/x", &tip.to_string()]);
    let (code, _, stderr) = parts(&git_output(&r.root(), &["merge", "--ff-only", "agent/x"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r.main_tip(), tip);
}

#[test]
fn merging_agent_x_tilde_1_is_judged_on_that_commit() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    // agent/x~1 never passed; the tip did.
    let first = r.tip;
    let tip = r.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n"))],
        "add x",
    );
    r.fx.checkout(&r.wt);
    r.claim(tip);
    pass(&r.wt);
    let before = r.main_tip();
    let (code, _, stderr) = parts(&git_output(&r.root(), &["merge", "--ff-only", "agent/x~1"]));
    assert_ne!(code, 0, "the hook let unpassed agent work into the base");
    assert_eq!(r.main_tip(), before);
    assert!(stderr.contains(&first.to_string()[..12]), "{stderr}");
    let wt = r.wt.canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("closegate check {}", wt.display())),
        "{stderr}"
    );
    assert!(stderr.contains("git reset --merge"), "{stderr}");
    git(&r.root(), &["reset", "-q", "--merge"]);
    // A merge commit of agent/x~1 is the same merge.
    let (code, _, _) = parts(&git_output(
        &r.root(),
        &["merge", "--no-ff", "-m", "m", "agent/x~1"],
    ));
    assert_ne!(code, 0);
    assert_eq!(r.main_tip(), before);
    git(&r.root(), &["reset", "-q", "--merge"]);
    // The tip passed: merging it is fine.
    let (code, _, stderr) = parts(&git_output(&r.root(), &["merge", "--ff-only", "agent/x"]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_refused_delete_names_the_exact_commands_to_run() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    // git itself refuses `branch -D` of a checked-out branch; update-ref does not ask.
    let delete = ["update-ref", "-d", "refs/heads/agent/x"];
    let (code, _, stderr) = parts(&git_output(&r.root(), &delete));
    assert_ne!(code, 0);
    let wt = r.wt.canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("closegate check {}", wt.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "closegate approve {} --commit {}",
            wt.display(),
            r.tip
        )),
        "{stderr}"
    );
    assert!(branch_exists(&r, "agent/x"));
}

#[test]
fn a_tag_named_main_does_not_change_what_the_hook_guards() {
    let r = Return::new(
        PASSING_CONFIG,
        &[],
        &[(".closegate.toml", Some("agent_branches = [\"none/*\"]\n"))],
    );
    install(&r.root());
    git(&r.root(), &["tag", "main", &r.tip.to_string()]);
    let delete = ["update-ref", "-d", "refs/heads/agent/x"];
    let (code, _, stderr) = parts(&git_output(&r.root(), &delete));
    assert_ne!(code, 0, "{stderr}");
    assert!(branch_exists(&r, "agent/x"));
}

#[test]
fn a_base_move_to_a_configuration_or_contract_that_does_not_parse_is_refused() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    let root = r.root();
    let before = r.main_tip();
    std::fs::write(root.join(".closegate.toml"), "no_such_key = 1\n").unwrap();
    git(&root, &["add", ".closegate.toml"]);
    let (code, _, stderr) = parts(&git_output(&root, &["commit", "-q", "-m", "break"]));
    assert_ne!(code, 0);
    assert_eq!(r.main_tip(), before);
    assert!(
        stderr.contains(".closegate.toml") && stderr.contains("no_such_key"),
        "{stderr}"
    );
    git(&root, &["reset", "-q", "--hard"]);
    std::fs::create_dir_all(root.join(".closegate/contracts")).unwrap();
    std::fs::write(root.join(".closegate/contracts/x.toml"), "scope = 3\n").unwrap();
    git(&root, &["add", ".closegate"]);
    let (code, _, stderr) = parts(&git_output(&root, &["commit", "-q", "-m", "contract"]));
    assert_ne!(code, 0);
    assert!(stderr.contains(".closegate/contracts/x.toml"), "{stderr}");
    assert_eq!(r.main_tip(), before);
}

#[test]
fn an_unreadable_base_configuration_holds_only_agent_branches() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    let root = r.root();
    let bypass = ["-c", "core.hooksPath=/dev/null"];
    std::fs::write(root.join(".closegate.toml"), "no_such_key = 1\n").unwrap();
    git(&root, &["add", ".closegate.toml"]);
    git(
        &root,
        &[bypass[0], bypass[1], "commit", "-q", "-m", "break"],
    );
    // Everything else passes …
    git(&root, &["tag", "t1"]);
    git(&root, &["branch", "feature"]);
    git(&root, &["branch", "-D", "feature"]);
    // … the default agent branches are held, naming the file and the error …
    let delete = ["update-ref", "-d", "refs/heads/agent/x"];
    let (code, _, stderr) = parts(&git_output(&root, &delete));
    assert_ne!(code, 0);
    assert!(
        stderr.contains("main:.closegate.toml") && stderr.contains("no_such_key"),
        "{stderr}"
    );
    assert!(branch_exists(&r, "agent/x"));
    // … and the repair lands.
    std::fs::write(root.join(".closegate.toml"), PASSING_CONFIG).unwrap();
    git(&root, &["add", ".closegate.toml"]);
    let (code, _, stderr) = parts(&git_output(&root, &["commit", "-q", "-m", "repair"]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn one_transaction_creating_an_agent_branch_and_moving_the_base_onto_it_is_refused() {
    let r = Return::new(PASSING_CONFIG, &[], &[]);
    install(&r.root());
    // Work on no agent branch yet (a scratch branch, not guarded)…
    let work = r.fx.commit("scratch", &[("y.rs", Some("y\n"))], "add y");
    let tip = work.to_string();
    // … becomes agent/y and the base in one transaction. The agent branch's line comes first:
    // the script must hand it to closegate too.
    let stdin = format!(
        "start\ncreate refs/heads/agent/y {tip}\nupdate refs/heads/main {tip}\nprepare\ncommit\n"
    );
    let out = crate::fixture::git_stdin(&r.root(), &["update-ref", "--stdin"], stdin.as_bytes());
    assert_ne!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(r.main_tip(), work);
    assert!(!branch_exists(&r, "agent/y"));
}

#[test]
fn a_configured_base_is_guarded_by_the_installed_script() {
    let config = format!("base = \"develop\"\n{PASSING_CONFIG}");
    let r = Return::new(&config, &[], &[]);
    git(&r.root(), &["branch", "develop", "main"]);
    install(&r.root());
    let (code, _, stderr) = parts(&git_output(
        &r.root(),
        &["branch", "-f", "develop", "agent/x"],
    ));
    assert_ne!(
        code, 0,
        "moving the configured base onto unpassed agent work: {stderr}"
    );
    assert!(stderr.contains("refusing to move `develop`"), "{stderr}");
}
