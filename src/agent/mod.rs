//! The harnesses agents run in (SPEC §18, §26.3): their Stop / SubagentStop hook input, their
//! transcripts, the stop hook's judgement (`stop`), and where and how each harness reads its
//! hooks (`settings`, `install`, `codex`, `doctor`); what each client is, one row per client
//! (`clients`).

pub mod answer;
pub mod blocks;
pub mod bounded;
pub mod clients;
pub mod codex;
pub mod codex_app;
pub mod codex_plugin;
pub mod decided;
pub mod doctor;
pub mod drift;
pub mod gemini_switches;
pub mod install;
pub mod place;
pub mod session;
pub mod settings;
pub mod stop;
pub mod switches;

use std::path::PathBuf;

use serde_json::Value;

pub use clients::Target;

/// The paragraph for `AGENTS.md` / `CLAUDE.md` that tells the agent the protocol (SPEC §18).
pub fn instructions(target: Target) -> String {
    let file = target.row().instructions;
    format!(
        "<!-- closegate: paste into {file} -->\n\
         ## Finishing work (closegate)\n\
         \n\
         Work on your own branch in your own worktree. When you stop:\n\
         \n\
         1. Commit your work. Uncommitted work does not count, and a branch that adds nothing is refused.\n\
         2. Run `closegate close --abstract \"what you did and where it stands\"`: it writes the status\n\
         \x20  document `_EXEC_STATUS.md` from git (use `--state stop-2-ready` if the work needs the\n\
         \x20  owner, `--state closed-without-merge` if it is not to be merged).\n\
         3. Run `closegate check`: it runs the project's checks on your exact commit. Do not edit\n\
         \x20  tests, CI, `.closegate.toml` or agent settings to make it pass: those changes go to a human.\n\
         \x20  Never run `closegate approve` or `closegate reject`, not even with `--yes`: they are a\n\
         \x20  human's review of your work. On PENDING_REVIEW, stop and say what needs review.\n\
         4. End your final message with the verdict token `closegate check` printed as the first word\n\
         \x20  of its first line (VERIFIED, UNVERIFIED, PENDING_REVIEW or FAIL), and `@signal done` as its\n\
         \x20  last line (or `@signal blocked` when you are waiting on something, `@signal no_op` when\n\
         \x20  there was nothing to do).\n\
         \n\
         A stop hook checks the claim: a false one is sent back to you with the reason. A question to\n\
         the user or a progress note needs none of this."
    )
}

/// The fields of a Stop / SubagentStop hook input closegate reads; every other field is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopInput {
    pub cwd: PathBuf,
    pub event: Option<String>,
    pub stop_hook_active: bool,
    pub last_assistant_message: Option<String>,
    /// Gemini CLI's `prompt_response`: the text of every model turn since the user's prompt,
    /// joined by newlines (blocked turns included), not the final message alone.
    pub prompt_response: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub agent_transcript_path: Option<PathBuf>,
}

/// Read the hook input; the error is one line saying what is wrong with it.
pub fn parse_input(bytes: &[u8]) -> Result<StopInput, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the hook input is not JSON: {e}"))?;
    let Value::Object(map) = &value else {
        return Err("the hook input is not a JSON object".into());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("the hook input's `{key}` is not a string")),
        }
    };
    // Cursor names no `cwd`: its workspace roots, the first one.
    let root = match map.get("workspace_roots") {
        Some(Value::Array(roots)) => roots.first().and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    let Some(cwd) = text("cwd")?.or(root) else {
        return Err("the hook input has no `cwd`".into());
    };
    let stop_hook_active = match map.get("stop_hook_active") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("the hook input's `stop_hook_active` is not a boolean".into()),
    };
    // Cursor counts the follow-ups of this loop instead.
    let looped = match map.get("loop_count") {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_u64().is_some_and(|n| n > 0),
        Some(_) => return Err("the hook input's `loop_count` is not a count".into()),
    };
    Ok(StopInput {
        cwd: PathBuf::from(cwd),
        event: text("hook_event_name")?,
        stop_hook_active: stop_hook_active || looped,
        last_assistant_message: text("last_assistant_message")?,
        prompt_response: text("prompt_response")?,
        // Copilot CLI's camelCase input.
        transcript_path: text("transcript_path")?
            .or(text("transcriptPath")?)
            .map(PathBuf::from),
        agent_transcript_path: text("agent_transcript_path")?.map(PathBuf::from),
    })
}

impl StopInput {
    /// The transcript to read when no `last_assistant_message` was sent: the subagent's own for
    /// SubagentStop, else the session's.
    pub fn transcript(&self) -> Option<&PathBuf> {
        let subagent = self.event.as_deref() == Some("SubagentStop");
        match (&self.agent_transcript_path, subagent) {
            (Some(own), true) => Some(own),
            _ => self.transcript_path.as_ref(),
        }
    }
}

/// The text of the last assistant message of a JSONL transcript: Claude Code's lines
/// (`{"type": "assistant", "message": {"content": [{"type": "text", "text": …}, …]}}`) or
/// Codex's (`{"type": "response_item", "payload": {"type": "message", "role": "assistant",
/// "content": [{"type": "output_text", "text": …}]}}`) or Gemini CLI's (`{"type": "gemini",
/// "content": …}`, also inside a `{"$set": {"messages": […]}}` rewrite). Lines that are not JSON
/// are skipped.
pub fn last_assistant_text(jsonl: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(jsonl);
    text.lines().rev().find_map(|line| {
        let value: Value = serde_json::from_str(line).ok()?;
        if let Some(messages) = value["$set"]["messages"].as_array() {
            return messages.iter().rev().find_map(assistant_text);
        }
        assistant_text(&value)
    })
}

/// The text of one transcript record when it is an assistant message with text.
fn assistant_text(value: &Value) -> Option<String> {
    let content = if value["type"] == "assistant" {
        &value["message"]["content"]
    } else if value["payload"]["type"] == "message" && value["payload"]["role"] == "assistant" {
        &value["payload"]["content"]
    } else if (value["type"] == "message" && value["role"] == "assistant")
        || value["type"] == "gemini"
    {
        &value["content"]
    } else {
        return None;
    };
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| matches!(b["type"].as_str(), Some("text" | "output_text")))
                .filter_map(|b| b["text"].as_str())
                .collect();
            texts.join("\n")
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_last_assistant_text_skips_tool_use_and_user_lines() {
        let jsonl = concat!(
            r#"{"type":"user","message":{"role":"user","content":"do it"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"VERIFIED\nall good\n@signal done"}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}"#,
            "\n",
            "not json\n",
        );
        assert_eq!(
            last_assistant_text(jsonl.as_bytes()).as_deref(),
            Some("VERIFIED\nall good\n@signal done")
        );
    }

    #[test]
    fn input_errors_are_one_line() {
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"cwd": 3}"#,
            r#"{"cwd": "/", "stop_hook_active": "yes"}"#,
        ] {
            let err = parse_input(bad.as_bytes()).unwrap_err();
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
