//! The parts of a repository one test command may leave out (SPEC §27.4): Go modules nested in
//! the repository (`./...` stops at every `go.mod` below the one it starts from, and the go tool
//! skips folders whose names start with `_` or `.`), modules a `go.work` uses, and the packages
//! of a pnpm, yarn or npm workspace. `init` tests what its guess can reach and names the rest;
//! `validate` names every one no configured check runs.

use globset::GlobBuilder;

/// A file of the tree, read by its repository path (`None`: absent or unreadable).
pub type Read<'a> = &'a dyn Fn(&str) -> Option<Vec<u8>>;

/// Folders no walk enters: installed trees, build outputs and the guess's own caches.
const SKIPPED: [&str; 7] = [
    ".git",
    "node_modules",
    "target",
    "vendor",
    ".venv",
    super::PRIVATE,
    "testdata",
];

/// The Go modules of the tree `files`: every folder holding a `go.mod` (`""` for the root),
/// leaving out test fixtures (`testdata/`) and vendored code.
fn go_modules(files: &[String]) -> Vec<String> {
    let mut dirs: Vec<String> = files
        .iter()
        .filter(|f| !f.split('/').any(|part| SKIPPED.contains(&part)))
        .filter_map(|f| match f.as_str() {
            "go.mod" => Some(String::new()),
            _ => f.strip_suffix("/go.mod").map(str::to_string),
        })
        .collect();
    dirs.sort();
    dirs
}

/// The folders a `go.work` file `uses` (`use ./a` and `use ( ./a ./b )`), without `./`.
fn go_work_uses(text: &str) -> Vec<String> {
    let mut uses = Vec::new();
    let mut block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let words: Vec<&str> = match (block, line.strip_prefix("use")) {
            (true, _) if line == ")" => {
                block = false;
                continue;
            }
            (true, _) => vec![line],
            (false, Some(rest)) if rest.trim() == "(" => {
                block = true;
                continue;
            }
            (false, Some(rest)) if rest.starts_with([' ', '\t']) => vec![rest.trim()],
            _ => continue,
        };
        for word in words.into_iter().filter(|w| !w.is_empty()) {
            let dir = word.trim_matches('"').trim_end_matches('/');
            let dir = match dir {
                "." => "",
                _ => dir.strip_prefix("./").unwrap_or(dir),
            };
            uses.push(dir.to_string());
        }
    }
    uses
}

/// Whether the go tool skips the folder `dir` in every pattern: a part starting with `_` or `.`.
fn go_ignores(dir: &str) -> bool {
    dir.split('/')
        .any(|p| p.starts_with('_') || p.starts_with('.'))
}

/// The Go modules a guess tests (each with its own `go test ./...`, the root's first) and those
/// it leaves out: a nested module in a folder the go tool skips, unless `go.work` uses it.
pub fn go_split(files: &[String], read: Read<'_>) -> (Vec<String>, Vec<String>) {
    let uses = read("go.work")
        .map(|b| go_work_uses(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    let (mut tested, mut left) = (Vec::new(), Vec::new());
    for dir in go_modules(files) {
        if dir.is_empty() || uses.contains(&dir) || !go_ignores(&dir) {
            tested.push(dir);
        } else {
            left.push(dir);
        }
    }
    for dir in uses {
        if !tested.contains(&dir) && files.iter().any(|f| *f == format!("{dir}/go.mod")) {
            tested.push(dir);
        }
    }
    (tested, left)
}

/// Whether a command names the folder `dir` (`cd dir`, `./dir/...`, `-C dir`).
fn names_dir(run: &str, dir: &str) -> bool {
    run.split(|c: char| c.is_whitespace() || "()&;|'\"=".contains(c))
        .map(|w| {
            w.trim_start_matches("./")
                .trim_end_matches("/...")
                .trim_end_matches('/')
        })
        .any(|w| w == dir)
}

/// The workspace packages of a Node project: the folders `pnpm-workspace.yaml`'s `packages`
/// or `package.json`'s `workspaces` name (globs; `!` excludes) that hold a `package.json`.
fn node_packages(files: &[String], read: Read<'_>) -> Vec<String> {
    let mut globs = read("pnpm-workspace.yaml")
        .map(|b| pnpm_packages(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    if let Some(json) =
        read("package.json").and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    {
        let list = match &json["workspaces"] {
            serde_json::Value::Array(a) => a.clone(),
            other => other["packages"].as_array().cloned().unwrap_or_default(),
        };
        globs.extend(list.iter().filter_map(|v| v.as_str().map(str::to_string)));
    }
    let build = |g: &str| {
        GlobBuilder::new(g.trim_start_matches("./").trim_end_matches('/'))
            .literal_separator(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher())
    };
    let (not, yes): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.starts_with('!'));
    let yes: Vec<_> = yes.iter().filter_map(|g| build(g)).collect();
    let not: Vec<_> = not.iter().filter_map(|g| build(&g[1..])).collect();
    let mut dirs: Vec<String> = files
        .iter()
        .filter(|f| !f.split('/').any(|p| p == "node_modules"))
        .filter_map(|f| f.strip_suffix("/package.json"))
        .filter(|d| yes.iter().any(|g| g.is_match(d)) && !not.iter().any(|g| g.is_match(d)))
        .map(str::to_string)
        .collect();
    dirs.sort();
    dirs
}

/// The `packages:` list of a `pnpm-workspace.yaml` (a block list of plain or quoted strings).
fn pnpm_packages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.split(" #").next().unwrap_or_default().trim_end();
        if !line.starts_with([' ', '\t', '-']) {
            inside = trimmed.trim() == "packages:";
            continue;
        }
        if let Some(item) = inside.then(|| trimmed.trim().strip_prefix('-')).flatten() {
            out.push(item.trim().trim_matches(['\'', '"']).to_string());
        }
    }
    out
}

/// Words that run a script in every workspace package.
const RECURSIVE: [&str; 9] = [
    " -r ",
    "--recursive",
    "lerna run",
    "workspaces run",
    "--workspaces",
    " -ws",
    "workspaces foreach",
    "turbo run",
    "nx run-many",
];

/// One line per module or workspace package that none of `runs` (the checks' `run` and
/// `prepare` commands) tests, saying why, for `init` and `validate` to print.
pub fn left_out(files: &[String], read: Read<'_>, runs: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if runs.iter().any(|r| r.contains("go test")) {
        for dir in go_modules(files).into_iter().filter(|d| !d.is_empty()) {
            if !runs.iter().any(|r| names_dir(r, &dir)) {
                let why = match go_ignores(&dir) {
                    true => "the go tool skips folders whose names start with `_` or `.`",
                    false => "`go test ./...` stops at every nested `go.mod`",
                };
                out.push(format!(
                    "Go module `{dir}` ({dir}/go.mod) is tested by no check: {why}; add \
                     `(cd {dir} && go test ./...)` to a check's `run` if it should be tested"
                ));
            }
        }
    }
    let root_test = read("package.json")
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|j| j["scripts"]["test"].as_str().map(|s| format!(" {s} ")))
        .unwrap_or_default();
    let runs_root = runs
        .iter()
        .any(|r| r.contains(" test") || r.contains("test "));
    let recursive = |s: &str| RECURSIVE.iter().any(|w| s.contains(w));
    if (runs_root && recursive(&root_test)) || runs.iter().any(|r| recursive(r)) {
        return out;
    }
    for dir in node_packages(files, read) {
        let script = read(&format!("{dir}/package.json"))
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|j| j["scripts"]["test"].is_string());
        let named = runs.iter().any(|r| names_dir(r, &dir)) || names_dir(&root_test, &dir);
        if script && !named {
            out.push(format!(
                "workspace package `{dir}` has a test script no check runs: the root's `test` \
                 does not run every package (`pnpm -r test`, `yarn workspaces run test`, `npm \
                 test --workspaces`, `lerna run test`)"
            ));
        }
    }
    out
}

/// The repository paths under `root` a guess reads (regular files, the [`SKIPPED`] folders and
/// symbolic links left out), at most 20 000, sorted.
pub fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            match entry.file_type() {
                Ok(t) if t.is_dir() && !SKIPPED.contains(&name.as_str()) => {
                    todo.push((entry.path(), path))
                }
                Ok(t) if t.is_file() && out.len() < 20_000 => out.push(path),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_work_uses_both_forms() {
        let text = "go 1.22\n\nuse ./a\nuse (\n\t./b // the b module\n\t\"./c/\"\n\t.\n)\n";
        assert_eq!(go_work_uses(text), ["a", "b", "c", ""]);
    }

    #[test]
    fn pnpm_packages_reads_the_block_list() {
        let text = "packages:\n  - packages/*\n  - 'apps/*' # apps\n  - \"!**/test/**\"\n\nminimumReleaseAge: 3\n";
        assert_eq!(pnpm_packages(text), ["packages/*", "apps/*", "!**/test/**"]);
    }

    #[test]
    fn names_dir_reads_cd_and_patterns() {
        assert!(names_dir("(cd _tools && go test ./...)", "_tools"));
        assert!(names_dir("go test ./... ./sub/...", "sub"));
        assert!(!names_dir("go test ./...", "sub"));
    }
}
