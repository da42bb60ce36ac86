//! What `init` writes (SPEC §17): the starter `.closegate.toml` (the base, the default protected
//! surfaces as comments, the guessed check) and a task contract with every key commented.

use crate::config::Config;
use crate::guess;

/// The starter configuration; `census`: the guessed check runs a runner the census reads
/// ([`crate::runners::reads_census`]).
pub fn starter(guessed: Option<&guess::Guess>, census: bool, branch: Option<&str>) -> String {
    let mut out = String::from(
        "# closegate configuration. closegate reads it from the tip of the base branch,\n\
         # never from an agent's branch: commit it there.\n\n",
    );
    match branch {
        Some(b) => out.push_str(&format!("base = {}\n", toml_string(b))),
        None => out.push_str("# base = \"main\"\n"),
    }
    out.push_str(
        "# status_file = \"_EXEC_STATUS.md\"\n# agent_branches = [\"agent/*\"]\n\
         # require_contract = false\n\n\
         # Protected surfaces: a change there needs a human's approval (PENDING_REVIEW).\n\
         # These are the defaults; a surface listed under [protected] replaces the default of\n\
         # that name (`tests = { extend = [\"checks/**\"] }` adds to it instead), a new name adds\n\
         # a surface.\n# [protected]\n",
    );
    for surface in Config::default().surfaces {
        let globs: Vec<String> = surface.globs.iter().map(|g| toml_string(g)).collect();
        out.push_str(&format!("# {} = [{}]\n", surface.name, globs.join(", ")));
    }
    out.push_str(policy(guessed.is_some() && census));
    out.push_str(
        "\n# The checks closegate runs itself, sandboxed, in a checkout of the agent's exact\n\
         # commit. `keep`: the installed tree and the tool caches (.closegate-cache/), kept in\n\
         # this check's workspace between runs so the second check is incremental (kept outputs\n\
         # come from earlier commits). `writable`: a cache shared by every agent's checks, only\n\
         # for what the tool verifies on every use (npm's, with a committed package-lock.json).\n",
    );
    match guessed {
        Some(g) => out.push_str(&check_block(g)),
        None => out.push_str(
            "# No project type recognised: write the command that tests this project.\n\
             # [[checks]]\n# name = \"test\"\n# run = \"make test\"\n# timeout_s = 600\n",
        ),
    }
    out
}

/// The guessed `[[checks]]` entry, with `prepare` and `network = false` when it has them (SPEC
/// §27.2).
fn check_block(g: &guess::Guess) -> String {
    let list = |items: &[String]| -> String {
        let items: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
        format!("[{}]", items.join(", "))
    };
    let mut out = format!(
        "[[checks]]\nname = {}\nrun = {}\ntimeout_s = 900\n",
        toml_string(g.name),
        toml_string(&g.run)
    );
    if let Some(prepare) = &g.prepare {
        out.push_str(&format!(
            "# `prepare` fetches the dependencies with network and runs none of the\n\
             # project's code; `run` then has no network.\nprepare = {}\n",
            toml_string(prepare)
        ));
    }
    if !g.network {
        out.push_str("network = false\n");
    }
    if !g.writable.is_empty() {
        out.push_str(&format!("writable = {}\n", list(&g.writable)));
    }
    if !g.keep.is_empty() {
        out.push_str(&format!("keep = {}\n", list(&g.keep)));
    }
    if !g.env.is_empty() {
        let env: Vec<String> = g.env.iter().map(|e| e.to_string()).collect();
        out.push_str(&format!("env = {}\n", list(&env)));
    }
    out
}

/// `[protected.policy]` (SPEC §27.1): `tests = "integrity"` when the guessed check runs a runner
/// whose output closegate reads (the census), with what it lets through; `modify` otherwise.
fn policy(census: bool) -> &'static str {
    if census {
        "\n# `integrity`: an edit to the tests needs no human when the base's own tests still pass\n\
         # on the agent's code (every test id of the base run, in the overlay) and no edit\n\
         # weakens a test (a removed or loosened assertion, a skip, a dropped case). It lets\n\
         # through added tests, added assertions, reworded messages, moved tests and fixture\n\
         # changes the base's tests agree with; runner wiring (conftest.py, __init__.py, runner\n\
         # set-up) and graded inputs always need a human. `modify` sends every edit to a human.\n\
         [protected.policy]\ntests = \"integrity\"\n"
    } else {
        "\n# An agent that adds a new test needs no review; changing, deleting or renaming an\n\
         # existing one (or adding a conftest.py, __init__.py, runner set-up) still does.\n\
         [protected.policy]\ntests = \"modify\"\n"
    }
}

/// A task contract with every key of SPEC §12 commented.
pub fn contract(slug: &str) -> String {
    format!(
        "# Task contract for `{slug}`, read from the base tip: commit it there.\n\
         # Uncomment what this task needs.\n\n\
         # goal = \"what done means for this task\"\n\
         # branch = \"agent/{slug}\"           # applies to this branch whatever slug the document claims\n\
         # scope = [\"src/**\"]                 # the only paths the branch may change\n\
         # prohibited = [\"db/**\"]             # never to be changed; wins over scope\n\
         # required_artifacts = [\"src/new.rs\"] # must be in the commit and changed by the branch\n\
         # required_checks = [\"test\"]         # names from [[checks]] that must run and pass\n\
         # approval = \"protected\"             # \"always\" | \"protected\" (default) | \"never\"\n\
         # max_changed_files = 40\n\
         # max_commits = 20\n\
         # expect_changed = [\"tests/test_api.py::test_old_behaviour\"] # base tests the task changes\n\
         # fail_to_pass = false                # true: a new test must fail on the base's code\n"
    )
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Why `slug` is not a slug (1–100 of `[A-Za-z0-9._-]`, starting with a letter or digit).
pub fn slug_fault(slug: &str) -> Option<&'static str> {
    let first_ok = slug
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let chars_ok = slug
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if slug.is_empty() || slug.len() > 100 {
        Some("a slug is 1–100 characters")
    } else if !first_ok || !chars_ok {
        Some("a slug is letters, digits, `.`, `_` and `-`, starting with a letter or digit")
    } else {
        None
    }
}
