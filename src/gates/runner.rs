//! The one check runner (SPEC §19): every run of the configured checks is planned here, from the
//! [`Session`] — what the run is told (`CLOSEGATE_*`), its reuse key, the records that may stand
//! for it, the sandbox mode and the shield — and nowhere else.
//!
//! Its targets are the claimed commit (`check` of a worktree or `--no-worktree --rev`, and every
//! command that runs the gate: the stop hook, `signal`, `guard`, `approve`, `teardown`, `board
//! --check`, the server gate), the overlays and the merge base's own tree (§23), `land`'s composed
//! trees (§22), and the base tip (`validate --run`, `init`'s try). A runner is made only by
//! [`Session::runner`], so no run can take a weaker shield or a key built by hand.

use anyhow::Result;
use git2::Oid;

use crate::config::CheckSpec;
use crate::gates::Session;
use crate::gates::checks::{self, CheckEnv, Checked, Plan, Warmth};
use crate::gates::reuse::{Key, Recorded};
use crate::gates::workspace::{Cache, snapshot_id};
use crate::repo::Repo;
use crate::sandbox::Shield;

/// The claim a run stands for: the claimed commit and the values its checks are given.
#[derive(Debug, Clone, Copy)]
pub struct Claimed<'a> {
    pub commit: Oid,
    /// `CLOSEGATE_BRANCH` (empty when no branch is judged).
    pub branch: &'a str,
    /// `CLOSEGATE_SLUG`.
    pub slug: &'a str,
}

/// The tree a run checks and what it stands for (SPEC §19).
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The claimed commit itself.
    Commit(Claimed<'a>),
    /// An overlay of §23 (`reverse`: the reverse overlay): `tree`, checked out through its
    /// stand-in commit `checkout`, standing for the claimed commit.
    Overlay {
        of: Claimed<'a>,
        tree: Oid,
        checkout: Oid,
        reverse: bool,
    },
    /// The merge base's own tree (§23): the merge base's values, the base branch and an empty
    /// slug, so one run per base commit serves every agent.
    MergeBase(Oid),
    /// A composed commit of `land` (§22), composed on `base_tip`: the composed commit's values and
    /// the first landed branch's.
    Composed { of: Claimed<'a>, base_tip: Oid },
    /// The base tip `tip`, named `base` (`validate --run`, `init`'s try).
    BaseTip { tip: Oid, base: &'a str },
}

/// Plans and runs the checks of one session (see the module doc).
pub struct Runner<'s> {
    session: &'s Session,
}

/// One planned run: its values, its key and the records that may stand for it.
pub struct Prepared<'s> {
    /// What the checks are told (`CLOSEGATE_*`).
    pub env: CheckEnv,
    /// The run's reuse key (SPEC §19).
    pub key: Key,
    specs: Vec<CheckSpec>,
    recorded: Recorded,
    /// The commit checked out: the target's, or an overlay's stand-in.
    checkout: Oid,
    mode: crate::config::SandboxMode,
    jobs: usize,
    /// The session's: what no check may see (SPEC §4.6).
    shield: &'s Shield,
    /// `check --fail-fast` and the progress label apply to the claimed commit's own run only.
    fail_fast: bool,
    label: Option<&'s str>,
    /// The run is on the base's own code (it builds base snapshots, SPEC §27.2).
    trusted: bool,
    /// The base tip whose snapshots a run on an agent's code starts from.
    base: Option<Oid>,
    config: Option<String>,
    /// The record entries of the base runs that built the snapshots this run starts from: one
    /// base run serves every agent (SPEC §27.2).
    base_entries: Vec<crate::report::CheckEntry>,
}

impl<'s> Runner<'s> {
    pub(super) fn new(session: &'s Session) -> Runner<'s> {
        Runner { session }
    }

    /// The `CLOSEGATE_*` values `target`'s run is given.
    pub fn env(&self, target: &Target<'_>) -> CheckEnv {
        let base = self.base_name();
        let claimed = |c: &Claimed<'_>| CheckEnv {
            commit: c.commit.to_string(),
            branch: c.branch.to_string(),
            slug: c.slug.to_string(),
            base: base.clone(),
        };
        let own = |commit: Oid, branch: &str| CheckEnv {
            commit: commit.to_string(),
            branch: branch.to_string(),
            slug: String::new(),
            base: branch.to_string(),
        };
        match target {
            Target::Commit(c) | Target::Overlay { of: c, .. } | Target::Composed { of: c, .. } => {
                claimed(c)
            }
            Target::MergeBase(merge_base) => CheckEnv {
                base: base.clone(),
                ..own(*merge_base, &base)
            },
            Target::BaseTip { tip, base } => own(*tip, base),
        }
    }

    /// `target`'s reuse key (SPEC §19): the tree it checks, the configuration's blob id,
    /// `CLOSEGATE_BASE`'s commit, the slug and branch values it is given, and the commit id (which
    /// counts only for a check with `reuse = "commit"`).
    pub fn key(&self, target: &Target<'_>) -> Key {
        let repo = self.session.repo();
        let env = self.env(target);
        let (slug, branch) = env.key_values(repo);
        let tree = match target {
            Target::Overlay { tree, .. } => *tree,
            _ => repo.tree_of(checkout(target)).unwrap_or(checkout(target)),
        };
        Key {
            tree: tree.to_string(),
            config: self.session.config_blob().map(str::to_string),
            base_commit: self.base_commit(target),
            slug,
            branch,
            commit: env.commit,
        }
    }

    /// Plan `specs` on `target`: reuse what the record holds for its key, unless `fresh` (or the
    /// session's `--rerun`) says run every check.
    pub fn prepare(
        &self,
        target: &Target<'_>,
        specs: &[CheckSpec],
        fresh: bool,
    ) -> Result<Prepared<'s>> {
        let key = self.key(target);
        let common = self.session.repo().common_dir();
        let mut recorded = Recorded::load(&common, &key, fresh || self.session.rerun())?;
        // A run asked for fresh (a second run of the base, to learn which ids it renames each
        // run) takes nothing from this command's own earlier runs either.
        if !fresh {
            recorded = recorded.with_runs_made_now(self.session.base_runs_now());
        }
        let session = self.session;
        let own = matches!(target, Target::Commit(_));
        let trusted = trusted(target);
        let base = self.snapshot_base(target);
        let base_entries = match (trusted, base) {
            (false, Some(tip)) => self.ensure_snapshots(tip, specs)?,
            _ => Vec::new(),
        };
        // A composed tree of `land` is not run again when it fails: SPEC §22 bounds a batch's
        // runs, and a tree that fails once never moves the base (the branch is retried alone).
        let mut specs = specs.to_vec();
        if matches!(target, Target::Composed { .. }) {
            specs.iter_mut().for_each(|s| s.flaky_retries = 0);
        }
        Ok(Prepared {
            env: self.env(target),
            key,
            specs,
            recorded,
            checkout: checkout(target),
            mode: session.config().sandbox,
            jobs: session.config().jobs,
            shield: session.shield(),
            fail_fast: own && session.fail_fast(),
            label: own.then(|| session.progress_label()).flatten(),
            trusted,
            base,
            config: session.config_blob().map(str::to_string),
            base_entries,
        })
    }

    /// The base tip whose snapshots a run on `target` starts from: the tip a composed tree was
    /// composed on, else the session's base.
    fn snapshot_base(&self, target: &Target<'_>) -> Option<Oid> {
        match target {
            Target::Composed { base_tip, .. } => Some(*base_tip),
            _ => self.session.base().map(|(_, id)| *id),
        }
    }

    /// Build, by running them on the base tip `tip` (trusted code), the snapshots of the checks
    /// with `keep` that have none yet; the record entries of those runs. A build another check
    /// has under way is waited for, not taken again.
    fn ensure_snapshots(
        &self,
        tip: Oid,
        specs: &[CheckSpec],
    ) -> Result<Vec<crate::report::CheckEntry>> {
        let repo = self.session.repo();
        let config = self.session.config_blob();
        let cache = Cache::of(&repo.common_dir())?;
        let id = |s: &CheckSpec| snapshot_id(tip, &s.name, config);
        let mut kept: Vec<&CheckSpec> = specs.iter().filter(|s| !s.keep.is_empty()).collect();
        kept.retain(|s| cache.snapshot(&s.name, &id(s)).is_none());
        kept.sort_by_key(|s| id(s));
        // Claimed in one order (no two closegates wait on each other), then asked again: a
        // build another closegate finished while this one waited is not taken twice.
        let mut claims = Vec::with_capacity(kept.len());
        for spec in &kept {
            let stop = &crate::sys::interrupt::requested;
            claims.push(cache.claim_build(&spec.name, &id(spec), stop)?);
        }
        let missing: Vec<CheckSpec> = kept
            .into_iter()
            .filter(|s| cache.snapshot(&s.name, &id(s)).is_none())
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(Vec::new());
        }
        let name = self.base_name();
        let target = Target::BaseTip { tip, base: &name };
        let entries = self.run(&target, &missing, true)?.entries;
        drop(claims);
        self.session.remember_base_runs(&entries);
        Ok(entries)
    }

    /// [`Runner::prepare`] and [`Prepared::run`] in one, on the session's repository.
    pub fn run(&self, target: &Target<'_>, specs: &[CheckSpec], fresh: bool) -> Result<Checked> {
        self.prepare(target, specs, fresh)?.run(self.session.repo())
    }

    /// The base as named; empty when it did not resolve.
    fn base_name(&self) -> String {
        let base = self.session.base();
        base.map_or(String::new(), |(name, _)| name.clone())
    }

    /// `CLOSEGATE_BASE`'s commit: the base tip a composed tree was composed on, the base tip a
    /// base-tip run checks; else the session's base commit (that of the record a teardown is
    /// admitted on, when it is, so its checks are not run again).
    fn base_commit(&self, target: &Target<'_>) -> Option<String> {
        match target {
            Target::Composed { base_tip, .. } => Some(base_tip.to_string()),
            Target::BaseTip { tip, .. } => Some(tip.to_string()),
            _ => self
                .session
                .admitted_base()
                .map(str::to_string)
                .or_else(|| {
                    let base = self.session.base();
                    base.map(|(_, id)| id.to_string())
                }),
        }
    }
}

impl Prepared<'_> {
    /// How many checks the run plans.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether the run plans no check.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Run the planned checks on `repo`: the session's repository, or a handle of its own onto
    /// the same one for a run in another thread.
    pub fn run(&self, repo: &Repo) -> Result<Checked> {
        let plan = Plan {
            mode: self.mode,
            jobs: self.jobs,
            key: &self.key,
            recorded: &self.recorded,
            shield: self.shield,
            fail_fast: self.fail_fast,
            label: self.label,
            warmth: Warmth {
                trusted: self.trusted,
                base: self.base,
                config: self.config.as_deref(),
            },
        };
        let mut checked = checks::run_reusing(repo, self.checkout, &self.specs, &self.env, &plan)?;
        checked.entries.extend(self.base_entries.iter().cloned());
        Ok(checked)
    }
}

/// The commit checked out for `target`.
fn checkout(target: &Target<'_>) -> Oid {
    match target {
        Target::Commit(c) | Target::Composed { of: c, .. } => c.commit,
        Target::Overlay { checkout, .. } => *checkout,
        Target::MergeBase(merge_base) => *merge_base,
        Target::BaseTip { tip, .. } => *tip,
    }
}

/// Whether `target` is the base's own code (trusted, SPEC §16): its runs build base snapshots.
fn trusted(target: &Target<'_>) -> bool {
    matches!(target, Target::MergeBase(_) | Target::BaseTip { .. })
}
