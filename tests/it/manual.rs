//! The manual (README.md and the pages under docs/) kept in step with the code: the
//! configuration reference names every key the parsers accept and nothing else, its examples
//! parse, the example status documents lint clean; every page is reachable from README, no
//! relative link between pages is broken, and no page cites the contract document.

use std::collections::BTreeSet;
use std::path::Path;

use closegate::config::{CHECK_KEYS, Config, INTEGRITY_KEYS, SANDBOX_KEYS, TOP_KEYS};

use crate::fixture::{closegate_stdin, parts};

/// The manual's pages: README.md first, then every `docs/*.md` by name, with their text.
pub fn pages() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    names.sort();
    names.insert(0, "README.md".to_string());
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

/// The whole manual as one text (README.md, then docs/*.md): the sections, tables and blocks
/// the tests below hold to the code may sit on any page.
pub fn readme() -> String {
    let texts: Vec<String> = pages().into_iter().map(|(_, text)| text).collect();
    texts.join("\n")
}

/// The README text between `<!-- NAME:start -->` and `<!-- NAME:end -->`.
pub fn section(readme: &str, name: &str) -> String {
    let start = format!("<!-- {name}:start -->");
    let end = format!("<!-- {name}:end -->");
    let from = readme
        .find(&start)
        .unwrap_or_else(|| panic!("README has no {start}"))
        + start.len();
    let to = from
        + readme[from..]
            .find(&end)
            .unwrap_or_else(|| panic!("README has no {end}"));
    readme[from..to].to_string()
}

/// The rows of the first markdown table in `text` (header and rule dropped), cells trimmed.
pub fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// A cell's text between its first pair of backquotes.
fn code(cell: &str) -> &str {
    let start = cell.find('`').expect(cell) + 1;
    let end = start + cell[start..].find('`').expect(cell);
    &cell[start..end]
}

/// The fenced code blocks (```lang … ```) of `text`, with their language.
pub fn fenced(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.to_string(), String::new())),
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

fn list(keys: &str) -> impl Iterator<Item = String> + '_ {
    keys.split(',')
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
}

#[test]
fn config_reference_names_every_key_the_parser_accepts() {
    let rows = table_rows(&section(&readme(), "config-keys"));
    let documented: BTreeSet<String> = rows.iter().map(|r| code(&r[0]).to_string()).collect();
    let mut accepted: BTreeSet<String> = list(TOP_KEYS).collect();
    accepted.extend(list(CHECK_KEYS).map(|k| format!("checks.{k}")));
    accepted.extend(list(SANDBOX_KEYS).map(|k| format!("sandbox.{k}")));
    accepted.insert("protected.<surface>".into());
    accepted.insert("protected.policy.<surface>".into());
    accepted.insert("protected.integrity.<surface>".into());
    accepted.extend(list(INTEGRITY_KEYS).map(|k| format!("protected.integrity.{k}")));
    assert_eq!(
        documented, accepted,
        "README's configuration reference and src/config.rs differ"
    );
    for row in &rows {
        assert_eq!(row.len(), 4, "{row:?}");
        let key = code(&row[0]);
        let example = code(&row[3]);
        let leaf = key.rsplit('.').next().unwrap();
        if !leaf.starts_with('<') {
            assert!(
                example.contains(leaf),
                "the example of `{key}` does not use it: {example}"
            );
        }
        if let Err(e) = Config::parse(example, "README") {
            panic!("the example of `{key}` does not parse: {example}: {e:#}");
        }
    }
}

#[test]
fn contract_reference_names_every_key_the_parser_accepts() {
    let rows = table_rows(&section(&readme(), "contract-keys"));
    let documented: BTreeSet<String> = rows.iter().map(|r| code(&r[0]).to_string()).collect();
    let accepted: BTreeSet<String> = list(closegate::contract::KEYS).collect();
    assert_eq!(
        documented, accepted,
        "README's contract reference and src/contract.rs differ"
    );
    for row in &rows {
        let (key, example) = (code(&row[0]), code(&row[3]));
        assert!(example.starts_with(&format!("{key} = ")), "{row:?}");
        if let Err(e) = closegate::contract::parse(example.as_bytes()) {
            panic!("the example of `{key}` does not parse: {example}: {e}");
        }
    }
}

#[test]
fn readme_configuration_examples_parse() {
    let readme = readme();
    let blocks = fenced(&section(&readme, "config-example"));
    assert_eq!(blocks.len(), 1);
    let config = Config::parse(&blocks[0].1, "README").unwrap();
    assert_eq!(config.checks.len(), 2);
    let tests = config.surfaces.iter().find(|s| s.name == "tests").unwrap();
    assert_eq!(tests.policy, closegate::config::SurfacePolicy::Modify);
    let blocks = fenced(&section(&readme, "contract-example"));
    assert_eq!(blocks.len(), 1);
    closegate::contract::parse(blocks[0].1.as_bytes()).unwrap();
}

#[test]
fn readme_status_documents_lint_clean() {
    let blocks = fenced(&section(&readme(), "states"));
    let mut states = BTreeSet::new();
    for (lang, doc) in &blocks {
        assert_eq!(lang, "markdown");
        let out = closegate_stdin(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &["lint", "-", "--format", "json"],
            Some(doc.as_bytes()),
        );
        let (code, stdout, stderr) = parts(&out);
        let report: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
        assert_eq!(code, 0, "{doc}\n{report}");
        assert_eq!(report["findings"], serde_json::json!([]), "{doc}\n{report}");
        let state = report["state"].as_str().unwrap().to_string();
        let has_close = doc.lines().any(|l| l.starts_with("CLOSE-OK · "));
        let returned = matches!(
            state.as_str(),
            "close-ok" | "stop-2-ready" | "closed-without-merge"
        );
        assert_eq!(
            has_close, returned,
            "{state}: a returned state ends in its close line"
        );
        assert!(states.insert(state), "one document per state");
    }
    let all = [
        "blocked",
        "close-ok",
        "closed-without-merge",
        "in-progress",
        "stop-2-ready",
    ];
    assert_eq!(
        states,
        all.iter().map(|s| s.to_string()).collect(),
        "one document per state word"
    );
}

/// Every field of a JSON value as a dotted path (`checks[].name`, `approval.by`), objects and
/// arrays of objects walked to the end.
fn fields(value: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    let serde_json::Value::Object(map) = value else {
        return;
    };
    for (key, value) in map {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        out.insert(path.clone());
        match value {
            serde_json::Value::Array(items) => {
                for item in items {
                    fields(item, &format!("{path}[]"), out);
                }
            }
            serde_json::Value::Object(_) => fields(value, &path, out),
            _ => {}
        }
    }
}

fn documented(name: &str) -> BTreeSet<String> {
    table_rows(&section(&readme(), name))
        .iter()
        .map(|r| code(&r[0]).to_string())
        .collect()
}

fn json_out(dir: &Path, args: &[&str]) -> serde_json::Value {
    let (_, out, err) = parts(&crate::fixture::closegate(dir, args));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"))
}

#[test]
fn report_fields_are_documented() {
    let mut seen = BTreeSet::new();
    // A return that edits a test and declares a missing artifact: findings with a line and a
    // path, artifacts, protected changes, a check.
    let s = crate::approve::pending();
    let doc = s.wt.join("_EXEC_STATUS.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(
        &doc,
        text.replace("- artifacts:\n", "- artifacts:\n  - docs/x.md\n"),
    )
    .unwrap();
    let report = json_out(&s.wt, &["check", "--no-record", "--format", "json"]);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["line"].is_u64()),
        "{report}"
    );
    fields(&report, "", &mut seen);
    // The same return approved: the approval object.
    let s = crate::approve::pending();
    let (code, out, err) = parts(&crate::fixture::closegate(
        &s.wt,
        &["approve", "--yes", "--by", "Ada"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    let report = json_out(&s.wt, &["check", "--format", "json"]);
    assert!(report["approval"].is_object(), "{report}");
    fields(&report, "", &mut seen);
    // A check failing on the commit and on the base (SPEC §23): `red_on_base`.
    let s = crate::teardown::Scene::honest_return_with(Some(
        "[[checks]]\nname = \"red\"\nrun = \"exit 1\"\ntimeout_s = 60\n",
    ));
    let report = json_out(&s.wt, &["check", "--no-record", "--format", "json"]);
    assert_eq!(report["checks"][0]["red_on_base"], true, "{report}");
    fields(&report, "", &mut seen);
    // A check whose runner closegate reads (SPEC §26.4): the `census` object.
    let s = crate::teardown::Scene::honest_return_with(Some(
        "[[checks]]\nname = \"tap\"\nrun = \"echo ok 1 - a; echo 1..1\"\ncensus = \"tap\"\ntimeout_s = 60\n",
    ));
    let report = json_out(&s.wt, &["check", "--no-record", "--format", "json"]);
    assert!(report["checks"][0]["census"].is_object(), "{report}");
    fields(&report, "", &mut seen);
    // An overlay that fails only because test code moved (SPEC §26.4): inconclusive.
    let (_, report) = crate::inline_tests::moved_out_of_reach("");
    assert!(
        report["integrity"]["base_tests_inconclusive"].is_string(),
        "{report}"
    );
    fields(&report, "", &mut seen);
    assert_eq!(
        seen,
        documented("report-fields"),
        "README's report fields and the report differ"
    );
}

#[test]
fn board_fields_are_documented() {
    let s = crate::approve::pending();
    let board = json_out(&s.fx.root(), &["board", "--json", "--tree"]);
    let mut seen = BTreeSet::new();
    fields(&board, "", &mut seen);
    assert_eq!(
        seen,
        documented("board-fields"),
        "README's board fields and `board --json --tree` differ"
    );
}

#[test]
fn record_fields_are_documented() {
    use crate::fixture::{closegate, git};
    let s = crate::approve::pending();
    let run = |dir: &Path, args: &[&str]| parts(&closegate(dir, args));
    run(&s.wt, &["check"]);
    // A refused approval (wrong commit), then a real one, then the teardown.
    run(
        &s.wt,
        &["approve", "--yes", "--by", "Ada", "--commit", "0000000"],
    );
    run(
        &s.wt,
        &["approve", "--yes", "--by", "Ada", "--note", "fine"],
    );
    let report = s.fx.tmp.path().join("report.txt");
    std::fs::write(&report, "VERIFIED: done\n").unwrap();
    run(
        &s.fx.root(),
        &[
            "guard",
            report.to_str().unwrap(),
            "--worktree",
            s.wt.to_str().unwrap(),
        ],
    );
    std::fs::write(&report, "all in\n@signal done\n").unwrap();
    run(
        &s.fx.root(),
        &[
            "signal",
            report.to_str().unwrap(),
            "--worktree",
            s.wt.to_str().unwrap(),
        ],
    );
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(code, 0, "{out}{err}");
    // The hook refuses to delete an agent branch that never passed.
    s.fx.commit("agent/other", &[("src/o.rs", Some("o\n"))], "other");
    run(&s.fx.root(), &["hook", "install"]);
    let out = crate::fixture::git_output(&s.fx.root(), &["branch", "-D", "agent/other"]);
    assert!(!out.status.success());
    git(&s.fx.root(), &["status", "--short"]);

    let lines = crate::teardown::audit(&s.fx);
    let events: BTreeSet<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    let all = ["approve", "check", "guard", "hook", "signal", "teardown"];
    assert_eq!(
        events,
        all.into_iter().collect(),
        "one record of every event"
    );
    let documented = documented("record-fields");
    for line in &lines {
        let map = line.as_object().unwrap();
        for key in map.keys() {
            assert!(
                documented.contains(key),
                "record field `{key}` is not in README's table: {line}"
            );
        }
    }
    let entries = lines
        .iter()
        .filter_map(|l| l["checks"].as_array())
        .flatten();
    let table = section(&readme(), "record-fields");
    let checks_row = table
        .lines()
        .find(|l| l.starts_with("| `checks` |"))
        .unwrap();
    for entry in entries {
        for key in entry.as_object().unwrap().keys() {
            assert!(
                checks_row.contains(&format!("`{key}`")),
                "check entry field `{key}` undocumented"
            );
        }
    }
}

/// Run the README's block holding `needle` (a fenced block, or for `run: |` YAML its script
/// lines) with `sh` in `cwd`, `closegate` first on `PATH`, and `env` set.
fn run_readme_block(
    needle: &str,
    cwd: &Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (i32, String, String) {
    let readme = readme();
    // The quick start is run on its own (quick_start_reaches_verified_on_a_real_project).
    let quick = section(&readme, "quickstart");
    let (_, body) = fenced(&readme)
        .into_iter()
        .find(|(_, body)| body.contains(needle) && !quick.contains(body.as_str()))
        .unwrap_or_else(|| panic!("no README block holds {needle:?}"));
    let script = match body.find("run: |") {
        Some(at) => body[at + "run: |".len()..]
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n"),
        None => body,
    };
    let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&script)
        .arg("readme-block")
        .args(args)
        .current_dir(cwd);
    crate::fixture::hermetic(&mut cmd, cwd);
    cmd.env("PATH", path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    parts(&cmd.output().unwrap())
}

#[test]
fn readme_close_block_runs_as_written() {
    let s = crate::teardown::Scene::honest_return();
    let tip = s.fx.commit(
        "agent/x",
        &[("src/parse.rs", Some("pub fn parse() {}\n"))],
        "parse stub",
    );
    s.fx.checkout(&s.wt);
    std::fs::remove_file(s.wt.join("_EXEC_STATUS.md")).unwrap();
    std::fs::write(
        s.wt.join("src/parse.rs"),
        "pub fn parse(s: &str) -> usize { s.len() }\n",
    )
    .unwrap();
    let (code, out, err) = run_readme_block("closegate close --abstract", &s.wt, &[], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("VERIFIED")), "{out}");
    let doc = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    assert!(doc.contains("  - src/parse.rs"), "{doc}");
    assert_ne!(
        s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(),
        tip,
        "committed"
    );
}

#[test]
fn readme_coordinator_script_runs_as_written() {
    let s = crate::teardown::Scene::honest_return();
    let dir = s.fx.tmp.path();
    std::fs::write(
        dir.join("agent-final-message.txt"),
        "VERIFIED: added x\n\n@signal done\n",
    )
    .unwrap();
    let wt = s.wt.to_str().unwrap();
    let (code, out, err) =
        run_readme_block("after the agent in $WT returns", dir, &[("WT", wt)], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!s.wt.exists(), "VERIFIED: torn down: {out}{err}");
    // A return the gate refuses is sent back, nothing torn down.
    let s = crate::approve::pending();
    let wt = s.wt.to_str().unwrap();
    let (code, out, err) =
        run_readme_block("after the agent in $WT returns", dir, &[("WT", wt)], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("needs a human: closegate approve"), "{out}");
    assert!(s.wt.exists());
}

#[test]
fn readme_key_hook_guard_signal_and_agent_blocks_run_as_written() {
    let s = crate::teardown::Scene::honest_return();
    let root = s.fx.root();
    let (code, out, err) = run_readme_block("closegate key init", &root, &[], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        root.join("closegate/record.key").is_file(),
        "XDG_CONFIG_HOME is the hermetic home"
    );
    let (code, out, err) = run_readme_block("closegate hook install --force", &root, &[], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !s.fx.git_dir().join("hooks/reference-transaction").exists(),
        "uninstalled last"
    );

    let wt = s.wt.to_str().unwrap();
    std::fs::write(
        s.wt.join("report.txt"),
        "VERIFIED: added x, proven by the smoke check\n",
    )
    .unwrap();
    std::fs::write(s.wt.join("message.txt"), "added x\n@signal done\n").unwrap();
    git_exclude(
        &s.wt,
        &["report.txt", "message.txt", "shown-to-the-user.txt"],
    );
    let (code, out, err) =
        run_readme_block("closegate guard report.txt", &s.wt, &[("WT", wt)], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(s.wt.join("shown-to-the-user.txt")).unwrap(),
        "added x\n"
    );

    // The stop-hook script: a false "done" is refused with exit 2 and the reason on stderr.
    let message = s.fx.tmp.path().join("final.txt");
    std::fs::write(&message, "VERIFIED: all done\n\n@signal done\n").unwrap();
    let m = message.to_str().unwrap();
    let env = [("AGENT_WORKTREE", wt)];
    let (code, out, err) = run_readme_block("stop hook: $1 is the file", &root, &env, &[m]);
    assert_eq!(code, 0, "an honest done passes: {out}{err}");
    std::fs::write(&message, "VERIFIED: all done\n\n@signal no_op\n").unwrap();
    let (code, out, err) = run_readme_block("stop hook: $1 is the file", &root, &env, &[m]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("signal-no-op-contradicted"), "{err}");

    for target in ["claude-code", "codex"] {
        let needle = format!("closegate agent install --target {target}\n");
        let (code, out, err) = run_readme_block(&needle, &root, &[], &[]);
        assert_eq!(code, 0, "{out}{err}");
    }
    assert!(root.join(".claude/settings.json").is_file());
    assert!(root.join(".codex/hooks.json").is_file());
}

/// Keep files out of `git status` through the repository's exclude file.
fn git_exclude(wt: &Path, names: &[&str]) {
    let common = crate::fixture::git(wt, &["rev-parse", "--git-common-dir"]);
    let info = wt.join(common.trim()).join("info");
    std::fs::create_dir_all(&info).unwrap();
    let mut text = std::fs::read_to_string(info.join("exclude")).unwrap_or_default();
    for name in names {
        text.push_str(&format!("/{name}\n"));
    }
    std::fs::write(info.join("exclude"), text).unwrap();
}

#[test]
fn readme_ci_merge_gate_runs_as_written() {
    // The agent's branch carries its status document in a trailing commit; CI clones the remote.
    let s = crate::teardown::Scene::honest_return();
    let doc = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&doc))], "status");
    let ci = s.fx.tmp.path().join("ci");
    crate::fixture::git(
        s.fx.tmp.path(),
        &["clone", "-q", s.fx.root().to_str().unwrap(), "ci"],
    );
    crate::fixture::git(&ci, &["checkout", "-q", "--detach"]);
    let (code, out, err) = run_readme_block("run: |", &ci, &[("BRANCH", "agent/x")], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("closegate: VERIFIED"), "{out}");
}

#[test]
fn readme_completion_and_man_lines_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    std::fs::create_dir_all(home.join(".local/share/bash-completion/completions")).unwrap();
    std::fs::create_dir_all(home.join(".local/share/man/man1")).unwrap();
    let readme = readme();
    for line in readme.lines().filter(|l| {
        l.starts_with("    closegate completions") || l.starts_with("    closegate man")
    }) {
        let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c").arg(line.trim()).current_dir(home);
        crate::fixture::hermetic(&mut cmd, home);
        cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
        let (code, out, err) = parts(&cmd.output().unwrap());
        assert_eq!(code, 0, "{line}: {out}{err}");
    }
    let completion =
        std::fs::read_to_string(home.join(".local/share/bash-completion/completions/closegate"))
            .unwrap();
    assert!(completion.contains("closegate"), "{completion}");
    let man = std::fs::read_to_string(home.join(".local/share/man/man1/closegate.1")).unwrap();
    assert!(man.starts_with(".ie") || man.contains(".TH"), "{man}");
}

#[test]
fn demo_prints_the_protocol() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(root.join("scripts/demo.sh"))
        .current_dir(tmp.path());
    crate::fixture::hermetic(&mut cmd, tmp.path());
    cmd.env("CLOSEGATE", env!("CARGO_BIN_EXE_closegate"))
        .env("TMPDIR", tmp.path());
    let (code, out, err) = parts(&cmd.output().unwrap());
    assert_eq!(code, 0, "{out}{err}");
    // One status document and its close line.
    assert!(out.contains("  # STATUS — honest"), "{out}");
    assert!(out.contains("  CLOSE-OK · honest · commit "), "{out}");
    // The four verdicts, each with its exit code.
    for (agent, verdict) in [
        ("honest", "VERIFIED (exit 0)"),
        ("cheater", "PENDING_REVIEW (exit 3)"),
        ("stale", "FAIL (exit 1)"),
        ("busy", "UNVERIFIED (exit 4)"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(agent) && l.contains(verdict)),
            "{agent} {verdict}: {out}"
        );
    }
    // The board, with its working-tree column.
    assert!(
        out.lines()
            .any(|l| l.starts_with("STAGE") && l.contains("TREE")),
        "{out}"
    );
    // A merge refused through the hook, then a verified one let in.
    assert!(out.contains("git reset --merge"), "{out}");
    assert!(
        out.contains("-> git merge exited ") && !out.contains("-> git merge exited 0"),
        "{out}"
    );
    assert!(out.contains("-> merged: main is now"), "{out}");
    // Paths under the scratch directory, removed at the end, are never shown as real paths.
    let scratch = tmp.path().to_str().unwrap();
    assert!(!out.contains(scratch), "{out}");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "scratch removed"
    );
}

/// The `land` record (SPEC §22): every field it writes is in README's record-field table.
#[test]
fn land_record_fields_are_documented() {
    let l = crate::land::Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    let documented = documented("record-fields");
    let lines = crate::teardown::audit(&l.fx);
    let land = lines.iter().find(|r| r["event"] == "land").unwrap();
    for key in land.as_object().unwrap().keys() {
        assert!(
            documented.contains(key),
            "record field `{key}` is not in README's table: {land}"
        );
    }
}
/// The relative link targets (`[text](target)`, anchors and absolute URLs left out) of `text`.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("").trim();
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !external && !target.contains(' ') {
            links.push(target.to_string());
        }
    }
    links
}

/// The page a relative link from `page` names, as a path from the repository root.
fn resolve(page: &str, target: &str) -> String {
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

#[test]
fn no_relative_link_between_pages_is_broken() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut count = 0;
    for (page, text) in pages() {
        for target in relative_links(&text) {
            count += 1;
            if !root.join(resolve(&page, &target)).exists() {
                broken.push(format!("{page}: {target}"));
            }
        }
    }
    assert!(count >= 15, "only {count} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_is_reachable_from_readme() {
    let pages = pages();
    let text_of = |name: &str| pages.iter().find(|(n, _)| n == name).map(|(_, t)| t);
    let mut seen = BTreeSet::from(["README.md".to_string()]);
    let mut queue = vec!["README.md".to_string()];
    while let Some(page) = queue.pop() {
        let Some(text) = text_of(&page) else { continue };
        for target in relative_links(text) {
            let name = resolve(&page, &target);
            if name.ends_with(".md") && seen.insert(name.clone()) {
                queue.push(name);
            }
        }
    }
    let unreachable: Vec<&String> = pages
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !seen.contains(*n))
        .collect();
    assert!(
        unreachable.is_empty(),
        "not reachable from README.md: {unreachable:?}"
    );
}

/// The user's documentation says each rule itself: no page cites the contract document.
#[test]
fn no_page_cites_the_contract_document() {
    for (page, text) in pages() {
        for (n, line) in text.lines().enumerate() {
            assert!(!line.contains("SPEC"), "{page}:{}: {line}", n + 1);
        }
    }
}

#[test]
fn readme_is_at_most_300_lines_with_a_quick_start_of_at_most_15() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 300,
        "README.md has {} lines",
        readme.lines().count()
    );
    let quick = fenced(&section(&readme, "quickstart"));
    assert_eq!(quick.len(), 1);
    let lines = quick[0].1.lines().count();
    assert!(
        (1..=15).contains(&lines),
        "the quick start has {lines} lines"
    );
    assert!(readme.contains("scripts/demo.sh") && readme.contains("cargo test --locked"));
}
