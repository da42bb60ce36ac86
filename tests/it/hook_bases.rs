//! The hook guards the base the configuration names now, not the one it named when the hook was
//! installed (SPEC §9 with §5): real `git` commands, the hook firing is the point.

use std::path::Path;

use crate::fixture::{closegate, git, git_output, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};

/// The refs on the installed script's `bases` line.
fn baked(hooks: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(hooks.join("reference-transaction")).unwrap();
    let line = text.lines().find(|l| l.starts_with("bases=")).unwrap();
    let words = line["bases=".len()..].trim_matches('\'');
    words.split_whitespace().map(str::to_string).collect()
}

fn trunk_config() -> String {
    format!("base = \"trunk\"\n{PASSING_CONFIG}")
}

fn tip(cwd: &Path, rev: &str) -> String {
    git(cwd, &["rev-parse", rev]).trim().to_string()
}

#[test]
fn a_base_configured_after_install_is_guarded_from_the_commit_that_names_it() {
    // The auditor's repro: install, then name `trunk` as the base on main, create trunk, merge.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let hooks = s.fx.git_dir().join("hooks");
    assert!(!baked(&hooks).contains(&"refs/heads/trunk".to_string()));
    std::fs::write(root.join(".closegate.toml"), trunk_config()).unwrap();
    git(&root, &["commit", "-q", "-am", "the base is trunk"]);
    assert!(
        baked(&hooks).contains(&"refs/heads/trunk".to_string()),
        "{:?}",
        baked(&hooks)
    );
    // what closegate rewrote is what `hook install` writes now
    let (code, stdout, stderr) = parts(&closegate(&root, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("already installed"), "{stdout}");

    git(&root, &["branch", "trunk"]);
    git(&root, &["checkout", "-q", "trunk"]);
    let before = tip(&root, "trunk");
    let out = git_output(&root, &["merge", "--no-edit", "agent/x"]);
    let (code, _, stderr) = parts(&out);
    assert_ne!(code, 0, "unverified work landed on the configured base");
    assert!(
        stderr.contains("refusing to move `trunk` onto agent branch `agent/x`"),
        "{stderr}"
    );
    assert_eq!(tip(&root, "trunk"), before);
    git(&root, &["reset", "-q", "--merge"]);

    let wt = s.honest_worktree();
    s.pass_check(&wt);
    git(&root, &["merge", "-q", "--no-edit", "agent/x"]);
    assert_ne!(tip(&root, "trunk"), before);
}

#[test]
fn creating_the_configured_base_is_judged_like_moving_it() {
    let s = Scene::with_agent(Some(&trunk_config()));
    s.install();
    let root = s.root();
    assert!(baked(&s.fx.git_dir().join("hooks")).contains(&"refs/heads/trunk".to_string()));
    // trunk does not exist yet: created at an agent commit it would newly contain agent work
    let (code, _, stderr) = parts(&git_output(&root, &["branch", "trunk", "agent/x"]));
    assert_ne!(
        code, 0,
        "the base was created at an unverified agent commit"
    );
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
    assert!(!s.branch_exists("trunk"));
    // created where the configuration comes from, it brings in nothing new
    git(&root, &["branch", "trunk", "main"]);
    assert!(s.branch_exists("trunk"));
}

#[test]
fn a_configuration_pushed_into_the_repository_guards_its_base() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let top = s.fx.tmp.path();
    let root = s.root();
    git(
        top,
        &["clone", "-q", "--bare", root.to_str().unwrap(), "hub.git"],
    );
    let hub = top.join("hub.git");
    let (code, _, stderr) = parts(&closegate(&hub, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
    git(&root, &["remote", "add", "hub", hub.to_str().unwrap()]);
    git(&root, &["push", "-q", "hub", "agent/x"]);

    std::fs::write(root.join(".closegate.toml"), trunk_config()).unwrap();
    git(&root, &["commit", "-q", "-am", "the base is trunk"]);
    git(&root, &["push", "-q", "hub", "main"]);
    assert!(baked(&hub.join("hooks")).contains(&"refs/heads/trunk".to_string()));
    git(&root, &["push", "-q", "hub", "main:trunk"]);
    let (code, _, stderr) = parts(&git_output(&root, &["push", "hub", "+agent/x:trunk"]));
    assert_ne!(
        code, 0,
        "a push moved the configured base onto unverified work"
    );
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
    assert_eq!(tip(&hub, "trunk"), tip(&root, "main"));
}

#[test]
fn a_configuration_fetched_into_the_base_guards_its_base() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let top = s.fx.tmp.path();
    let upstream = s.root();
    git(top, &["clone", "-q", upstream.to_str().unwrap(), "clone"]);
    let clone = top.join("clone");
    let (code, _, stderr) = parts(&closegate(&clone, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
    git(&clone, &["checkout", "-q", "-b", "work"]);
    std::fs::write(upstream.join(".closegate.toml"), trunk_config()).unwrap();
    git(&upstream, &["commit", "-q", "-am", "the base is trunk"]);
    git(&clone, &["fetch", "-q", "origin", "main:main"]);
    let hooks = clone.join(".git/hooks");
    assert!(baked(&hooks).contains(&"refs/heads/trunk".to_string()));
}

#[test]
fn a_configuration_read_from_origin_head_is_followed_through_a_fetch() {
    // Without a local main or master the configuration comes from origin/HEAD's target (SPEC §5),
    // which `git fetch` moves: the script hands that ref over too.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let top = s.fx.tmp.path();
    let upstream = s.root();
    git(top, &["clone", "-q", upstream.to_str().unwrap(), "clone"]);
    let clone = top.join("clone");
    git(&clone, &["branch", "-q", "-m", "main", "work"]);
    git(&clone, &["branch", "-q", "agent/x", "origin/agent/x"]);
    let (code, _, stderr) = parts(&closegate(&clone, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
    let hooks = clone.join(".git/hooks");
    let refs = baked(&hooks);
    assert!(
        refs.contains(&"refs/remotes/origin/main".to_string()),
        "{refs:?}"
    );
    assert!(
        refs.contains(&"refs/remotes/origin/HEAD".to_string()),
        "{refs:?}"
    );

    std::fs::write(upstream.join(".closegate.toml"), trunk_config()).unwrap();
    git(&upstream, &["commit", "-q", "-am", "the base is trunk"]);
    git(&clone, &["fetch", "-q", "origin"]);
    assert!(baked(&hooks).contains(&"refs/heads/trunk".to_string()));
    git(&clone, &["branch", "trunk", "work"]);
    let (code, _, stderr) = parts(&git_output(&clone, &["branch", "-f", "trunk", "agent/x"]));
    assert_ne!(code, 0, "the configured base moved onto unverified work");
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
}

#[test]
fn a_configuration_landed_by_update_ref_guards_its_base() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    // committed without a hook (libgit2), then put on main by plumbing
    let config = trunk_config();
    let id =
        s.fx.commit("cfg", &[(".closegate.toml", Some(&config))], "trunk");
    git(&root, &["update-ref", "refs/heads/main", &id.to_string()]);
    assert!(baked(&s.fx.git_dir().join("hooks")).contains(&"refs/heads/trunk".to_string()));
}
