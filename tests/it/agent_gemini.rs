//! The stop hook driven by the real Gemini CLI 0.61.0 (npm `@google/gemini-cli`, SPEC §27.3),
//! headless (`gemini -p … --yolo`) against the scripted model server speaking Google's Gemini
//! API (`GOOGLE_GEMINI_BASE_URL` at 127.0.0.1), running real shell tools in the agent's worktree
//! and its real `AfterAgent` hook, installed by `closegate agent install --target gemini` and
//! committed on the base. Skipped, saying so, without the client (fails under
//! `CLOSEGATE_REQUIRE_CLIENTS=1`).
//!
//! Attacks, each a scene: a false "done" (denied, the reason fed back as the next prompt; the
//! honest stop after it judged on its own turn although Gemini CLI's `prompt_response` still
//! carries the false one); the same false "done" three times (the loop guard gives up, recorded); the hook
//! disabled by name in the worktree's settings mid-session (blocked until undone); hooks turned
//! off in the user's settings before a session (no hook runs, a false "done" passes, and doctor
//! names the switch).

use serde_json::{Value, json};

use crate::clients::{
    Agent, Client, FALSE_DONE, GEMINI, Kind, PASSING_CONFIG, QUESTION, REAL_DONE, Ran, WORK,
    require, run, say,
};
use crate::fixture::git;

fn client() -> Option<Client> {
    require(Kind::Gemini, GEMINI)
}

fn script(main: Vec<Value>) -> Value {
    json!({"threads": {"scene:main": main}})
}

/// Gemini CLI ended on its own (exit 0) having asked for exactly `steps` of the main thread.
fn ran_steps(a: &Agent, ran: &Ran, steps: &[u64]) {
    assert_eq!(
        ran.code, 0,
        "stdout: {}\nstderr: {}",
        ran.stdout, ran.stderr
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
fn accepted_at_head(a: &Agent) {
    let head = git(&a.s.wt, &["rev-parse", "HEAD"]).trim().to_string();
    let accepted = a
        .audit()
        .into_iter()
        .any(|r| r["event"] == "signal" && r["accepted"] == true && r["commit"] == head.as_str());
    assert!(
        accepted,
        "no accepted signal record at {head}: {:#?}",
        a.audit()
    );
}

#[test]
fn gemini_false_done_is_denied_fed_back_fixed_and_recorded() {
    let Some(c) = client() else { return };
    let steps = vec![say(FALSE_DONE), run(WORK), say(REAL_DONE)];
    let a = Agent::new(&c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    let fed = a.server.input("scene:main", 1);
    assert!(
        fed.contains("closegate refused this stop") && fed.contains("signal-done-contradicted"),
        "{fed}"
    );
    assert!(a.server.input("scene:main", 2).contains("VERIFIED"));
    accepted_at_head(&a);
}

/// Gemini CLI's `prompt_response` after a denied "done" still carries it (every model turn since
/// the prompt): the honest blocked stop after it is judged on its own turn, read from the
/// transcript, and accepted with no extra turn.
#[test]
fn gemini_an_honest_stop_after_a_denied_done_is_judged_on_its_own_turn() {
    let Some(c) = client() else { return };
    let honest =
        "UNVERIFIED: waiting for the user. Should the parser also accept tabs?\n\n@signal blocked";
    let steps = vec![
        say(FALSE_DONE),
        run("closegate close --state blocked --blocked-on 'the user: tabs or spaces?'"),
        say(honest),
    ];
    let a = Agent::new(
        &c,
        &script(steps),
        PASSING_CONFIG,
        Some(&["--mode", "always"]),
    );
    ran_steps(&a, &a.run(), &[0, 1, 2]);
    assert!(
        a.server
            .input("scene:main", 1)
            .contains("closegate refused this stop")
    );
}

#[test]
fn gemini_a_question_passes_and_a_true_done_needs_no_extra_turn() {
    let Some(c) = client() else { return };
    let a = Agent::new(&c, &script(vec![say(QUESTION)]), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0]);
    let steps = vec![run(WORK), say(REAL_DONE)];
    let a = Agent::new(&c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1]);
    accepted_at_head(&a);
}

#[test]
fn gemini_a_repeated_false_claim_gives_up_after_max_blocks() {
    let Some(c) = client() else { return };
    let a = Agent::new(
        &c,
        &script(vec![say(FALSE_DONE); 4]),
        PASSING_CONFIG,
        Some(&[]),
    );
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let gave_up: Vec<Value> = (a.audit().into_iter())
        .filter(|r| r["gave_up"] == true)
        .collect();
    assert_eq!(gave_up.len(), 1, "{gave_up:#?}");
    assert_eq!(gave_up[0]["hook"], "gemini", "{gave_up:#?}");
}

/// The agent lists closegate's hook in `hooksConfig.disabled` of the worktree's settings: the
/// session still runs it (Gemini CLI read its hooks at start), and it blocks naming the switch
/// until the file is put back.
#[test]
fn gemini_the_hook_disabled_mid_session_is_blocked_until_undone() {
    let Some(c) = client() else { return };
    let disable = "python3 -c \"import json; p='.gemini/settings.json'; s=json.load(open(p)); \
                   s['hooksConfig']={'disabled': [h['command'] for g in s['hooks']['AfterAgent'] \
                   for h in g['hooks']]}; json.dump(s, open(p, 'w'))\"";
    let steps = vec![
        run(disable),
        say(QUESTION),
        run("git checkout HEAD -- .gemini/settings.json"),
        say(QUESTION),
    ];
    let a = Agent::new(&c, &script(steps), PASSING_CONFIG, Some(&[]));
    ran_steps(&a, &a.run(), &[0, 1, 2, 3]);
    let fed = a.server.input("scene:main", 2);
    assert!(
        fed.contains("agent-hook-inactive") && fed.contains("hooksConfig.disabled"),
        "{fed}"
    );
}

/// `hooksConfig.enabled: false` in the user's settings before a session: Gemini CLI runs no hook
/// (a false "done" passes with no extra turn), and doctor, clean before, names the switch.
#[test]
fn gemini_hooks_off_keeps_the_session_from_running_the_hook_and_doctor_says_so() {
    let Some(c) = client() else { return };
    let a = Agent::new(
        &c,
        &script(vec![say(FALSE_DONE)]),
        PASSING_CONFIG,
        Some(&[]),
    );
    let doctor = ["agent", "doctor", "--target", "gemini"];
    let (code, out, _) = a.closegate(&a.s.wt, &doctor);
    assert_eq!(code, 0, "{out}");
    let file = a.home.join(".gemini/settings.json");
    let mut settings: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    settings["hooksConfig"] = json!({"enabled": false});
    std::fs::write(&file, settings.to_string()).unwrap();
    let (code, out, _) = a.closegate(&a.s.wt, &doctor);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("agent-hook-inactive") && out.contains("hooksConfig.enabled: false"),
        "{out}"
    );
    ran_steps(&a, &a.run(), &[0]);
    assert!(
        !a.audit().iter().any(|r| r["event"] == "signal"),
        "{:#?}",
        a.audit()
    );
}
