//! `.closegate.toml`: defaults, surfaces, overrides and every error path (SPEC §4.5, §5).

use closegate::config::{Config, DEFAULT_TIMEOUT_S, FILE_NAME};

const ORIGIN: &str = "main:.closegate.toml";

fn surfaces(config: &Config, path: &str) -> Vec<String> {
    config.surfaces_for(path)
}

fn err(text: &str) -> String {
    format!("{:#}", Config::parse(text, ORIGIN).unwrap_err())
}

/// Assert the error starts with the origin and contains every fragment.
fn assert_err(text: &str, fragments: &[&str]) {
    let msg = err(text);
    assert!(
        msg.starts_with(&format!("{ORIGIN}: ")),
        "origin missing: {msg}"
    );
    for fragment in fragments {
        assert!(msg.contains(fragment), "{fragment:?} missing from: {msg}");
    }
    assert!(!msg.ends_with('.'), "final period: {msg}");
}

#[test]
fn defaults_match_spec() {
    let c = Config::default();
    assert_eq!(c.base, None);
    assert_eq!(c.status_file, "_EXEC_STATUS.md");
    assert_eq!(c.agent_branches, ["agent/*"]);
    assert!(c.checks.is_empty());
    let names: Vec<&str> = c.surfaces.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["tests", "evals", "ci", "instructions"]);
    let counts: Vec<usize> = c.surfaces.iter().map(|s| s.globs.len()).collect();
    assert_eq!(counts, [24, 5, 16, 11]);
}

#[test]
fn empty_file_is_the_defaults() {
    let c = Config::parse("", ORIGIN).unwrap();
    assert_eq!(c.status_file, "_EXEC_STATUS.md");
    assert_eq!(c.surfaces.len(), 4);
}

#[test]
fn tests_surface() {
    let c = Config::default();
    let on = [
        "tests/x.rs",
        "tests/it/main.rs",
        "crate/tests/a.rs",
        "pkg/test/a.py",
        "web/__tests__/a.js",
        "testdata/in.txt",
        "a/fixtures/b.json",
        "foo_test.go",
        "pkg/foo_test.go",
        "foo_tests.rs",
        "test_foo.py",
        "src/test_foo.py",
        "app.test.ts",
        "app.spec.js",
        "conftest.py",
        "sub/conftest.py",
        "ui/__snapshots__/x.snap",
        "snapshots/a.txt",
        "x/snapshots/a.txt",
    ];
    for path in on {
        assert!(
            surfaces(&c, path).contains(&"tests".to_string()),
            "{path} should be on tests"
        );
    }
    let off = [
        "src/lib.rs",
        "src/testing.rs",
        "contest.py",
        "latest/x.rs",
        "attest.md",
        "test",
    ];
    for path in off {
        assert!(
            surfaces(&c, path).is_empty(),
            "{path} should be unprotected"
        );
    }
}

#[test]
fn evals_surface() {
    let c = Config::default();
    for path in [
        "evals/a.json",
        "x/eval/b.py",
        "model.eval.ts",
        "golden/out.txt",
        "benchmarks/b.rs",
    ] {
        assert_eq!(surfaces(&c, path), ["evals"], "{path}");
    }
    for path in ["src/evaluate.rs", "evalsx/a.json", "benchmark.rs"] {
        assert!(
            surfaces(&c, path).is_empty(),
            "{path} should be unprotected"
        );
    }
}

#[test]
fn ci_surface() {
    let c = Config::default();
    let on = [
        ".github/workflows/ci.yml",
        ".github/actions/setup/action.yml",
        ".ci/run.sh",
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        ".buildkite/pipeline.yml",
        "Jenkinsfile",
        "azure-pipelines.yml",
        ".pre-commit-config.yaml",
        ".githooks/pre-commit",
        "CODEOWNERS",
        ".github/CODEOWNERS",
        ".closegate.toml",
        ".closegate/contracts/x.toml",
    ];
    for path in on {
        assert_eq!(surfaces(&c, path), ["ci"], "{path}");
    }
    // Root-anchored globs do not match deeper copies.
    let off = [
        "sub/Jenkinsfile",
        "sub/.gitlab-ci.yml",
        "docs/CODEOWNERS",
        ".github/README.md",
    ];
    for path in off {
        assert!(
            surfaces(&c, path).is_empty(),
            "{path} should be unprotected"
        );
    }
}

#[test]
fn instructions_surface() {
    let c = Config::default();
    let on = [
        "AGENTS.md",
        "sub/AGENTS.md",
        "CLAUDE.md",
        "sub/CLAUDE.md",
        "a/b/GEMINI.md",
        ".cursorrules",
        ".cursor/rules/x.mdc",
        ".github/copilot-instructions.md",
        ".claude/settings.json",
        ".windsurfrules",
        "CONVENTIONS.md",
    ];
    for path in on {
        assert_eq!(surfaces(&c, path), ["instructions"], "{path}");
    }
    for path in [
        "README.md",
        "agents.md",
        "docs/CONVENTIONS.md",
        ".cursor/other.txt",
    ] {
        assert!(
            surfaces(&c, path).is_empty(),
            "{path} should be unprotected"
        );
    }
}

#[test]
fn star_does_not_cross_a_slash() {
    let text = "[protected]\nmigrations = [\"db/*.sql\"]\n";
    let c = Config::parse(text, ORIGIN).unwrap();
    assert_eq!(surfaces(&c, "db/1.sql"), ["migrations"]);
    assert!(surfaces(&c, "db/old/1.sql").is_empty());
}

#[test]
fn a_path_can_lie_on_several_surfaces() {
    let c = Config::default();
    assert_eq!(surfaces(&c, "tests/AGENTS.md"), ["tests", "instructions"]);
}

#[test]
fn listed_default_surface_is_replaced_and_new_name_added() {
    let text = "[protected]\ntests = [\"spec/**\"]\nmigrations = [\"db/migrations/**\"]\n";
    let c = Config::parse(text, ORIGIN).unwrap();
    let names: Vec<&str> = c.surfaces.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["tests", "evals", "ci", "instructions", "migrations"]
    );
    assert!(
        surfaces(&c, "tests/x.rs").is_empty(),
        "replaced globs must not linger"
    );
    assert_eq!(surfaces(&c, "spec/a.rb"), ["tests"]);
    assert_eq!(surfaces(&c, "db/migrations/001.sql"), ["migrations"]);
    assert_eq!(
        surfaces(&c, "AGENTS.md"),
        ["instructions"],
        "unlisted defaults stay"
    );
}

#[test]
fn config_file_is_always_ci() {
    let text = "[protected]\nci = []\n";
    let c = Config::parse(text, ORIGIN).unwrap();
    assert_eq!(surfaces(&c, FILE_NAME), ["ci"]);
    assert!(
        surfaces(&c, ".github/workflows/ci.yml").is_empty(),
        "ci was emptied"
    );
    assert!(surfaces(&c, "sub/.closegate.toml").is_empty());
    let renamed = "[protected]\nci = [\"other/**\"]\n";
    let c = Config::parse(renamed, ORIGIN).unwrap();
    assert_eq!(surfaces(&c, ".closegate.toml"), ["ci"]);
}

#[test]
fn full_example_of_spec_parses() {
    let text = r#"
base = "main"
status_file = "_EXEC_STATUS.md"
agent_branches = ["agent/*", "bot/**"]

[protected]
tests = ["**/tests/**"]
migrations = ["db/migrations/**"]

[[checks]]
name = "test"
run = "cargo test --quiet"
timeout_s = 900

[[checks]]
name = "lint"
run = "cargo clippy"
"#;
    let c = Config::parse(text, ORIGIN).unwrap();
    assert_eq!(c.base.as_deref(), Some("main"));
    assert_eq!(c.checks.len(), 2);
    assert_eq!(
        (c.checks[0].name.as_str(), c.checks[0].timeout_s),
        ("test", 900)
    );
    assert_eq!(c.checks[0].run, "cargo test --quiet");
    assert_eq!(c.checks[1].timeout_s, DEFAULT_TIMEOUT_S);
    assert!(c.is_agent_branch("bot/a/b"));
}

#[test]
fn agent_branches_glob_on_the_short_name() {
    let c = Config::default();
    assert!(c.is_agent_branch("agent/x"));
    assert!(!c.is_agent_branch("agent/x/y"), "`*` does not cross `/`");
    assert!(!c.is_agent_branch("main"));
    assert!(!c.is_agent_branch("refs/heads/agent/x"));
    let c = Config::parse("agent_branches = [\"ai-*\"]", ORIGIN).unwrap();
    assert!(c.is_agent_branch("ai-7"));
    assert!(
        !c.is_agent_branch("agent/x"),
        "the list replaces the default"
    );
}

#[test]
fn custom_status_file() {
    let c = Config::parse("status_file = \"docs/STATUS.md\"", ORIGIN).unwrap();
    assert_eq!(c.status_file, "docs/STATUS.md");
}

#[test]
fn unknown_top_level_key() {
    assert_err("foo = 1\n", &["unknown key `foo`", "status_file"]);
}

#[test]
fn unknown_key_in_a_check() {
    assert_err(
        "[[checks]]\nname = \"t\"\nrun = \"true\"\ntimeout = 5\n",
        &["unknown key `checks[0].timeout`", "timeout_s"],
    );
}

#[test]
fn bad_glob_names_surface_and_glob() {
    assert_err(
        "[protected]\ntests = [\"a/[b\"]\n",
        &["`protected.tests`", "bad glob `a/[b`"],
    );
    assert_err(
        "agent_branches = [\"{a\"]\n",
        &["`agent_branches`", "bad glob `{a`"],
    );
}

#[test]
fn wrong_types() {
    assert_err("base = 1\n", &["`base` must be a string, found integer"]);
    assert_err(
        "status_file = true\n",
        &["`status_file` must be a string, found boolean"],
    );
    assert_err(
        "agent_branches = \"agent/*\"\n",
        &["`agent_branches` must be an array"],
    );
    assert_err(
        "agent_branches = [1]\n",
        &["`agent_branches` must be an array of strings"],
    );
    assert_err(
        "[protected]\n\"\" = [\"x\"]\n",
        &["surface with an empty name"],
    );
    assert_err("protected = 3\n", &["`protected` must be a table"]);
    assert_err(
        "[protected]\ntests = \"x/**\"\n",
        &["`protected.tests` must be an array"],
    );
    assert_err("checks = 1\n", &["`checks` must be an array of tables"]);
    assert_err("checks = [1]\n", &["`checks[0]` must be a table"]);
    let text = "[[checks]]\nname = \"t\"\nrun = \"true\"\ntimeout_s = \"5\"\n";
    assert_err(
        text,
        &["`checks[0].timeout_s` must be an integer", "found string"],
    );
}

#[test]
fn empty_check_name_or_run() {
    assert_err(
        "[[checks]]\nname = \"\"\nrun = \"true\"\n",
        &["`checks[0].name` must not be empty"],
    );
    assert_err(
        "[[checks]]\nname = \"t\"\nrun = \"  \"\n",
        &["`checks[0].run` must not be empty"],
    );
    assert_err(
        "[[checks]]\nrun = \"true\"\n",
        &["`checks[0]`", "missing key `name`"],
    );
    assert_err(
        "[[checks]]\nname = \"t\"\n",
        &["`checks[0]`", "missing key `run`"],
    );
}

#[test]
fn duplicate_check_names() {
    let text = "[[checks]]\nname = \"t\"\nrun = \"a\"\n[[checks]]\nname = \"t\"\nrun = \"b\"\n";
    assert_err(text, &["`checks[1].name`", "duplicate check name `t`"]);
}

#[test]
fn timeout_must_be_positive() {
    let zero = "[[checks]]\nname = \"t\"\nrun = \"a\"\ntimeout_s = 0\n";
    assert_err(
        zero,
        &["`checks[0].timeout_s` must be at least 1 second, found 0"],
    );
    let negative = "[[checks]]\nname = \"t\"\nrun = \"a\"\ntimeout_s = -5\n";
    assert_err(negative, &["found -5"]);
}

#[test]
fn bad_status_file_and_base() {
    assert_err("status_file = \"\"\n", &["`status_file` must not be empty"]);
    assert_err(
        "status_file = \"/abs/S.md\"\n",
        &["`status_file` must be a relative path"],
    );
    assert_err(
        "status_file = \"../S.md\"\n",
        &["`status_file`", "`../S.md`"],
    );
    assert_err("base = \"\"\n", &["`base` must not be empty"]);
}

#[test]
fn syntax_error_names_origin_and_line() {
    assert_err("base = \"main\"\nstatus_file = \n", &["line 2"]);
    assert_err(
        "base = \"main\"\nbase = \"dev\"\n",
        &["line 2", "duplicate"],
    );
}

#[test]
fn file_path_origin_is_used_verbatim() {
    let msg = format!(
        "{:#}",
        Config::parse("x = 1", "/etc/closegate.toml").unwrap_err()
    );
    assert!(
        msg.starts_with("/etc/closegate.toml: unknown key `x`"),
        "{msg}"
    );
}

#[test]
fn sandbox_keys_of_spec_parse() {
    use closegate::config::SandboxMode;
    assert_eq!(Config::default().sandbox, SandboxMode::Auto);
    let text = "sandbox = \"required\"\n[[checks]]\nname = \"test\"\nrun = \"cargo test\"\n\
                writable = [\"~/.cargo/registry\", \"~/.npm\", \"/var/cache/x\"]\nnetwork = false\n\
                [[checks]]\nname = \"lint\"\nrun = \"true\"\n";
    let c = Config::parse(text, ORIGIN).unwrap();
    assert_eq!(c.sandbox, SandboxMode::Required);
    assert_eq!(
        c.checks[0].writable,
        ["~/.cargo/registry", "~/.npm", "/var/cache/x"]
    );
    assert!(!c.checks[0].network);
    assert!(c.checks[1].writable.is_empty() && c.checks[1].network);
    for (word, mode) in [("auto", SandboxMode::Auto), ("off", SandboxMode::Off)] {
        let c = Config::parse(&format!("sandbox = \"{word}\"\n"), ORIGIN).unwrap();
        assert_eq!(c.sandbox, mode);
    }
}

#[test]
fn bad_sandbox_keys_name_key_and_reason() {
    assert_err(
        "sandbox = \"maybe\"\n",
        &[
            "`sandbox` must be \"auto\", \"required\" or \"off\"",
            "maybe",
        ],
    );
    assert_err("sandbox = true\n", &["`sandbox`", "a string"]);
    let check = "[[checks]]\nname = \"t\"\nrun = \"true\"\n";
    assert_err(
        &format!("{check}writable = [\"cache\"]\n"),
        &[
            "`checks[0].writable`",
            "`cache` must be an absolute path or start with `~/`",
        ],
    );
    assert_err(
        &format!("{check}writable = [\"~other/x\"]\n"),
        &["`checks[0].writable`", "~other/x"],
    );
    assert_err(
        &format!("{check}writable = \"/tmp\"\n"),
        &["`checks[0].writable`", "array of strings"],
    );
    assert_err(
        &format!("{check}network = \"no\"\n"),
        &["`checks[0].network`", "true or false"],
    );
}

#[test]
fn protected_policy_names_surfaces_and_policy_is_a_reserved_name() {
    use closegate::config::SurfacePolicy;
    let text = "[protected]\npolicy = [\"policy/**\"]\nmigrations = [\"db/**\"]\n\n\
                [protected.policy]\ntests = \"modify\"\nmigrations = \"modify\"\n";
    // TOML allows `[protected.policy]` only when `protected.policy` is not an array; each
    // spelling is tried on its own. SPEC §4.5: `policy` and `integrity` are reserved names under
    // `[protected]`, never surfaces, so a list there is an error naming the key.
    assert!(Config::parse(text, ORIGIN).is_err());
    assert_err(
        "[protected]\npolicy = [\"policy/**\"]\n",
        &["`protected.policy`", "table"],
    );
    assert_err(
        "[protected]\nintegrity = [\"x/**\"]\n",
        &["`protected.integrity`", "table"],
    );
    let c = Config::parse(
        "[protected]\nmigrations = [\"db/**\"]\n[protected.policy]\ntests = \"modify\"\nmigrations = \"modify\"\n",
        ORIGIN,
    )
    .unwrap();
    let policy = |name: &str| c.surfaces.iter().find(|s| s.name == name).unwrap().policy;
    assert_eq!(policy("tests"), SurfacePolicy::Modify);
    assert_eq!(policy("migrations"), SurfacePolicy::Modify);
    assert_eq!(policy("evals"), SurfacePolicy::All);
    assert!(!c.addition_needs_review("tests/new_test.rs"));
    assert!(c.addition_needs_review("evals/new.json"));
    assert!(c.addition_needs_review("tests/conftest.py"));
    assert!(c.addition_needs_review(".closegate.toml"));
    assert!(!c.addition_needs_review("src/lib.rs"), "on no surface");
    assert_err(
        "[protected.policy]\ntests = \"sometimes\"\n",
        &[
            "`protected.policy.tests`",
            "\"all\", \"modify\"",
            "sometimes",
        ],
    );
    assert_err(
        "[protected.policy]\nnope = \"modify\"\n",
        &["`protected.policy.nope`"],
    );
}

/// SPEC §27.1: `[protected.integrity] fail_to_pass = true` asks for the reverse overlay; it is a
/// boolean, never a surface name.
#[test]
fn fail_to_pass_is_a_boolean_of_protected_integrity() {
    let c = Config::parse("[protected.integrity]\nfail_to_pass = true\n", ORIGIN).unwrap();
    assert!(c.fail_to_pass);
    assert!(!c.integrity.contains(&"fail_to_pass".to_string()));
    assert!(!Config::parse("", ORIGIN).unwrap().fail_to_pass);
    let e = err("[protected.integrity]\nfail_to_pass = \"yes\"\n");
    assert!(e.contains("protected.integrity.fail_to_pass"), "{e}");
}

/// SPEC §27.2: `prepare` is the command run with network before `run` (fetching, running none
/// of the project's code); optional, a non-empty string.
#[test]
fn prepare_is_an_optional_command_string() {
    let c = Config::parse(
        "[[checks]]\nname = \"t\"\nrun = \"cargo test --offline\"\nprepare = \"cargo fetch\"\nnetwork = false\n\
         [[checks]]\nname = \"u\"\nrun = \"true\"\n",
        ORIGIN,
    )
    .unwrap();
    assert_eq!(c.checks[0].prepare.as_deref(), Some("cargo fetch"));
    assert!(!c.checks[0].network);
    assert_eq!(c.checks[1].prepare, None);
    let check = "[[checks]]\nname = \"t\"\nrun = \"true\"\n";
    assert_err(
        &format!("{check}prepare = 1\n"),
        &["`checks[0].prepare`", "a string"],
    );
    assert_err(
        &format!("{check}prepare = [\"cargo\", \"fetch\"]\n"),
        &["`checks[0].prepare`", "a string"],
    );
    assert_err(
        &format!("{check}prepare = \" \"\n"),
        &["`checks[0].prepare`", "must not be empty"],
    );
}

/// A `prepare` that is not a string is an error reaching no verdict: `check` exits 2 naming the
/// key (SPEC §1.3), as for every malformed key.
#[test]
fn a_prepare_that_is_not_a_string_is_an_exit_2_naming_the_key() {
    let config = "[[checks]]\nname = \"t\"\nrun = \"true\"\nprepare = 7\n";
    let (fx, _) = crate::fixture::Fixture::with_agent(Some(config));
    let root = fx.root();
    let wt = fx.worktree("x", "agent/x");
    let (code, out, err) = crate::fixture::parts(&crate::fixture::closegate(&root, &["validate"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("`checks[0].prepare`"),
        "{out}{err}"
    );
    let (code, _, err) = crate::fixture::parts(&crate::fixture::closegate(&wt, &["check"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`checks[0].prepare`"), "{err}");
}
