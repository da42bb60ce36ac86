//! Claude Code's row: hooks in `.claude/settings.json` (project), `.claude/settings.local.json`
//! (local) and `~/.claude/settings.json` (user); Stop and SubagentStop; `{"decision": "block",
//! "reason": …}` to block, nothing to let a stop through; timeouts in seconds.

use super::{Client, Committed, Files, Home, Off, Root, Trust};

pub const ROW: Client = Client {
    name: "claude-code",
    display: "Claude Code",
    instructions: "CLAUDE.md",
    events: &crate::agent::settings::EVENTS,
    accept: "",
    files: Files {
        project: ".claude/settings.json",
        project_root: Root::Worktree,
        local: Some(".claude/settings.local.json"),
        user: ".claude/settings.json",
        user_root: Home::Home,
    },
    default_timeout: 600,
    trust: Trust::None,
    committed: Committed::Head,
    // `disableAllHooks` in any settings file turns off every hook those files hold;
    // `allowManagedHooksOnly` and `strictPluginOnlyCustomization` are read from managed settings
    // only (Claude Code's hooks snapshot reads them from `policySettings`).
    off: Off::SettingsKeys {
        managed: "/etc/claude-code/managed-settings.json",
        every_file: &["disableAllHooks"],
        managed_only: &["allowManagedHooksOnly", "strictPluginOnlyCustomization"],
    },
};
