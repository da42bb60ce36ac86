//! What the git runner sets on one git process, decided from git's own listing of its
//! configuration (each entry with its level) and the user's environment: pure data, so every
//! rule of the module doc is tested here without starting git.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

/// One entry of `git config --list --show-scope -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `system`, `global`, `local`, `worktree` or `command`.
    pub scope: String,
    /// As git prints it: section and key lowercase, a subsection as written.
    pub key: String,
    /// `None` for a key written with no `=` (a boolean true).
    pub value: Option<OsString>,
}

impl Entry {
    /// Parse git's `-z` listing: `scope NUL key LF value NUL` (`scope NUL key NUL` when the key
    /// has no value). Bytes that are not UTF-8 in a key are kept lossily (git's keys are ASCII
    /// save a subsection, which only ever goes back to git as it came).
    pub fn parse(bytes: &[u8]) -> Vec<Entry> {
        use std::os::unix::ffi::OsStrExt;
        let mut fields = bytes.split(|b| *b == 0);
        let mut entries = Vec::new();
        while let (Some(scope), Some(item)) = (fields.next(), fields.next()) {
            let (key, value) = match item.iter().position(|b| *b == b'\n') {
                Some(at) => (&item[..at], Some(OsStr::from_bytes(&item[at + 1..]).into())),
                None => (item, None),
            };
            entries.push(Entry {
                scope: String::from_utf8_lossy(scope).into_owned(),
                key: String::from_utf8_lossy(key).into_owned(),
                value,
            });
        }
        entries
    }

    /// Written in the repository's own configuration (which the agent can write).
    fn repository(&self) -> bool {
        self.scope == "local" || self.scope == "worktree"
    }

    /// Written in the user's configuration (system or global).
    fn user(&self) -> bool {
        self.scope == "system" || self.scope == "global"
    }
}

/// The user's environment, as far as the neutral values depend on it.
#[derive(Debug, Clone, Default)]
pub struct UserEnv {
    /// `GIT_SSH`: the ssh program git runs when no ssh command is configured.
    pub git_ssh: Option<OsString>,
    /// `SSH_ASKPASS`: git's last resort for a password prompt.
    pub ssh_askpass: Option<OsString>,
    /// Whether `GIT_PROXY_COMMAND` is set (it then wins over every `core.gitProxy`).
    pub proxy_command: bool,
}

impl UserEnv {
    /// Read from this process's environment.
    pub fn from_process() -> UserEnv {
        UserEnv {
            git_ssh: std::env::var_os("GIT_SSH").filter(|v| !v.is_empty()),
            ssh_askpass: std::env::var_os("SSH_ASKPASS").filter(|v| !v.is_empty()),
            proxy_command: std::env::var_os("GIT_PROXY_COMMAND").is_some(),
        }
    }
}

/// What git gets instead when the repository's configuration sets a program key and the user's
/// does not.
#[derive(Debug, Clone, Copy)]
pub enum Neutral {
    /// This value.
    Is(&'static str),
    /// `GIT_SSH` (quoted for the shell) when set, else `ssh`.
    Ssh,
    /// `SSH_ASKPASS` when set, else no helper (git prompts on the terminal).
    AskPass,
}

/// A configuration key (with the aliases that set the same thing) naming a program one of the
/// commands closegate runs may start.
#[derive(Debug)]
pub struct Program {
    /// The key overridden, then its aliases; the user's value is the last of any of them.
    pub keys: &'static [&'static str],
    pub neutral: Neutral,
}

/// The single-valued program keys (see the module doc of `git_cli`). `protocol.ext.allow` is
/// among them because an allowed `ext::` URL (or `remote.<name>.vcs = ext`) runs a command.
pub const PROGRAMS: [Program; 8] = [
    Program {
        keys: &["core.sshcommand"],
        neutral: Neutral::Ssh,
    },
    Program {
        keys: &["core.askpass"],
        neutral: Neutral::AskPass,
    },
    Program {
        keys: &["core.alternaterefscommand"],
        neutral: Neutral::Is("true"),
    },
    Program {
        keys: &["gpg.program", "gpg.openpgp.program"],
        neutral: Neutral::Is("gpg"),
    },
    Program {
        keys: &["gpg.x509.program"],
        neutral: Neutral::Is("gpgsm"),
    },
    Program {
        keys: &["gpg.ssh.program"],
        neutral: Neutral::Is("ssh-keygen"),
    },
    Program {
        keys: &["gpg.ssh.defaultkeycommand"],
        neutral: Neutral::Is(""),
    },
    Program {
        keys: &["protocol.ext.allow", "protocol.allow"],
        neutral: Neutral::Is("never"),
    },
];

/// Everything set on one git process.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// `key = value` given to git after every configuration file (`GIT_CONFIG_COUNT`), in order.
    pub config: Vec<(String, OsString)>,
    /// Variables set in git's environment.
    pub env: Vec<(&'static str, OsString)>,
    /// The repository's configuration names an upload-pack program: `fetch` gets git's own.
    pub upload_pack: bool,
    /// The repository's configuration names a receive-pack program: `push` gets git's own.
    pub receive_pack: bool,
}

impl Plan {
    /// The plan for a git whose configuration lists `entries`, hooks read from `hooks`.
    pub fn new(entries: &[Entry], user: &UserEnv, hooks: &Path) -> Plan {
        let mut plan = Plan::default();
        plan.set("core.hookspath", hooks.as_os_str());
        plan.set("core.fsmonitor", "false");
        plan.set("submodule.recurse", "false");
        plan.set("fetch.recursesubmodules", "false");
        plan.set("push.recursesubmodules", "no");
        plan.no_filters(entries);
        for program in &PROGRAMS {
            plan.program(program, entries, user);
        }
        plan.credential_helpers(entries);
        let repository =
            |key: &dyn Fn(&str) -> bool| entries.iter().any(|e| e.repository() && key(&e.key));
        if repository(&|k| k == "core.gitproxy") && !user.proxy_command {
            plan.env.push(("GIT_PROXY_COMMAND", OsString::new()));
        }
        plan.upload_pack = repository(&|k| remote_key(k, "uploadpack"));
        plan.receive_pack = repository(&|k| remote_key(k, "receivepack"));
        plan
    }

    fn set(&mut self, key: &str, value: impl AsRef<OsStr>) {
        self.config
            .push((key.to_string(), value.as_ref().to_os_string()));
    }

    /// Every filter driver defined at any level: no command, not required.
    fn no_filters(&mut self, entries: &[Entry]) {
        let mut drivers: Vec<&str> = entries
            .iter()
            .filter_map(|e| {
                let rest = e.key.strip_prefix("filter.")?;
                Some(&rest[..rest.rfind('.')?])
            })
            .collect();
        drivers.sort_unstable();
        drivers.dedup();
        for driver in drivers {
            for part in ["clean", "smudge", "process"] {
                self.set(&format!("filter.{driver}.{part}"), "");
            }
            self.set(&format!("filter.{driver}.required"), "false");
        }
    }

    /// A program key the repository sets: the user's value, else the neutral one.
    fn program(&mut self, program: &Program, entries: &[Entry], user: &UserEnv) {
        let ours = |e: &&Entry| program.keys.contains(&e.key.as_str());
        if !entries.iter().filter(ours).any(|e| e.repository()) {
            return;
        }
        let users = entries.iter().filter(ours).rfind(|e| e.user());
        let value = match (users.and_then(|e| e.value.clone()), program.neutral) {
            (Some(value), _) => value,
            (None, Neutral::Is(value)) => value.into(),
            (None, Neutral::Ssh) => match &user.git_ssh {
                Some(ssh) => quoted(ssh),
                None => "ssh".into(),
            },
            (None, Neutral::AskPass) => user.ssh_askpass.clone().unwrap_or_default(),
        };
        self.set(program.keys[0], value);
    }

    /// When the repository sets a credential helper (any URL): the list reset, then the user's
    /// helpers again, in their order (an empty `credential.helper` clears every helper before it).
    fn credential_helpers(&mut self, entries: &[Entry]) {
        let helper = |e: &&Entry| e.key.starts_with("credential.") && e.key.ends_with(".helper");
        if !entries.iter().filter(helper).any(|e| e.repository()) {
            return;
        }
        self.set("credential.helper", "");
        for entry in entries.iter().filter(helper).filter(|e| e.user()) {
            let value = entry.value.clone().unwrap_or_default();
            self.config.push((entry.key.clone(), value));
        }
    }

    /// Set the plan on `cmd`: its configuration overrides and environment.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("GIT_CONFIG_COUNT", self.config.len().to_string());
        for (i, (key, value)) in self.config.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key);
            cmd.env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        for (var, value) in &self.env {
            cmd.env(var, value);
        }
    }

    /// The options placed right after the subcommand `sub`.
    pub fn flags(&self, sub: &OsStr) -> Vec<&'static str> {
        let mut flags = Vec::new();
        if sub == "push" || sub == "commit" {
            flags.push("--no-verify");
        }
        if sub == "push" && self.receive_pack {
            flags.push("--receive-pack=git-receive-pack");
        }
        if sub == "fetch" && self.upload_pack {
            flags.push("--upload-pack=git-upload-pack");
        }
        flags
    }
}

/// `remote.<name>.<what>`.
fn remote_key(key: &str, what: &str) -> bool {
    key.starts_with("remote.") && key.rsplit('.').next() == Some(what)
}

/// `value` single-quoted for the shell git runs an ssh command with.
fn quoted(value: &OsStr) -> OsString {
    let text = value.to_string_lossy().replace('\'', r"'\''");
    format!("'{text}'").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(scope: &str, key: &str, value: &str) -> Entry {
        Entry {
            scope: scope.into(),
            key: key.into(),
            value: Some(value.into()),
        }
    }

    fn plan(entries: &[Entry]) -> Plan {
        Plan::new(entries, &UserEnv::default(), Path::new("/hooks"))
    }

    fn value<'a>(plan: &'a Plan, key: &str) -> Option<&'a OsStr> {
        let found = plan.config.iter().rev().find(|(k, _)| k == key);
        found.map(|(_, v)| v.as_os_str())
    }

    #[test]
    fn the_listing_is_parsed_with_and_without_values() {
        let entries =
            Entry::parse(b"local\0core.bare\nfalse\0local\0core.flag\0global\0a.b\n1\n2\0");
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0], entry("local", "core.bare", "false"));
        assert_eq!(entries[1].value, None);
        assert_eq!(entries[2].value.as_deref(), Some(OsStr::new("1\n2")));
    }

    #[test]
    fn hooks_fsmonitor_and_submodules_are_always_set() {
        let plan = plan(&[]);
        assert_eq!(value(&plan, "core.hookspath"), Some(OsStr::new("/hooks")));
        assert_eq!(value(&plan, "core.fsmonitor"), Some(OsStr::new("false")));
        assert_eq!(value(&plan, "submodule.recurse"), Some(OsStr::new("false")));
        assert!(plan.env.is_empty() && !plan.upload_pack && !plan.receive_pack);
    }

    #[test]
    fn every_filter_driver_at_any_level_is_emptied_even_with_dots_or_equals() {
        let plan = plan(&[
            entry("local", "filter.evil.clean", "touch p"),
            entry("global", "filter.lfs.smudge", "git-lfs smudge %f"),
            entry("local", "filter.a=b.c.process", "x"),
            entry("local", "filter.evil.required", "true"),
        ]);
        for driver in ["evil", "lfs", "a=b.c"] {
            for part in ["clean", "smudge", "process"] {
                let key = format!("filter.{driver}.{part}");
                assert_eq!(value(&plan, &key), Some(OsStr::new("")), "{key}");
            }
            let key = format!("filter.{driver}.required");
            assert_eq!(value(&plan, &key), Some(OsStr::new("false")));
        }
    }

    #[test]
    fn a_program_the_repository_names_becomes_the_users_or_gits_own() {
        let plan = plan(&[
            entry("global", "core.sshcommand", "ssh -i ~/.ssh/ci"),
            entry("local", "core.sshcommand", "touch probe"),
            entry("local", "gpg.program", "touch probe"),
            entry("worktree", "core.alternaterefscommand", "touch probe"),
            entry("local", "protocol.allow", "always"),
        ]);
        let ssh = value(&plan, "core.sshcommand");
        assert_eq!(ssh, Some(OsStr::new("ssh -i ~/.ssh/ci")));
        assert_eq!(value(&plan, "gpg.program"), Some(OsStr::new("gpg")));
        let alternate = value(&plan, "core.alternaterefscommand");
        assert_eq!(alternate, Some(OsStr::new("true")));
        assert_eq!(
            value(&plan, "protocol.ext.allow"),
            Some(OsStr::new("never"))
        );
    }

    #[test]
    fn a_program_only_the_user_names_is_left_alone() {
        let plan = plan(&[
            entry("global", "core.sshcommand", "ssh -i key"),
            entry("system", "credential.helper", "store"),
        ]);
        assert_eq!(value(&plan, "core.sshcommand"), None);
        assert_eq!(value(&plan, "credential.helper"), None);
    }

    #[test]
    fn ssh_and_askpass_fall_back_on_the_users_environment() {
        let entries = [
            entry("local", "core.sshcommand", "touch probe"),
            entry("local", "core.askpass", "touch probe"),
        ];
        let user = UserEnv {
            git_ssh: Some("/opt/my ssh".into()),
            ssh_askpass: Some("/usr/bin/ksshaskpass".into()),
            proxy_command: false,
        };
        let with = Plan::new(&entries, &user, Path::new("/h"));
        let ssh = value(&with, "core.sshcommand");
        assert_eq!(ssh, Some(OsStr::new("'/opt/my ssh'")));
        let askpass = value(&with, "core.askpass");
        assert_eq!(askpass, Some(OsStr::new("/usr/bin/ksshaskpass")));
        let without = plan(&entries);
        assert_eq!(value(&without, "core.sshcommand"), Some(OsStr::new("ssh")));
        assert_eq!(value(&without, "core.askpass"), Some(OsStr::new("")));
    }

    #[test]
    fn credential_helpers_are_reset_to_the_users() {
        let plan = plan(&[
            entry(
                "global",
                "credential.https://github.com.helper",
                "!gh auth git-credential",
            ),
            entry(
                "local",
                "credential.https://github.com.helper",
                "!touch probe",
            ),
            entry("global", "credential.helper", "cache"),
            entry("local", "credential.helper", "!touch probe"),
        ]);
        let helpers: Vec<(&str, &OsStr)> = plan
            .config
            .iter()
            .filter(|(k, _)| k.starts_with("credential."))
            .map(|(k, v)| (k.as_str(), v.as_os_str()))
            .collect();
        assert_eq!(
            helpers,
            [
                ("credential.helper", OsStr::new("")),
                (
                    "credential.https://github.com.helper",
                    OsStr::new("!gh auth git-credential")
                ),
                ("credential.helper", OsStr::new("cache")),
            ]
        );
    }

    #[test]
    fn a_repository_proxy_or_pack_program_is_replaced() {
        let entries = [
            entry("local", "core.gitproxy", "touch probe"),
            entry(
                "local",
                "remote.origin.uploadpack",
                "touch probe; git-upload-pack",
            ),
            entry(
                "local",
                "remote.a.b.receivepack",
                "touch probe; git-receive-pack",
            ),
        ];
        let plan = plan(&entries);
        assert_eq!(plan.env, [("GIT_PROXY_COMMAND", OsString::new())]);
        assert_eq!(
            plan.flags(OsStr::new("fetch")),
            ["--upload-pack=git-upload-pack"]
        );
        assert_eq!(
            plan.flags(OsStr::new("push")),
            ["--no-verify", "--receive-pack=git-receive-pack"]
        );
        let user = UserEnv {
            proxy_command: true,
            ..UserEnv::default()
        };
        assert!(Plan::new(&entries, &user, Path::new("/h")).env.is_empty());
    }

    #[test]
    fn no_verify_goes_where_git_has_it() {
        let plan = plan(&[]);
        assert_eq!(plan.flags(OsStr::new("push")), ["--no-verify"]);
        assert_eq!(plan.flags(OsStr::new("commit")), ["--no-verify"]);
        for sub in ["fetch", "update-ref", "read-tree", "worktree", "add"] {
            assert!(plan.flags(OsStr::new(sub)).is_empty(), "{sub}");
        }
    }
}
