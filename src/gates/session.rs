//! One gate run's resolved state, built once from [`GateOptions`] and never patched: the
//! repository, the trusted configuration and base, the status document, the signing key in use
//! and the sandbox policy (the [`Shield`]) derived from them.
//!
//! Every command that runs checks builds a `Session` and takes its shield from it, so what the
//! checks cannot see (the record key, the signing key in use, `[sandbox] hide`, the built-in
//! secrets) is the same for `check`, `approve --sign`, `land`, `validate --run`, `init`, the stop
//! hooks, `board --check`, `teardown`, `sweep` and the server gate by construction.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::Result;
use git2::Oid;

use crate::attest::Trust;
use crate::config::Config;
use crate::contract::Lookup;
use crate::finding::Finding;
use crate::inputs::{self, Signs};
/// What a session is built from, named where its constructors take them (`inputs` itself is
/// the crate's own).
pub use crate::inputs::{GateOptions, Trusted, trusted_config};
use crate::repo::Repo;
use crate::report::Provenance;
use crate::sandbox::Shield;

/// The resolved inputs of one gate run (see the module doc).
pub struct Session {
    /// Shared with the caller when it judges several commits of one repository (the server gate).
    repo: Rc<Repo>,
    /// Canonical root of the worktree being checked.
    worktree: PathBuf,
    /// The status document's bytes; `None` for a session on the base alone (no claim to judge).
    status: Option<Vec<u8>>,
    /// The coordinator's copy of the agent's final message (`--message`).
    message: Option<String>,
    config: Config,
    /// The base as named (`main`) and resolved; `None` when it did not resolve.
    base: Option<(String, Oid)>,
    /// Findings from resolving the inputs (`base-unknown`, `config-not-from-worktree`).
    findings: Vec<Finding>,
    /// `--rev`: the commit whose tree carried the status document.
    rev: Option<Oid>,
    /// Where the task contract is read once the slug is known (SPEC §12).
    contract: Lookup,
    /// The configuration's blob id; `None` for the built-in defaults (SPEC §5).
    config_blob: Option<String>,
    /// How the configuration and base were chosen: what makes the run's records count (SPEC §6).
    provenance: Provenance,
    /// Where the configuration came from (`main:.closegate.toml`); `None` for the defaults.
    config_origin: Option<String>,
    /// Where attestations, signed approvals and the allowed signers are read (SPEC §20).
    trust: Trust,
    /// The flags as asked, with `rerun` as resolved (signing without a record key reruns).
    opts: GateOptions,
    /// Shown before each check's name in the terminal's progress line.
    progress_label: Option<String>,
    /// The key this command signs with, hidden from every check it runs (SPEC §4.6).
    signing_key: Option<PathBuf>,
    /// The base commit of the passing record a teardown is admitted on (SPEC §7 step 1).
    admitted_base: Option<String>,
    /// What the checks must not see, made from the fields above when the first check runs.
    shield: OnceCell<Shield>,
    /// The record entries of the base runs this session made (the runs that built base
    /// snapshots): one base run serves the rest of the session too (SPEC §27.2).
    ran_now: std::cell::RefCell<Vec<crate::report::CheckEntry>>,
}

impl Session {
    /// Open the repository around `worktree` (default: the current directory) and resolve.
    pub fn open(worktree: Option<&Path>, opts: &GateOptions) -> Result<Session> {
        let (repo, root) = inputs::open(worktree)?;
        Session::in_repo(repo, root, opts)
    }

    /// [`Session::open`] with the repository already opened (by `inputs::open`) at `root`.
    pub fn in_repo(
        repo: impl Into<Rc<Repo>>,
        root: PathBuf,
        opts: &GateOptions,
    ) -> Result<Session> {
        let repo = repo.into();
        let trusted = inputs::trusted_config(&repo, opts.base.as_deref(), opts.config.as_deref())?;
        Session::with_trusted(repo, root, opts, trusted)
    }

    /// [`Session::in_repo`] with the trusted configuration already read: `trusted_config(&repo,
    /// opts.base, opts.config)` of this very repository (the server gate reads it once per push).
    pub fn with_trusted(
        repo: impl Into<Rc<Repo>>,
        root: PathBuf,
        opts: &GateOptions,
        trusted: Trusted,
    ) -> Result<Session> {
        let repo = repo.into();
        let rev = inputs::rev_flag(&repo, opts)?;
        let status = inputs::read_status(&repo, &root, opts, rev, &trusted.config.status_file)?;
        let mut trusted = trusted;
        if let Some(inside) = opts
            .status
            .as_deref()
            .and_then(|p| inputs::within(&root, p))
        {
            // `--status FILE` inside the worktree is the status document of this run (SPEC §4: it
            // stands for `<WORKTREE>/<status_file>`): findings are located in it, and it is exempt
            // where the status document is (untracked, dirty, the trailing status-only commit).
            trusted.config.status_file = inside;
        }
        let message = inputs::message_flag(opts)?;
        let mut session = Session::build(repo, root, opts, trusted)?;
        if !opts.no_worktree {
            let base = session.base.as_ref().map(|(_, id)| *id);
            let at_fork = inputs::fork_config(&session.repo, &session.worktree, base);
            let blob = session.config_blob.as_deref();
            let drift = inputs::config_drift(&session.worktree, blob, at_fork);
            session.findings.extend(drift);
        }
        session.status = Some(status);
        session.message = message;
        session.rev = rev;
        session.resolve_signing()?;
        session.admitted_base = session.admitted();
        Ok(session)
    }

    /// A session on the base alone, judging no claim (`land`, `validate --run`, `init`'s try): the
    /// configuration `trusted` and the shield every check run of the command takes.
    pub fn on_base(repo: impl Into<Rc<Repo>>, root: PathBuf, trusted: Trusted) -> Result<Session> {
        Session::build(repo.into(), root, &GateOptions::default(), trusted)
    }

    /// The fields every session has, from the options and the trusted configuration.
    fn build(
        repo: Rc<Repo>,
        root: PathBuf,
        opts: &GateOptions,
        trusted: Trusted,
    ) -> Result<Session> {
        let mut trust = Trust::new(&repo, trusted.tip.clone());
        if let Some(notes) = &opts.notes {
            trust.notes = notes.clone();
        }
        let contract = inputs::contract_lookup(opts.contract.as_deref(), trusted.tip)?;
        let progress_label = opts.label_branch.then(|| repo.head_branch()).flatten();
        Ok(Session {
            repo,
            worktree: root,
            status: None,
            message: None,
            config: trusted.config,
            base: trusted.base,
            findings: trusted.findings,
            rev: None,
            contract,
            config_blob: trusted.config_blob,
            provenance: trusted.provenance,
            config_origin: trusted.config_origin,
            trust,
            opts: opts.clone(),
            progress_label,
            signing_key: None,
            admitted_base: None,
            shield: OnceCell::new(),
            ran_now: std::cell::RefCell::new(Vec::new()),
        })
    }

    /// The signing key is found before anything runs: no key is an error, not a verdict. A
    /// recorded result stands for a run only when no one else could have written it: without a
    /// record key, anyone who can write the repository can append one (SPEC §6), so nothing is
    /// attested on the strength of an unauthenticated record.
    fn resolve_signing(&mut self) -> Result<()> {
        let Some(signing) = &self.opts.signing else {
            return Ok(());
        };
        let key = crate::attest::ssh::signing_key(&self.repo, signing.key.as_deref())?;
        if signing.signs == Signs::Attestation && crate::record::key::load()?.is_none() {
            self.opts.rerun = true;
        }
        self.signing_key = Some(key);
        Ok(())
    }

    /// SPEC §7 step 1: a worktree whose newest decision for its branch at its tip (or the commit a
    /// trailing status-only tip stands for), under the current configuration, lets it be torn
    /// down is admitted on it: the base commit that decision's checks were keyed on, so they are
    /// not run again. A `land` decision's checks ran on the composed tree; the verdict it was
    /// admitted on is the newest before it.
    fn admitted(&self) -> Option<String> {
        let path = self.opts.admit.as_deref()?;
        if self.opts.rerun || self.provenance.config_source != crate::report::ConfigSource::Base {
            return None;
        }
        let head = self.repo.worktree_head(path)?;
        let owner = crate::verdict::Owner::of(self.repo.head_branch().as_deref(), Some(path))?;
        let claim = crate::verdict::Claim::new(owner, head);
        let status_file = &self.config.status_file;
        let book = crate::verdict::Book::about(&self.repo, &claim, status_file).ok()?;
        let tip = match &self.contract {
            Lookup::Tip(name, id) => Some((name.clone(), *id)),
            _ => None,
        };
        let under = crate::verdict::Under::base(self.config_blob.clone(), tip);
        let decision = book.admission(&self.repo, &claim, status_file, &under)?;
        decision.retires().then_some(decision.record.base_commit)?
    }

    /// The branch whose claim this run judges (SPEC §26.1), which its record is written against:
    /// the checked worktree's own branch (`None` on a detached HEAD, never the branch a close line
    /// names). With `--no-worktree` there is no worktree to own the claim: it is the branch `--rev`
    /// names, else `claimed` (the branch the close line names: a CI or server run judges the
    /// claim it was handed), else HEAD's — the first of them that **holds the commit the document
    /// was read from** (`--rev`'s, else HEAD): its tip (the pushed value, in a server gate), or
    /// the work its trailing status-only tip stands for. A document read from another branch's
    /// commit (`--rev <id>` of agent/evil's commit naming agent/x, or a tag spelled like a branch)
    /// is no claim of that branch: recorded with no branch, it counts for none.
    pub fn checked_branch(&self, claimed: Option<&str>) -> Option<String> {
        if !self.opts.no_worktree {
            return self.repo.head_branch();
        }
        let read_from = self
            .rev
            .or_else(|| self.repo.worktree_head(&self.worktree))?;
        let named = self
            .opts
            .rev
            .as_deref()
            .map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_string());
        let head = self.repo.head_branch();
        let holds = |branch: &String| {
            let pushed = self.pushed().iter().find(|(name, _)| name == branch);
            let tip = pushed
                .map(|(_, id)| *id)
                .or_else(|| self.repo.branch_tip(branch));
            tip.is_some_and(|tip| {
                tip == read_from
                    || crate::verdict::stands_for(&self.repo, tip, &self.config.status_file)
                        == Some(read_from)
            })
        };
        named
            .into_iter()
            .chain(claimed.map(str::to_string))
            .chain(head)
            .find(holds)
    }

    /// What every check this session runs must not see (SPEC §4.6): the built-in secrets, git's
    /// `user.signingKey`, `[sandbox] hide` and the signing key in use.
    pub fn shield(&self) -> &Shield {
        self.shield.get_or_init(|| {
            let keys: Vec<PathBuf> = self.signing_key.iter().cloned().collect();
            Shield::new(Some(&self.repo), &self.config.sandbox_hide, &keys)
        })
    }

    /// The one check runner (SPEC §19): every run of this session's checks is planned there,
    /// with this session's configuration, records and shield.
    pub fn runner(&self) -> crate::gates::runner::Runner<'_> {
        crate::gates::runner::Runner::new(self)
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// Canonical root of the worktree being checked.
    pub fn worktree(&self) -> &Path {
        &self.worktree
    }

    /// The status document's bytes; `None` for a session on the base alone.
    pub fn status(&self) -> Option<&[u8]> {
        self.status.as_deref()
    }

    /// The coordinator's copy of the agent's final message (`--message`).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The base as named (`main`) and resolved; `None` when it did not resolve.
    pub fn base(&self) -> Option<&(String, Oid)> {
        self.base.as_ref()
    }

    /// Findings from resolving the inputs (`base-unknown`, `config-not-from-worktree`).
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// `--rev`: the commit whose tree carried the status document.
    pub fn rev(&self) -> Option<Oid> {
        self.rev
    }

    /// Where the task contract is read once the slug is known (SPEC §12).
    pub fn contract(&self) -> &Lookup {
        &self.contract
    }

    /// Keep the record entries of base runs this session made, so its later runs of the same
    /// key take them (SPEC §27.2: the base runs once).
    pub fn remember_base_runs(&self, entries: &[crate::report::CheckEntry]) {
        self.ran_now.borrow_mut().extend(entries.iter().cloned());
    }

    /// The entries [`Session::remember_base_runs`] kept.
    pub fn base_runs_now(&self) -> Vec<crate::report::CheckEntry> {
        self.ran_now.borrow().clone()
    }

    /// The configuration's blob id; `None` for the built-in defaults (SPEC §5).
    pub fn config_blob(&self) -> Option<&str> {
        self.config_blob.as_deref()
    }

    /// Where the configuration came from (`main:.closegate.toml`); `None` for the defaults.
    pub fn config_origin(&self) -> Option<&str> {
        self.config_origin.as_deref()
    }

    /// How the configuration and base were chosen (SPEC §6).
    pub fn provenance(&self) -> Provenance {
        self.provenance
    }

    /// Where attestations, signed approvals and the allowed signers are read (SPEC §20).
    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// Branch tips a push brings (the server gate); empty elsewhere.
    pub fn pushed(&self) -> &[(String, Oid)] {
        &self.opts.pushed
    }

    /// The key this command signs with (`check --attest`, `approve --sign`).
    pub fn signing_key(&self) -> Option<&Path> {
        self.signing_key.as_deref()
    }

    /// The base commit of the passing record a teardown is admitted on (SPEC §7 step 1).
    pub fn admitted_base(&self) -> Option<&str> {
        self.admitted_base.as_deref()
    }

    /// Shown before each check's name in the terminal's progress line.
    pub fn progress_label(&self) -> Option<&str> {
        self.progress_label.as_deref()
    }

    pub fn legacy(&self) -> bool {
        self.opts.legacy
    }

    pub fn no_checks(&self) -> bool {
        self.opts.no_checks
    }

    /// Run every check even when a recorded result has the same key (SPEC §19).
    pub fn rerun(&self) -> bool {
        self.opts.rerun
    }

    pub fn no_worktree(&self) -> bool {
        self.opts.no_worktree
    }

    /// A signed attestation stands for the checks (SPEC §20).
    pub fn require_attestation(&self) -> bool {
        self.opts.require_attestation
    }

    /// Stop at the first failing check.
    pub fn fail_fast(&self) -> bool {
        self.opts.fail_fast
    }
}
