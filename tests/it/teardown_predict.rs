//! `teardown --dry-run` predicts the real run (SPEC §7.3, §7.4): what the real run would stop on,
//! the dry run names with the same exit.

use crate::teardown::Scene;

#[test]
fn a_directory_planted_at_the_archive_target_stops_the_dry_run_and_the_real_run_alike() {
    let s = Scene::new();
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
