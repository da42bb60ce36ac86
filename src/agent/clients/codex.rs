//! Codex's row: hooks in the main checkout's `.codex/hooks.json` (project: Codex reads it for
//! every worktree that has a `.codex/` folder) and `$CODEX_HOME/hooks.json` (user); Stop and
//! SubagentStop; `{"decision": "block", "reason": …}` to block, `{}` to let a stop through;
//! timeouts in seconds; every hook trusted in `config.toml` (`agent::codex`).

use super::{Client, Committed, Files, Home, Off, Root, Trust};

pub const ROW: Client = Client {
    name: "codex",
    display: "Codex",
    instructions: "AGENTS.md",
    events: &crate::agent::settings::EVENTS,
    accept: "{}\n",
    files: Files {
        project: ".codex/hooks.json",
        project_root: Root::MainCheckout,
        local: None,
        user: "hooks.json",
        user_root: Home::CodexHome,
    },
    default_timeout: crate::agent::codex::DEFAULT_TIMEOUT,
    trust: Trust::Codex,
    committed: Committed::BaseTip,
    off: Off::ConfigFalse {
        table: "features",
        key: "hooks",
        user: "config.toml",
        project: ".codex/config.toml",
    },
};
