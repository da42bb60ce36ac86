//! SPEC §26.4, warm state that cannot lie, on real toolchains (go, cargo, pip with gcc).
//!
//! - **A cache shared between agents' checks holds only what the tool verifies on every use.**
//!   The attack (issue 37): agent A's test rewrites a dependency in the tool cache an older
//!   `init` shared between every agent's checks (`writable`); then agent B's broken code passes,
//!   with `--rerun`, even after `closegate gc`. Each test plays it twice: under the configuration
//!   an older `init` wrote (the control: B is VERIFIED, the attack is real) and under the one
//!   `init` writes now (B fails; an honest agent C still passes).
//! - **A kept path never lets a changed source skip its build**: a Python project's C extension,
//!   broken by agent B, is built again in every check (`warm_python`).
//!
//! The Go module comes from a module proxy in a folder (`GOPROXY=file://…`) and the crate from a
//! local registry, both under the scene's home (visible read-only in the sandbox): no network.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::fixture::{self, Part, parts};
use crate::scene::{Scene, agent_status, json_report};

/// An older `init`'s configuration: the tool's cache in a directory every agent's check writes.
fn shared_config(run: &str, cache: &str) -> String {
    format!(
        "[[checks]]\nname = \"test\"\nrun = '{run}'\ntimeout_s = 600\n\
         writable = [\"~/.cache/closegate/0123456789abcdef/{cache}\"]\n"
    )
}

/// A project repository with agents, run with `env` on top of the scene's hermetic one.
struct Project {
    s: Scene,
    env: Vec<(String, String)>,
}

impl Project {
    /// A scene of its own home, the sandbox on: prepare the home, then [`Project::new`].
    fn scene() -> Scene {
        Scene::new().own_home().sandboxed()
    }

    /// `main` holding `files` and the configuration: `config`, or (None) what `init` guesses.
    fn new(
        s: Scene,
        files: &[(&str, &str)],
        config: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Project {
        let files: Vec<(&str, Option<&str>)> = files.iter().map(|(p, t)| (*p, Some(*t))).collect();
        let s = s.on_main(&files, "the project");
        let p = Project { s, env };
        let text = match config {
            Some(text) => text.to_string(),
            None => {
                let (code, out, err) = p.run(&p.s.root(), &["init", "--no-try"]);
                assert_eq!(code, 0, "{out}{err}");
                std::fs::read_to_string(p.s.root().join(".closegate.toml")).unwrap()
            }
        };
        let s =
            p.s.on_main(&[(".closegate.toml", Some(&text))], "configure closegate");
        Project { s, env: p.env }
    }

    fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = self.s.bin(cwd, args);
        cmd.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        cmd
    }

    fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        parts(&self.command(cwd, args).output().unwrap())
    }

    /// `agent/<slug>` with one commit of `files`, its worktree and an honest status document.
    fn agent(&self, slug: &str, files: &[(&str, &str)]) -> PathBuf {
        let branch = format!("agent/{slug}");
        let files: Vec<(&str, Option<&str>)> = files.iter().map(|(p, t)| (*p, Some(*t))).collect();
        let tip = self.s.fx.commit(&branch, &files, &format!("add {slug}"));
        let wt = self.s.fx.worktree(slug, &branch);
        let first = files[0].0;
        agent_status(&wt, slug, "close-ok", tip, &format!("add {slug}"))
            .artifacts(&[first])
            .write(&wt);
        wt
    }

    /// `closegate check --format json ARGS` in `wt`.
    fn check(&self, wt: &Path, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        json_report(&self.command(wt, &all).output().unwrap())
    }
}

/// Run `program args` in `dir` with `env`, panicking with its output when it fails.
fn tool(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

// ---- Go ----

const GO_MOD: &str = "module example.com/proj\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n";
const GO_CODE: &str =
    "package proj\n\n// Double doubles n.\nfunc Double(n int) int { return n * 2 }\n";
const GO_BROKEN: &str =
    "package proj\n\n// Double doubles n.\nfunc Double(n int) int { return n*2 + 1 }\n";
const GO_TEST: &str = "package proj\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\n\
    func TestDouble(t *testing.T) {\n\tif !dep.Even(Double(3)) {\n\t\tt.Fatal(\"Double(3) is odd\")\n\t}\n}\n";
const DEP_GO: &str = "package dep\n\n// Even reports whether n is even.\nfunc Even(n int) bool { return n%2 == 0 }\n";

/// Agent A's test: rewrite `example.com/dep` so that `Even` is always true, in every module
/// cache it can find — its own (`go env GOMODCACHE`) and closegate's shared ones under `$HOME`.
const GO_POISON: &str = r#"package proj

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPoison(t *testing.T) {
	own, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	roots := []string{strings.TrimSpace(string(own))}
	shared, _ := filepath.Glob(filepath.Join(os.Getenv("HOME"), ".cache", "closegate", "*", "go", "pkg", "mod"))
	roots = append(roots, shared...)
	for _, root := range roots {
		dir := filepath.Join(root, "example.com", "dep@v1.0.0")
		os.Chmod(dir, 0o755)
		os.Chmod(filepath.Join(dir, "dep.go"), 0o644)
		os.WriteFile(filepath.Join(dir, "dep.go"), []byte("package dep\n\nfunc Even(n int) bool { return true }\n"), 0o644)
	}
}
"#;

/// A module proxy in `<home>/goproxy` serving `example.com/dep v1.0.0` (its zip made by
/// python3's zipfile), and the `go.sum` of a module requiring it (computed by go itself).
fn go_proxy(home: &Path) -> (String, String) {
    let proxy = home.join("goproxy");
    let v = proxy.join("example.com/dep/@v");
    let src = home.join("dep-src");
    write(&src.join("go.mod"), "module example.com/dep\n\ngo 1.19\n");
    write(&src.join("dep.go"), DEP_GO);
    write(&v.join("list"), "v1.0.0\n");
    write(&v.join("v1.0.0.mod"), "module example.com/dep\n\ngo 1.19\n");
    write(
        &v.join("v1.0.0.info"),
        "{\"Version\":\"v1.0.0\",\"Time\":\"2024-01-01T00:00:00Z\"}\n",
    );
    let zip = format!(
        "import zipfile\nz = zipfile.ZipFile({:?}, 'w')\nfor f in ['go.mod', 'dep.go']:\n    \
         z.write({:?} + '/' + f, 'example.com/dep@v1.0.0/' + f)\nz.close()\n",
        v.join("v1.0.0.zip").display().to_string(),
        src.display().to_string()
    );
    tool(home, "python3", &["-c", &zip], &[]);
    let url = format!("file://{}", proxy.display());
    let work = tempfile::tempdir().unwrap();
    write(&work.path().join("go.mod"), GO_MOD);
    write(&work.path().join("proj.go"), GO_CODE);
    write(&work.path().join("proj_test.go"), GO_TEST);
    let cache = work.path().join("gopath");
    let env = [
        ("GOPROXY", url.as_str()),
        ("GOSUMDB", "off"),
        ("GOFLAGS", "-mod=mod"),
        ("GOPATH", cache.to_str().unwrap()),
        ("GOCACHE", &format!("{}/build", cache.display())),
    ];
    tool(work.path(), "go", &["mod", "tidy"], &env);
    let sum = std::fs::read_to_string(work.path().join("go.sum")).unwrap();
    let _ = Command::new("go")
        .args(["clean", "-modcache"])
        .envs(env)
        .status();
    (url, sum)
}

/// Agent A poisons the module cache it can reach; agent B's broken `Double` is checked with
/// `--rerun`. Under an older `init`'s shared `GOPATH`, B is VERIFIED (the attack); under
/// today's guess — Go's caches private to the workspace, the module cache verified before use
/// and downloaded again when it fails — B fails and an honest agent C passes.
#[test]
fn a_poisoned_go_module_cache_never_makes_broken_code_verified() {
    if fixture::require(Part::Tool("go")).is_none() {
        return;
    }
    let old = shared_config(
        "export GOPATH=\"$HOME\"/.cache/closegate/0123456789abcdef/go GOCACHE=\"$HOME\"/.cache/closegate/0123456789abcdef/go/build; go test ./...",
        "go",
    );
    for config in [Some(old.as_str()), None] {
        // The proxy lives in the scene's home, where the checks see it (read-only).
        let s = Project::scene();
        let (url, sum) = go_proxy(&s.home.path().canonicalize().unwrap());
        let files = [
            ("go.mod", GO_MOD),
            ("go.sum", sum.as_str()),
            ("proj.go", GO_CODE),
            ("proj_test.go", GO_TEST),
        ];
        let p = Project::new(s, &files, config, vec![("GOPROXY".to_string(), url)]);
        let a = p.agent("a", &[("poison_test.go", GO_POISON)]);
        let (_, report) = p.check(&a, &[]);
        assert_eq!(
            report["checks"][0]["exit_code"], 0,
            "A's poison ran: {report:#}"
        );
        let b = p.agent("b", &[("proj.go", GO_BROKEN)]);
        let (code, report) = p.check(&b, &["--rerun"]);
        match config {
            Some(_) => assert_eq!(code, 0, "control: the shared cache made B pass: {report:#}"),
            None => {
                assert_eq!(code, 1, "B's broken code: {report:#}");
                assert_eq!(report["verdict"], "FAIL", "{report:#}");
                let c = p.agent(
                    "c",
                    &[(
                        "triple.go",
                        "package proj\n\n// Triple.\nfunc Triple(n int) int { return n * 3 }\n",
                    )],
                );
                let (code, report) = p.check(&c, &[]);
                assert_eq!(code, 0, "honest C after the poisoning: {report:#}");
            }
        }
    }
}

// ---- Cargo ----

/// The toolchain's homes as the user running the tests has them: rustup's proxies find the
/// toolchain through `RUSTUP_HOME` (the scene's `HOME` is its own).
fn rustup_home() -> (String, String) {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let rustup = std::env::var("RUSTUP_HOME").unwrap_or(format!("{home}/.rustup"));
    ("RUSTUP_HOME".to_string(), rustup)
}

const DEP_TOML: &str = "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
    license = \"MIT\"\ndescription = \"even numbers\"\n";
const PROJ_TOML: &str = "[package]\nname = \"proj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
    [dependencies]\ndep = \"0.1.0\"\n";
const PROJ_LIB: &str = "pub fn double(n: u32) -> u32 {\n    n * 2\n}\n\n#[test]\n\
    fn double_is_even() {\n    assert!(dep::even(double(3)));\n}\n";

/// Agent A's test: rewrite `dep` so that `even` is always true in every extracted copy it can
/// find — its own `CARGO_HOME` and closegate's shared cargo homes under `$HOME`.
const CARGO_POISON: &str = r#"use std::path::PathBuf;

#[test]
fn poison() {
    let mut homes: Vec<PathBuf> = std::env::var_os("CARGO_HOME").map(PathBuf::from).into_iter().collect();
    let shared = PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/closegate");
    for repo in std::fs::read_dir(shared).into_iter().flatten().flatten() {
        homes.push(repo.path().join("cargo"));
    }
    for home in homes {
        for source in std::fs::read_dir(home.join("registry/src")).into_iter().flatten().flatten() {
            let lib = source.path().join("dep-0.1.0/src/lib.rs");
            if lib.exists() {
                let _ = std::fs::write(lib, "pub fn even(_n: u32) -> bool { true }\n");
            }
        }
    }
}
"#;

/// A local registry in `<home>/registry` holding `dep 0.1.0` (packaged by cargo), the project's
/// `.cargo/config.toml` that replaces crates.io with it, and the project's `Cargo.lock`.
fn cargo_registry(home: &Path) -> (String, String) {
    use sha2::Digest;
    let rustup = rustup_home();
    let scratch = tempfile::tempdir().unwrap();
    let cargo_home = scratch.path().join("cargo");
    let target = scratch.path().join("target");
    let env = [
        (rustup.0.as_str(), rustup.1.as_str()),
        ("CARGO_HOME", cargo_home.to_str().unwrap()),
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
    ];
    let dep = scratch.path().join("dep");
    write(&dep.join("Cargo.toml"), DEP_TOML);
    write(
        &dep.join("src/lib.rs"),
        "pub fn even(n: u32) -> bool {\n    n % 2 == 0\n}\n",
    );
    tool(
        &dep,
        "cargo",
        &["package", "--no-verify", "--allow-dirty", "--offline", "-q"],
        &env,
    );
    let registry = home.join("registry");
    let crate_file = target.join("package/dep-0.1.0.crate");
    let bytes = std::fs::read(&crate_file).unwrap();
    write(&registry.join("dep-0.1.0.crate"), "");
    std::fs::write(registry.join("dep-0.1.0.crate"), &bytes).unwrap();
    let sum: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    write(
        &registry.join("index/3/d/dep"),
        &format!(
            "{{\"name\":\"dep\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\"features\":{{}},\"yanked\":false}}\n"
        ),
    );
    let config = format!(
        "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nlocal-registry = \"{}\"\n",
        registry.display()
    );
    let proj = scratch.path().join("proj");
    write(&proj.join("Cargo.toml"), PROJ_TOML);
    write(&proj.join("src/lib.rs"), PROJ_LIB);
    write(&proj.join(".cargo/config.toml"), &config);
    tool(
        &proj,
        "cargo",
        &["generate-lockfile", "--offline", "-q"],
        &env,
    );
    let lock = std::fs::read_to_string(proj.join("Cargo.lock")).unwrap();
    (config, lock)
}

/// Agent A poisons the extracted sources cargo keeps (`registry/src`) wherever it can reach
/// them; `closegate gc` drops the warm workspaces (the documented way to start clean); agent
/// B's broken `double` is checked with `--rerun`. Under an older `init`'s shared `CARGO_HOME`
/// it is VERIFIED (the attack survives gc and --rerun); under today's guess (`CARGO_HOME`
/// private to the workspace) B fails and an honest agent C passes.
#[test]
fn a_poisoned_cargo_registry_never_makes_broken_code_verified() {
    let old = shared_config(
        "CARGO_HOME=\"$HOME\"/.cache/closegate/0123456789abcdef/cargo cargo test --locked",
        "cargo",
    ) + "keep = [\"target/\"]\n";
    for config in [Some(old.as_str()), None] {
        // The registry lives in the scene's home, where the checks see it (read-only).
        let s = Project::scene();
        let (cargo_config, lock) = cargo_registry(&s.home.path().canonicalize().unwrap());
        let files = [
            ("Cargo.toml", PROJ_TOML),
            ("Cargo.lock", lock.as_str()),
            ("src/lib.rs", PROJ_LIB),
            (".cargo/config.toml", cargo_config.as_str()),
            (".gitignore", "target/\n"),
        ];
        let p = Project::new(s, &files, config, vec![rustup_home()]);
        let a = p.agent("a", &[("tests/poison.rs", CARGO_POISON)]);
        let (_, report) = p.check(&a, &[]);
        assert_eq!(
            report["checks"][0]["exit_code"], 0,
            "A's poison ran: {report:#}"
        );
        let (code, out, err) = p.run(&p.s.root(), &["gc"]);
        assert_eq!(code, 0, "{out}{err}");
        // A clean start, as on a new machine: no base snapshot (gc keeps the newest of each
        // check), so B's check first rebuilds one on the base from whatever cache it reads.
        let cache = crate::fixture::cache_root(&p.s.fx.git_dir());
        std::fs::remove_dir_all(&cache).unwrap();
        let broken = PROJ_LIB.replace("n * 2", "n * 2 + 1");
        let b = p.agent("b", &[("src/lib.rs", &broken)]);
        let (code, report) = p.check(&b, &["--rerun"]);
        match config {
            Some(_) => assert_eq!(code, 0, "control: the shared cache made B pass: {report:#}"),
            None => {
                assert_eq!(code, 1, "B's broken code: {report:#}");
                let c = p.agent(
                    "c",
                    &[(
                        "src/triple.rs",
                        "pub fn triple(n: u32) -> u32 {\n    n * 3\n}\n",
                    )],
                );
                let (code, report) = p.check(&c, &[]);
                assert_eq!(code, 0, "honest C after the poisoning: {report:#}");
            }
        }
    }
}

// ---- Python with a C extension ----

const PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=61\"]\n\
    build-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"cdemo\"\nversion = \"0.1\"\n\n\
    [tool.setuptools]\npackage-dir = {\"\" = \"src\"}\npackages = [\"cdemo\"]\n";
/// The extension is optional, as markupsafe's is: when it does not compile, setuptools warns and
/// the package installs without it.
const SETUP_PY: &str = "from setuptools import Extension, setup\n\n\
    setup(ext_modules=[Extension(\"cdemo._speed\", [\"src/cdemo/_speed.c\"], optional=True)])\n";
/// The pure-Python fallback markupsafe has too: without the compiled part, `add` still works.
const INIT_PY: &str = "def add(a, b):\n    try:\n        from cdemo import _speed\n    \
    except ImportError:\n        return a + b\n    return _speed.add(a, b)\n";
const SPEED_C: &str = r#"#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"#;
/// Like markupsafe's suite: the compiled part's tests are skipped when it cannot be imported.
const TEST_PY: &str = "import pytest\n\nfrom cdemo import add\n\n\ndef test_add():\n    \
    assert add(2, 3) == 5\n\n\ndef test_speed():\n    speed = pytest.importorskip(\"cdemo._speed\")\n    \
    assert speed.add(2, 3) == 5\n";

/// Whether PyPI answers: the guessed check installs pytest and setuptools from it (as the corpus
/// projects do); without it this test cannot run.
fn pypi_reachable() -> bool {
    let dir = tempfile::tempdir().unwrap();
    Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--timeout",
            "15",
            "--retries",
            "0",
        ])
        .arg("--dest")
        .arg(dir.path())
        .arg("iniconfig")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// SPEC §26.4: agent B breaks the C extension of a Python project. Under a check whose kept
/// `.venv` is keyed on the manifests only (an older `init`'s build logic; its pip cache is the
/// workspace's here, the attack is not the cache's) the extension is never built again once an
/// earlier check built it: the reset removed the build, its test is skipped, and B is VERIFIED
/// (the control: markupsafe's broken `_speedups.c` landed that way) — and `validate --run`, on a
/// base whose check skipped the compiled part's test the same way, says so. Under today's guess
/// the extension is built in every check: B fails, an honest agent C passes. The two scenes run
/// side by side (each installs pytest and setuptools from PyPI into its own workspaces).
#[test]
fn a_broken_c_extension_is_built_and_fails_in_every_check() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    if !pypi_reachable() {
        eprintln!("skipped: PyPI cannot be reached (the guessed check installs pytest from it)");
        return;
    }
    let stamp_only = "export PIP_CACHE_DIR=\"$PWD\"/.closegate-cache/pip; [ -x .venv/bin/python ] || python3 -m venv .venv; { cat pyproject.* setup.* requirements*.txt 2>/dev/null; } > .venv/.closegate-deps.new; cmp -s .venv/.closegate-deps.new .venv/.closegate-deps || { .venv/bin/python -m pip install -q --disable-pip-version-check -e . pytest && mv .venv/.closegate-deps.new .venv/.closegate-deps; } && .venv/bin/python -m pytest -q -rs -p no:cacheprovider";
    let old = format!(
        "[[checks]]\nname = \"test\"\nrun = '{stamp_only}'\ntimeout_s = 600\nkeep = [\".venv/\", \".closegate-cache/\"]\n"
    );
    let control = std::thread::spawn(move || extension_scene(Some(&old)));
    extension_scene(None);
    if let Err(panic) = control.join() {
        std::panic::resume_unwind(panic);
    }
}

/// One scene of [`a_broken_c_extension_is_built_and_fails_in_every_check`]: `config`, or what
/// `init` guesses.
fn extension_scene(config: Option<&str>) {
    let files = [
        ("pyproject.toml", PYPROJECT),
        ("setup.py", SETUP_PY),
        ("src/cdemo/__init__.py", INIT_PY),
        ("src/cdemo/_speed.c", SPEED_C),
        ("tests/test_cdemo.py", TEST_PY),
        (".gitignore", "build/\n*.egg-info/\n*.so\n"),
    ];
    let p = Project::new(Project::scene(), &files, config, Vec::new());
    // An honest agent first: today's check builds the extension in its own run and passes.
    // Under the old configuration the base's run built it (into the base snapshot, SPEC
    // §27.2), but the reset of every later run removes the untracked build and the stamp skips
    // the install: the compiled part's test is skipped in every run on the snapshot, the
    // census's base run included.
    let c = p.agent("c", &[("src/cdemo/extra.py", "X = 1\n")]);
    let (code, report) = p.check(&c, &[]);
    let output = report["checks"][0]["output"].to_string();
    if config.is_none() {
        assert_eq!(code, 0, "honest C: {report:#}");
        assert!(output.contains("2 passed"), "{report:#}");
    } else {
        assert!(
            output.contains("1 passed, 1 skipped"),
            "control C: {output}"
        );
    }
    let broken = SPEED_C.replace("a + b);", "a - b);");
    let b = p.agent("b", &[("src/cdemo/_speed.c", &broken)]);
    let (code, report) = p.check(&b, &[]);
    let output = report["checks"][0]["output"].to_string();
    if config.is_none() {
        assert_eq!(code, 1, "B's broken extension: {report:#}");
        // Both tests fail, the compiled part's too: the excerpt is their own output (SPEC
        // §27.2), one block per failing test.
        for test in ["failing test: test_add", "failing test: test_speed"] {
            assert!(output.contains(test), "{output}");
        }
        // D's extension does not even compile: the optional build falls back to pure Python, and
        // the tests alone would pass (its own test skipped); the extension must import.
        let d = p.agent(
            "d",
            &[("src/cdemo/_speed.c", &SPEED_C.replace("a + b);", "a +);"))],
        );
        let (code, report) = p.check(&d, &[]);
        let output = report["checks"][0]["output"].to_string();
        assert_eq!(code, 1, "D's extension that does not compile: {report:#}");
        assert!(
            output.contains("No module named 'cdemo._speed'"),
            "{output}"
        );
        return;
    }
    // The old configuration skips the build: B's own check passes with the compiled part's
    // test skipped (the control: why `init` no longer writes it), and `validate --run`, on the
    // base whose run skips that test the same way, says so.
    assert_eq!(
        report["checks"][0]["exit_code"], 0,
        "control: B's check passed with its extension unbuilt: {report:#}"
    );
    assert!(output.contains("1 passed, 1 skipped"), "{output}");
    p.s.fx
        .commit("main", &[("README.md", Some("moved\n"))], "move");
    let (code, out, err) = p.run(&p.s.root(), &["validate", "--run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "skipped 1 test because a compiled part was missing (the project builds compiled \
             extensions: setup.py names `ext_modules`)"
        ),
        "{out}"
    );
    assert!(out.contains("could not import 'cdemo._speed'"), "{out}");
}

/// A configuration an older `init` wrote shares cargo's, Go's and pip's caches through
/// `writable`: `validate` warns about each (naming the check, the path and the remedy) and still
/// exits 0; the configuration `init` writes now, and npm's cache under `npm ci`, get none.
#[test]
fn validate_warns_about_a_shared_cache_its_tool_does_not_verify() {
    let old = format!(
        "{}{}",
        shared_config(
            "CARGO_HOME=\"$HOME\"/.cache/closegate/0123456789abcdef/cargo cargo test",
            "cargo"
        ),
        "\n[[checks]]\nname = \"npm\"\nrun = \"npm ci && npm test\"\nwritable = [\"~/.cache/closegate/0123456789abcdef/npm\"]\n"
    );
    let p = Project::new(
        Project::scene(),
        &[("Cargo.toml", PROJ_TOML)],
        Some(&old),
        Vec::new(),
    );
    let (code, out, err) = p.run(&p.s.root(), &["validate"]);
    assert_eq!(code, 0, "{out}{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains(
            "checks[0].writable: `~/.cache/closegate/0123456789abcdef/cargo` shares cargo's \
             registry and git checkouts between every agent's checks of `test`"
        ),
        "{err}"
    );
    assert!(warnings[0].contains("closegate init --force"), "{err}");

    let p = Project::new(
        Project::scene(),
        &[("Cargo.toml", PROJ_TOML)],
        None,
        Vec::new(),
    );
    let (code, out, err) = p.run(&p.s.root(), &["validate"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("warning:"), "{err}");
}
