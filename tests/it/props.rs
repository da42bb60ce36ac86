//! Property tests of the trusted-side parsers: `.closegate.toml` and task contracts never panic,
//! whatever the text, and a parse either yields a value or an error that names the origin.

use closegate::config::Config;
use proptest::prelude::*;

/// Fragments of real configuration and contract files, spliced at random.
fn fragments() -> impl Strategy<Value = String> {
    let pieces: &[&str] = &[
        "base = \"main\"\n",
        "status_file = \"_EXEC_STATUS.md\"\n",
        "status_file = \"../x\"\n",
        "agent_branches = [\"agent/*\", \"[\"]\n",
        "[protected]\n",
        "tests = [\"**/tests/**\"]\n",
        "x = [\"{a,b\"]\n",
        "[[checks]]\n",
        "name = \"t\"\n",
        "run = \"true\"\n",
        "timeout_s = -1\n",
        "timeout_s = 18446744073709551615\n",
        "goal = \"g\"\n",
        "scope = [\"src/**\"]\n",
        "prohibited = [1]\n",
        "required_artifacts = [\"a\"]\n",
        "required_checks = [\"t\"]\n",
        "approval = \"always\"\n",
        "max_changed_files = 0\n",
        "max_commits = -5\n",
        "= = =\n",
        "\u{0}\n",
        "[",
        "\"",
    ];
    proptest::collection::vec(proptest::sample::select(pieces), 0..16).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn config_parse_never_panics(text in fragments()) {
        if let Err(err) = Config::parse(&text, "main:.closegate.toml") {
            let text = format!("{err:#}");
            prop_assert!(text.contains("main:.closegate.toml"), "error names no origin: {}", text);
        }
    }

    #[test]
    fn config_parse_never_panics_on_any_text(text in ".{0,200}") {
        let _ = Config::parse(&text, "f");
    }

    #[test]
    fn contract_parse_never_panics(text in fragments(), noise in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = closegate::contract::parse(text.as_bytes());
        let _ = closegate::contract::parse(&noise);
    }
}

/// Path pieces that the default surfaces care about, and some they do not.
fn path_piece() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "",
        "src",
        "tests",
        "test",
        "__tests__",
        "testdata",
        "fixtures",
        "snapshots",
        "evals",
        "eval",
        "golden",
        "benchmarks",
        ".github",
        "workflows",
        "actions",
        ".ci",
        ".circleci",
        ".buildkite",
        ".githooks",
        ".closegate",
        ".cursor",
        "rules",
        ".claude",
        "a_test.go",
        "b_tests.rs",
        "test_c.py",
        "d.test.js",
        "e.spec.ts",
        "conftest.py",
        "f.snap",
        "g.eval.json",
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        "CODEOWNERS",
        "Jenkinsfile",
        ".closegate.toml",
        ".gitlab-ci.yml",
        "lib.rs",
        "test",
        "x.test",
        ".test.",
        "_test.",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every default surface glob matches exactly what globset (literal_separator) matches.
    #[test]
    fn default_surfaces_match_as_globset_does(parts in proptest::collection::vec(path_piece(), 1..6)) {
        let path = parts.join("/");
        for surface in &Config::default().surfaces {
            for pattern in &surface.globs {
                let ours = closegate::globs::Globs::new(std::slice::from_ref(pattern)).unwrap();
                let theirs = globset::GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .unwrap()
                    .compile_matcher();
                prop_assert_eq!(ours.is_match(&path), theirs.is_match(&path), "{} on {:?}", pattern, path);
            }
        }
    }
}
