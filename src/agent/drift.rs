//! An installed stop hook that differs from the committed one (SPEC §26.3). Codex reads the main
//! checkout's `.codex/hooks.json` for every worktree, so an agent that edits it edits every later
//! session's hook, outside every gate: the stop hook compares closegate's entries there with the
//! base tip's. For Claude Code the worktree's own `.claude/settings.json` is compared with its
//! HEAD's (a committed edit is the protected gate's business: `.claude/**` is on `instructions`).
//! closegate installed as a Codex plugin is compared with the plugin this closegate ships: Codex
//! keeps its copy in `$CODEX_HOME`, which the agent can write (`codex_plugin`).

use std::path::{Path, PathBuf};

use git2::Oid;

use super::Target;
use super::clients::Committed;
use super::settings::{self, Ours};
use crate::repo::Repo;

/// What the stop hook found: the difference in words (naming the file).
pub struct Drift {
    /// What the installed hook is not, in words (`the committed one`, `the one closegate ships`).
    pub against: &'static str,
    pub difference: String,
    /// How to put the committed hook back.
    pub fix: String,
    /// The committed hook's `--max-blocks`: the loop guard obeys it, never the installed
    /// entry's (an agent that appends `--max-blocks 0` would otherwise be let through first).
    pub max_blocks: u32,
}

/// The drift of the hook `target` reads for the worktree `root`; `None` when the committed file
/// holds no closegate hook (nothing to compare with) or the installed one matches it.
pub fn drift(
    repo: &Repo,
    root: &Path,
    target: Target,
    base: Option<&(String, Oid)>,
) -> Option<Drift> {
    let source = source(repo, root, target, base)?;
    let shape = &target.row().shape;
    let committed = entries(&String::from_utf8_lossy(&source.committed?), shape);
    if committed.is_empty() {
        return None;
    }
    let installed = match crate::input_file::read_if_present(&source.file) {
        Ok(Some(bytes)) => entries(&String::from_utf8_lossy(&bytes), shape),
        Ok(None) | Err(_) => Vec::new(),
    };
    if installed == committed {
        return None;
    }
    let difference = format!(
        "{} where the harness reads it ({}) holds {}; {} holds {}",
        source.rel,
        source.file.display(),
        describe(&installed),
        source.against,
        describe(&committed)
    );
    Some(Drift {
        against: "the committed one",
        difference,
        fix: source.fix,
        max_blocks: max_blocks_of(&committed),
    })
}

/// The drift of closegate's Codex plugin as Codex keeps it (`cached`: the hooks file of every
/// version it keeps, [`super::codex_plugin::cached`]) from the one this closegate ships; `None`
/// when every copy holds the shipped hooks. Each copy is read once; an unreadable one differs.
pub fn plugin_drift(cached: &[PathBuf]) -> Option<Drift> {
    let shape = &Target::Codex.row().shape;
    let committed = entries(super::codex_plugin::SHIPPED, shape);
    let (file, installed) = cached.iter().find_map(|f| {
        let text = crate::input_file::read(f).map(|b| String::from_utf8_lossy(&b).into_owned());
        let installed = text.map(|t| entries(&t, shape)).unwrap_or_default();
        (installed != committed).then_some((f, installed))
    })?;
    Some(Drift {
        against: "the one closegate ships",
        difference: format!(
            "the Codex plugin {} as Codex keeps it ({}) holds {}; closegate {} ships {}",
            super::codex_plugin::ID,
            file.display(),
            describe(&installed),
            env!("CARGO_PKG_VERSION"),
            describe(&committed)
        ),
        fix: format!(
            "put it back: `codex plugin add {}` (it copies the plugin from its marketplace again)",
            super::codex_plugin::ID
        ),
        max_blocks: max_blocks_of(&committed),
    })
}

/// The committed hooks' `--max-blocks` (the smallest).
fn max_blocks_of(committed: &[(&'static str, String, Option<u64>)]) -> u32 {
    committed
        .iter()
        .map(|(_, command, _)| settings::max_blocks_of(command))
        .min()
        .unwrap_or(settings::DEFAULT_MAX_BLOCKS)
}

/// The installed file, and what it is compared with.
struct Source {
    file: PathBuf,
    rel: &'static str,
    /// The committed bytes (`None`: no such file there).
    committed: Option<Vec<u8>>,
    /// Where they were read, in words.
    against: String,
    fix: String,
}

fn source(
    repo: &Repo,
    root: &Path,
    target: Target,
    base: Option<&(String, Oid)>,
) -> Option<Source> {
    let rel = target.row().files.project;
    match target.row().committed {
        Committed::BaseTip => {
            let main = super::install::main_checkout(repo).ok()?;
            let (name, tip) = base?;
            Some(Source {
                file: main.join(rel),
                rel,
                committed: repo.read_blob(*tip, rel),
                against: format!("the base tip {name}"),
                fix: format!(
                    "put it back: `git -C {} checkout {name} -- {rel}` (or commit the change to \
                     {name} if a person made it)",
                    main.display()
                ),
            })
        }
        Committed::Head => {
            let head = repo.worktree_head(root)?;
            Some(Source {
                file: root.join(rel),
                rel,
                committed: repo.read_blob(head, rel),
                against: "HEAD".to_string(),
                fix: format!(
                    "put it back: `git -C {} checkout HEAD -- {rel}`",
                    root.display()
                ),
            })
        }
    }
}

/// (event, command, timeout) of each of closegate's hooks, in order.
fn entries(text: &str, shape: &settings::Shape) -> Vec<(&'static str, String, Option<u64>)> {
    settings::ours(text, shape)
        .into_iter()
        .map(
            |Ours {
                 event,
                 command,
                 timeout,
                 ..
             }| (event, command, timeout),
        )
        .collect()
}

fn describe(entries: &[(&'static str, String, Option<u64>)]) -> String {
    if entries.is_empty() {
        return "no closegate hook".to_string();
    }
    let each: Vec<String> = entries
        .iter()
        .map(|(event, command, timeout)| match timeout {
            Some(t) => format!("{event} `{command}` (timeout {t})"),
            None => format!("{event} `{command}` (no timeout)"),
        })
        .collect();
    each.join(", ")
}
