//! `closegate init` (SPEC §17): a starter configuration whose check is guessed from the project,
//! tested on a scratch project of every type; `init --contract SLUG`.

use std::path::Path;

use closegate::config::{Config, SurfacePolicy};

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
            Some("cargo test"),
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
            Some(
                "npm rebuild --no-audit --no-fund && cp node_modules/.closegate-deps node_modules/.closegate-rebuilt; } && npm test",
            ),
        ),
        (
            "npm with jest alone: --verbose names every test for the census",
            vec![(
                "package.json",
                "{\"name\": \"demo\", \"scripts\": {\"test\": \"jest src\"}}\n",
            )],
            Some("} && npm test -- --verbose"),
        ),
        (
            "npm with vitest alone: its verbose reporter names every test",
            vec![(
                "package.json",
                "{\"name\": \"demo\", \"scripts\": {\"test\": \"vitest run\"}}\n",
            )],
            Some("} && npm test -- --reporter=verbose"),
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
            Some(".venv/bin/python -m pytest -v"),
        ),
        (
            "setup.cfg",
            vec![("setup.cfg", "[metadata]\nname = demo\n")],
            Some(".venv/bin/python -m pytest"),
        ),
        (
            "pytest.ini",
            vec![("pytest.ini", "[pytest]\ntestpaths = tests\n")],
            Some(".venv/bin/python -m pytest"),
        ),
        (
            "go",
            vec![
                ("go.mod", "module example.com/demo\n\ngo 1.21\n"),
                ("demo.go", "package demo\n"),
            ],
            Some("go test -json ./..."),
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
        // The files are not committed: the guess alone (its try on the base tip is below).
        let (code, out, err) = init(&root, &["--no-try"]);
        assert_eq!(code, 0, "{what}: {out}{err}");
        assert!(out.contains("git add .closegate.toml"), "{what}: {out}");
        let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
        let config = Config::parse(&text, ".closegate.toml")
            .unwrap_or_else(|e| panic!("{what}: {e:#}\n{text}"));
        assert_eq!(config.base.as_deref(), Some("main"), "{what}");
        let runs: Vec<&str> = config.checks.iter().map(|c| c.run.as_str()).collect();
        match expected {
            Some(run) => {
                assert_eq!(runs.len(), 1, "{what}: {runs:?}");
                assert!(runs[0].contains(run), "{what}: {runs:?}");
                // SPEC §26.4: the guessed check is one the test census reads.
                assert!(config.checks[0].census.is_on(), "{what}: {runs:?}");
                // SPEC §17: no `--locked` without a committed Cargo.lock.
                assert!(!runs[0].contains("--locked"), "{what}: {runs:?}");
            }
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
    // The base has no src/lib.rs: the try would fail there, by design of this scene.
    let (code, _, err) = init(&root, &["--no-try"]);
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

/// SPEC §17: `init` runs its guess on the base tip as `check` would (sandboxed, pristine
/// checkout) and says so; a guess that fails there is exit 1 with its last lines, so no agent's
/// first verdict is wrong for the set-up. The configuration is written either way.
#[test]
fn init_tries_its_guess_on_the_base_tip() {
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(
        &root,
        "Makefile",
        "test:\n\ttest -f README.md\n\techo tested-ok\n",
    );
    git(&root, &["add", "Makefile"]);
    git(&root, &["commit", "-qm", "make test"]);
    let (code, out, err) = init(&root, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("try: `test` passed on"), "{out}");

    // Attack on the set-up: the user's clone has what the pristine checkout lacks (an
    // uncommitted file); the try runs on the commit, so it fails, and says what to change.
    fx.write(&root, "Makefile", "test:\n\ttest -f local-only.txt\n");
    fx.write(&root, "local-only.txt", "x\n");
    git(&root, &["commit", "-qam", "needs a local file"]);
    let (code, out, _) = init(&root, &["--force"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("try: `test` exited"), "{out}");
    assert!(
        out.contains("| make: *** [Makefile"),
        "the failing output is shown: {out}"
    );
    assert!(out.contains("closegate validate --run"), "{out}");
    assert!(root.join(".closegate.toml").is_file(), "written either way");
    let (code, out, _) = init(&root, &["--force", "--no-try"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("try:"), "{out}");
}

/// SPEC §17: `--locked` only with a committed Cargo.lock (an ignored one in the clone does not
/// count); never the operator's own tool caches; the installed tree in `keep`. SPEC §26.4: a
/// cache shared between agents' checks (`writable`) holds only what the tool verifies on every
/// use — npm's content cache under `npm ci`, in a closegate-owned directory of this repository —
/// and every other cache (cargo's, pip's, npm's without a lock file) is private to the check's
/// workspace, in the kept `.closegate-cache/`.
#[test]
fn init_guesses_work_in_a_pristine_checkout() {
    let cargo = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(&root, "Cargo.toml", cargo);
    fx.write(&root, "Cargo.lock", "version = 3\n");
    fx.write(&root, ".gitignore", "/Cargo.lock\n");
    let (code, _, err) = init(&root, &["--no-try"]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let config = Config::parse(&text, "x").unwrap();
    let check = &config.checks[0];
    assert!(!check.run.contains("--locked"), "{}", check.run);
    assert_eq!(check.keep, ["target", ".closegate-cache"]);
    // Cargo verifies neither its cached archives nor its extracted sources on use: nothing of
    // CARGO_HOME is shared, and it is never the operator's own ~/.cargo.
    assert!(check.writable.is_empty(), "{:?}", check.writable);
    assert!(
        check
            .run
            .starts_with("CARGO_HOME=\"$PWD\"/.closegate-cache/cargo cargo test"),
        "{}",
        check.run
    );
    // SPEC §27.1: the check runs a census runner (cargo's libtest), so `init` writes
    // `tests = "integrity"`: the evidence decides a test edit; wiring still needs a human.
    let tests = config.surfaces.iter().find(|s| s.name == "tests").unwrap();
    assert_eq!(tests.policy, closegate::config::SurfacePolicy::Integrity);
    assert!(config.addition_needs_review("tests/conftest.py"));

    git(&root, &["add", "-f", "Cargo.toml", "Cargo.lock"]);
    git(&root, &["commit", "-qm", "lock"]);
    let (code, _, err) = init(&root, &["--no-try", "--force"]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let config = Config::parse(&text, "x").unwrap();
    // SPEC §27.2: the fetch is `prepare`; the tests run offline.
    assert!(
        config.checks[0]
            .run
            .ends_with("cargo test --locked --offline"),
        "{text}"
    );
    assert_eq!(
        config.checks[0].prepare.as_deref(),
        Some("CARGO_HOME=\"$PWD\"/.closegate-cache/cargo cargo fetch --locked")
    );
    assert!(!config.checks[0].network, "{text}");

    // npm: `npm ci` with a committed package-lock.json, else `npm install`; cache writable.
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(
        &root,
        "package.json",
        "{\"scripts\": {\"test\": \"mocha\"}}\n",
    );
    fx.write(&root, "package-lock.json", "{}\n");
    git(&root, &["add", "package.json", "package-lock.json"]);
    git(&root, &["commit", "-qm", "npm"]);
    init(&root, &["--no-try"]);
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let check = &Config::parse(&text, "x").unwrap().checks[0];
    // SPEC §27.2: `npm ci --ignore-scripts` fetches (no code runs) in `prepare`.
    let prepare = check.prepare.as_deref().unwrap();
    assert!(
        prepare.contains("npm ci --ignore-scripts ") && check.run.contains("npm_config_cache="),
        "{prepare}"
    );
    assert!(!check.network);
    assert_eq!(check.keep, ["node_modules"]);
    assert!(check.writable[0].ends_with("/npm"), "{:?}", check.writable);

    // Python: a venv inside the checkout with the project and its test group installed there,
    // never an editable install outside it; the files are named by pattern so a dependency
    // added to pyproject.toml is not graded input. The dependencies are declared (a
    // `[project]` table): `prepare` installs their wheels with the network (SPEC §27.2), as the
    // files are at the commit; `run` installs the project itself offline.
    let fx = Fixture::new();
    let root = fx.root();
    let pyproject = "[project]\nname = \"demo\"\nversion = \"0.1\"\n\n[dependency-groups]\ntests = [\"pytest\", \"freezegun\"]\n";
    fx.write(&root, "pyproject.toml", pyproject);
    init(&root, &["--no-try"]);
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let check = &Config::parse(&text, "x").unwrap().checks[0];
    let prepare = check.prepare.as_deref().unwrap();
    assert!(!check.network, "{text}");
    for step in [prepare, &check.run] {
        assert!(
            step.starts_with("export PIP_CACHE_DIR=\"$PWD\"/.closegate-cache/pip;"),
            "{step}"
        );
        // No word of either names the manifest (closegate's reader in `prepare` opens it, inside
        // its script's one word).
        let named = step
            .split_whitespace()
            .any(|w| w.trim_matches(['\'', '"', ';']) == "pyproject.toml");
        assert!(!named, "{step}");
    }
    assert!(!check.run.contains("pyproject.toml"), "{}", check.run);
    assert!(
        prepare.contains("python3 -m venv --clear .venv"),
        "{prepare}"
    );
    assert!(check.writable.is_empty(), "{:?}", check.writable);
    // The fixture's base is dated T0 (2023-11-14), over a year ago: its dependencies are resolved
    // as of that date (init_layouts::a_dormant_python_project_resolves_as_of_its_base_tip).
    assert!(
        prepare
            .contains("install -q --disable-pip-version-check --uploaded-prior-to=2023-11-14T22:1")
            && prepare.contains("Z --only-binary :all: -r \"$TMPDIR\"/closegate-reqs.txt && cp"),
        "{prepare}"
    );
    // The candidates, read as the files are at each commit; the build requirements as `init`
    // found them.
    assert!(
        prepare.contains(" P E:tests E:test E:testing G:tests G:test G:testing G:dev R:")
            && prepare.contains(" R:requirements/tests.txt 'setuptools>=40.8.0' wheel pytest > "),
        "{prepare}"
    );
    assert!(
        check.run.contains(
            "--no-index --no-deps --no-build-isolation -e . && cp \"$TMPDIR\"/closegate-deps \
             .venv/.closegate-project; } && .venv/bin/python -m pytest -v -rs"
        ),
        "{}",
        check.run
    );
    assert_eq!(check.keep, [".venv", ".closegate-cache"]);

    // A `setup.py` alone: only its own code knows the dependencies, so pip installs in `run`,
    // with the network, as before.
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(
        &root,
        "setup.py",
        "from setuptools import setup\nsetup(name='demo')\n",
    );
    init(&root, &["--no-try"]);
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let check = &Config::parse(&text, "x").unwrap().checks[0];
    assert!(check.network && check.prepare.is_none(), "{text}");
    assert!(check.run.contains("python3 -m venv .venv"), "{}", check.run);
    assert!(check.run.contains(" -e . pytest && cp"), "{}", check.run);
}

/// `init` with the files `files` at the root of a fresh repository (committed): its one check.
fn guessed(files: &[(&str, &str)]) -> closegate::config::CheckSpec {
    let fx = Fixture::new();
    let root = fx.root();
    for (path, text) in files {
        fx.write(&root, path, text);
        git(&root, &["add", path]);
    }
    git(&root, &["commit", "-qm", "project"]);
    let (code, out, err) = init(&root, &["--no-try"]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    Config::parse(&text, "x").unwrap().checks.remove(0)
}

/// SPEC §26.4: without a committed lock file npm resolves from its cache's metadata, which it
/// does not verify: that cache is private to the workspace, nothing is `writable`. Go's module
/// and build caches are private too, and the module cache is verified (and downloaded again when
/// it fails) before the tests.
#[test]
fn init_keeps_unverified_caches_private_to_the_workspace() {
    let npm = guessed(&[("package.json", "{\"scripts\": {\"test\": \"mocha\"}}\n")]);
    assert!(npm.writable.is_empty(), "{:?}", npm.writable);
    assert!(
        npm.run
            .starts_with("export npm_config_cache=\"$PWD\"/.closegate-cache/npm;"),
        "{}",
        npm.run
    );
    assert_eq!(npm.keep, ["node_modules", ".closegate-cache"]);

    let go = guessed(&[("go.mod", "module example.com/demo\n\ngo 1.19\n")]);
    assert!(go.writable.is_empty(), "{:?}", go.writable);
    // SPEC §27.2: verified and downloaded in `prepare`; the tests run with no network.
    assert_eq!(
        go.prepare.as_deref(),
        Some(
            "export GOPATH=\"$PWD\"/.closegate-cache/go GOCACHE=\"$PWD\"/.closegate-cache/go/build; \
             go mod verify >/dev/null 2>&1 || go clean -modcache; go mod download"
        )
    );
    assert_eq!(
        go.run,
        "export GOPATH=\"$PWD\"/.closegate-cache/go GOCACHE=\"$PWD\"/.closegate-cache/go/build \
         GOPROXY=off GOFLAGS=\"-count=1 $GOFLAGS\"; go test -json ./..."
    );
    assert!(!go.network);
    assert_eq!(go.keep, [".closegate-cache"]);
}

/// SPEC §26.4: a kept path never lets a changed source skip its build. A Python project with
/// compiled extensions (each way of declaring them) is built again in every check, its install
/// skipped only for the dependencies; a pure-Python project is not. npm runs the root's own
/// lifecycle scripts in every check, and the whole install when a native addon needs node-gyp.
#[test]
fn init_rebuilds_what_a_kept_tree_cannot_vouch_for() {
    let pyproject = "[project]\nname = \"demo\"\nversion = \"0.1\"\n";
    let rebuild = "then .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
                   --no-build-isolation -e . || .venv/bin/python -m pip install -q \
                   --disable-pip-version-check --no-deps -e .; else";
    let compiled: [(&str, Vec<(&str, &str)>); 6] = [
        (
            "setup.py Extension",
            vec![
                ("pyproject.toml", pyproject),
                (
                    "setup.py",
                    "from setuptools import Extension, setup\nsetup(ext_modules=[Extension('demo._c', ['c.c'])])\n",
                ),
            ],
        ),
        (
            "setup.py alone",
            vec![(
                "setup.py",
                "from setuptools import setup\nfrom Cython.Build import cythonize\nsetup(ext_modules=cythonize('x.pyx'))\n",
            )],
        ),
        (
            "[tool.setuptools] ext-modules",
            vec![(
                "pyproject.toml",
                "[project]\nname = \"demo\"\nversion = \"0.1\"\n\n[[tool.setuptools.ext-modules]]\nname = \"demo._c\"\nsources = [\"c.c\"]\n",
            )],
        ),
        (
            "meson-python",
            vec![(
                "pyproject.toml",
                "[build-system]\nrequires = [\"meson-python>=0.15\"]\nbuild-backend = \"mesonpy\"\n\n[project]\nname = \"demo\"\nversion = \"0.1\"\n",
            )],
        ),
        (
            "scikit-build-core",
            vec![(
                "pyproject.toml",
                "[build-system]\nrequires = [\"scikit_build_core\"]\nbuild-backend = \"scikit_build_core.build\"\n\n[project]\nname = \"demo\"\nversion = \"0.1\"\n",
            )],
        ),
        (
            "maturin",
            vec![(
                "pyproject.toml",
                "[build-system]\nrequires = [\"maturin>=1,<2\"]\nbuild-backend = \"maturin\"\n\n[project]\nname = \"demo\"\nversion = \"0.1\"\n",
            )],
        ),
    ];
    let offline = ".venv/bin/python -m pip install -q --disable-pip-version-check --no-index \
                   --no-deps --no-build-isolation -e . && ";
    for (what, files) in &compiled {
        let check = guessed(files);
        // The build requirements are installed beside the dependencies.
        let build = match *what {
            "meson-python" => "'meson-python>=0.15'",
            "scikit-build-core" => "scikit_build_core",
            "maturin" => "'maturin>=1,<2'",
            _ => "wheel",
        };
        if *what == "setup.py alone" {
            // Only its `setup.py` knows its dependencies: installed in `run`, with the network.
            assert!(
                check
                    .run
                    .contains(&format!(" {build} && cp \"$TMPDIR\"/closegate-deps .venv/")),
                "{what}: {}",
                check.run
            );
            assert!(check.run.contains(rebuild), "{what}: {}", check.run);
        } else {
            // Declared: fetched in `prepare`; built offline, with no stamp to skip it.
            let prepare = check.prepare.as_deref().unwrap_or_default();
            assert!(!check.network, "{what}");
            assert!(
                prepare.contains(&format!(" {build} pytest > ")),
                "{what}: {prepare}"
            );
            assert!(check.run.contains(offline), "{what}: {}", check.run);
            assert!(
                !check.run.contains(".closegate-project"),
                "{what}: {}",
                check.run
            );
        }
        assert!(check.run.contains("pytest -v -rs"), "{what}: {}", check.run);
    }
    // Each extension named literally must import once built (an optional one falls back).
    let check = guessed(&compiled[0].1);
    assert!(
        check.run.contains(&format!(
            "{offline}.venv/bin/python -c 'import demo._c' && .venv/bin/python -m pytest"
        )),
        "{}",
        check.run
    );
    let pure = guessed(&[
        ("pyproject.toml", pyproject),
        ("setup.py", "from setuptools import setup\nsetup()\n"),
    ]);
    // A pure-Python project is installed once per change of its manifests (a stamp).
    assert!(
        pure.run.contains(&format!(
            "cmp -s \"$TMPDIR\"/closegate-deps .venv/.closegate-project || {{ {}",
            offline.trim_end_matches(" && ")
        )),
        "{}",
        pure.run
    );

    let prepare = "{\"scripts\": {\"test\": \"node t.js\", \"prepare\": \"tsc\", \"postinstall\": \"node gen.js\"}}\n";
    let npm = guessed(&[("package.json", prepare)]);
    // The root's scripts run in every check, offline, after the fetch ran none (SPEC §27.2).
    assert!(
        npm.run.contains(
            " && npm run --ignore-scripts postinstall && npm run --ignore-scripts prepare && npm test"
        ),
        "{}",
        npm.run
    );
    assert!(
        npm.prepare
            .as_deref()
            .unwrap()
            .contains("npm install --ignore-scripts"),
        "{:?}",
        npm.prepare
    );
    let addon = "{\"scripts\": {\"test\": \"node t.js\"}}\n";
    let npm = guessed(&[
        ("package.json", addon),
        ("binding.gyp", "{\"targets\": []}\n"),
    ]);
    assert!(
        !npm.run.contains("cmp -s"),
        "the install runs every time: {}",
        npm.run
    );
    assert!(npm.run.contains("{ npm install --no-audit"), "{}", npm.run);
    assert!(
        npm.network && npm.prepare.is_none(),
        "node-gyp downloads headers"
    );
    // SPEC §27.4: the stamp is made outside node_modules/ (which `npm ci` empties) and copied
    // in once the install has finished.
    let plain = guessed(&[("package.json", addon)]);
    assert!(
        plain
            .prepare
            .as_deref()
            .unwrap()
            .contains("cmp -s \"$TMPDIR\"/closegate-deps node_modules/.closegate-deps || {"),
        "{:?}",
        plain.prepare
    );
}

/// SPEC §26.5: `init` offers signed approvals — how to set `allowed_signers` and
/// `require_signed_approvals` and approve with `--sign` — and writes the configuration as before
/// (the offer changes nothing); the two settings it names are ones the configuration takes. A
/// contract's `init` offers nothing.
#[test]
fn init_offers_signed_approvals_and_changes_nothing_for_it() {
    let fx = Fixture::new();
    let root = fx.root();
    let (code, out, err) = init(&root, &["--no-try"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("only signed approvals stop an agent"), "{out}");
    assert!(
        out.contains("allowed_signers = \".closegate/allowed_signers\""),
        "{out}"
    );
    assert!(out.contains("require_signed_approvals = true"), "{out}");
    assert!(out.contains("closegate approve --sign"), "{out}");
    let written = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    assert!(!written.contains("require_signed_approvals"), "{written}");
    assert!(out.contains("at the top of .closegate.toml"), "{out}");
    let offered = format!(
        "allowed_signers = \".closegate/allowed_signers\"\nrequire_signed_approvals = true\n{written}"
    );
    let config = Config::parse(&offered, ".closegate.toml").unwrap();
    assert!(config.require_signed_approvals);
    assert_eq!(config.allowed_signers, ".closegate/allowed_signers");

    let (code, out, _) = init(&root, &["--contract", "c"]);
    assert_eq!(code, 0);
    assert!(!out.contains("signed approvals"), "{out}");
}

/// SPEC §27.1: `init` writes `tests = "integrity"` when its check runs a census runner — also
/// through the project's scripts (`npm test` running `mocha`, or a `pretest` that runs jest) —
/// and `modify` when the script runs nothing the census reads (`node check.js`): an edit there
/// has no per-test evidence to decide it.
#[test]
fn init_writes_integrity_when_an_npm_script_runs_a_census_runner() {
    let cases = [
        (
            "{\"scripts\": {\"test\": \"mocha\"}}\n",
            SurfacePolicy::Integrity,
        ),
        (
            "{\"scripts\": {\"test\": \"npm run unit\", \"unit\": \"jest --ci\"}}\n",
            SurfacePolicy::Integrity,
        ),
        (
            "{\"scripts\": {\"test\": \"node check.js\"}}\n",
            SurfacePolicy::Modify,
        ),
    ];
    for (package_json, want) in cases {
        let fx = Fixture::new();
        let root = fx.root();
        fx.write(&root, "package.json", package_json);
        let (code, _, err) = init(&root, &["--no-try"]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
        let config = Config::parse(&text, "x").unwrap();
        let tests = config.surfaces.iter().find(|s| s.name == "tests").unwrap();
        assert_eq!(tests.policy, want, "{package_json}\n{text}");
    }
}
