//! Gemini CLI, Cursor and GitHub Copilot CLI (SPEC §27.3): `agent install`, `agent hooks`,
//! `agent stop-hook` and `agent doctor` for each, tested against each client's documented hook
//! schema (docs/agents.md cites each field's source). None of the three is driven for real here:
//! Cursor is not on a package registry, Copilot CLI needs a GitHub login for its model, and
//! Gemini CLI was not installed (see docs/agents.md).
//!
//! Attacks: a false "done" in the client's own input shape; a stop the client sends no message
//! with, in `always` mode; the hook file emptied after it was committed (compared with HEAD's);
//! Cursor's `loop_count` of the wrong type (malformed input: let through, never wedged).

use std::path::Path;

use serde_json::{Value, json};

use crate::agent::{FALSE_DONE, Finishing, PASSING_CONFIG, QUESTION, REAL_DONE};
use crate::agent_install::run;
use crate::fixture::git;
use crate::scene::Scene;

/// The hook's answer, as one JSON object (`{}` to let the stop through).
fn answer(s: &Scene, target: &str, extra: &[&str], input: &Value) -> Value {
    let mut args = vec!["agent", "stop-hook", "--target", target];
    args.extend_from_slice(extra);
    let (code, out, err) = run(s, &s.wt, &args, Some(input.to_string().as_bytes()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "one JSON object: {out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn install(s: &Scene, target: &str) -> Value {
    let (code, out, err) = run(s, &s.wt, &["agent", "install", "--target", target], None);
    assert_eq!(code, 0, "{out}{err}");
    let rel = match target {
        "gemini" => ".gemini/settings.json",
        "cursor" => ".cursor/hooks.json",
        _ => ".github/hooks/closegate.json",
    };
    assert!(out.contains(rel), "{out}");
    serde_json::from_str(&std::fs::read_to_string(s.wt.join(rel)).unwrap()).unwrap()
}

fn doctor_ok(s: &Scene, target: &str) {
    let (code, out, err) = run(s, &s.wt, &["agent", "doctor", "--target", target], None);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("ok: the stop hook runs as installed ({target})")),
        "{out}"
    );
}

const COMMAND: &str = "closegate agent stop-hook --target {} --mode claims --time-limit 600";

fn command(target: &str) -> String {
    COMMAND.replace("{}", target)
}

/// Gemini CLI: `hooks.AfterAgent` groups in `.gemini/settings.json`, the timeout in
/// milliseconds; the AfterAgent input's `prompt_response` is judged; a false "done" is answered
/// `{"decision": "deny", "reason": …}` (Gemini retries with the reason as the prompt), a true
/// one `{}`; uninstall gives the file back.
#[test]
fn gemini_cli_after_agent() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    // Gemini CLI runs hooks only in a folder it trusts (gemini_cli_off_switches).
    trust_for_gemini(&s, "TRUST_FOLDER");
    let file = install(&s, "gemini");
    let hook = &file["hooks"]["AfterAgent"][0]["hooks"][0];
    assert_eq!(
        hook,
        &json!({"command": command("gemini"), "timeout": 630_000, "type": "command"})
    );
    doctor_ok(&s, "gemini");
    let input = |message: &str| {
        json!({
            "session_id": "s1", "transcript_path": "/nonexistent.json", "cwd": s.wt,
            "hook_event_name": "AfterAgent", "timestamp": "2026-12-07T10:00:00Z",
            "prompt": "add x", "prompt_response": message, "stop_hook_active": false,
        })
    };
    let denied = answer(&s, "gemini", &[], &input(FALSE_DONE));
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .unwrap()
            .contains("signal-done-contradicted"),
        "{denied}"
    );
    assert_eq!(denied.as_object().unwrap().len(), 2, "{denied}");
    assert_eq!(answer(&s, "gemini", &[], &input(QUESTION)), json!({}));
    // `prompt_response` joins every model turn since the prompt: the last one is read from the
    // transcript, and only when `prompt_response` ends with it on a line of its own. Attack: a
    // record the agent appended to the transcript that the model never sent (a question, so
    // the false "done" would pass): the whole `prompt_response` is judged.
    let transcript = s.home.path().join("gemini-session.jsonl");
    let records = |last: &str| {
        let lines = [
            json!({"type": "user", "content": [{"text": "add x"}]}),
            json!({"type": "gemini", "content": FALSE_DONE}),
            json!({"type": "gemini", "content": last}),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        std::fs::write(&transcript, text.join("\n") + "\n").unwrap();
    };
    let with = |response: String| {
        let mut i = input(&response);
        i["transcript_path"] = json!(transcript);
        i
    };
    records(QUESTION);
    let forged = answer(&s, "gemini", &[], &with(FALSE_DONE.to_string()));
    assert_eq!(forged["decision"], "deny", "{forged}");
    let asked = answer(
        &s,
        "gemini",
        &[],
        &with(format!("{FALSE_DONE}\n{QUESTION}")),
    );
    assert_eq!(
        asked,
        json!({}),
        "the last turn, a question, is judged alone"
    );
    s.close();
    assert_eq!(answer(&s, "gemini", &[], &input(REAL_DONE)), json!({}));
    let (code, _, err) = run(
        &s,
        &s.wt,
        &["agent", "uninstall", "--target", "gemini"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let back = std::fs::read_to_string(s.wt.join(".gemini/settings.json")).unwrap();
    assert_eq!(back.trim(), "{}");
}

/// Gemini CLI's trust rule for the worktree in the user's `~/.gemini/trustedFolders.json`.
fn trust_for_gemini(s: &Scene, level: &str) {
    let dir = s.home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let rules = json!({ s.wt.to_str().unwrap(): level });
    std::fs::write(dir.join("trustedFolders.json"), rules.to_string()).unwrap();
}

/// `agent doctor --target gemini`: exit 1 with `agent-hook-inactive` lines containing each of
/// `needles`.
fn doctor_names(s: &Scene, needles: &[&str]) {
    let (code, out, err) = run(s, &s.wt, &["agent", "doctor", "--target", "gemini"], None);
    assert_eq!(code, 1, "{out}{err}");
    for needle in needles {
        assert!(out.contains(needle), "{needle}: {out}");
    }
}

/// SPEC §27.3, Gemini CLI 0.61's switches (read in its bundle, driven in agent_clients.rs):
/// `hooksConfig.enabled: false` in the user's settings; `hooksConfig.disabled` naming closegate's hook in the worktree's own settings
/// file, beside the committed hook; the trust rule for the worktree dropped or turned to
/// DO_NOT_TRUST (Gemini CLI runs no hook, not even the user's, in a folder it does not trust).
/// Attacks, each: doctor exits 1 naming the file and the key, and the stop hook blocks a
/// question (which passes once the switch is undone).
#[test]
fn gemini_cli_off_switches() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    trust_for_gemini(&s, "TRUST_FOLDER");
    install(&s, "gemini");
    git(&s.wt, &["add", ".gemini/settings.json"]);
    git(&s.wt, &["commit", "-qm", "the stop hook"]);
    doctor_ok(&s, "gemini");
    let input = json!({
        "session_id": "s1", "cwd": s.wt, "hook_event_name": "AfterAgent",
        "prompt": "add x", "prompt_response": QUESTION, "stop_hook_active": false,
    });
    let blocked = |needle: &str| {
        let denied = answer(&s, "gemini", &[], &input);
        assert_eq!(denied["decision"], "deny", "{denied}");
        let reason = denied["reason"].as_str().unwrap();
        assert!(
            reason.contains("agent-hook-inactive") && reason.contains(needle),
            "{reason}"
        );
    };
    let user = s.home.path().join(".gemini/settings.json");
    std::fs::write(&user, r#"{"hooksConfig": {"enabled": false}}"#).unwrap();
    doctor_names(&s, &["hooksConfig.enabled: false", user.to_str().unwrap()]);
    blocked("hooksConfig.enabled");
    std::fs::remove_file(&user).unwrap();
    doctor_ok(&s, "gemini");

    let project = s.wt.join(".gemini/settings.json");
    let committed = std::fs::read_to_string(&project).unwrap();
    let mut edited: Value = serde_json::from_str(&committed).unwrap();
    edited["hooksConfig"] = json!({"disabled": [command("gemini")]});
    std::fs::write(&project, edited.to_string()).unwrap();
    doctor_names(&s, &["hooksConfig.disabled", project.to_str().unwrap()]);
    blocked("hooksConfig.disabled");
    std::fs::write(&project, &committed).unwrap();
    assert_eq!(answer(&s, "gemini", &[], &input), json!({}));

    for level in ["DO_NOT_TRUST", ""] {
        if level.is_empty() {
            std::fs::remove_file(s.home.path().join(".gemini/trustedFolders.json")).unwrap();
        } else {
            trust_for_gemini(&s, level);
        }
        doctor_names(&s, &["does not trust", "trustedFolders.json"]);
        blocked("does not trust");
    }
    trust_for_gemini(&s, "TRUST_FOLDER");
    assert_eq!(answer(&s, "gemini", &[], &input), json!({}));
}

/// Cursor: `{"version": 1, "hooks": {"stop": [entry]}}` in `.cursor/hooks.json` (no groups),
/// `loop_limit` above closegate's own guard; the stop input names no `cwd` (its
/// `workspace_roots`) and no message: in `always` mode a stop without a signal is answered
/// `{"followup_message": …}`, in `claims` mode a stop that claims nothing passes with `{}`.
#[test]
fn cursor_stop() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let file = install(&s, "cursor");
    assert_eq!(file["version"], 1, "{file}");
    assert_eq!(
        file["hooks"]["stop"][0],
        json!({"command": command("cursor"), "loop_limit": 5, "timeout": 630})
    );
    doctor_ok(&s, "cursor");
    let input = |loops: Value| {
        json!({
            "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "stop",
            "workspace_roots": [s.wt], "status": "completed", "loop_count": loops,
            "cursor_version": "2.0.77",
        })
    };
    let followup = answer(&s, "cursor", &["--mode", "always"], &input(json!(0)));
    let message = followup["followup_message"]
        .as_str()
        .unwrap_or_else(|| panic!("{followup}"));
    assert!(message.contains("signal-missing"), "{message}");
    assert_eq!(followup.as_object().unwrap().len(), 1, "{followup}");
    assert_eq!(answer(&s, "cursor", &[], &input(json!(1))), json!({}));
    // Malformed: never wedged, let through with `{}`.
    assert_eq!(answer(&s, "cursor", &[], &input(json!("many"))), json!({}));
    let (code, _, err) = run(
        &s,
        &s.wt,
        &["agent", "uninstall", "--target", "cursor"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let back = std::fs::read_to_string(s.wt.join(".cursor/hooks.json")).unwrap();
    assert_eq!(back.trim(), "{\"version\": 1}");
}

/// GitHub Copilot CLI: closegate's own `.github/hooks/closegate.json`, `{"version": 1, "hooks":
/// {"agentStop": [{"type": "command", "bash": …, "timeoutSec": …}]}}` with the timeout always
/// written (Copilot's default is 30 s); the camelCase agentStop input (`cwd`, `transcriptPath`)
/// is answered `{"decision": "block", "reason": …}` when the stop does not hold, `{}` when it
/// passes. Attack: the committed hook file emptied: blocked with the difference from HEAD's.
#[test]
fn copilot_cli_agent_stop() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let file = install(&s, "copilot");
    assert_eq!(file["version"], 1, "{file}");
    assert_eq!(
        file["hooks"]["agentStop"][0],
        json!({"bash": command("copilot"), "timeoutSec": 630, "type": "command"})
    );
    doctor_ok(&s, "copilot");
    let input = json!({
        "timestamp": 1_704_614_750_000u64, "cwd": s.wt, "sessionId": "01HW",
        "transcriptPath": "/nonexistent.jsonl", "stopReason": "end_turn",
    });
    let blocked = answer(&s, "copilot", &["--mode", "always"], &input);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    assert!(
        blocked["reason"]
            .as_str()
            .unwrap()
            .contains("signal-missing"),
        "{blocked}"
    );
    assert_eq!(answer(&s, "copilot", &[], &input), json!({}));

    git(&s.wt, &["add", ".github/hooks/closegate.json"]);
    git(&s.wt, &["commit", "-qm", "the stop hook"]);
    std::fs::write(s.wt.join(".github/hooks/closegate.json"), "{}\n").unwrap();
    let blocked = answer(&s, "copilot", &[], &input);
    let reason = blocked["reason"].as_str().unwrap();
    assert!(
        reason.contains("agent-hook-inactive") && reason.contains("holds no closegate hook"),
        "{reason}"
    );
}

/// `agent hooks --target NAME` prints each client's documented snippet, and `agent
/// instructions` names the file the client reads.
#[test]
fn hooks_and_instructions_speak_each_clients_shape() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    for (target, event, file) in [
        ("gemini", "AfterAgent", "GEMINI.md"),
        ("cursor", "stop", "AGENTS.md"),
        ("copilot", "agentStop", "AGENTS.md"),
    ] {
        let (code, out, err) = run(&s, &s.wt, &["agent", "hooks", "--target", target], None);
        assert_eq!(code, 0, "{err}");
        let snippet: Value = serde_json::from_str(&out).unwrap();
        assert!(snippet["hooks"][event].is_array(), "{snippet}");
        let args = ["agent", "instructions", "--target", target];
        let (_, out, _) = run(&s, &s.wt, &args, None);
        assert!(out.contains(&format!("paste into {file}")), "{out}");
    }
    assert!(
        !Path::new(&s.wt.join(".gemini")).exists(),
        "hooks writes nothing"
    );
}
