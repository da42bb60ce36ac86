//! Step 3 of `land` (SPEC §22): the configured checks on a composed tree, in its own pristine
//! checkout through the one check runner (`gates::checks::run_reusing`, so `land` is confined as
//! every check is), keyed on the composed tree and reused by tree id: from the record (so when
//! the base has not moved since the branch's check nothing runs again) and, within one `land`,
//! from every tree already checked (a bisection never checks one tree twice).

use std::collections::HashMap;

use anyhow::Result;
use git2::Oid;

use crate::catalog::Severity;
use crate::config::Config;
use crate::finding::Finding;
use crate::gates::Session;
use crate::gates::checks::{self, CheckEnv, Plan};
use crate::gates::reuse::{Key, Recorded};
use crate::repo::Repo;
use crate::report::{CheckEntry, CheckRun};
use crate::sandbox::Shield;

/// The checks' result on one tree.
#[derive(Debug, Clone)]
pub struct Verified {
    pub passed: bool,
    pub runs: Vec<CheckRun>,
    pub entries: Vec<CheckEntry>,
    /// What did not pass (check-failed, check-timeout, a sandbox that could not be set up).
    pub findings: Vec<Finding>,
}

/// Runs the checks on composed trees, once per tree.
pub struct Verifier<'a> {
    pub repo: &'a Repo,
    pub config: &'a Config,
    pub config_blob: Option<String>,
    pub base_name: String,
    pub rerun: bool,
    cache: HashMap<Oid, Verified>,
    /// What every check run hides from the agent's code (the record key, secrets, `[sandbox]
    /// hide`): the session's, as for every command that runs checks.
    shield: &'a Shield,
    /// How many check runs actually ran (not reused).
    pub ran: usize,
}

impl<'a> Verifier<'a> {
    /// The verifier of `session`'s repository and configuration, for the base named `base`.
    pub fn new(session: &'a Session, base: &str) -> Self {
        Verifier {
            repo: session.repo(),
            config: session.config(),
            config_blob: session.config_blob().map(str::to_string),
            base_name: base.to_string(),
            rerun: false,
            cache: HashMap::new(),
            shield: session.shield(),
            ran: 0,
        }
    }

    /// The checks on `commit` (composed onto `base_tip`), told they stand for `commit` and the
    /// first landed branch (`branch`, `slug`).
    pub fn verify(
        &mut self,
        commit: Oid,
        base_tip: Oid,
        branch: &str,
        slug: &str,
    ) -> Result<Verified> {
        let tree = self.repo.tree_of(commit).unwrap_or(commit);
        if let Some(done) = self.cache.get(&tree) {
            return Ok(done.clone());
        }
        let env = CheckEnv {
            commit: commit.to_string(),
            branch: branch.to_string(),
            slug: slug.to_string(),
            base: self.base_name.clone(),
        };
        // Keyed on the values the run is given (SPEC §19: a composed tree the composed
        // commit's and the first landed branch's).
        let (key_slug, key_branch) = env.key_values(self.repo);
        let key = Key {
            tree: tree.to_string(),
            config: self.config_blob.clone(),
            base_commit: Some(base_tip.to_string()),
            slug: key_slug,
            branch: key_branch,
            commit: commit.to_string(),
        };
        let recorded = Recorded::load(&self.repo.common_dir(), &key, self.rerun)?;
        let plan = Plan {
            mode: self.config.sandbox,
            jobs: self.config.jobs,
            key: &key,
            recorded: &recorded,
            shield: self.shield,
            fail_fast: false,
            label: None,
            slot: crate::gates::workspace::Slot::Main,
        };
        let checked = checks::run_reusing(self.repo, commit, &self.config.checks, &env, &plan)?;
        self.ran += checked.runs.iter().filter(|r| r.reused.is_none()).count();
        let findings: Vec<Finding> = checked
            .findings
            .into_iter()
            .filter(|f| f.severity != Severity::Warning)
            .collect();
        let ran_all = checked.runs.len() == self.config.checks.len();
        let verified = Verified {
            passed: findings.is_empty() && ran_all && !self.config.checks.is_empty(),
            runs: checked.runs,
            entries: checked.entries,
            findings,
        };
        self.cache.insert(tree, verified.clone());
        Ok(verified)
    }
}
