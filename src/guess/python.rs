//! Python (SPEC §17, §27.2): a virtual environment `.venv` in the checkout, the project
//! installed into it editable from the checkout itself with its test dependencies, then pytest.
//!
//! - **Declared dependencies are fetched in `prepare`; the tests run offline.** When the files
//!   say what the tests need without running anything — a `[project]` table whose dependencies
//!   are not `dynamic`, its test extras, the test `[dependency-groups]`, requirement files that
//!   name only releases on the package index — `prepare` reads them ([`DECLARED`], closegate's
//!   own few lines of Python, run as the files are at that commit) and installs exactly those
//!   and the build requirements, wheels only (`--only-binary :all:`: no source distribution is
//!   built, so no code of the project or its dependencies runs), into a fresh `.venv`, once per
//!   change of the files that name them. `run` has no network: it installs the project itself
//!   (`--no-index --no-deps --no-build-isolation -e .`), which runs its build backend, there and
//!   only there.
//! - **Otherwise the install keeps the network**, in `run`: pip learns the dependencies of a
//!   `setup.py` without a `[project]` table, or of a `dynamic` list, only by running the
//!   project's build backend, which is the project's own code.
//! - A project with compiled extensions is built again in every check, and each extension it
//!   names must then import: an optional extension that failed to compile falls back to pure
//!   code silently, and its tests would only be skipped.

use std::path::Path;

use super::compiled::{compiled_python, extension_modules, pyproject, python_build_requires};
use super::{Guess, Project, keep_with_private, private_cache};
use crate::shell::shell_word;

/// pip's install, quiet.
const PIP: &str = ".venv/bin/python -m pip install -q --disable-pip-version-check";

/// pytest, naming every test for the census, writing no cache into the checkout.
const PYTEST: &str = ".venv/bin/python -m pytest -v -rs -p no:cacheprovider";

/// The comparison of the stamp just made with the one a step left in `.venv` (file name after).
const SAME: &str = "cmp -s \"$TMPDIR\"/closegate-deps .venv/";

/// Prints the requirements the files declare, one per line, as they are at the commit; exits
/// non-zero, naming the file, when they do not say (`dynamic`, no `[project]`) or a requirement
/// file names what the package index does not serve (see [`from_index`]). Arguments: `P` (the
/// project's `dependencies`), `E:<extra>` (when the project has it), `G:<group>` (the first of
/// these the project has, `include-group` followed), `R:<file>` (when it exists), or a
/// requirement. A requirement naming the project itself brings its extras instead. The
/// candidates are named, not what `init` found: a project that moves its test dependencies (from
/// `requirements/tests.txt` to a dependency group, say) is read as it is at each commit.
const DECLARED: &str = r#"import os,re,sys,tomllib
a=sys.argv[1:];t={}
if os.path.exists("pyproject.toml"):t=tomllib.load(open("pyproject.toml","rb"))
p=t.get("project")
if "P" in a and p is None:sys.exit("pyproject.toml has no [project] table: only the build backend knows the dependencies")
p=p or {};d=sorted({"dependencies","optional-dependencies"}&set(p.get("dynamic",[])))
if d:sys.exit("pyproject.toml: "+" and ".join(d)+" dynamic: only the build backend knows them")
k=lambda r:re.sub(r"[-_.]+","-",re.match(r"\s*([\w.-]*)",r).group(1)).lower()
me=k(p.get("name","")) or None;x=p.get("optional-dependencies",{});g=t.get("dependency-groups",{});out=[];seen=set()
def add(r):
  if isinstance(r,dict):return walk("I:"+r.get("include-group",""))
  m=re.match(r"\s*[\w.-]*\s*\[(.*?)\]",r)
  if k(r)!=me:return out.append(r)
  for e in (m.group(1).split(",") if m else []):walk("E:"+e.strip())
def lines(f):
  for l in re.sub(r"\\\n","",open(f).read()).splitlines():
    l=re.sub(r"(^|\s)#.*","",l).strip()
    if "file:" in l or not l.startswith(("-i ","--index-url","--extra-index-url")) and (l.startswith(("-",".","/","~")) or re.search("://|@",l)):sys.exit(f+": "+l+": not a requirement from the package index")
    if l:out.append(l)
def walk(s):
  if s in seen:return
  seen.add(s);c,_,n=s.partition(":")
  if s=="P":[add(r) for r in p.get("dependencies",[])]
  elif c=="E":[add(r) for r in x.get(n,[])]
  elif c in("G","I"):
    if c=="I" or n in g and not any(v[:2]=="G:" and v[2:] in g for v in seen-{s}):[add(r) for r in g.get(n,[])]
  elif c=="R":os.path.exists(n) and lines(n)
  else:add(s)
for s in a:walk(s)
print("\n".join(dict.fromkeys(out)))"#;

/// The guessed check: offline after a `prepare` when the files declare the dependencies.
pub(super) fn python(project: &Project<'_>) -> Guess {
    match declared(project) {
        Some(words) => offline(project, &words),
        None => online(project),
    }
}

/// Whether the project itself is installed (it has a build configuration).
fn installable(project: &Project<'_>) -> bool {
    ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .any(|f| project.has(f))
}

/// The arguments of [`DECLARED`] for this project, `None` when its files do not declare what
/// its tests need: installable without a `[project]` table, `dynamic` dependencies, or a
/// requirement file naming what the package index does not serve.
fn declared(project: &Project<'_>) -> Option<Vec<String>> {
    let table = pyproject(project.root);
    let mut words = Vec::new();
    if installable(project) {
        let meta = table.as_ref()?.get("project")?.as_table()?;
        let dynamic = meta.get("dynamic").and_then(|d| d.as_array());
        let computed = dynamic
            .into_iter()
            .flatten()
            .any(|v| matches!(v.as_str(), Some("dependencies" | "optional-dependencies")));
        if computed {
            return None;
        }
        words.push("P".to_string());
        let extras = TEST_NAMES.iter().filter(|n| **n != "dev");
        words.extend(extras.map(|e| format!("E:{e}")));
    }
    words.extend(TEST_NAMES.iter().map(|g| format!("G:{g}")));
    for file in REQUIREMENT_FILES {
        let text = project.read(file).unwrap_or_default();
        if !String::from_utf8_lossy(&text).lines().all(from_index) {
            return None;
        }
        words.push(format!("R:{file}"));
    }
    if installable(project) {
        words.extend(python_build_requires(project.root));
    }
    words.push("pytest".to_string());
    Some(words.iter().map(|w| shell_word(w)).collect())
}

/// Whether a requirement file's line names only releases on the package index (or sets the
/// index): not an editable, a local path, a URL or a nested file, which pip would build or read
/// from elsewhere. [`DECLARED`] applies the same rule as the file is at each commit.
fn from_index(line: &str) -> bool {
    let line = line.split(" #").next().unwrap_or_default();
    let line = line.trim().trim_end_matches('\\').trim_end();
    if line.is_empty() || line.starts_with('#') {
        return true;
    }
    if line.contains("file:") {
        return false;
    }
    let index = ["-i ", "--index-url", "--extra-index-url", "--hash"];
    index.iter().any(|o| line.starts_with(o))
        || !(line.starts_with(['-', '.', '/', '~']) || line.contains("://") || line.contains('@'))
}

/// `prepare` installs the declared dependencies, wheels only, with the network; `run` installs
/// the project itself offline (when it is installable: once per change of its manifests, or in
/// every check when it compiles extensions), then pytest.
fn offline(project: &Project<'_>, words: &[String]) -> Guess {
    let compiled = installable(project) && compiled_python(&|name| project.read(name)).is_some();
    let (newer_pip, as_of) = resolved_as_of(project);
    let stamp = deps_stamp(&as_of);
    let cache = format!("export PIP_CACHE_DIR={}; ", private_cache("pip"));
    let made = format!("{{ {stamp}; }} > \"$TMPDIR\"/closegate-deps; ");
    let reqs = "\"$TMPDIR\"/closegate-reqs.txt";
    let prepare = format!(
        "{cache}{made}{SAME}.closegate-deps || {{ python3 -c {} {} > {reqs} && \
         python3 -m venv --clear .venv && {newer_pip}{PIP}{as_of} --only-binary :all: -r {reqs} \
         && cp \"$TMPDIR\"/closegate-deps .venv/.closegate-deps; }}",
        shell_word(DECLARED),
        words.join(" ")
    );
    let own = format!("{PIP} --no-index --no-deps --no-build-isolation -e .");
    let install = match (installable(project), compiled) {
        (false, _) => String::new(),
        // The extension's sources are not in the stamp: it is built in every check.
        (true, true) => format!("{own} && "),
        (true, false) => format!(
            "{made}{SAME}.closegate-project || {{ {own} && \
             cp \"$TMPDIR\"/closegate-deps .venv/.closegate-project; }} && "
        ),
    };
    let probe = import_probe(project, compiled);
    Guess {
        name: "test",
        run: format!("{cache}{install}{probe}{PYTEST}"),
        prepare: Some(prepare),
        network: false,
        writable: Vec::new(),
        env: Vec::new(),
        keep: keep_with_private(Some(".venv/")),
    }
}

/// The step that imports each extension module the project names, with `&&` after it; empty
/// for a pure-Python project.
fn import_probe(project: &Project<'_>, compiled: bool) -> String {
    let modules = match compiled {
        true => extension_modules(&|name| project.read(name)),
        false => Vec::new(),
    };
    match modules.as_slice() {
        [] => String::new(),
        names => format!(
            ".venv/bin/python -c {} && ",
            shell_word(&format!("import {}", names.join(", ")))
        ),
    }
}

/// The stamp of the files that name the dependencies, with the date they are resolved as of
/// (`as_of` is `--uploaded-prior-to=…` or empty): a new date installs again. It names the files
/// by pattern: a word naming a repository path would put the whole file on surface `ci` (SPEC
/// §4.5), and a dependency added is no graded input.
fn deps_stamp(as_of: &str) -> String {
    let date = as_of
        .strip_prefix(" --uploaded-prior-to=")
        .map_or(String::new(), |d| format!("echo {d}; "));
    format!("{date}cat pyproject.* setup.* *requirements*.txt requirements/*.txt 2>/dev/null")
}

/// The check when the files do not say what the tests need: the install keeps the network, in
/// `run`, once per change of the files that name the dependencies.
fn online(project: &Project<'_>) -> Guess {
    let (reqs, compiled) = python_requirements(project);
    let (stamp, step) = python_install(project, &reqs, compiled);
    let probe = import_probe(project, compiled);
    let run = format!(
        "export PIP_CACHE_DIR={}; [ -x .venv/bin/python ] || python3 -m venv .venv; \
         {{ {stamp}; }} > \"$TMPDIR\"/closegate-deps; {step} && {probe}{PYTEST}",
        private_cache("pip")
    );
    // No `prepare`: pip learns a project's dependencies only by running its build backend
    // (`setup.py`, the metadata hook), which is the project's own code; the install keeps the
    // network.
    Guess {
        name: "test",
        run,
        prepare: None,
        network: true,
        writable: Vec::new(),
        env: Vec::new(),
        keep: keep_with_private(Some(".venv/")),
    }
}

/// The stamp of the dependency manifests and the step that installs when it changed (a fresh
/// environment), else, for a project with compiled extensions, builds it again.
fn python_install(project: &Project<'_>, reqs: &[String], compiled: bool) -> (String, String) {
    let (newer_pip, as_of) = resolved_as_of(project);
    let stamp = deps_stamp(&as_of);
    let pip = format!("{PIP}{as_of}");
    // A change of the stamp starts the environment afresh: a release left from an earlier
    // install satisfies pip and is kept, however far past the date (or gone from the manifest).
    let installed = format!(
        "python3 -m venv --clear .venv && {newer_pip}{pip} {} && \
         cp \"$TMPDIR\"/closegate-deps .venv/.closegate-deps",
        reqs.join(" ")
    );
    let same = "cmp -s \"$TMPDIR\"/closegate-deps .venv/.closegate-deps";
    let step = if compiled {
        // The extension's sources are not in the stamp: it is built in every check, and the
        // build it replaces was removed with the reset (it is untracked). Built with the build
        // requirements installed beside the dependencies (no isolated environment downloaded
        // each time); should that fail, as pip builds by default.
        format!(
            "if {same}; then {pip} --no-deps --no-build-isolation -e . || \
             {pip} --no-deps -e .; else {installed}; fi"
        )
    } else {
        format!("{same} || {{ {installed}; }}")
    };
    (stamp, step)
}

/// How long a base tip may have stood before its unpinned dependencies are resolved as of its
/// date: a year.
const DORMANT_S: i64 = 365 * 24 * 3600;

/// For a project whose base tip is older than [`DORMANT_S`] when `init` runs: the step that
/// brings the virtual environment's pip to one that knows `--uploaded-prior-to` (26 and later),
/// and that option with the tip's date, so its dependencies are the releases its authors last
/// tested with and not whatever has been published since (a test extra asking `mypy~=1.4` gets
/// today's mypy, whose messages its expected output predates). `("", "")` otherwise.
fn resolved_as_of(project: &Project<'_>) -> (String, String) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    match project.tip_time {
        Some(tip) if now - tip > DORMANT_S => (
            ".venv/bin/python -m pip install -q --disable-pip-version-check 'pip>=26' && "
                .to_string(),
            format!(" --uploaded-prior-to={}", crate::date::rfc3339(tip)),
        ),
        _ => (String::new(), String::new()),
    }
}

/// What the install step installs (the project with its test extras, test groups, requirement
/// files, pytest, and for a project with compiled extensions its build requirements), as shell
/// words; and whether the project has compiled extensions.
fn python_requirements(project: &Project<'_>) -> (Vec<String>, bool) {
    let mut reqs: Vec<String> = Vec::new();
    let installable = installable(project);
    let extras = python_extras(project.root);
    if installable {
        match extras.as_slice() {
            [] => reqs.push("-e .".to_string()),
            _ => reqs.push(format!(
                "-e {}",
                shell_word(&format!(".[{}]", extras.join(",")))
            )),
        }
    }
    for group in python_groups(project.root) {
        if !reqs.contains(&group) {
            reqs.push(shell_word(&group));
        }
    }
    for file in REQUIREMENT_FILES {
        if project.has(file) {
            reqs.push(format!("-r {file}"));
        }
    }
    if !reqs.iter().any(|r| r == "pytest") {
        reqs.push("pytest".to_string());
    }
    let compiled = installable && compiled_python(&|name| project.read(name)).is_some();
    if compiled {
        for req in python_build_requires(project.root) {
            let word = shell_word(&req);
            if !reqs.contains(&word) {
                reqs.push(word);
            }
        }
    }
    (reqs, compiled)
}

/// Requirement files projects keep their test dependencies in.
const REQUIREMENT_FILES: [&str; 6] = [
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
];

/// Names under which projects keep their test dependencies.
const TEST_NAMES: [&str; 4] = ["tests", "test", "testing", "dev"];

/// `[project.optional-dependencies]` extras named like test dependencies.
fn python_extras(root: &Path) -> Vec<String> {
    let Some(table) = pyproject(root) else {
        return Vec::new();
    };
    let extras = table
        .get("project")
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(|e| e.as_table());
    TEST_NAMES
        .iter()
        .filter(|n| **n != "dev" && extras.is_some_and(|e| e.contains_key(**n)))
        .map(|n| n.to_string())
        .collect()
}

/// The requirement strings of `[dependency-groups]` (PEP 735) named like test dependencies,
/// `{include-group = …}` followed; pip before 25.1 has no `--group`, so they are named.
fn python_groups(root: &Path) -> Vec<String> {
    let Some(table) = pyproject(root) else {
        return Vec::new();
    };
    let Some(groups) = table.get("dependency-groups").and_then(|g| g.as_table()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut todo: Vec<&str> = TEST_NAMES
        .iter()
        .copied()
        .filter(|n| groups.contains_key(*n))
        .take(1)
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    while let Some(name) = todo.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        for item in groups
            .get(name)
            .and_then(|g| g.as_array())
            .into_iter()
            .flatten()
        {
            match item {
                toml::Value::String(req) if !out.contains(req) => out.push(req.clone()),
                toml::Value::Table(t) => {
                    if let Some(inc) = t.get("include-group").and_then(|v| v.as_str()) {
                        todo.push(inc);
                    }
                }
                _ => {}
            }
        }
    }
    out
}
