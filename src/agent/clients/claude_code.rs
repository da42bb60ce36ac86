//! Claude Code's row: hooks in `.claude/settings.json` (project), `.claude/settings.local.json`
//! (local) and `~/.claude/settings.json` (user); Stop and SubagentStop; `{"decision": "block",
//! "reason": …}` to block, nothing to let a stop through; timeouts in seconds.

use super::{Block, Client, Committed, Enabled, Files, Home, Off, Plugin, Root, Shape, Trust};

pub const ROW: Client = Client {
    name: "claude-code",
    display: "Claude Code",
    instructions: "CLAUDE.md",
    shape: Shape {
        events: &["Stop", "SubagentStop"],
        grouped: true,
        command_key: "command",
        timeout_key: "timeout",
        timeout_ms: false,
        extra: &[("type", "\"command\"")],
        preamble: "",
    },
    accept: "",
    block: Block::Decision,
    sends_message: true,
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
    plugin: Some(Plugin {
        id: "closegate@closegate",
        add: &[
            "claude plugin marketplace add {source}",
            "claude plugin install closegate@closegate",
        ],
        enabled: Enabled::SettingsKey("enabledPlugins"),
    }),
};
