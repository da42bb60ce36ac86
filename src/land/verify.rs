//! Step 3 of `land` (SPEC §22): the configured checks on a composed tree, in its own pristine
//! checkout through the one check runner (`gates::checks::run_reusing`, so `land` is confined as
//! every check is), keyed on the composed tree and reused by tree id: from the record (so when
//! the base has not moved since the branch's check nothing runs again) and, within one `land`,
//! from every tree already checked (a bisection never checks one tree twice).

use std::collections::HashMap;

use anyhow::Result;
use git2::Oid;

use crate::catalog::Severity;
use crate::finding::Finding;
use crate::gates::Session;
use crate::gates::checks::{self, CheckEnv, Plan};
use crate::gates::reuse::{Key, Recorded};
use crate::report::{CheckEntry, CheckRun};

/// The checks' result on one tree.
#[derive(Debug, Clone)]
pub struct Verified {
    pub passed: bool,
    pub runs: Vec<CheckRun>,
    pub entries: Vec<CheckEntry>,
    /// What did not pass (check-failed, check-timeout, a sandbox that could not be set up).
    pub findings: Vec<Finding>,
}

/// Runs the checks on composed trees, once per tree and configuration.
#[derive(Default)]
pub struct Verifier {
    pub rerun: bool,
    cache: HashMap<(Oid, Option<String>), Verified>,
    /// How many check runs actually ran (not reused).
    pub ran: usize,
}

impl Verifier {
    /// The checks on `commit` (composed onto `base_tip`), told they stand for `commit` and the
    /// first landed branch (`branch`, `slug`). The session is the round's (SPEC §26.2): its configuration, read from the base tip the
    /// tree was composed on, and its shield, as for every command that runs checks.
    pub fn verify(
        &mut self,
        session: &Session,
        commit: Oid,
        base_tip: Oid,
        (branch, slug): (&str, &str),
    ) -> Result<Verified> {
        let repo = session.repo();
        let config = session.config();
        let config_blob = session.config_blob().map(str::to_string);
        let tree = repo.tree_of(commit).unwrap_or(commit);
        let cached = (tree, config_blob.clone());
        if let Some(done) = self.cache.get(&cached) {
            return Ok(done.clone());
        }
        let env = CheckEnv {
            commit: commit.to_string(),
            branch: branch.to_string(),
            slug: slug.to_string(),
            base: session
                .base()
                .map_or(String::new(), |(name, _)| name.clone()),
        };
        let key = key(session, &env, tree, base_tip);
        let recorded = Recorded::load(&repo.common_dir(), &key, self.rerun)?;
        let plan = Plan {
            mode: config.sandbox,
            jobs: config.jobs,
            key: &key,
            recorded: &recorded,
            shield: session.shield(),
            fail_fast: false,
            label: None,
            slot: crate::gates::workspace::Slot::Main,
        };
        let checked = checks::run_reusing(repo, commit, &config.checks, &env, &plan)?;
        self.ran += checked.runs.iter().filter(|r| r.reused.is_none()).count();
        let findings: Vec<Finding> = checked
            .findings
            .into_iter()
            .filter(|f| f.severity != Severity::Warning)
            .collect();
        let ran_all = checked.runs.len() == config.checks.len() && !config.checks.is_empty();
        let verified = Verified {
            passed: findings.is_empty() && ran_all,
            runs: checked.runs,
            entries: checked.entries,
            findings,
        };
        self.cache.insert(cached, verified.clone());
        Ok(verified)
    }
}

/// The reuse key of a composed tree's run (SPEC §19): keyed on the values the run is given — the
/// composed commit's and the first landed branch's — and the base tip it was composed on.
fn key(session: &Session, env: &CheckEnv, tree: Oid, base_tip: Oid) -> Key {
    let (slug, branch) = env.key_values(session.repo());
    Key {
        tree: tree.to_string(),
        config: session.config_blob().map(str::to_string),
        base_commit: Some(base_tip.to_string()),
        slug,
        branch,
        commit: env.commit.clone(),
    }
}
