//! The one check runner (issue 36; SPEC §19, §22, §23): every run's reuse key is built by
//! `Session::runner()`, for every target — `check` of a worktree, `--no-worktree --rev`, the stop
//! hook (it runs `signal --worktree`, a session opened on the worktree as `check`'s is), an
//! overlay, the merge base's own tree, `land`'s composed commit, `validate --run` and `init`'s try
//! on the base tip. A key holds (SPEC §19) the commit's tree, the check's name, `run` and
//! `timeout_s`, the configuration's blob id, `CLOSEGATE_BASE`'s commit, the `CLOSEGATE_SLUG` and
//! `CLOSEGATE_BRANCH` values the check is given, and with `reuse = "commit"` the commit id. The
//! table asserts, per target, that each of those changes the key and that nothing else does (the
//! commit id of a same-tree commit without `reuse = "commit"`, the worktree's uncommitted files,
//! the status document, `--rerun`, the path the claim is judged from).
//!
//! And `land`'s protected re-check (§22 step 3) asks the gate's one protected rule: a test module
//! removed inside a source file, which only the full rule sees, is refused by `land` exactly as
//! `check` judges it.

use std::path::{Path, PathBuf};

use closegate::config::CheckSpec;
use closegate::gates::Session;
use closegate::gates::reuse::{self, Key};
use closegate::gates::runner::{Claimed, Target};
use closegate::gates::session::{GateOptions, Trusted, trusted_config};
use closegate::repo::Repo;
use closegate::report::CheckRun;
use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, git};

const CONFIG: &str = "[[checks]]\nname = \"t\"\nrun = \"true\"\ntimeout_s = 60\n";
const STATUS: &str = "_EXEC_STATUS.md";

/// A repository: `main` configured with [`CONFIG`]; `agent/x` one commit ahead (`x`, its status
/// document committed) in worktree `x`; `agent/y` a different commit with `x`'s very tree;
/// `agent/z` a commit with another tree.
struct World {
    fx: Fixture,
    wt: PathBuf,
    main: Oid,
    x: Oid,
    y: Oid,
    z: Oid,
}

fn world() -> World {
    let fx = Fixture::new();
    let main = fx.commit("main", &[(".closegate.toml", Some(CONFIG))], "configure");
    fx.checkout(&fx.root());
    let files = [
        ("src/lib.rs", Some("pub fn x() {}\n")),
        (STATUS, Some("# x\n")),
    ];
    let x = fx.commit("agent/x", &files, "add x");
    let y = fx.commit("agent/y", &files, "add x, again");
    let z = fx.commit(
        "agent/z",
        &[("src/lib.rs", Some("pub fn z() {}\n"))],
        "add z",
    );
    let wt = fx.worktree("x", "agent/x");
    World {
        fx,
        wt,
        main,
        x,
        y,
        z,
    }
}

/// A session opened as `check` opens one.
fn open(dir: &Path, opts: &GateOptions) -> Session {
    Session::open(Some(dir), opts).unwrap()
}

/// A session on `configuration` held by the command (`validate`'s file, `init`'s starter).
fn given(w: &World, configuration: &str, blob: Option<&str>) -> Session {
    let (repo, root) = open_repo(&w.fx.root());
    let config = closegate::config::Config::parse(configuration, ".closegate.toml").unwrap();
    Session::on_base(repo, root, Trusted::given(config, blob.map(str::to_string))).unwrap()
}

fn claim(commit: Oid, branch: &'static str, slug: &'static str) -> Claimed<'static> {
    Claimed {
        commit,
        branch,
        slug,
    }
}

fn spec(name: &str, run: &str, timeout_s: u64, reuse_commit: bool) -> CheckSpec {
    CheckSpec {
        reuse_commit,
        ..CheckSpec::new(name, run, timeout_s)
    }
}

/// Whether a result recorded under (`then`, `then_spec`) stands for a run under (`now`,
/// `now_spec`): the record's entry as `check` writes it, matched as every run matches it.
fn stands(then: &Key, then_spec: &CheckSpec, now: &Key, now_spec: &CheckSpec) -> bool {
    let run = CheckRun {
        name: then_spec.name.clone(),
        command: then_spec.run.clone(),
        exit_code: Some(0),
        timed_out: false,
        duration_ms: 1,
        output: Vec::new(),
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
    };
    let entry = reuse::entry(then, then_spec, "bwrap", &run, None);
    reuse::matches(&entry, now, now_spec, "bwrap")
}

/// One row's variation: what changed, the key then, and whether SPEC §19 puts it in the key.
struct Case {
    what: &'static str,
    key: Key,
    changes: bool,
}

fn case(what: &'static str, key: Key, changes: bool) -> Case {
    Case { what, key, changes }
}

/// Assert every case of `row` against `base` for the plain check `t` (and the per-check parts:
/// name, `run`, `timeout_s`), and the commit id only under `reuse = "commit"`.
fn assert_row(row: &str, base: &Key, cases: &[Case]) {
    let t = spec("t", "true", 60, false);
    for c in cases {
        let reused = stands(base, &t, &c.key, &t);
        assert_eq!(
            reused,
            !c.changes,
            "{row}: {} should {}change the key\nthen {base:?}\nnow  {:?}",
            c.what,
            if c.changes { "" } else { "not " },
            c.key
        );
    }
    for (what, other) in [
        ("the check's name", spec("u", "true", 60, false)),
        ("its `run`", spec("t", "true ", 60, false)),
        ("its `timeout_s`", spec("t", "true", 61, false)),
    ] {
        assert!(!stands(base, &t, base, &other), "{row}: {what}");
    }
    assert!(stands(base, &t, base, &t), "{row}: the same input");
}

/// The commit id is in the key only under `reuse = "commit"`: `same_tree` is `base`'s run told
/// another commit with the very same tree.
fn assert_commit_only_with_reuse_commit(row: &str, base: &Key, same_tree: &Key) {
    let t = spec("t", "true", 60, false);
    let by_commit = spec("t", "true", 60, true);
    assert_eq!(base.tree, same_tree.tree, "{row}: the same tree");
    assert_ne!(base.commit, same_tree.commit, "{row}: another commit");
    assert!(stands(base, &t, same_tree, &t), "{row}: tree only");
    assert!(
        !stands(base, &by_commit, same_tree, &by_commit),
        "{row}: reuse = \"commit\""
    );
}

#[test]
fn the_reuse_key_of_every_target_holds_what_spec_19_says_and_nothing_else() {
    let w = world();
    std::fs::write(w.wt.join(STATUS), "# x\n\nstate: in-progress\n").unwrap();
    let plain = GateOptions::default();
    let wt = open(&w.wt, &plain);
    let key = |s: &Session, t: Target<'_>| s.runner().key(&t);
    let x = claim(w.x, "agent/x", "x");

    // check of a worktree.
    let base = key(&wt, Target::Commit(x));
    assert_eq!(
        base.tree,
        w.fx.repo.find_commit(w.x).unwrap().tree_id().to_string()
    );
    assert_eq!(base.base_commit, Some(w.main.to_string()));
    assert_eq!((base.slug.as_str(), base.branch.as_str()), ("x", "agent/x"));
    let other_config = w.fx.tmp.path().join("other.toml");
    std::fs::write(&other_config, format!("jobs = 1\n{CONFIG}")).unwrap();
    let with_config = GateOptions {
        config: Some(other_config.clone()),
        ..GateOptions::default()
    };
    let rerun = GateOptions {
        rerun: true,
        ..GateOptions::default()
    };
    let rev = GateOptions {
        no_worktree: true,
        rev: Some("agent/x".into()),
        ..GateOptions::default()
    };
    // The worktree's uncommitted files and its status document are not the checked tree.
    std::fs::write(w.wt.join("scratch.txt"), "uncommitted\n").unwrap();
    std::fs::write(w.wt.join(STATUS), "# x\n\nstate: blocked\n").unwrap();
    let wt_again = open(&w.wt, &plain);
    let from_rev = open(&w.fx.root(), &rev);
    // The stop hook runs `closegate signal - --worktree WT`: a session on the worktree as
    // `check`'s (tests/it/reuse.rs runs it end to end).
    let stop_hook = open(&w.wt, &plain);
    let cases = [
        case(
            "another tree",
            key(&wt, Target::Commit(claim(w.z, "agent/x", "x"))),
            true,
        ),
        case(
            "another slug",
            key(&wt, Target::Commit(claim(w.x, "agent/x", "y"))),
            true,
        ),
        case(
            "another branch",
            key(&wt, Target::Commit(claim(w.x, "agent/y", "x"))),
            true,
        ),
        case(
            "another configuration blob",
            key(&open(&w.wt, &with_config), Target::Commit(x)),
            true,
        ),
        case(
            "the worktree's other files",
            key(&wt_again, Target::Commit(x)),
            false,
        ),
        case(
            "--rerun",
            key(&open(&w.wt, &rerun), Target::Commit(x)),
            false,
        ),
        case(
            "--no-worktree --rev",
            key(&from_rev, Target::Commit(x)),
            false,
        ),
        case("the stop hook", key(&stop_hook, Target::Commit(x)), false),
    ];
    assert_row("check of a worktree", &base, &cases);
    let same_tree = key(&wt, Target::Commit(claim(w.y, "agent/x", "x")));
    assert_commit_only_with_reuse_commit("check of a worktree", &base, &same_tree);
    // A branch name that is not a branch of this repository is handed over empty, so it cannot
    // make a key of its own.
    let nobranch = key(&wt, Target::Commit(claim(w.x, "no/such", "x")));
    assert_eq!(nobranch.branch, "");

    // An overlay (and the reverse overlay) stand for the claimed commit: its key but the tree.
    let z_tree = w.fx.repo.find_commit(w.z).unwrap().tree_id();
    let overlay = |of, reverse| Target::Overlay {
        of,
        tree: z_tree,
        checkout: w.z,
        reverse,
    };
    let over = key(&wt, overlay(x, false));
    assert_eq!(over.tree, z_tree.to_string());
    assert_eq!(
        Key {
            tree: base.tree.clone(),
            ..over.clone()
        },
        base
    );
    let cases = [
        case(
            "the reverse overlay of the same tree",
            key(&wt, overlay(x, true)),
            false,
        ),
        case(
            "another slug",
            key(&wt, overlay(claim(w.x, "agent/x", "y"), false)),
            true,
        ),
        case(
            "another branch",
            key(&wt, overlay(claim(w.x, "agent/y", "x"), false)),
            true,
        ),
        case(
            "another configuration blob",
            key(&open(&w.wt, &with_config), overlay(x, false)),
            true,
        ),
        case(
            "--no-worktree --rev",
            key(&from_rev, overlay(x, false)),
            false,
        ),
    ];
    assert_row("overlay", &over, &cases);

    // The merge base's own tree: its own values, the base branch, no slug — whoever asks.
    let merge_base = key(&wt, Target::MergeBase(w.main));
    assert_eq!(
        (merge_base.slug.as_str(), merge_base.branch.as_str()),
        ("", "main")
    );
    assert_eq!(merge_base.commit, w.main.to_string());
    let agent_z = w.fx.worktree("z", "agent/z");
    std::fs::write(agent_z.join(STATUS), "# z\n").unwrap();
    let cases = [
        case(
            "another agent",
            key(&open(&agent_z, &plain), Target::MergeBase(w.main)),
            false,
        ),
        case(
            "--no-worktree --rev",
            key(&from_rev, Target::MergeBase(w.main)),
            false,
        ),
        case(
            "another configuration blob",
            key(&open(&w.wt, &with_config), Target::MergeBase(w.main)),
            true,
        ),
    ];
    assert_row("merge base", &merge_base, &cases);

    // land's composed commit: composed on `base_tip`, told the first landed branch's values. On
    // a base that has not moved, a fast-forward composes the branch's own tree: the branch's
    // check stands for it (SPEC §22: nothing runs again).
    let land = on_base_of(&w.fx.root());
    let composed = |of, base_tip| Target::Composed { of, base_tip };
    let landed = key(&land, composed(x, w.main));
    assert_eq!(landed.base_commit, Some(w.main.to_string()));
    let cases = [
        case("the branch's own check", base.clone(), false),
        case("another base tip", key(&land, composed(x, w.z)), true),
        case(
            "another first branch",
            key(&land, composed(claim(w.x, "agent/y", "x"), w.main)),
            true,
        ),
        case(
            "another slug",
            key(&land, composed(claim(w.x, "agent/x", "y"), w.main)),
            true,
        ),
        case(
            "another tree",
            key(&land, composed(claim(w.z, "agent/x", "x"), w.main)),
            true,
        ),
    ];
    assert_row("land's composed commit", &landed, &cases);
    let same_tree = key(&land, composed(claim(w.y, "agent/x", "x"), w.main));
    assert_commit_only_with_reuse_commit("land's composed commit", &landed, &same_tree);

    // validate --run on the base tip: the merge base's key when the agent forked at that tip
    // (one run serves both); init's try holds a configuration not committed yet (no blob).
    let tip = |tip| Target::BaseTip { tip, base: "main" };
    let config_blob = land.config_blob().map(str::to_string);
    let validate = given(&w, CONFIG, config_blob.as_deref());
    let on_tip = key(&validate, tip(w.main));
    assert_eq!((on_tip.slug.as_str(), on_tip.branch.as_str()), ("", "main"));
    assert_eq!(on_tip.base_commit, Some(w.main.to_string()));
    let cases = [
        case(
            "the merge base's run at that tip",
            merge_base.clone(),
            false,
        ),
        case("another tip", key(&validate, tip(w.z)), true),
        case(
            "another configuration blob",
            key(&given(&w, CONFIG, Some("0a")), tip(w.main)),
            true,
        ),
        case(
            "init's try (no blob yet)",
            key(&given(&w, CONFIG, None), tip(w.main)),
            true,
        ),
    ];
    assert_row("validate --run", &on_tip, &cases);
    let init = key(&given(&w, CONFIG, None), tip(w.main));
    assert_eq!(init.config, None);
    let cases = [
        case("another tip", key(&given(&w, CONFIG, None), tip(w.z)), true),
        case("validate --run's blob", on_tip.clone(), true),
    ];
    assert_row("init's try", &init, &cases);
}

/// `land` and `check` judge one protected change alike (SPEC §22 step 3, §26.4).
///
/// Attack: the branch is VERIFIED against a base tip from which a human had removed the unit
/// tests inside `src/lib.rs`; the base is then moved back to before that removal. Against the
/// base `land` composes on, the branch now removes a `#[cfg(test)]` module inside a source file —
/// a path on no protected surface by name, which only the full rule (tests inside source files)
/// sees. `land` used to ask the name-based rule alone and landed it; `check` says review.
#[test]
fn land_and_check_judge_a_test_module_removed_inside_a_source_file_alike() {
    let l = crate::land::Land::new();
    let lib = "pub fn old_name() {}\n";
    let tested = format!(
        "{lib}\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn named() {{\n        super::old_name();\n    }}\n}}\n"
    );
    let with_tests =
        l.fx.commit("main", &[("src/lib.rs", Some(&tested))], "unit tests");
    l.fx.commit("main", &[("src/lib.rs", Some(lib))], "drop the unit tests");
    l.fx.checkout(&l.fx.root());
    let (wt, tip) = l.verified("feat", &[("src/feat.rs", Some("pub fn feat() {}\n"))]);
    git(&l.fx.root(), &["reset", "--hard", &with_tests.to_string()]);

    // Control: the name-based rule alone sees nothing protected in this change.
    let repo = closegate::repo::Repo::discover(&l.fx.root()).unwrap();
    let changes = repo.changes(Some(with_tests), tip).unwrap();
    let session = on_base_of(&l.fx.root());
    let (by_name, _) = closegate::gates::protected::run(session.config(), &changes);
    assert!(by_name.is_empty(), "{by_name:?}");

    let (code, landing) = l.land(&["agent/feat"]);
    let branch = &landing["branches"][0];
    assert_eq!(branch["outcome"], "refused", "{landing:#}");
    assert_ne!(code, 0, "{landing:#}");
    let refused: Vec<&Value> = branch["findings"].as_array().unwrap().iter().collect();
    assert!(
        refused.iter().any(|f| f["code"] == "land-not-verified"
            && f["message"].as_str().unwrap().contains("src/lib.rs")),
        "{landing:#}"
    );
    assert_eq!(
        l.fx.repo.refname_to_id("refs/heads/main").unwrap(),
        with_tests
    );

    let (_, report) = l.check_json(&wt, &["--no-record"]);
    let flagged: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "protected-surface" && f["severity"] == "review")
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(flagged, ["src/lib.rs"], "{report:#}");
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report:#}");
}

/// A session on the base alone, with the base's configuration read as `land` reads it.
fn on_base_of(root: &Path) -> Session {
    let (repo, root) = open_repo(root);
    let trusted = trusted_config(&repo, None, None).unwrap();
    Session::on_base(repo, root, trusted).unwrap()
}

/// The repository around `dir` and its worktree's root, as a command opens them.
fn open_repo(dir: &Path) -> (Repo, PathBuf) {
    let repo = Repo::discover(dir).unwrap();
    let root = repo.workdir().expect("not bare");
    (repo, root)
}
