//! Keep the installed hook's `bases` line in step with the trusted configuration (SPEC §9: the
//! hook guards the configured base, SPEC §5, whatever it was when the hook was installed).
//!
//! The script hands closegate only the transactions that delete a branch or move one of the refs
//! on its `bases` line, so a base the configuration names later would never reach closegate. A
//! configuration reaches the base only through a transaction the script hands over (it moves
//! `main`, `master`, or the remote-tracking ref the configuration is read from, all on the line),
//! so each time closegate runs for a transaction it computes the refs the configuration names, as
//! it is now and as this transaction leaves it, and rewrites the line when one is missing: the
//! configured base is guarded from the transaction that commits the configuration onward.
//!
//! The line only grows (an aborted transaction or a configuration that cannot be read never takes
//! a base off); `closegate hook install` writes it afresh.

use std::path::Path;

use anyhow::{Context, Result};
use git2::Oid;

use super::script::{self, HOOK_NAME};
use super::setting::{Setting, Update, value};
use crate::inputs;
use crate::repo::Repo;

/// The remote-tracking ref whose target the configuration is read from when neither `main` nor
/// `master` exists (SPEC §5).
const ORIGIN_HEAD: &str = "refs/remotes/origin/HEAD";

/// Rewrite the hook closegate wrote at `hook_file` (the script passes its own path; else the
/// hooks directory's) when a ref [`guarded_refs`] names is missing from its `bases` line. A hook
/// closegate did not write, or none, is left alone; a hook that cannot be rewritten refuses the
/// transaction (the caller fails closed), since the configured base would go unguarded.
pub(super) fn refresh(
    repo: &Repo,
    setting: &Setting,
    updates: &[Update],
    hook_file: Option<&Path>,
) -> Result<()> {
    let file = match hook_file {
        Some(file) => file.to_path_buf(),
        None => match repo.hooks_dir() {
            Ok(dir) => dir.join(HOOK_NAME),
            Err(_) => return Ok(()),
        },
    };
    let Ok(existing) = std::fs::read(&file) else {
        return Ok(()); // removed meanwhile (`hook uninstall`), or not a file closegate can read
    };
    let Some(baked) = script::baked(&existing) else {
        return Ok(());
    };
    let mut bases = baked.bases;
    let wanted = guarded_refs(repo, setting, updates);
    let missing: Vec<String> = wanted.into_iter().filter(|r| !bases.contains(r)).collect();
    bases.extend(missing.iter().cloned());
    let text = script::script_with(&baked.exe_word, baked.chained, &bases);
    if text == existing {
        return Ok(());
    }
    rewrite(&file, &text).with_context(|| {
        format!(
            "cannot rewrite the hook {} so that it hands closegate the moves of {}; run \
             `closegate hook install`",
            file.display(),
            missing.join(", ")
        )
    })
}

/// Write `text` over `file` as `hook install` does: a temporary file beside it, renamed into
/// place; a symlinked hook is rewritten where it points, so the link stays.
fn rewrite(file: &Path, text: &[u8]) -> Result<()> {
    let file = std::fs::canonicalize(file)
        .with_context(|| format!("cannot resolve {}", file.display()))?;
    super::install::write_hook(&file, text)
}

/// The refs (full names) the script must hand to closegate when they move: `refs/heads/main`,
/// `refs/heads/master`, the local branches the trusted configuration guards as the base now, and
/// those the configuration this transaction puts at the configuration tip names; when that tip is
/// origin/HEAD's target, origin/HEAD and the target too (a fetch that moves it brings a new
/// configuration).
pub(super) fn guarded_refs(repo: &Repo, setting: &Setting, updates: &[Update]) -> Vec<String> {
    let mut refs = vec![
        "refs/heads/main".to_string(),
        "refs/heads/master".to_string(),
    ];
    // A name git would refuse as a ref (blanks, control characters) is no branch to hand over,
    // and could not be read back from the script's line.
    let mut add = |name: String| {
        if git2::Reference::is_valid_name(&name) && !refs.contains(&name) {
            refs.push(name);
        }
    };
    for base in &setting.bases {
        add(format!("refs/heads/{base}"));
    }
    let (now, after) = (current_tip(repo), tip_after(repo, updates));
    for tip in [&now, &after].into_iter().flatten() {
        if tip.refname.starts_with("refs/remotes/") {
            add(ORIGIN_HEAD.to_string());
            add(tip.refname.clone());
        }
    }
    // The configuration now is the setting's; read the one this transaction brings, if another.
    let after = after.filter(|a| {
        now.as_ref()
            .is_none_or(|n| (&n.refname, n.id) != (&a.refname, a.id))
    });
    if let Some(tip) = after
        && let Ok(Some(config)) = inputs::base_config(repo, &tip.name, tip.id)
    {
        let names = config.base.iter().chain(std::iter::once(&tip.name));
        for branch in names.flat_map(|name| super::setting::base_branches(repo, name)) {
            add(format!("refs/heads/{branch}"));
        }
    }
    refs
}

/// A tip the configuration is read from (SPEC §5): its name as `check` names it (`main`,
/// `origin/main`), its full ref name and its commit.
struct Tip {
    name: String,
    refname: String,
    id: Oid,
}

/// The configuration tip before this transaction.
fn current_tip(repo: &Repo) -> Option<Tip> {
    let (name, id) = inputs::config_tip(repo, None)?;
    let refname = match name.as_str() {
        "main" | "master" => format!("refs/heads/{name}"),
        _ => format!("refs/remotes/{name}"),
    };
    Some(Tip { name, refname, id })
}

/// The configuration tip once this transaction is committed: the first of `main` and `master`
/// that exists then, else origin/HEAD's target then.
fn tip_after(repo: &Repo, updates: &[Update]) -> Option<Tip> {
    let last = |refname: &str| updates.iter().rev().find(|u| u.refname == refname);
    for name in ["main", "master"] {
        let refname = format!("refs/heads/{name}");
        let id = match last(&refname) {
            Some(u) => value(&u.new, &refname).ok().flatten(),
            None => repo.branch_tip(name),
        };
        if let Some(id) = id {
            let name = name.to_string();
            return Some(Tip { name, refname, id });
        }
    }
    let target = match last(ORIGIN_HEAD) {
        Some(u) => u.new.strip_prefix("ref:").map(str::to_string),
        None => repo.origin_head_target(),
    }?;
    let rest = target.strip_prefix("refs/remotes/origin/")?;
    if rest.is_empty() || rest == "HEAD" {
        return None;
    }
    let id = match last(&target) {
        Some(u) => value(&u.new, &target).ok().flatten(),
        None => repo.ref_target(&target),
    }?;
    let name = target["refs/remotes/".len()..].to_string();
    Some(Tip {
        name,
        refname: target,
        id,
    })
}
