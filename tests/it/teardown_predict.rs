//! `teardown --dry-run` predicts the real run (SPEC §7.3, §7.4): what the real run would stop on,
//! the dry run names with the same exit.

use crate::teardown::Scene;

#[test]
fn a_directory_planted_at_the_archive_target_stops_the_dry_run_and_the_real_run_alike() {
    let s = Scene::honest_return();
    let target =
        s.fx.git_dir()
            .join(format!("closegate/records/x/{}.md", s.tip));
    std::fs::create_dir_all(target.join("inside")).unwrap();
    let shown = target.display().to_string();
    let (exit, out, err) = s.teardown(&["--dry-run"]);
    assert_eq!(
        exit, 2,
        "the dry run did not predict the refusal: {out}\n{err}"
    );
    assert!(
        err.contains(&shown) && err.contains("is a directory"),
        "{err}"
    );
    assert!(!out.contains("would archive"), "{out}");
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 2, "{out}\n{err}");
    assert!(
        err.contains(&shown) && err.contains("is a directory"),
        "{err}"
    );
    // nothing was moved aside or removed; the planted directory is untouched
    assert!(s.wt.join("_EXEC_STATUS.md").exists());
    assert!(target.join("inside").is_dir());
    let parent = s.wt.parent().unwrap();
    let asides = std::fs::read_dir(parent)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().contains("closegate-removing")
        })
        .count();
    assert_eq!(asides, 0);
    assert!(
        s.audit()
            .iter()
            .all(|r| r["event"] != "teardown" || r["removed"] != true)
    );
}

#[test]
fn a_resumed_teardown_whose_aside_changed_is_refused_alike_by_the_dry_run_and_the_real_run() {
    // The auditor's t18: a teardown killed midway leaves its aside; a file is added there later.
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let wt_arg = wt.to_str().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["teardown", wt_arg]).current_dir(s.fx.root());
    crate::fixture::hermetic(&mut cmd, &s.fx.root());
    cmd.env("CLOSEGATE_TEST_FAILPOINT", "kill:remove src/lib.rs");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), None, "killed by the failpoint");
    let aside = crate::teardown::recorded_aside(&s.audit());
    assert!(!wt.exists() && aside.is_dir());
    std::fs::write(aside.join("later.txt"), "written after the kill\n").unwrap();
    let records = s.audit().len();

    let dry = crate::fixture::closegate(&s.fx.root(), &["teardown", wt_arg, "--dry-run"]);
    let (exit, out, err) = crate::fixture::parts(&dry);
    assert_eq!(exit, 1, "{out}\n{err}");
    assert!(
        out.contains("teardown-untracked") && out.contains("later.txt"),
        "{out}"
    );
    assert!(!out.contains("would remove"), "{out}");
    assert_eq!(s.audit().len(), records, "a dry run records nothing");

    let real = crate::fixture::closegate(&s.fx.root(), &["teardown", wt_arg]);
    let (exit, out, err) = crate::fixture::parts(&real);
    assert_eq!(exit, 1, "{out}\n{err}");
    assert!(
        out.contains("teardown-untracked") && out.contains("later.txt"),
        "{out}"
    );
    assert!(aside.join("later.txt").is_file(), "the new file is kept");
    let last = s.audit().pop().unwrap();
    assert_eq!(last["removed"], false);
    assert_eq!(last["resumed"], true);
    assert!(
        last["codes"].to_string().contains("teardown-untracked"),
        "{last}"
    );

    // moved out, the next run finishes the removal
    std::fs::remove_file(aside.join("later.txt")).unwrap();
    let dry = crate::fixture::closegate(&s.fx.root(), &["teardown", wt_arg, "--dry-run"]);
    let (exit, out, _) = crate::fixture::parts(&dry);
    assert_eq!(exit, 0, "{out}");
    assert!(out.contains("would remove"), "{out}");
    let (exit, out, err) = crate::fixture::parts(&crate::fixture::closegate(
        &s.fx.root(),
        &["teardown", wt_arg],
    ));
    assert_eq!(exit, 0, "{out}\n{err}");
    assert!(!aside.exists());
}
