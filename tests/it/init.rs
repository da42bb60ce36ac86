//! `closegate init` (SPEC §17): a starter configuration whose check is guessed from the project,
//! tested on a scratch project of every type; `init --contract SLUG`.

use std::path::Path;

use closegate::config::Config;

use crate::fixture::{Fixture, closegate, git, parts};

fn init(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["init"];
    all.extend_from_slice(args);
    parts(&closegate(dir, &all))
}

/// Scratch projects: (what, files, the check `init` must guess).
type Project = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    Option<&'static str>,
);

fn projects() -> Vec<Project> {
    vec![
        (
            "cargo",
            vec![
                (
                    "Cargo.toml",
                    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
                ),
                ("src/lib.rs", "pub fn one() -> u8 { 1 }\n"),
            ],
            Some("cargo test --locked"),
        ),
        (
            "npm",
            vec![
                (
                    "package.json",
                    "{\n  \"name\": \"demo\",\n  \"scripts\": {\"test\": \"node test.js\"}\n}\n",
                ),
                ("test.js", "process.exit(0)\n"),
            ],
            Some("npm test"),
        ),
        (
            "npm without a test script",
            vec![(
                "package.json",
                "{\"name\": \"demo\", \"scripts\": {\"build\": \"tsc\"}}\n",
            )],
            None,
        ),
        (
            "npm init's placeholder test script",
            vec![(
                "package.json",
                "{\"name\": \"demo\", \"scripts\": {\"test\": \"echo \\\"Error: no test specified\\\" && exit 1\"}}\n",
            )],
            None,
        ),
        (
            "pyproject",
            vec![(
                "pyproject.toml",
                "[project]\nname = \"demo\"\nversion = \"0.1\"\n",
            )],
            Some("python3 -m pytest"),
        ),
        (
            "setup.cfg",
            vec![("setup.cfg", "[metadata]\nname = demo\n")],
            Some("python3 -m pytest"),
        ),
        (
            "pytest.ini",
            vec![("pytest.ini", "[pytest]\ntestpaths = tests\n")],
            Some("python3 -m pytest"),
        ),
        (
            "go",
            vec![
                ("go.mod", "module example.com/demo\n\ngo 1.21\n"),
                ("demo.go", "package demo\n"),
            ],
            Some("go test ./..."),
        ),
        (
            "make",
            vec![(
                "Makefile",
                "CC = cc\n\nall: build\n\nbuild:\n\ttrue\n\ncheck test: build\n\ttrue\n",
            )],
            Some("make test"),
        ),
        (
            "make without a test target",
            vec![("Makefile", "test_flags := -v\nall:\n\ttrue\n")],
            None,
        ),
        ("nothing recognised", vec![("notes.txt", "hello\n")], None),
    ]
}

#[test]
fn init_guesses_the_check_of_every_project_type_and_its_config_parses() {
    for (what, files, expected) in projects() {
        let fx = Fixture::new();
        let root = fx.root();
        for (path, text) in &files {
            fx.write(&root, path, text);
        }
        let (code, out, err) = init(&root, &[]);
        assert_eq!(code, 0, "{what}: {out}{err}");
        assert!(out.contains("git add .closegate.toml"), "{what}: {out}");
        let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
        let config = Config::parse(&text, ".closegate.toml")
            .unwrap_or_else(|e| panic!("{what}: {e:#}\n{text}"));
        assert_eq!(config.base.as_deref(), Some("main"), "{what}");
        let runs: Vec<&str> = config.checks.iter().map(|c| c.run.as_str()).collect();
        match expected {
            Some(run) => assert_eq!(runs, vec![run], "{what}"),
            None => {
                assert!(runs.is_empty(), "{what}: {runs:?}");
                assert!(
                    text.contains("# [[checks]]"),
                    "{what}: a commented example\n{text}"
                );
            }
        }
        for surface in ["tests", "evals", "ci", "instructions"] {
            assert!(
                text.contains(&format!("# {surface} = [")),
                "{what}: {surface}"
            );
        }
    }
}

#[test]
fn init_names_the_current_branch_as_base() {
    let fx = Fixture::new();
    git(&fx.root(), &["checkout", "-q", "-b", "trunk"]);
    let (code, _, err) = init(&fx.root(), &[]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(fx.root().join(".closegate.toml")).unwrap();
    let config = Config::parse(&text, ".closegate.toml").unwrap();
    assert_eq!(config.base.as_deref(), Some("trunk"));
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(&root, ".closegate.toml", "# mine\n");
    let (code, _, err) = init(&root, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join(".closegate.toml")).unwrap(),
        "# mine\n"
    );
    let (code, _, err) = init(&root, &["--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        Config::parse(
            &std::fs::read_to_string(root.join(".closegate.toml")).unwrap(),
            "x"
        )
        .is_ok()
    );
}

#[test]
fn init_config_committed_to_the_base_drives_check() {
    // A Makefile project: init, commit the configuration to main, and the guessed check runs.
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(&root, "Makefile", "test:\n\ttest -f src/lib.rs\n");
    let (code, _, err) = init(&root, &[]);
    assert_eq!(code, 0, "{err}");
    git(&root, &["add", "Makefile", ".closegate.toml"]);
    git(&root, &["commit", "-qm", "closegate: configuration"]);
    git(&root, &["branch", "agent/x"]);
    let wt = fx.tmp.path().join("x");
    git(
        &root,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "agent/x"],
    );
    fx.write(&wt, "src/lib.rs", "pub fn x() {}\n");
    git(&wt, &["add", "src/lib.rs"]);
    git(&wt, &["commit", "-qm", "add x"]);
    let out = closegate(
        &wt,
        &[
            "close",
            "--abstract",
            "adds x, proven by make test",
            "--artifact",
            "src/lib.rs",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    let (code, stdout, _) = parts(&closegate(&wt, &["check", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["checks"][0]["command"], "make test", "{report}");
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
}

#[test]
fn init_contract_writes_every_key_commented() {
    let fx = Fixture::new();
    let root = fx.root();
    let (code, out, err) = init(&root, &["--contract", "inv-export"]);
    assert_eq!(code, 0, "{out}{err}");
    let path = root.join(".closegate/contracts/inv-export.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    for key in [
        "goal",
        "branch",
        "scope",
        "prohibited",
        "required_artifacts",
        "required_checks",
        "approval",
        "max_changed_files",
        "max_commits",
    ] {
        assert!(text.contains(&format!("# {key} = ")), "{key}\n{text}");
    }
    closegate::contract::parse(text.as_bytes()).unwrap();
    // Each key, uncommented, is a valid contract key.
    let uncommented: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("# ").filter(|l| l.contains(" = ")))
        .map(|l| format!("{l}\n"))
        .collect();
    closegate::contract::parse(uncommented.as_bytes())
        .unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
    let (code, _, _) = init(&root, &["--contract", "inv-export"]);
    assert_eq!(code, 1, "refuses to overwrite");
    let (code, _, err) = init(&root, &["--contract", "../evil"]);
    assert_eq!(code, 2);
    assert!(err.contains("../evil"), "{err}");
    assert!(!root.join(".closegate/evil.toml").exists());
}
