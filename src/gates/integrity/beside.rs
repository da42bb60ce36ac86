//! The commit's own checks and the overlay side by side (SPEC §27.2): the overlay's tree is
//! known before the commit's checks run (the commit's tree with the changed test paths as the
//! merge base has them), so where the two runs cannot reach each other ([`super::side_by_side`])
//! they run at once, each with its own checkout or layer and namespaces, and a test-editing
//! return costs about one run of the suite instead of two.
//!
//! The overlay runs here for every check; [`super::run`] keeps the runs of those that passed on
//! the commit (what it would have run) and drops the rest. A check that fails on the commit thus
//! costs an overlay run nobody reads — in CPU, beside the commit's run, not in time.

use anyhow::Result;

use super::changed::{self, Changed};
use super::{Ctx, Tree, complete, prepare, side_by_side};
use crate::config::CheckSpec;
use crate::gates::checks::Checked;
use crate::gates::runner::Target;

/// What [`commit_and_overlay`] learned before [`super::run`]: the changed paths of the overlaid
/// surfaces and, when it ran beside the commit's checks, the overlay (its tree, built once) with
/// its runs of every check.
pub struct Early {
    pub(super) changed: Vec<Changed>,
    overlay: Option<(Tree, Checked)>,
}

impl Early {
    /// The overlay's tree, when it was built here, and its runs of the checks at `picked` when
    /// every one of them is there.
    pub(super) fn overlay(self, picked: &[usize]) -> Option<(Tree, Option<Checked>)> {
        let (tree, checked) = self.overlay?;
        let Checked {
            runs,
            findings,
            sandbox,
            entries,
        } = checked;
        let runs: Option<Vec<_>> = picked.iter().map(|&i| runs.get(i).cloned()).collect();
        let checked = runs.map(|runs| {
            let entries = entries
                .into_iter()
                .filter(|e| runs.iter().any(|r| r.name == e.name))
                .collect();
            Checked {
                runs,
                findings,
                sandbox,
                entries,
            }
        });
        Some((tree, checked))
    }
}

/// Run `specs` on the claimed commit (`own`), and, when the return changes a test path and the
/// two runs may share the machine, the overlay beside it: the commit's checks and the overlay's
/// runs, if it ran.
pub fn commit_and_overlay(
    ctx: &Ctx<'_>,
    own: &Target<'_>,
    specs: &[CheckSpec],
) -> Result<(Checked, Early)> {
    let every: Vec<usize> = (0..specs.len()).collect();
    let changed = changed::changed(ctx)?;
    let base_tree = ctx.repo.tree_of(ctx.merge_base);
    // With the reverse overlay asked for, the two overlays run side by side after the commit's
    // checks instead (`super::run_overlays`).
    let alone = changed.is_empty() || ctx.fail_to_pass() || !side_by_side(ctx, &every);
    let over = match alone {
        true => None,
        false => Some(Tree::new(
            ctx,
            ctx.claimed.commit,
            ctx.merge_base,
            &changed,
            false,
        )?),
    };
    // An overlay that is the base's own tree is not run: the base's runs serve it (SPEC §27.2).
    let Some(over) = over.filter(|o| base_tree != Some(o.tree)) else {
        let checked = ctx.runner.run(own, specs, false)?;
        let overlay = None;
        return Ok((checked, Early { changed, overlay }));
    };
    // Both planned here (a snapshot either needs is built once, before either runs).
    let commit = ctx.runner.prepare(own, specs, false)?;
    let overlay = prepare(ctx, &every, &over.target(ctx, false))?;
    // The thread's own handle reads this run's quarantine, where the stand-in commit is.
    let shared_repo = ctx.repo.share();
    let _signals = crate::sys::interrupt::Guard::install();
    let (commit, overlay) = std::thread::scope(|scope| {
        let handle = scope.spawn(|| -> Result<Option<Checked>> {
            let repo = shared_repo.open()?;
            complete(&overlay, overlay.run(&repo)?)
        });
        let commit = commit.run(ctx.repo);
        let overlay = handle
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the overlay's thread panicked")));
        (commit, overlay)
    });
    let (mut commit, mut overlay) = (commit?, overlay?);
    // `parallel` (SPEC §27.2) only where a run of each side really ran at that time.
    if let Some(over) = overlay.as_mut().filter(|o| ran(o) && ran(&commit)) {
        mark_parallel(&mut commit);
        mark_parallel(over);
    }
    let overlay = overlay.map(|checked| (over, checked));
    Ok((commit, Early { changed, overlay }))
}

/// Whether any run of `checked` ran now (was not reused from the record).
fn ran(checked: &Checked) -> bool {
    checked.runs.iter().any(|r| r.reused.is_none())
}

/// Mark the runs of `checked` that ran now as run side by side.
fn mark_parallel(checked: &mut Checked) {
    for run in checked.runs.iter_mut().filter(|r| r.reused.is_none()) {
        run.parallel = true;
    }
}
