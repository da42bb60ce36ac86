//! What `closegate agent` prints (SPEC §18, §26.3): the stop hook's answer in the harness's
//! protocol and its note on stderr, and what `install` / `uninstall` did and what to do next.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::escape;
use crate::agent::Target;
use crate::agent::answer::{Answer, Note};
use crate::agent::clients::{Block as Shape, Root};
use crate::agent::install::{self, Outcome, Scope};

/// The stop hook's answer: the harness's line on `out` (accept output, or the block decision),
/// and why a stop was let through on `err`. Write errors are ignored: the hook never fails.
pub fn stop_answer(answer: &Answer, target: Target, out: &mut dyn Write, err: &mut dyn Write) {
    match &answer.note {
        Some(Note::Malformed(why)) => {
            let _ = writeln!(
                err,
                "closegate agent stop-hook: {}; the stop is let through",
                escape(why)
            );
        }
        Some(Note::GaveUp {
            max_blocks,
            unkept,
            root,
        }) => {
            let why = match unkept {
                None => format!("{max_blocks} consecutive blocks"),
                Some(w) => format!(
                    "a second consecutive block (the block counter cannot be kept: {})",
                    escape(w)
                ),
            };
            let _ = writeln!(
                err,
                "closegate agent stop-hook: {why} for {}; the stop is let through (recorded)",
                root.display()
            );
        }
        None => {}
    }
    match &answer.block {
        None => {
            let _ = out.write_all(target.accept_output().as_bytes());
        }
        Some(reason) => {
            let line = match target.row().block {
                Shape::Decision => serde_json::to_string(&Block::new(reason)),
                Shape::Deny => serde_json::to_string(&Block::deny(reason)),
                Shape::Followup => serde_json::to_string(&Followup {
                    followup_message: reason.to_string(),
                }),
            };
            let _ = writeln!(out, "{}", line.expect("strings serialize"));
        }
    }
    let _ = out.flush();
}

/// The line both harnesses read as "do not stop yet": `{"decision": "block", "reason": …}`
/// (Claude Code's and Codex's Stop hook output; the reason is fed back to the agent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Always `block`.
    pub decision: String,
    pub reason: String,
}

impl Block {
    pub fn new(reason: &str) -> Block {
        Block {
            decision: "block".to_string(),
            reason: reason.to_string(),
        }
    }

    /// Gemini CLI's AfterAgent: `deny` rejects the response and sends `reason` as a new prompt.
    pub fn deny(reason: &str) -> Block {
        Block {
            decision: "deny".to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Cursor's stop output: `followup_message` is submitted as the next user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Followup {
    pub followup_message: String,
}

/// What `install` (`add`) or `uninstall` did, and for `install` what the user does next.
pub fn installed(
    outcome: &Outcome,
    (target, scope, add): (Target, Scope, bool),
    out: &mut dyn Write,
) -> Result<()> {
    let name = outcome.file.display().to_string();
    match (outcome.changed, add) {
        (false, true) => writeln!(out, "already installed in {name}")?,
        (false, false) => writeln!(out, "no closegate entries in {name}")?,
        (true, true) => writeln!(out, "installed the Stop and SubagentStop hooks in {name}")?,
        (true, false) => writeln!(out, "removed closegate's hooks from {name}")?,
    }
    if let Some((config, done)) = &outcome.trust {
        trust_lines(outcome, config, done, add, out)?;
    }
    if let Some(dir) = &outcome.made {
        writeln!(
            out,
            "made {} so {} loads the project's hooks in this worktree",
            dir.display(),
            target.row().display
        )?;
    }
    if add {
        install_notes(out, target, scope, &outcome.file, outcome.limit)?;
    }
    Ok(())
}

/// What `install` or `uninstall` did to Codex's trust, and who trusted the hooks.
fn trust_lines(
    outcome: &Outcome,
    config: &Path,
    done: &crate::agent::codex::Done,
    add: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let shown = config.display();
    if done.changed {
        let what = if add {
            "trusted closegate's hooks"
        } else {
            "dropped the trust of closegate's hooks"
        };
        let by = match &done.by_codex {
            Some(name) => format!("by Codex itself ({name}), listed again to verify"),
            None => "by the hash closegate computes (no `codex` binary on the PATH)".to_string(),
        };
        writeln!(
            out,
            "{what} in {shown}, {by} (Codex skips an untrusted or changed hook without a word)"
        )?;
    }
    for event in &done.formula_differs {
        writeln!(
            out,
            "warning agent-hook-inactive: Codex's hash of the {event} hook is not the one \
             closegate computes, and the stop hook checks trust with closegate's: update \
             closegate"
        )?;
    }
    if done.trusted_project {
        let root = outcome
            .file
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        writeln!(
            out,
            "trusted the project {} in {shown}: Codex loads no hook of an untrusted project",
            root.display()
        )?;
    }
    if done.untrusted_project {
        writeln!(
            out,
            "warning agent-hook-inactive: the project is marked untrusted in {shown}, so Codex \
             loads none of its hooks: set its trust_level to \"trusted\""
        )?;
    }
    Ok(())
}

/// `agent install --plugin` (SPEC §27.3): the commands that add closegate's marketplace (this
/// repository) and install its plugin; an error for a client without plugins.
pub fn plugin_commands(target: Target, out: &mut dyn Write) -> Result<()> {
    let Some(plugin) = &target.row().plugin else {
        anyhow::bail!(
            "--plugin: {} has no plugins; `closegate agent install --target {}` writes the hook",
            target.row().display,
            target.as_str()
        );
    };
    writeln!(
        out,
        "# closegate's repository is the marketplace: SOURCE is a clone of it, or its git URL"
    )?;
    for command in plugin.add {
        writeln!(out, "{}", command.replace("{source}", "SOURCE"))?;
    }
    writeln!(
        out,
        "# the plugin's hook runs `closegate` from the PATH with a 600 s time limit; checks that \
         run longer need `closegate agent install --target {}` instead",
        target.as_str()
    )?;
    if target.row().trust == crate::agent::clients::Trust::Codex {
        // Measured with Codex 0.169.0 and 0.171.0: `codex plugin add` leaves the plugin's hooks
        // untrusted, and `codex exec` runs none of them until they are.
        writeln!(
            out,
            "# Codex runs the plugin's hooks only once trusted: {}; `closegate agent doctor \
             --target codex` says whether it runs them",
            crate::agent::codex_plugin::TRUST_FIX
        )?;
    }
    Ok(())
}

/// SPEC §18, §26.3: what `install` tells the user besides what it wrote.
fn install_notes(
    out: &mut dyn Write,
    target: Target,
    scope: Scope,
    path: &Path,
    limit: u64,
) -> Result<()> {
    writeln!(
        out,
        "time limit {limit} s (the configured checks' longest chain plus 60 s; a claim whose \
         checks cannot finish in time is blocked with checks-running), harness timeout {} s",
        install::harness_timeout(limit)
    )?;
    if scope == Scope::Project {
        let shown = path.display();
        let row = target.row();
        let also = match row.files.project_root {
            Root::MainCheckout => format!(
                " ({} reads it from the main checkout for every worktree that has a {}/ folder)",
                row.display,
                project_folder(row.files.project)
            ),
            Root::Worktree => String::new(),
        };
        writeln!(
            out,
            "commit {shown} to the base branch: worktrees made from it get the hook, worktrees made \
             before do not (`closegate validate` warns while the base lacks it){also}"
        )?;
    }
    writeln!(
        out,
        "tell the agent the protocol: `closegate agent instructions --target {}` prints the \
         paragraph for {}; `closegate agent doctor` says whether the hook would run",
        target.as_str(),
        target.row().instructions
    )?;
    Ok(())
}

/// The folder a project hooks file sits in (`.codex` of `.codex/hooks.json`).
fn project_folder(file: &str) -> &str {
    file.split_once('/').map_or(file, |(folder, _)| folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_line_is_the_shape_the_harnesses_read_and_round_trips() {
        let block = Block::new("write `VERIFIED` only after \"closegate check\" passed\n");
        let line = serde_json::to_string(&block).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"decision": "block", "reason": block.reason})
        );
        assert!(
            line.starts_with(r#"{"decision":"block","reason":"#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<Block>(&line).unwrap(), block);
    }
}
