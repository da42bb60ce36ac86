//! Cursor's row (its agent hooks: `.cursor/hooks.json` in the project, `~/.cursor/hooks.json` for
//! the user, `{"version": 1, "hooks": {EVENT: [entry]}}` without groups): the stop point is
//! `stop`, whose input names no `cwd` (its `workspace_roots`) and counts earlier follow-ups in
//! `loop_count`; `{"followup_message": …}` is submitted as the next user message; `loop_limit`
//! caps those follow-ups (closegate writes 5, above its own `--max-blocks` default of 3, so its
//! loop guard decides and records); timeouts in seconds.

use super::{Block, Client, Committed, Files, Home, Off, Root, Shape, Trust};

pub const ROW: Client = Client {
    name: "cursor",
    display: "Cursor",
    instructions: "AGENTS.md",
    shape: Shape {
        events: &["stop"],
        grouped: false,
        command_key: "command",
        timeout_key: "timeout",
        timeout_ms: false,
        extra: &[("loop_limit", "5")],
        preamble: "\"version\": 1",
    },
    accept: "{}\n",
    block: Block::Followup,
    sends_message: false,
    files: Files {
        project: ".cursor/hooks.json",
        project_root: Root::Worktree,
        local: None,
        user: ".cursor/hooks.json",
        user_root: Home::Home,
    },
    default_timeout: 60,
    trust: Trust::None,
    committed: Committed::Head,
    off: Off::None,
    plugin: None,
};
