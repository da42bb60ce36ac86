//! GitHub Copilot CLI's row (its hooks reference: `.github/hooks/*.json` in the repository,
//! `~/.copilot/hooks/*.json` for the user, `{"version": 1, "hooks": {EVENT: [entry]}}` without
//! groups, the command under `bash`, `timeoutSec` in seconds with a default of 30, which is why
//! closegate always writes one): the stop point is `agentStop`, whose camelCase input carries
//! `cwd` and `transcriptPath`; `{"decision": "block", "reason": …}` enqueues the reason as the
//! next prompt. closegate writes its own file, `closegate.json`.

use super::{Block, Client, Committed, Files, Home, Off, Root, Shape, Trust};

pub const ROW: Client = Client {
    name: "copilot",
    display: "Copilot CLI",
    instructions: "AGENTS.md",
    shape: Shape {
        events: &["agentStop"],
        grouped: false,
        command_key: "bash",
        timeout_key: "timeoutSec",
        timeout_ms: false,
        extra: &[("type", "\"command\"")],
        preamble: "\"version\": 1",
    },
    accept: "{}\n",
    block: Block::Decision,
    sends_message: false,
    files: Files {
        project: ".github/hooks/closegate.json",
        project_root: Root::Worktree,
        local: None,
        user: ".copilot/hooks/closegate.json",
        user_root: Home::Home,
    },
    default_timeout: 30,
    trust: Trust::None,
    committed: Committed::Head,
    off: Off::None,
    plugin: None,
};
