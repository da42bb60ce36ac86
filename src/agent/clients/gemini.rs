//! Gemini CLI's row (its hooks reference, docs/hooks/reference.md of google-gemini/gemini-cli):
//! hooks in `.gemini/settings.json` (project) and `~/.gemini/settings.json` (user), in groups
//! like Claude Code's; the stop point is `AfterAgent`, whose input carries `prompt_response` and
//! `stop_hook_active`; `{"decision": "deny", "reason": …}` rejects the response and sends the
//! reason as a new prompt; timeouts in milliseconds (default 60000); stdout must be JSON.

use super::{Block, Client, Committed, Files, Home, Off, Root, Shape, Trust};

pub const ROW: Client = Client {
    name: "gemini",
    display: "Gemini CLI",
    instructions: "GEMINI.md",
    shape: Shape {
        events: &["AfterAgent"],
        grouped: true,
        command_key: "command",
        timeout_key: "timeout",
        timeout_ms: true,
        extra: &[("type", "\"command\"")],
        preamble: "",
    },
    accept: "{}\n",
    block: Block::Deny,
    sends_message: true,
    files: Files {
        project: ".gemini/settings.json",
        project_root: Root::Worktree,
        local: None,
        user: ".gemini/settings.json",
        user_root: Home::Home,
    },
    default_timeout: 60,
    trust: Trust::None,
    committed: Committed::Head,
    off: Off::GeminiSettings,
    plugin: None,
};
