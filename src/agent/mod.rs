//! The harnesses agents run in (SPEC §18): their Stop / SubagentStop hook input, their
//! transcripts, and their settings files (`settings`).

pub mod settings;

use std::path::PathBuf;

use serde_json::Value;

/// The harness a hook runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    #[value(name = "claude-code")]
    ClaudeCode,
    #[value(name = "codex")]
    Codex,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::ClaudeCode => "claude-code",
            Target::Codex => "codex",
        }
    }

    /// The command the harness runs.
    pub fn command(self) -> String {
        format!("closegate agent stop-hook --target {}", self.as_str())
    }

    /// What the hook prints when it lets the stop through: nothing, or `{}` for Codex.
    pub fn accept_output(self) -> &'static str {
        match self {
            Target::ClaudeCode => "",
            Target::Codex => "{}\n",
        }
    }
}

/// The fields of a Stop / SubagentStop hook input closegate reads; every other field is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopInput {
    pub cwd: PathBuf,
    pub event: Option<String>,
    pub stop_hook_active: bool,
    pub last_assistant_message: Option<String>,
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
    let Some(cwd) = text("cwd")? else {
        return Err("the hook input has no `cwd`".into());
    };
    let stop_hook_active = match map.get("stop_hook_active") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("the hook input's `stop_hook_active` is not a boolean".into()),
    };
    Ok(StopInput {
        cwd: PathBuf::from(cwd),
        event: text("hook_event_name")?,
        stop_hook_active,
        last_assistant_message: text("last_assistant_message")?,
        transcript_path: text("transcript_path")?.map(PathBuf::from),
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
/// "content": [{"type": "output_text", "text": …}]}}`). Lines that are not JSON are skipped.
pub fn last_assistant_text(jsonl: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(jsonl);
    text.lines().rev().find_map(|line| {
        let value: Value = serde_json::from_str(line).ok()?;
        let content = if value["type"] == "assistant" {
            &value["message"]["content"]
        } else if value["payload"]["type"] == "message" && value["payload"]["role"] == "assistant" {
            &value["payload"]["content"]
        } else if value["type"] == "message" && value["role"] == "assistant" {
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
    })
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
