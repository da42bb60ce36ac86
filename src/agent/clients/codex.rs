//! Codex's row: hooks in the main checkout's `.codex/hooks.json` (project: Codex reads it for
//! every worktree that has a `.codex/` folder) and `$CODEX_HOME/hooks.json` (user); Stop and
//! SubagentStop; `{"decision": "block", "reason": …}` to block, `{}` to let a stop through;
//! timeouts in seconds; every hook trusted in `config.toml` (`agent::codex`).

use super::{Block, Client, Committed, Enabled, Files, Home, Off, Plugin, Root, Shape, Trust};

pub const ROW: Client = Client {
    name: "codex",
    display: "Codex",
    instructions: "AGENTS.md",
    shape: Shape {
        events: &["Stop", "SubagentStop"],
        grouped: true,
        command_key: "command",
        timeout_key: "timeout",
        timeout_ms: false,
        extra: &[("type", "\"command\"")],
        preamble: "",
    },
    accept: "{}\n",
    block: Block::Decision,
    sends_message: true,
    files: Files {
        project: ".codex/hooks.json",
        project_root: Root::MainCheckout,
        local: None,
        user: "hooks.json",
        user_root: Home::CodexHome,
    },
    default_timeout: 600,
    trust: Trust::Codex,
    committed: Committed::BaseTip,
    off: Off::ConfigFalse {
        table: "features",
        key: "hooks",
        user: "config.toml",
        project: ".codex/config.toml",
    },
    plugin: Some(Plugin {
        id: "closegate@closegate",
        add: &[
            "codex plugin marketplace add {source}",
            "codex plugin add closegate@closegate",
        ],
        enabled: Enabled::ConfigTable("plugins"),
    }),
};
