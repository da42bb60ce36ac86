//! Graded inputs (SPEC §4.5, §26.4): files and keys that decide what a check runs are on
//! surface `ci` with the key named, whatever the overlays or the checks say. Each test plays an
//! agent whose check passes (`true || RUNNER`: the runner's words are there, so closegate knows
//! it, and the check passes as the cheat makes it pass), so only the graded-input finding stands
//! between the cheat and VERIFIED; each attack has its honest control beside it.
//!
//! Attacks, each a test below: `.npmrc` `script-shell=/bin/true`; `.yarnrc`, `.yarnrc.yml`,
//! `.pnpmfile.cjs`, `pnpm-workspace.yaml`; a nested `go.mod` (leaves `./...`) and `go.work`;
//! `pytest.toml` with `-k`, `.pytest.ini`, `.pytest.toml`, `[tool.pytest]` in `pyproject.toml`;
//! `rust-toolchain`, `rust-toolchain.toml`; a new `build.rs`, `[package] build`, `[lib] path`;
//! `sitecustomize.py`, `usercustomize.py`, a `.pth` file; `package.json` `main`, `exports`,
//! `module`, `type`, `imports`; babel configuration when Jest runs; the test globs given to
//! tape/ava/nyc on `tests`, not `ci`; source that redefines an assertion (`macro_rules!
//! assert_eq`, `unittest.TestCase.assertEqual = …`, `globalThis.it = …`).

use serde_json::Value;

use crate::byte_paths::{check, claim, findings};
use crate::scene::Scene;

type Files<'a> = &'a [(&'a str, Option<&'a str>)];

/// `main` with a check running `run` and `main_files`; `agent/x` with `src/lib.rs` and `agent`.
fn returned(run: &str, main_files: Files, agent: Files) -> (i32, Value) {
    let config = format!("[[checks]]\nname = \"t\"\nrun = '{run}'\ntimeout_s = 60\n");
    let mut files = vec![(".closegate.toml", Some(config.as_str()))];
    files.extend_from_slice(main_files);
    let mut work = vec![("src/lib.rs", Some("pub fn x() {}\n"))];
    work.extend_from_slice(agent);
    let s = Scene::new()
        .on_main(&files, "configure closegate")
        .on_agent(&work, "add x")
        .worktree();
    claim(&s.wt, s.tip);
    check(&s.wt)
}

/// The graded-input findings: `protected-surface` on `ci` whose message says graded input, as
/// the text between the first backticks (`path` or `path: key`).
fn graded(report: &Value) -> Vec<String> {
    findings(report, "protected-surface")
        .into_iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("(graded input)"))
        .filter_map(|m| m.split('`').nth(1).map(str::to_string))
        .collect()
}

/// The attack is on `ci` with `what` named and needs a human; the control goes through.
fn caught(attack: (i32, Value), what: &str) {
    let (code, report) = attack;
    assert_eq!(
        report["checks"][0]["exit_code"], 0,
        "the check passes: {report}"
    );
    assert!(
        graded(&report).contains(&what.to_string()),
        "{what}: {report}"
    );
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW")),
        "{report}"
    );
    let on_ci = report["protected"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["surface"] == "ci" && what.starts_with(p["path"].as_str().unwrap()));
    assert!(on_ci, "{what}: {report}");
}

fn passes(control: (i32, Value)) {
    let (code, report) = control;
    assert!(graded(&report).is_empty(), "{report}");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (0, Some("VERIFIED")),
        "{report}"
    );
}

const NPM: &str = "true || npm test";
const PKG: &str = r#"{"name": "p", "main": "index.js", "scripts": {"test": "mocha"}}"#;

#[test]
fn npm_configuration_files_are_graded() {
    for file in [
        ".npmrc",
        "sub/.npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        "pnpm-workspace.yaml",
    ] {
        let body = "script-shell=/bin/true\n";
        caught(
            returned(NPM, &[("package.json", Some(PKG))], &[(file, Some(body))]),
            file,
        );
    }
    // Control: the same files with a Go check are not the runner's.
    passes(returned(
        "true || go test ./...",
        &[],
        &[(".npmrc", Some("x=1\n"))],
    ));
}

/// Attack (issue 50): the pnpm and yarn checks `init` writes run the package manager through
/// corepack (`corepack pnpm@<release> test`); a rewritten `scripts.test` is graded there as it is
/// under `pnpm test`. Control: the same check with the scripts untouched goes through.
#[test]
fn a_test_script_run_through_corepack_is_graded() {
    let pkg = r#"{"name": "p", "scripts": {"test": "vitest run"}}"#;
    let cut = r#"{"name": "p", "scripts": {"test": "node -e 0"}}"#;
    for run in [
        "true || corepack pnpm@10.17.1+sha512.ab12 test",
        "true || corepack yarn test",
    ] {
        caught(
            returned(
                run,
                &[("package.json", Some(pkg))],
                &[("package.json", Some(cut))],
            ),
            "package.json: scripts.test",
        );
        passes(returned(run, &[("package.json", Some(pkg))], &[]));
    }
}

#[test]
fn package_json_keys_that_pick_the_code_the_tests_import_are_graded() {
    let keys = [
        ("main", r#""fixed.js""#),
        ("exports", r#"{".": "./fixed.js"}"#),
        ("module", r#""fixed.mjs""#),
        ("type", r#""module""#),
        ("imports", r##"{"#x": "./fixed.js"}"##),
    ];
    for (key, value) in keys {
        let pkg = format!(r#"{{"name": "p", "scripts": {{"test": "mocha"}}, "{key}": {value}}}"#);
        let attack = returned(
            NPM,
            &[("package.json", Some(PKG))],
            &[("package.json", Some(&pkg))],
        );
        caught(attack, &format!("package.json: {key}"));
    }
    // Control: a dependency added is not graded input.
    let deps = r#"{"name": "p", "main": "index.js", "scripts": {"test": "mocha"}, "dependencies": {"x": "1"}}"#;
    passes(returned(
        NPM,
        &[("package.json", Some(PKG))],
        &[("package.json", Some(deps))],
    ));
}

#[test]
fn babel_configuration_is_graded_when_jest_runs() {
    let jest_pkg = r#"{"name": "p", "scripts": {"test": "jest src"}}"#;
    for file in [".babelrc", ".babelrc.js", "babel.config.js"] {
        let body = "module.exports = {}\n";
        let attack = returned(
            NPM,
            &[("package.json", Some(jest_pkg))],
            &[(file, Some(body))],
        );
        caught(attack, file);
    }
    let with_babel =
        r#"{"name": "p", "scripts": {"test": "jest src"}, "babel": {"plugins": ["x"]}}"#;
    let attack = returned(
        NPM,
        &[("package.json", Some(jest_pkg))],
        &[("package.json", Some(with_babel))],
    );
    caught(attack, "package.json: babel");
    caught(
        returned("true || npx jest", &[], &[(".babelrc", Some("{}\n"))]),
        ".babelrc",
    );
    // Control: with mocha, babel's configuration is not the runner's.
    passes(returned(
        NPM,
        &[("package.json", Some(PKG))],
        &[(".babelrc", Some("{}\n"))],
    ));
}

#[test]
fn a_nested_go_module_and_go_work_are_graded() {
    let go = "true || go test ./...";
    let base = [
        ("go.mod", Some("module m\n\ngo 1.19\n")),
        ("pkg/a.go", Some("package pkg\n")),
    ];
    // Attack: `pkg/go.mod` makes `pkg` a module of its own, which `./...` no longer tests.
    caught(
        returned(go, &base, &[("pkg/go.mod", Some("module m/pkg\n"))]),
        "pkg/go.mod",
    );
    caught(
        returned(go, &base, &[("go.work", Some("go 1.19\nuse .\n"))]),
        "go.work",
    );
    // Control: the root module's own requirements are not graded.
    let root = "module m\n\ngo 1.19\n\nrequire example.com/x v1.0.0\n";
    passes(returned(go, &base, &[("go.mod", Some(root))]));
}

#[test]
fn pytest_configuration_is_graded() {
    let py = "true || python3 -m pytest";
    let deselect = "[pytest]\naddopts = [\"-k\", \"not test_max_age\"]\n";
    for file in [
        "pytest.toml",
        ".pytest.toml",
        ".pytest.ini",
        "pytest.ini",
        "conftest.py",
    ] {
        caught(returned(py, &[], &[(file, Some(deselect))]), file);
    }
    let base = "[project]\nname = \"p\"\n";
    let native = "[project]\nname = \"p\"\n[tool.pytest]\naddopts = [\"-k\", \"not slow\"]\n";
    caught(
        returned(
            py,
            &[("pyproject.toml", Some(base))],
            &[("pyproject.toml", Some(native))],
        ),
        "pyproject.toml: tool.pytest",
    );
    // Control: the project's version is not graded.
    let version = "[project]\nname = \"p\"\nversion = \"2\"\n";
    passes(returned(
        py,
        &[("pyproject.toml", Some(base))],
        &[("pyproject.toml", Some(version))],
    ));
}

/// Issue #46: the runner is found through every form a `run` string gives it — a chain, a
/// wrapper, an assignment, `cd`, `sh -c` — so a deselecting `pytest.ini` needs a human under
/// each; one reader of `run` answers for every gate.
#[test]
fn a_wrapped_runner_still_grades_its_configuration() {
    let deselect = "[pytest]\naddopts = -k 'not test_max_age'\n";
    for run in [
        "true || timeout 600 pytest",
        "true || env CI=1 pytest",
        "true || nice -n 5 pytest",
        "true || xvfb-run -a pytest",
        "true || uv run pytest",
        "true || poetry run pytest",
        "true || bash -c \"pytest -q\"",
        "true || sh -c \"cd sub && pytest\"",
        "true; PYTHONPATH=src pytest | cat",
        "true || (cd sub && timeout 60 env CI=1 python3 -m pytest)",
    ] {
        caught(
            returned(run, &[], &[("pytest.ini", Some(deselect))]),
            "pytest.ini",
        );
    }
    // Control: the same wrapped check with a code-only change.
    passes(returned("true || timeout 600 pytest", &[], &[]));
}

/// SPEC §27.1: source outside the test surfaces that redefines what a test means is graded
/// input — a `macro_rules! assert_eq` in a crate's library code turns its untouched unit tests
/// into no-ops, a package `__init__.py` that patches `unittest` does the same in Python, and a
/// module that reassigns `globalThis.it` in JavaScript.
#[test]
fn source_that_redefines_an_assertion_is_graded() {
    let noop = "pub fn x() {}\n#[macro_export]\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\n";
    caught(
        returned("true || cargo test", &[], &[("src/lib.rs", Some(noop))]),
        "src/lib.rs",
    );
    let patch = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n";
    caught(
        returned(
            "true || python3 -m unittest",
            &[],
            &[("pkg/__init__.py", Some(patch))],
        ),
        "pkg/__init__.py",
    );
    let it = "globalThis.it = (name, fn) => {};\n";
    caught(
        returned("true || npx jest", &[], &[("lib/setup.js", Some(it))]),
        "lib/setup.js",
    );
    // Control: a macro of the crate's own, named like no assertion.
    let own = "pub fn x() {}\nmacro_rules! square { ($x:expr) => { $x * $x }; }\n";
    passes(returned(
        "true || cargo test",
        &[],
        &[("src/lib.rs", Some(own))],
    ));
}

#[test]
fn the_rust_toolchain_and_build_scripts_are_graded() {
    let cargo = "true || cargo test";
    for file in ["rust-toolchain", "rust-toolchain.toml"] {
        caught(
            returned(
                cargo,
                &[],
                &[(file, Some("[toolchain]\nchannel = \"1.70\"\n"))],
            ),
            file,
        );
    }
    // Attack: a build script that rewrites the code before it is compiled.
    let build = "fn main() { std::fs::write(\"src/lib.rs\", \"pub fn x() {}\").unwrap(); }\n";
    caught(
        returned(cargo, &[], &[("build.rs", Some(build))]),
        "build.rs",
    );
    caught(
        returned("true", &[], &[("crates/a/build.rs", Some(build))]),
        "crates/a/build.rs",
    );
    let manifest = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n";
    let with_build = "[package]\nname = \"a\"\nversion = \"0.1.0\"\nbuild = \"gen.rs\"\n";
    caught(
        returned(
            cargo,
            &[("Cargo.toml", Some(manifest))],
            &[("Cargo.toml", Some(with_build))],
        ),
        "Cargo.toml: package.build",
    );
    let lib_path = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[lib]\npath = \"src/good.rs\"\n";
    caught(
        returned(
            cargo,
            &[("Cargo.toml", Some(manifest))],
            &[("Cargo.toml", Some(lib_path))],
        ),
        "Cargo.toml: lib.path",
    );
    // Control: a new dependency is not graded.
    let dep = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[dependencies]\nitoa = \"1\"\n";
    passes(returned(
        cargo,
        &[("Cargo.toml", Some(manifest))],
        &[("Cargo.toml", Some(dep))],
    ));
}

#[test]
fn python_start_up_files_are_graded_whatever_runs() {
    let patch = "import pkg; pkg.f = lambda: 1\n";
    for file in ["src/sitecustomize.py", "usercustomize.py", "src/fix.pth"] {
        caught(returned("true", &[], &[(file, Some(patch))]), file);
    }
    // Control: an ordinary module.
    passes(returned("true", &[], &[("src/custom.py", Some(patch))]));
}

#[test]
fn test_globs_given_to_tape_ava_or_nyc_are_on_tests_not_ci() {
    // `tape test` names the folder: what lies under it is a test, so a new test file there is on
    // `tests` (an addition policy `integrity` or `modify` may let through), never on `ci`.
    let main = [("test/a.js", Some("require('tape')\n"))];
    let (_, report) = returned(
        "true || npx tape test",
        &main,
        &[("test/b.js", Some("x\n"))],
    );
    let protected = &report["protected"];
    assert_eq!(protected[0]["path"], "test/b.js", "{report}");
    assert_eq!(protected[0]["surface"], "tests", "{report}");
    // A glob outside the default surfaces is put on `tests`: editing a test under it is seen.
    let main = [("checks/a.js", Some("t.ok(1)\n"))];
    let run = "true || nyc --reporter=text tape checks/*.js";
    let (_, report) = returned(run, &main, &[("checks/a.js", Some("t.ok(0)\n"))]);
    assert_eq!(report["protected"][0]["path"], "checks/a.js", "{report}");
    assert_eq!(report["protected"][0]["surface"], "tests", "{report}");
    assert_eq!(report["verdict"], "PENDING_REVIEW");
    // In an npm script: `"test": "ava suite/"`.
    let pkg = r#"{"scripts": {"test": "ava suite/"}}"#;
    let main = [("package.json", Some(pkg)), ("suite/a.js", Some("x\n"))];
    let (_, report) = returned(NPM, &main, &[("suite/a.js", Some("y\n"))]);
    assert_eq!(report["protected"][0]["surface"], "tests", "{report}");
}
