//! The stop hook driven by the real clients (issue 38, SPEC §18, §26.3): Claude Code 2.1.332 and
//! Codex 0.169.0 / 0.171.0, each talking to the scripted model server (tests/it/clients.rs), run
//! real tools in the agent's worktree and fire their real Stop / SubagentStop hooks, installed
//! by `closegate agent install` and committed on the base as a user does. Each scene asserts what
//! the client did: which turns it asked the model for, what the hook fed back, what was recorded.
//! Without the clients installed these tests say so in one line and pass (fail under
//! `CLOSEGATE_REQUIRE_CLIENTS=1`).

use std::path::Path;

use serde_json::{Value, json};

use crate::clients::{
    Agent, CLAUDE_CODE, Client, FALSE_DONE, Kind, PASSING_CONFIG, QUESTION, REAL_DONE, WORK,
    require, run, say,
};
use crate::fixture::git;

fn script(main: Vec<Value>) -> Value {
    json!({"threads": {"scene:main": main}})
}

/// The client ended on its own (exit 0) and asked the model for exactly `steps` of the main
/// thread (a block adds a turn; none is asked past the script).
fn ran_steps(a: &Agent, ran: &crate::clients::Ran, steps: &[u64]) {
    assert_eq!(
        ran.code,
        0,
        "{} {}\nstdout: {}\nstderr: {}",
        a.client.kind.target(),
        a.client.version,
        ran.stdout,
        ran.stderr
    );
    assert_eq!(
        a.server.steps("scene:main"),
        steps,
        "{:#?}",
        a.server.requests()
    );
    assert!(!a.server.overran(), "{:#?}", a.server.requests());
}

/// The `signal` record that accepted a stop on the worktree's HEAD.
fn accepted_at_head(a: &Agent) -> Value {
    let head = git(&a.s.wt, &["rev-parse", "HEAD"]).trim().to_string();
    let found =
        a.audit().into_iter().rev().find(|r| {
            r["event"] == "signal" && r["accepted"] == true && r["commit"] == head.as_str()
        });
    found.unwrap_or_else(|| panic!("no accepted signal record at {head}: {:#?}", a.audit()))
}

/// A false "done" is blocked with the reason fed back; the agent does the work, `closegate
/// check` says VERIFIED, and the true "done" is accepted and recorded.
fn false_done_is_blocked_fed_back_fixed_and_recorded(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE), run(WORK), say(REAL_DONE)]),
        PASSING_CONFIG,
        Some(&[]),
    );
    let ran = a.run();
    ran_steps(&a, &ran, &[0, 1, 2]);
    let fed = a.server.input("scene:main", 1);
    assert!(
        fed.contains("closegate refused this stop") && fed.contains("signal-done-contradicted"),
        "{fed}"
    );
    assert!(
        fed.contains("closegate close"),
        "the reason names what to run: {fed}"
    );
    assert!(a.server.input("scene:main", 2).contains("VERIFIED"));
    accepted_at_head(&a);
}

/// A true "done" is accepted with no extra turn.
fn true_done_is_accepted_with_no_extra_turn(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![run(WORK), say(REAL_DONE)]),
        PASSING_CONFIG,
        Some(&[]),
    );
    let ran = a.run();
    ran_steps(&a, &ran, &[0, 1]);
    accepted_at_head(&a);
}

/// `claims` (the default): a question passes. `always`: it is blocked, the reason says how to stop
/// honestly without finishing, and following it is accepted.
fn a_question_passes_in_claims_mode_and_is_held_to_the_protocol_in_always_mode(c: &Client) {
    let a = Agent::new(c, &script(vec![say(QUESTION)]), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0]);
    let honest =
        "UNVERIFIED: waiting for the user. Should the parser also accept tabs?\n\n@signal blocked";
    let steps = vec![
        say(QUESTION),
        run("closegate close --state blocked --blocked-on 'the user: tabs or spaces?'"),
        say(honest),
    ];
    let a = Agent::new(
        c,
        &script(steps),
        PASSING_CONFIG,
        Some(&["--mode", "always"]),
    );
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    let fed = a.server.input("scene:main", 1);
    for needle in [
        "signal-missing",
        "closegate close --state blocked",
        "@signal blocked",
    ] {
        assert!(fed.contains(needle), "{needle}: {fed}");
    }
}

/// A weakened test: `closegate check` says PENDING_REVIEW, a VERIFIED claim is blocked as an
/// overclaim, and the honest PENDING_REVIEW return is accepted.
fn a_weakened_test_goes_to_review(c: &Client) {
    let config = "[[checks]]\nname = \"smoke\"\nrun = \"sh tests/smoke.sh\"\ntimeout_s = 60\n";
    let weaken = "mkdir -p src && printf 'pub fn x() {}\\n' > src/lib.rs && printf 'exit 0\\n' > tests/smoke.sh \
                  && git add -A && git commit -qm 'add x; simplify the test' \
                  && closegate close --abstract 'adds x; the smoke test changed' --artifact src/lib.rs; \
                  closegate check";
    let review = "PENDING_REVIEW: tests/smoke.sh changed, a person reviews it\n\n@signal done";
    let steps = vec![run(weaken), say(FALSE_DONE), say(review)];
    let a = Agent::new(c, &script(steps), config, None);
    std::fs::create_dir_all(a.s.root().join("tests")).unwrap();
    std::fs::write(a.s.root().join("tests/smoke.sh"), "test -f src/lib.rs\n").unwrap();
    a.install(&a.s.root(), &[]);
    a.commit_on_main(
        &["tests/smoke.sh", c.kind.settings()],
        "the smoke test and the stop hook",
    );
    git(&a.s.wt, &["merge", "-q", "--ff-only", "main"]);
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    assert!(a.server.input("scene:main", 1).contains("PENDING_REVIEW"));
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("claim-overclaimed") && fed.contains("PENDING_REVIEW"),
        "{fed}"
    );
    let check = a
        .audit()
        .into_iter()
        .find(|r| r["event"] == "check")
        .unwrap();
    assert_eq!(check["verdict"], "PENDING_REVIEW", "{check}");
    accepted_at_head(&a);
}

/// A subagent's false claim is blocked by SubagentStop, fed back to the subagent; its honest
/// answer passes and the main agent ends with a question.
fn a_subagents_false_claim_is_blocked_by_subagent_stop(c: &Client) {
    let spawn = json!({"spawn": "scene:sub — write the docs", "background": false});
    let main = match c.kind {
        Kind::ClaudeCode => vec![spawn, say(QUESTION)],
        Kind::Codex => vec![spawn, json!({"wait": true}), say(QUESTION)],
        Kind::Gemini => unreachable!("Gemini CLI's scenes are in agent_gemini.rs"),
    };
    let sub = vec![
        say(FALSE_DONE),
        say("Progress: nothing written yet; handing back to you."),
    ];
    let script = json!({"threads": {"scene:main": main, "scene:sub": sub}});
    let a = Agent::new(c, &script, PASSING_CONFIG, Some(&[]));
    let ran = a.run();
    let main_steps: Vec<u64> =
        (0..script["threads"]["scene:main"].as_array().unwrap().len() as u64).collect();
    ran_steps(&a, &ran, &main_steps);
    assert_eq!(a.server.steps("scene:sub"), [0, 1]);
    let fed = a.server.input("scene:sub", 1);
    assert!(
        fed.contains("closegate refused this stop") && fed.contains("signal-done-contradicted"),
        "{fed}"
    );
}

/// closegate's own time bound: checks that cannot finish within `--time-limit` block with
/// `checks-running` (never a claim let through on the harness's timeout); the agent runs
/// `closegate check` and its "done" is accepted on the recorded verdict.
fn checks_that_cannot_finish_in_time_block_with_checks_running(c: &Client) {
    let config = "[[checks]]\nname = \"slow\"\nrun = \"sleep 6; test -f \\\"$PWD/src/lib.rs\\\"\"\ntimeout_s = 60\n";
    let close = "mkdir -p src && printf 'pub fn x() {}\\n' > src/lib.rs && git add src/lib.rs \
                 && git commit -qm 'add x' && closegate close --abstract 'adds x' --artifact src/lib.rs";
    let steps = vec![
        run(close),
        say(REAL_DONE),
        run("closegate check"),
        say(REAL_DONE),
    ];
    let a = Agent::new(c, &script(steps), config, None);
    write_hooks_with_time_limit(&a, 8);
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("checks-running") && fed.contains("run `closegate check` and stop again"),
        "{fed}"
    );
    assert!(a.server.input("scene:main", 3).contains("VERIFIED"));
    accepted_at_head(&a);
}

/// The hook with `--time-limit S` and a harness timeout of S + 30 (what `install` writes for a
/// configuration that needs S), committed on `main`; for Codex also its trust, by Codex's rule.
fn write_hooks_with_time_limit(a: &Agent, limit: u64) {
    let kind = a.client.kind;
    let command = format!(
        "closegate agent stop-hook --target {} --mode claims --time-limit {limit}",
        kind.target()
    );
    let timeout = limit + 30;
    let group = json!([{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]);
    let hooks = json!({"hooks": {"Stop": group, "SubagentStop": group}});
    let file = a.s.root().join(kind.settings());
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, hooks.to_string()).unwrap();
    if kind == Kind::Codex {
        let main = a.s.root().canonicalize().unwrap();
        let mut config = std::fs::read_to_string(a.codex_home.join("config.toml")).unwrap();
        config.push_str(&format!(
            "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            main.display()
        ));
        for label in ["stop", "subagent_stop"] {
            let hash = crate::agent_install::codex_hash(label, &command, timeout);
            let key = format!("{}/.codex/hooks.json:{label}:0:0", main.display());
            config.push_str(&format!(
                "\n[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
            ));
        }
        std::fs::write(a.codex_home.join("config.toml"), config).unwrap();
    }
    a.commit_on_main(&[kind.settings()], "the stop hook, 8 s");
    git(&a.s.wt, &["merge", "-q", "--ff-only", "main"]);
}

/// A repeated false claim: blocked `--max-blocks` (3) times, then let through and recorded, so
/// an agent can never loop forever.
fn a_repeated_false_claim_gives_up_after_max_blocks(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE); 4]),
        PASSING_CONFIG,
        Some(&[]),
    );
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    for step in 1..=3 {
        assert!(
            a.server
                .input("scene:main", step)
                .contains("closegate refused this stop")
        );
    }
    let gave_up: Vec<Value> = a
        .audit()
        .into_iter()
        .filter(|r| r["gave_up"] == true)
        .collect();
    assert_eq!(gave_up.len(), 1, "{gave_up:#?}");
    assert_eq!(
        (&gave_up[0]["max_blocks"], &gave_up[0]["hook"]),
        (&json!(3), &json!(c.kind.target()))
    );
}

/// The hook file emptied by the agent mid-session: the client keeps the hooks it started with
/// (measured), a new session would have none; closegate's hook sees the difference from the
/// committed file and blocks until it is put back.
fn the_hook_file_emptied_mid_session_is_blocked_until_put_back(c: &Client) {
    let file = match c.kind {
        Kind::ClaudeCode => ".claude/settings.json".to_string(),
        Kind::Codex => {
            "\"$(git rev-parse --path-format=absolute --git-common-dir)/../.codex/hooks.json\""
                .to_string()
        }
        Kind::Gemini => unreachable!("Gemini CLI's scenes are in agent_gemini.rs"),
    };
    let restore = match c.kind {
        Kind::ClaudeCode => "git checkout HEAD -- .claude/settings.json".to_string(),
        Kind::Codex => "git -C \"$(git rev-parse --path-format=absolute --git-common-dir)/..\" checkout main -- .codex/hooks.json".to_string(),
        Kind::Gemini => unreachable!("Gemini CLI's scenes are in agent_gemini.rs"),
    };
    let steps = vec![
        run(&format!("printf '{{}}\\n' > {file}")),
        say(QUESTION),
        run(&restore),
        say(QUESTION),
    ];
    let a = Agent::new(c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains("holds no closegate hook"),
        "{fed}"
    );
}

/// The switch that turns every hook of `c` off, as a shell command run in the worktree, and the
/// words naming it (SPEC §27.3): Claude Code's `disableAllHooks` in the untracked local settings,
/// Codex's `[features] hooks = false` in the worktree's own `config.toml`.
fn off_switch(c: &Client) -> (&'static str, &'static str, &'static str) {
    match c.kind {
        Kind::ClaudeCode => (
            "printf '{\"disableAllHooks\": true}\\n' > .claude/settings.local.json",
            "rm .claude/settings.local.json",
            "disableAllHooks",
        ),
        Kind::Codex => (
            "printf '[features]\\nhooks = false\\n' > .codex/config.toml",
            "rm .codex/config.toml",
            "[features] hooks = false",
        ),
        Kind::Gemini => unreachable!("Gemini CLI's scenes are in agent_gemini.rs"),
    }
}

/// Attack: the agent turns every hook off mid-session. The session keeps running its hook, which
/// blocks (naming the switch) until the switch is cleared; cleared, the stop passes.
fn an_off_switch_written_mid_session_is_blocked_until_cleared(c: &Client) {
    let (set, clear, named) = off_switch(c);
    let steps = vec![run(set), say(QUESTION), run(clear), say(QUESTION)];
    let a = Agent::new(c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains(named),
        "{fed}"
    );
}

/// With the switch set before a session starts, the client runs no hook at all (a false "done"
/// passes with no extra turn), and `doctor` says the hook is inactive, naming the switch.
fn an_off_switch_keeps_the_next_session_from_running_the_hook_and_doctor_says_so(c: &Client) {
    let (set, _, named) = off_switch(c);
    let a = Agent::new(c, &script(vec![say(FALSE_DONE)]), PASSING_CONFIG, Some(&[]));
    let (code, doctor, _) = a.closegate(&a.s.wt, &["agent", "doctor"]);
    assert_eq!(code, 0, "{doctor}");
    let made = std::process::Command::new("sh")
        .args(["-c", set])
        .current_dir(&a.s.wt)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, doctor, _) = a.closegate(&a.s.wt, &["agent", "doctor"]);
    assert_eq!(code, 1, "{doctor}");
    assert!(
        doctor.contains("agent-hook-inactive") && doctor.contains(named),
        "{doctor}"
    );
    ran_steps(&a, &a.run(), &[0]);
}

macro_rules! scenes {
    ($module:ident, $kind:expr, $version:expr) => {
        mod $module {
            use super::*;

            fn client() -> Option<Client> {
                require($kind, $version)
            }

            #[test]
            fn false_done_is_blocked_fed_back_fixed_and_recorded() {
                if let Some(c) = client() {
                    super::false_done_is_blocked_fed_back_fixed_and_recorded(&c);
                }
            }

            #[test]
            fn true_done_is_accepted_with_no_extra_turn() {
                if let Some(c) = client() {
                    super::true_done_is_accepted_with_no_extra_turn(&c);
                }
            }

            #[test]
            fn a_question_passes_in_claims_mode_and_is_held_to_the_protocol_in_always_mode() {
                if let Some(c) = client() {
                    super::a_question_passes_in_claims_mode_and_is_held_to_the_protocol_in_always_mode(&c);
                }
            }

            #[test]
            fn a_weakened_test_goes_to_review() {
                if let Some(c) = client() {
                    super::a_weakened_test_goes_to_review(&c);
                }
            }

            #[test]
            fn a_subagents_false_claim_is_blocked_by_subagent_stop() {
                if let Some(c) = client() {
                    super::a_subagents_false_claim_is_blocked_by_subagent_stop(&c);
                }
            }

            #[test]
            fn checks_that_cannot_finish_in_time_block_with_checks_running() {
                if let Some(c) = client() {
                    super::checks_that_cannot_finish_in_time_block_with_checks_running(&c);
                }
            }

            #[test]
            fn a_repeated_false_claim_gives_up_after_max_blocks() {
                if let Some(c) = client() {
                    super::a_repeated_false_claim_gives_up_after_max_blocks(&c);
                }
            }

            #[test]
            fn the_hook_file_emptied_mid_session_is_blocked_until_put_back() {
                if let Some(c) = client() {
                    super::the_hook_file_emptied_mid_session_is_blocked_until_put_back(&c);
                }
            }

            #[test]
            fn an_off_switch_written_mid_session_is_blocked_until_cleared() {
                if let Some(c) = client() {
                    super::an_off_switch_written_mid_session_is_blocked_until_cleared(&c);
                }
            }

            #[test]
            fn an_off_switch_keeps_the_next_session_from_running_the_hook_and_doctor_says_so() {
                if let Some(c) = client() {
                    super::an_off_switch_keeps_the_next_session_from_running_the_hook_and_doctor_says_so(&c);
                }
            }
        }
    };
}

/// Codex: `agent install` run from inside an existing worktree writes the file Codex reads (the
/// main checkout's) and its trust, and makes that worktree's `.codex/` folder (Codex loads no
/// project hook without it, SPEC §27.3): the hook runs there at once. A worktree made from the
/// base after the hook is committed runs it too.
fn an_install_from_inside_a_worktree_is_the_one_codex_runs(c: &Client) {
    let mut a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE), say(QUESTION)]),
        PASSING_CONFIG,
        None,
    );
    let out = a.install(&a.s.wt.clone(), &[]);
    assert!(
        out.contains(
            &*a.s
                .root()
                .canonicalize()
                .unwrap()
                .join(".codex/hooks.json")
                .display()
                .to_string()
        ),
        "{out}"
    );
    assert!(a.s.wt.join(".codex").is_dir(), "{out}");
    let (code, doctor, _) = a.closegate(&a.s.wt, &["agent", "doctor", "--target", "codex"]);
    assert_eq!(code, 0, "{doctor}");
    ran_steps(&a, &a.run(), &[0, 1]);
    assert!(
        a.server
            .input("scene:main", 1)
            .contains("closegate refused this stop")
    );
    a.commit_on_main(&[".codex/hooks.json"], "the stop hook");
    git(&a.s.root(), &["branch", "agent/y", "main"]);
    a.s.wt = a.s.fx.worktree("y", "agent/y");
    let (code, doctor, _) = a.closegate(&a.s.wt, &["agent", "doctor", "--target", "codex"]);
    assert_eq!(code, 0, "{doctor}");
}

/// Codex: reinstalling with a new time limit rewrites the entry and its trust (a stale trust
/// would make Codex skip the hook without a word, and the false "done" would pass).
fn a_reinstall_with_a_new_time_limit_still_runs(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE), say(QUESTION)]),
        PASSING_CONFIG,
        Some(&[]),
    );
    let slow = "[[checks]]\nname = \"smoke\"\nrun = \"test -f \\\"$PWD/src/lib.rs\\\"\"\ntimeout_s = 900\n";
    std::fs::write(a.s.root().join(".closegate.toml"), slow).unwrap();
    let out = a.install(&a.s.root(), &[]);
    assert!(
        out.contains("time limit 960 s") && out.contains("harness timeout 990 s"),
        "{out}"
    );
    a.commit_on_main(&[".closegate.toml", ".codex/hooks.json"], "slower checks");
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(a.s.root().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"], 990);
    ran_steps(&a, &a.run(), &[0, 1]);
    assert!(
        a.server
            .input("scene:main", 1)
            .contains("closegate refused this stop")
    );
}

/// Codex: the agent edits the main checkout's hooks file (every later session's hook) — here it
/// turns the checks off. The session keeps the hook it started with (measured); the hook blocks
/// with the difference from the base tip's file until it is put back.
fn the_main_checkouts_hooks_file_edited_by_the_agent_is_blocked(c: &Client) {
    let main = "\"$(git rev-parse --path-format=absolute --git-common-dir)/..\"";
    let edit =
        format!("sed -i 's/--mode claims/--mode claims --no-checks/' {main}/.codex/hooks.json");
    let restore = format!("git -C {main} checkout main -- .codex/hooks.json");
    let steps = vec![run(&edit), say(QUESTION), run(&restore), say(QUESTION)];
    let a = Agent::new(c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains("--no-checks"),
        "{fed}"
    );
    assert!(fed.contains("the base tip main holds"), "{fed}");
}

/// Codex: the agent appends `--max-blocks 0` to the hook in the main checkout's hooks file and
/// recomputes its trust hash, so the next session runs the edited hook. It compares the entry
/// with the base tip's before anything else and blocks the false "done" under the committed
/// hook's loop guard; put back, the next stop passes.
fn an_edited_max_blocks_zero_is_never_obeyed_first(c: &Client) {
    let main = "\"$(git rev-parse --path-format=absolute --git-common-dir)/..\"";
    let restore = format!("git -C {main} checkout main -- .codex/hooks.json");
    let steps = vec![say(FALSE_DONE), run(&restore), say(QUESTION)];
    let a = Agent::new(c, &script(steps), PASSING_CONFIG, Some(&[]));
    let file = a.s.root().canonicalize().unwrap().join(".codex/hooks.json");
    let committed = std::fs::read_to_string(&file).unwrap();
    let hooks: Value = serde_json::from_str(&committed).unwrap();
    let config_path = a.codex_home.join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    for (event, label) in [("Stop", "stop"), ("SubagentStop", "subagent_stop")] {
        let hook = &hooks["hooks"][event][0]["hooks"][0];
        let (command, timeout) = (
            hook["command"].as_str().unwrap(),
            hook["timeout"].as_u64().unwrap(),
        );
        let edited = format!("{command} --max-blocks 0");
        let old = crate::agent_install::codex_hash(label, command, timeout);
        let new = crate::agent_install::codex_hash(label, &edited, timeout);
        assert!(config.contains(&old), "{config}");
        config = config.replace(&old, &new);
    }
    std::fs::write(&config_path, config).unwrap();
    let edited = committed.replace("--time-limit 600\"", "--time-limit 600 --max-blocks 0\"");
    assert_ne!(edited, committed);
    std::fs::write(&file, edited).unwrap();
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    let fed = a.server.input("scene:main", 1);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains("--max-blocks 0"),
        "{fed}"
    );
}

/// `closegate ARGS` in `cwd` with the client's own `codex` first on the PATH (so closegate asks
/// Codex itself for trust, SPEC §27.3).
fn with_codex(a: &Agent, cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    crate::fixture::hermetic(&mut cmd, &a.home);
    let dirs = [
        a.client.bin.parent().unwrap(),
        &a.s.fx.tmp.path().join("bin"),
    ];
    let path = std::env::join_paths(dirs.iter().map(|d| d.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    cmd.env("PATH", path).env("CODEX_HOME", &a.codex_home);
    crate::fixture::parts(&cmd.output().unwrap())
}

/// Codex: with a `codex` binary on the PATH, `install` has Codex itself trust the hooks (its
/// app-server's `hooks/list` and `config/batchWrite`, listed again to verify) and says so; the
/// trust written is the hash Codex computes; `doctor` asks Codex too and says which it used;
/// the session runs the hook. Attacks: the trust entry dropped, and the hook edited so its trust
/// is for another version: doctor names each as Codex lists it.
fn trust_comes_from_codex_itself_when_its_binary_is_present(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE), say(QUESTION)]),
        PASSING_CONFIG,
        None,
    );
    let root = a.s.root();
    let (code, out, err) = with_codex(&a, &root, &["agent", "install", "--target", "codex"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("by Codex itself (codex ") && out.contains("listed again to verify"),
        "{out}"
    );
    assert!(!out.contains("warning"), "{out}");
    let file = root.canonicalize().unwrap().join(".codex/hooks.json");
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let config = std::fs::read_to_string(a.codex_home.join("config.toml")).unwrap();
    for (event, label) in [("Stop", "stop"), ("SubagentStop", "subagent_stop")] {
        let hook = &hooks["hooks"][event][0]["hooks"][0];
        let hash = crate::agent_install::codex_hash(
            label,
            hook["command"].as_str().unwrap(),
            hook["timeout"].as_u64().unwrap(),
        );
        assert!(config.contains(&hash), "{label}: {config}");
    }
    a.commit_on_main(&[".codex/hooks.json"], "the stop hook");
    git(&a.s.wt, &["merge", "-q", "--ff-only", "main"]);
    let (code, doctor, _) = with_codex(&a, &a.s.wt, &["agent", "doctor", "--target", "codex"]);
    assert_eq!(code, 0, "{doctor}");
    assert!(doctor.contains("Codex's own answer"), "{doctor}");
    ran_steps(&a, &a.run(), &[0, 1]);
    assert!(
        a.server
            .input("scene:main", 1)
            .contains("closegate refused this stop")
    );

    let trusted = std::fs::read_to_string(a.codex_home.join("config.toml")).unwrap();
    let mut dropped: toml::Table = trusted.parse().unwrap();
    let hooks = dropped.get_mut("hooks").and_then(|h| h.as_table_mut());
    assert!(hooks.and_then(|h| h.remove("state")).is_some(), "{trusted}");
    std::fs::write(a.codex_home.join("config.toml"), dropped.to_string()).unwrap();
    let (code, doctor, _) = with_codex(&a, &a.s.wt, &["agent", "doctor", "--target", "codex"]);
    assert_eq!(code, 1, "{doctor}");
    assert!(doctor.contains("lists it as untrusted"), "{doctor}");
    std::fs::write(a.codex_home.join("config.toml"), &trusted).unwrap();
    let committed = std::fs::read_to_string(&file).unwrap();
    let edited = committed.replacen("\"timeout\":630", "\"timeout\":631", 1);
    assert_ne!(edited, committed);
    std::fs::write(&file, edited).unwrap();
    let (code, doctor, _) = with_codex(&a, &a.s.wt, &["agent", "doctor", "--target", "codex"]);
    assert_eq!(code, 1, "{doctor}");
    assert!(doctor.contains("lists it as modified"), "{doctor}");
}

/// Claude Code: closegate installed as a plugin from this repository's marketplace (`claude
/// plugin marketplace add`, `claude plugin install closegate@closegate`, the commands `agent
/// install --plugin` prints), nothing in any settings file but `enabledPlugins`: doctor
/// recognises it, and the plugin's hook blocks a false "done".
fn a_plugin_installed_hook_runs_and_doctor_recognises_it(c: &Client) {
    let a = Agent::new(
        c,
        &script(vec![say(FALSE_DONE), say(QUESTION)]),
        PASSING_CONFIG,
        None,
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).display().to_string();
    for args in [
        vec!["plugin", "marketplace", "add", repo.as_str()],
        vec!["plugin", "install", "closegate@closegate"],
    ] {
        let mut cmd = std::process::Command::new(&c.bin);
        cmd.args(&args).current_dir(&a.s.wt);
        crate::fixture::hermetic(&mut cmd, &a.home);
        cmd.env("DISABLE_AUTOUPDATER", "1").env("IS_SANDBOX", "1");
        let (code, out, err) = crate::fixture::parts(&cmd.output().unwrap());
        assert_eq!(code, 0, "{args:?}: {out}{err}");
    }
    let settings = std::fs::read_to_string(a.home.join(".claude/settings.json")).unwrap();
    assert!(!settings.contains("agent stop-hook"), "{settings}");
    let (code, doctor, _) = a.closegate(&a.s.wt, &["agent", "doctor", "--target", "claude-code"]);
    assert_eq!(code, 0, "{doctor}");
    assert!(
        doctor.contains("installed as the plugin closegate@closegate"),
        "{doctor}"
    );
    ran_steps(&a, &a.run(), &[0, 1]);
    assert!(
        a.server
            .input("scene:main", 1)
            .contains("closegate refused this stop")
    );
}

#[test]
fn claude_code_a_plugin_installed_hook_runs_and_doctor_recognises_it() {
    if let Some(c) = require(Kind::ClaudeCode, CLAUDE_CODE) {
        a_plugin_installed_hook_runs_and_doctor_recognises_it(&c);
    }
}

/// The commands `agent install --target codex --plugin` prints, SOURCE this repository (the
/// marketplace), each run with the client's own `codex`.
fn codex_plugin_add(a: &Agent) {
    let (code, printed, err) = a.closegate(
        &a.s.wt,
        &["agent", "install", "--target", "codex", "--plugin"],
    );
    assert_eq!(code, 0, "{printed}{err}");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).display().to_string();
    let commands: Vec<Vec<String>> = (printed.lines())
        .filter(|l| l.starts_with("codex "))
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(|w| w.replace("SOURCE", &repo))
                .collect()
        })
        .collect();
    assert_eq!(commands.len(), 2, "{printed}");
    for args in commands {
        let (code, out, err) = a.codex(&a.s.wt, &args);
        assert_eq!(code, 0, "codex {args:?}: {out}{err}");
    }
}

/// Codex: closegate installed as a plugin with the commands `agent install --plugin` prints, no
/// hooks file anywhere, and its hooks trusted as Codex's own hooks review trusts them (the
/// app-server's `hooks/list` and `config/batchWrite` of the hashes listed: `codex exec` has no
/// review, and `codex plugin add` leaves them untrusted). Before the trust doctor says Codex
/// skips them, asked (its `codex` on the PATH) and judged by the computed hash.
fn codex_plugin_scene(c: &Client, steps: Vec<Value>) -> Agent {
    let a = Agent::new(c, &script(steps), PASSING_CONFIG, None);
    codex_plugin_add(&a);
    for file in [
        a.codex_home.join("hooks.json"),
        a.s.root().join(".codex/hooks.json"),
    ] {
        assert!(!file.exists(), "{}", file.display());
    }
    for (asked, words) in [
        (true, "lists it as untrusted"),
        (false, "has no trust entry"),
    ] {
        let (code, doctor) = codex_doctor(&a, asked);
        assert_eq!(code, 1, "{doctor}");
        assert!(
            doctor.contains("Codex skips the plugin's") && doctor.contains(words),
            "{doctor}"
        );
        assert!(doctor.contains("Trust all and continue"), "{doctor}");
    }
    let mut app = crate::clients::CodexApp::start(&a);
    let trusted = app.trust(&a.s.wt, |h| h["pluginId"] == "closegate@closegate");
    assert_eq!(trusted.len(), 2, "{trusted:#?}");
    a
}

/// `agent doctor --target codex` in the worktree: with the client's `codex` on the PATH
/// (`asked`: Codex lists its hooks) or without (the hash closegate computes).
fn codex_doctor(a: &Agent, asked: bool) -> (i32, String) {
    let args = ["agent", "doctor", "--target", "codex"];
    let (code, out, _) = match asked {
        true => with_codex(a, &a.s.wt, &args),
        false => a.closegate(&a.s.wt, &args),
    };
    (code, out)
}

/// Codex: the plugin-installed hook blocks a false "done", and doctor recognises it, asked or
/// not. Attack: the plugin disabled in the user's `config.toml`, the hook installed only as that
/// plugin: doctor says inactive, naming the switch.
fn a_plugin_installed_hook_runs_and_doctor_recognises_it_codex(c: &Client) {
    let a = codex_plugin_scene(c, vec![say(FALSE_DONE), say(QUESTION)]);
    for asked in [true, false] {
        let (code, doctor) = codex_doctor(&a, asked);
        assert_eq!(code, 0, "{doctor}");
        assert!(
            doctor.contains("installed as the plugin closegate@closegate"),
            "{doctor}"
        );
    }
    ran_steps(&a, &a.run(), &[0, 1]);
    let fed = a.server.input("scene:main", 1);
    assert!(
        fed.contains("closegate refused this stop") && fed.contains("signal-done-contradicted"),
        "{fed}"
    );
    let config_path = a.codex_home.join("config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    let entry = "[plugins.\"closegate@closegate\"]\nenabled = true";
    assert!(config.contains(entry), "{config}");
    let disabled = config.replace(entry, "[plugins.\"closegate@closegate\"]\nenabled = false");
    std::fs::write(&config_path, disabled).unwrap();
    for asked in [true, false] {
        let (code, doctor) = codex_doctor(&a, asked);
        assert_eq!(code, 1, "{doctor}");
        assert!(
            doctor.contains("disables the plugin closegate@closegate"),
            "{doctor}"
        );
    }
}

/// Attack: the agent appends `--max-blocks 0` to the hook in Codex's copy of the plugin (in
/// `$CODEX_HOME`, outside every gate) and has Codex trust the edit, so the next session runs it.
/// Doctor names the difference from the plugin closegate ships; the edited hook compares itself
/// with it before anything else and blocks the false "done" under the shipped loop guard;
/// the plugin added again, the next stop passes.
fn an_edited_plugin_hook_is_never_obeyed_first(c: &Client) {
    // The fix the hook names, run by the agent with the client's own `codex`.
    let add_again = format!("{} plugin add closegate@closegate", c.bin.display());
    let steps = vec![say(FALSE_DONE), run(&add_again), say(QUESTION)];
    let a = codex_plugin_scene(c, steps);
    let cache = a.codex_home.join("plugins/cache/closegate/closegate");
    let version = std::fs::read_dir(&cache).unwrap().next().unwrap().unwrap();
    let file = version.path().join("hooks/codex-hooks.json");
    let shipped = std::fs::read_to_string(&file).unwrap();
    let edited = shipped.replace("--time-limit 600\"", "--time-limit 600 --max-blocks 0\"");
    assert_ne!(edited, shipped);
    std::fs::write(&file, &edited).unwrap();
    let mut app = crate::clients::CodexApp::start(&a);
    let trusted = app.trust(&a.s.wt, |h| h["pluginId"] == "closegate@closegate");
    assert!(
        trusted
            .iter()
            .all(|h| h["command"].as_str().unwrap().ends_with("--max-blocks 0")),
        "{trusted:#?}"
    );
    drop(app);
    for asked in [true, false] {
        let (code, doctor) = codex_doctor(&a, asked);
        assert_eq!(code, 1, "{doctor}");
        assert!(
            doctor.contains("not the one closegate ships") && doctor.contains("--max-blocks 0"),
            "{doctor}"
        );
    }
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    let fed = a.server.input("scene:main", 1);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains("--max-blocks 0"),
        "{fed}"
    );
    assert!(
        fed.contains("`codex plugin add closegate@closegate`"),
        "{fed}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), shipped);
}

macro_rules! codex_scenes {
    ($module:ident, $version:expr) => {
        mod $module {
            use super::*;

            fn client() -> Option<Client> {
                require(Kind::Codex, $version)
            }

            #[test]
            fn an_install_from_inside_a_worktree_is_the_one_codex_runs() {
                if let Some(c) = client() {
                    super::an_install_from_inside_a_worktree_is_the_one_codex_runs(&c);
                }
            }

            #[test]
            fn a_reinstall_with_a_new_time_limit_still_runs() {
                if let Some(c) = client() {
                    super::a_reinstall_with_a_new_time_limit_still_runs(&c);
                }
            }

            #[test]
            fn the_main_checkouts_hooks_file_edited_by_the_agent_is_blocked() {
                if let Some(c) = client() {
                    super::the_main_checkouts_hooks_file_edited_by_the_agent_is_blocked(&c);
                }
            }

            #[test]
            fn an_edited_max_blocks_zero_is_never_obeyed_first() {
                if let Some(c) = client() {
                    super::an_edited_max_blocks_zero_is_never_obeyed_first(&c);
                }
            }

            #[test]
            fn trust_comes_from_codex_itself_when_its_binary_is_present() {
                if let Some(c) = client() {
                    super::trust_comes_from_codex_itself_when_its_binary_is_present(&c);
                }
            }

            #[test]
            fn a_plugin_installed_hook_runs_and_doctor_recognises_it() {
                if let Some(c) = client() {
                    super::a_plugin_installed_hook_runs_and_doctor_recognises_it_codex(&c);
                }
            }

            #[test]
            fn an_edited_plugin_hook_is_never_obeyed_first() {
                if let Some(c) = client() {
                    super::an_edited_plugin_hook_is_never_obeyed_first(&c);
                }
            }
        }
    };
}

scenes!(claude_code, Kind::ClaudeCode, CLAUDE_CODE);
scenes!(codex_0_169, Kind::Codex, "0.169.0");
scenes!(codex_0_171, Kind::Codex, "0.171.0");
codex_scenes!(codex_0_169_only, "0.169.0");
codex_scenes!(codex_0_171_only, "0.171.0");
