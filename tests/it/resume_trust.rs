//! A resumed teardown trusts only what it may (SPEC §7 step 2; issue 24, item 9): with a record
//! key only authenticated records, and it removes a worktree's administrative directory only when
//! that directory's `gitdir` names the recorded aside or the worktree itself and no live
//! worktree uses it.
//!
//! Attack: an unsigned `teardown` line naming a planted aside directory whose `.git` file names
//! another live worktree's administrative directory; `closegate teardown <path>` "resumed" it and
//! removed the live worktree's index and HEAD reflog.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fixture::{Fixture, git, hermetic, parts};

struct Plant {
    fx: Fixture,
    key: Option<PathBuf>,
    /// The live worktree `wt/y` and its administrative directory.
    victim: PathBuf,
    victim_admin: PathBuf,
    /// The path torn down: no worktree; its planted aside.
    target: PathBuf,
    aside: PathBuf,
}

impl Plant {
    fn new(keyed: bool) -> Plant {
        let fx = Fixture::new();
        fx.commit("agent/y", &[("y.txt", Some("y\n"))], "y");
        let victim = fx.worktree("y", "agent/y");
        let victim_admin = fx.git_dir().join("worktrees/y");
        assert!(victim_admin.join("index").exists());
        let key = keyed.then(|| fx.tmp.path().join("keys/record.key"));
        let target = fx.tmp.path().join("wt/ghost");
        let aside = fx
            .tmp
            .path()
            .join("wt/.ghost.closegate-removing-0123456789abcdef");
        std::fs::create_dir_all(&aside).unwrap();
        std::fs::write(
            aside.join(".git"),
            format!("gitdir: {}\n", victim_admin.display()),
        )
        .unwrap();
        let plant = Plant {
            fx,
            key,
            victim,
            victim_admin,
            target,
            aside,
        };
        if keyed {
            let (code, out, err) = plant.run(&["key", "init"]);
            assert_eq!(code, 0, "{out}{err}");
        }
        plant
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let root = self.fx.root();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args).current_dir(&root);
        hermetic(&mut cmd, &root);
        if let Some(key) = &self.key {
            cmd.env("CLOSEGATE_RECORD_KEY_FILE", key);
        }
        cmd.stdin(std::process::Stdio::null());
        parts(&cmd.output().unwrap())
    }

    /// The forged line: an unsigned teardown that "began removing" the target to the aside.
    fn forge(&self) {
        let line = serde_json::json!({
            "event": "teardown", "removed": true, "ts": "2026-01-01T00:00:00Z",
            "worktree": self.target.display().to_string(),
            "aside": self.aside.display().to_string(),
            "verdict": "VERIFIED", "claimed": "close-ok", "codes": [],
            "config_source": "base", "base_source": "configured",
            "commit": null, "branch": "agent/ghost", "slug": "ghost",
        });
        let log = self.fx.git_dir().join("closegate/audit.jsonl");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(&log).unwrap_or_default();
        text.push_str(&format!("{line}\n"));
        std::fs::write(&log, text).unwrap();
    }

    fn assert_victim_intact(&self, out: &str) {
        assert!(self.victim_admin.join("index").exists(), "{out}");
        assert!(self.victim_admin.join("HEAD").exists(), "{out}");
        let status = git(&self.victim, &["status", "--porcelain"]);
        assert_eq!(status, "", "{out}");
        assert!(self.victim.join("y.txt").exists());
    }
}

fn teardown(p: &Plant, target: &Path) -> (i32, String, String) {
    p.run(&["teardown", target.to_str().unwrap()])
}

#[test]
fn with_a_record_key_an_unsigned_teardown_line_resumes_nothing() {
    let p = Plant::new(true);
    p.forge();
    let (_, out, err) = teardown(&p, &p.target);
    let all = format!("{out}{err}");
    p.assert_victim_intact(&all);
    assert!(
        p.aside.join(".git").exists(),
        "the planted aside was touched: {all}"
    );
}

#[test]
fn without_a_key_another_worktrees_administrative_directory_is_never_removed() {
    let p = Plant::new(false);
    p.forge();
    let (_, out, err) = teardown(&p, &p.target);
    p.assert_victim_intact(&format!("{out}{err}"));
}
