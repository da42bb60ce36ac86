//! One row per agent client (issue 46): everything closegate knows about a client — its
//! `--target` word, the files it reads hooks from, the events it stops at, what the stop hook
//! prints to let a stop through, whom it asks for trust, what an installed hook is compared with —
//! lives in that client's one file (`claude_code.rs`, `codex.rs`,
//! `gemini.rs`, `cursor.rs`, `copilot.rs`). Every command asks the row;
//! `Target::row` is an exhaustive `match`, so a new client is a compile error until it has one.

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;

/// The client a hook runs under (`--target`: `cmd::values` lets clap read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Copilot,
}

impl Target {
    /// Every client, in the order `--help` lists them and `doctor` looks at them.
    pub const ALL: [Target; 5] = [
        Target::ClaudeCode,
        Target::Codex,
        Target::Gemini,
        Target::Cursor,
        Target::Copilot,
    ];

    /// The client's row.
    pub fn row(self) -> &'static Client {
        match self {
            Target::ClaudeCode => &claude_code::ROW,
            Target::Codex => &codex::ROW,
            Target::Gemini => &gemini::ROW,
            Target::Cursor => &cursor::ROW,
            Target::Copilot => &copilot::ROW,
        }
    }

    /// The word `--target` takes.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The command the client runs.
    pub fn command(self) -> String {
        format!("closegate agent stop-hook --target {}", self.as_str())
    }

    /// The command `install` writes: the mode and the time limit the client gives the hook.
    pub fn command_with(self, mode: super::session::Mode, time_limit: u64) -> String {
        format!(
            "{} --mode {} --time-limit {time_limit}",
            self.command(),
            mode.as_str()
        )
    }

    /// What the hook prints when it lets the stop through.
    pub fn accept_output(self) -> &'static str {
        self.row().accept
    }
}

/// What closegate knows about one client.
#[derive(Debug)]
pub struct Client {
    /// The word `--target` takes.
    pub name: &'static str,
    /// The client's name in messages.
    pub display: &'static str,
    /// The instructions file the agent reads (`agent instructions`).
    pub instructions: &'static str,
    /// The shape of its hooks file: events, entries, keys, units.
    pub shape: Shape,
    /// What the stop hook prints to let a stop through.
    pub accept: &'static str,
    /// How the stop hook says "do not stop yet".
    pub block: Block,
    /// Whether the client sends the final message (or a transcript holding it) with every stop:
    /// when it does not, a stop without one is judged on the status document alone, never
    /// "malformed input".
    pub sends_message: bool,
    /// The files the client reads hooks from, by scope.
    pub files: Files,
    /// The client's timeout for a hook that names none, in seconds.
    pub default_timeout: u64,
    /// What the client requires before it runs a hook.
    pub trust: Trust,
    /// What the hook as installed is compared with (SPEC §26.3).
    pub committed: Committed,
    /// The switches that keep the client from running any hook (SPEC §27.3).
    pub off: Off,
    /// closegate as the client's plugin (this repository is its marketplace), when it has them.
    pub plugin: Option<Plugin>,
}

/// closegate installed as a client's plugin (SPEC §27.3).
#[derive(Debug)]
pub struct Plugin {
    /// The plugin's id as the client enables it (`<plugin>@<marketplace>`).
    pub id: &'static str,
    /// The commands that add the marketplace and install the plugin; `{source}` stands for the
    /// marketplace (a clone of closegate's repository, or its git URL).
    pub add: &'static [&'static str],
    /// Where the client keeps the plugin enabled or not.
    pub enabled: Enabled,
}

/// Where a client keeps its plugins enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enabled {
    /// A JSON object of `id: bool` under this key, in every settings file (Claude Code's
    /// `enabledPlugins`); the file read last wins (user, project, local, managed).
    SettingsKey(&'static str),
    /// `[<table>."<id>"] enabled = bool` in the user's configuration (Codex's `plugins`).
    ConfigTable(&'static str),
}

/// The shape of a client's hooks file: `{"hooks": {EVENT: [item, …]}}`, where an item is a group
/// `{"hooks": [entry, …]}` or, for a client without groups, the entry itself; an entry holds the
/// command and the timeout under the client's keys, and the `extra` members.
#[derive(Debug)]
pub struct Shape {
    /// The hook events closegate installs into.
    pub events: &'static [&'static str],
    /// Items are groups (`{"hooks": [entry]}`), else entries.
    pub grouped: bool,
    /// The entry's key for the command (`command`; Copilot CLI: `bash`).
    pub command_key: &'static str,
    /// The entry's key for the timeout (`timeout`; Copilot CLI: `timeoutSec`).
    pub timeout_key: &'static str,
    /// The timeout is in milliseconds (Gemini CLI), else seconds.
    pub timeout_ms: bool,
    /// The entry's other members closegate writes, as (key, JSON text).
    pub extra: &'static [(&'static str, &'static str)],
    /// Members a new file starts with besides `hooks`, as JSON text (`"version": 1`).
    pub preamble: &'static str,
}

/// How the stop hook says "do not stop yet" in a client's protocol (the reason is fed back to
/// the agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// `{"decision": "block", "reason": …}` (Claude Code, Codex, Copilot CLI).
    Decision,
    /// `{"decision": "deny", "reason": …}` (Gemini CLI's AfterAgent: a retry with the reason).
    Deny,
    /// `{"followup_message": …}` (Cursor's stop: submitted as the next user message).
    Followup,
}

/// The hooks files a client reads for a worktree, by `--scope`.
#[derive(Debug)]
pub struct Files {
    /// `--scope project`: the file, relative to the folder `project_root` names.
    pub project: &'static str,
    pub project_root: Root,
    /// `--scope local`: relative to the worktree; `None` when the client has no such file.
    pub local: Option<&'static str>,
    /// `--scope user`: relative to the folder `user_root` names.
    pub user: &'static str,
    pub user_root: Home,
}

/// Which folder a project file is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// The worktree the session runs in.
    Worktree,
    /// The repository's main checkout, for every worktree (Codex).
    MainCheckout,
}

/// Which folder a user file is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// `$HOME`.
    Home,
    /// `$CODEX_HOME`, else `~/.codex`.
    CodexHome,
}

/// What a client requires before it runs a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Nothing: the hook in the file runs.
    None,
    /// Codex's trusted project and per-hook trust hash (`agent::codex`).
    Codex,
}

/// What the stop hook compares the installed entry with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// The worktree's own file at its HEAD (the file lives in the worktree).
    Head,
    /// The base tip's file (the file lives in the main checkout, shared by every worktree).
    BaseTip,
}

/// The switches that keep a client from running closegate's hook, as data `agent::switches`
/// reads (SPEC §27.3).
#[derive(Debug)]
pub enum Off {
    /// JSON settings keys: each of `every_file` set to `true` in any settings file the client
    /// reads turns its hooks off; each of `managed_only` counts only in the managed file at
    /// `managed` (the client reads it nowhere else).
    SettingsKeys {
        managed: &'static str,
        every_file: &'static [&'static str],
        managed_only: &'static [&'static str],
    },
    /// No switch is known (none documented).
    None,
    /// Gemini CLI's: `hooksConfig.enabled: false`, `hooksConfig.disabled` naming the hook, and
    /// folder trust (`agent::gemini_switches`).
    GeminiSettings,
    /// `[table] key = false` in the user's configuration (`user`, under the user folder) or the
    /// project's (`project`, under the worktree) turns hooks off.
    ConfigFalse {
        table: &'static str,
        key: &'static str,
        user: &'static str,
        project: &'static str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant is in `ALL` once, and the names are distinct: adding a client without
    /// listing it here is a compile error (the match has no wildcard).
    #[test]
    fn all_lists_every_client_once() {
        for t in Target::ALL {
            match t {
                Target::ClaudeCode
                | Target::Codex
                | Target::Gemini
                | Target::Cursor
                | Target::Copilot => {}
            }
            assert_eq!(Target::ALL.iter().filter(|o| **o == t).count(), 1);
            let same = Target::ALL.iter().filter(|o| o.as_str() == t.as_str());
            assert_eq!(same.count(), 1, "{}", t.as_str());
        }
    }
}
