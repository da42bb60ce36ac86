//! `hook run reference-transaction <state>`: refuse closing or merging an agent branch that has
//! not passed the gate (SPEC §9).
//!
//! Git runs this for every ref update, so the order of work matters: read the input, and when no
//! line touches `refs/heads/` (tags, remotes, notes, HEAD alone) answer at once without opening the
//! repository. Only then open the repository from git's environment (objects may be quarantined),
//! read the trusted configuration from the base tip and decide. Every error and every panic fails
//! closed: exit 1 with a message naming the deliberate bypass.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::config::Config;
use crate::finding::Verdict;
use crate::repo::{Repo, path_text};
use crate::report::Report;
use crate::verdict::{Book, Claim, Under};
use crate::{inputs, ledger};

/// How to get past the hook on purpose, named in every fail-closed message.
pub const BYPASS: &str = "git -c core.hooksPath=/dev/null <command>";

/// One line of the hook's input: `<old-value> SP <new-value> SP <ref-name>`.
///
/// Git allows ref names that are not UTF-8: `name` keeps the exact bytes (for looking the ref
/// up), `refname` is the text reports show, each byte of an invalid sequence as `\xNN`
/// (`refs/heads/feat/\xff`), which no valid ref name spells (a ref name holds no `\`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub old: String,
    pub new: String,
    pub refname: String,
    pub name: Vec<u8>,
}

impl Update {
    /// The branch name after `refs/heads/`, as bytes.
    fn short_bytes(&self) -> Option<&[u8]> {
        self.name.strip_prefix(b"refs/heads/")
    }

    /// Whether this updates an agent branch (`agent_branches`; see [`is_agent`]).
    pub(super) fn is_agent(&self, config: &Config) -> bool {
        self.short_bytes()
            .is_some_and(|short| is_agent(config, short))
    }

    /// The ref's value before this transaction: the old value git gives, else (git gives zeros
    /// when the command named none, as `git branch -D` does) the ref as it is, looked up by its
    /// exact bytes.
    pub(super) fn old_value(&self, repo: &Repo) -> Result<Option<Oid>> {
        match value(&self.old, &self.refname)? {
            Some(id) => Ok(Some(id)),
            None => repo.ref_target_bytes(&self.name),
        }
    }
}

/// Whether the branch `short` (the bytes after `refs/heads/`) is an agent branch. A name that is
/// not UTF-8 is matched both as reports spell it (`agent/\xff`) and as its lossy reading
/// (`agent/\u{fffd}`): either match makes it an agent branch, so such a name never takes an
/// agent branch past the gate; a name neither matches (`feat/\xff`) passes like any other.
pub(super) fn is_agent(config: &Config, short: &[u8]) -> bool {
    match std::str::from_utf8(short) {
        Ok(short) => config.is_agent_branch(short),
        Err(_) => {
            config.is_agent_branch(&path_text(short))
                || config.is_agent_branch(&String::from_utf8_lossy(short))
        }
    }
}

/// What the hook answers git, as data: `render::hook` words it, [`Answer::code`] is the exit code.
#[derive(Debug)]
pub enum Answer {
    /// Every update may go ahead.
    Accepted,
    /// At least one decision was refused: the transaction is refused (exit 1).
    Refused(Vec<Refusal>),
    /// No decision was reached (an error, a panic): the transaction is refused all the same,
    /// exit 1, or 2 for a repository libgit2 cannot open (SPEC §15). `error` is raw text.
    Undecided { error: String, code: i32 },
}

impl Answer {
    /// The hook's exit code: 0 lets git go ahead.
    pub fn code(&self) -> i32 {
        match self {
            Answer::Accepted => 0,
            Answer::Refused(_) => 1,
            Answer::Undecided { code, .. } => *code,
        }
    }
}

/// A refused decision and, when the refusal is only "no passing record", the exact `closegate
/// check` and `closegate approve` commands that can make its commit covered (raw, shell-quoted).
#[derive(Debug)]
pub struct Refusal {
    pub decision: Decision,
    pub next: Option<(String, String)>,
}

/// Run the hook for `hook` in `state` with the ref updates on `input`; returns its answer.
/// `hook_file` is the script git ran (the installed script passes its own path), which closegate
/// keeps in step with the configuration (`refresh`). Never returns an error and never lets a
/// panic escape: both refuse ([`Answer::Undecided`]).
pub fn main(
    hook: &str,
    state: Option<&str>,
    hook_file: Option<&Path>,
    input: &mut dyn Read,
) -> Answer {
    super::settle(|| run(hook, state, hook_file, input))
        .unwrap_or_else(|(error, code)| Answer::Undecided { error, code })
}

fn run(
    hook: &str,
    state: Option<&str>,
    hook_file: Option<&Path>,
    input: &mut dyn Read,
) -> Result<Answer> {
    if hook != "reference-transaction" {
        bail!("unknown hook `{hook}`: only reference-transaction is handled");
    }
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .context("cannot read the ref updates on standard input")?;
    if state != Some("prepared") {
        return Ok(Answer::Accepted);
    }
    let updates = parse(&bytes)?;
    // Branches are judged; a remote-tracking ref may be where the configuration comes from.
    let branchy = |u: &Update| {
        ["refs/heads/", "refs/remotes/"]
            .iter()
            .any(|p| u.refname.starts_with(p))
    };
    if !updates.iter().any(branchy) {
        return Ok(Answer::Accepted);
    }
    decide(&updates, hook_file)
}

/// Parse the hook's input, as bytes (a ref name need not be UTF-8); a line that is not three
/// fields is an error (fail closed).
pub fn parse(bytes: &[u8]) -> Result<Vec<Update>> {
    let mut updates = Vec::new();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let mut fields = line.splitn(3, |b| *b == b' ');
        let (Some(old), Some(new), Some(refname)) = (fields.next(), fields.next(), fields.next())
        else {
            bail!(
                "line {} of the ref updates is not `<old> <new> <ref>`",
                i + 1
            );
        };
        updates.push(Update {
            old: path_text(old),
            new: path_text(new),
            refname: path_text(refname),
            name: refname.to_vec(),
        });
    }
    Ok(updates)
}

/// A ref value from the input: `None` for the all-zero id (absent), an error for anything that is
/// not an object id (a symbolic value under `refs/heads/` is refused rather than guessed at).
pub(super) fn value(raw: &str, refname: &str) -> Result<Option<Oid>> {
    let id = Oid::from_str(raw)
        .ok()
        .filter(|_| matches!(raw.len(), 40 | 64) && raw.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| format!("`{raw}` for {refname} is not an object id"))?;
    Ok((!id.is_zero()).then_some(id))
}

/// What a decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Deleting an agent branch.
    Delete,
    /// Moving the base onto agent commits.
    Merge,
    /// Moving the base to a commit whose configuration or contracts do not parse.
    Config,
}

impl Action {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Action::Delete => "delete",
            Action::Merge => "merge",
            Action::Config => "config",
        }
    }
}

/// One decision of the hook.
#[derive(Debug, Clone)]
pub struct Decision {
    pub action: Action,
    /// The agent branch, or for `Config` the base branch.
    pub branch: String,
    /// The commit judged: a deleted branch's tip, the newest agent commit a merge brings in, the
    /// base's new tip.
    pub commit: Oid,
    pub accepted: bool,
    pub base: Option<String>,
    /// Why it was refused beyond "no passing record" (the unreadable or broken configuration).
    pub reason: Option<String>,
    /// A merge by content (SPEC §9: a squash, a cherry-pick, a copy): `commit` is the branch's
    /// tip, which the base does not reach.
    pub squash: bool,
    /// A deletion of the base branch itself (`action` is `Config`, `commit` its old tip).
    pub deletes_base: bool,
}

impl Decision {
    /// A refusal of `action` on `branch` at `commit`, with no reason beyond "no passing record"
    /// yet; `base` names the base in messages.
    pub fn new(action: Action, branch: &str, commit: Oid, base: Option<String>) -> Decision {
        Decision {
            action,
            branch: branch.to_string(),
            commit,
            accepted: false,
            base,
            reason: None,
            squash: false,
            deletes_base: false,
        }
    }
}

/// What the hook decides with: the trusted configuration, or the fallback when it cannot be read.
pub(super) struct Setting {
    /// The local branches guarded as the base (the diff base and the branch the configuration
    /// is read from; usually one).
    pub(super) bases: Vec<String>,
    /// The base's name for messages and records.
    pub(super) base: Option<String>,
    /// The commit the configuration is read from (SPEC §5), before this transaction.
    pub(super) tip: Option<Oid>,
    source: Source,
}

/// The configuration the hook decides with, and where it came from.
enum Source {
    /// The whole trusted read, kept for judging a commit without reading it again.
    Trusted(inputs::Trusted),
    /// The configuration at the base tip could not be read: the default `agent_branches`, and
    /// the file and the error (SPEC §9).
    Broken { config: Config, error: String },
}

impl Setting {
    pub(super) fn read(repo: &Repo) -> Setting {
        match inputs::trusted_config(repo, None, None) {
            Ok(trusted) => {
                // The configured base counts before it exists: creating it is judged.
                let base = trusted.base.as_ref().map(|(name, _)| name);
                let base = base.or(trusted.config.base.as_ref()).cloned();
                let tip = trusted.tip.as_ref().map(|(name, _)| name);
                let mut bases: Vec<String> = Vec::new();
                for branch in base.iter().chain(tip).flat_map(|n| base_branches(repo, n)) {
                    if !bases.contains(&branch) {
                        bases.push(branch);
                    }
                }
                Setting {
                    base,
                    tip: trusted.tip.as_ref().map(|(_, id)| *id),
                    bases,
                    source: Source::Trusted(trusted),
                }
            }
            Err(err) => {
                let tip = inputs::config_tip(repo, None);
                Setting {
                    bases: tip
                        .iter()
                        .flat_map(|(n, _)| base_branches(repo, n))
                        .collect(),
                    base: tip.as_ref().map(|(name, _)| name.clone()),
                    tip: tip.map(|(_, id)| id),
                    source: Source::Broken {
                        config: Config::default(),
                        error: format!("{err:#}"),
                    },
                }
            }
        }
    }

    pub(super) fn config(&self) -> &Config {
        match &self.source {
            Source::Trusted(trusted) => &trusted.config,
            Source::Broken { config, .. } => config,
        }
    }

    /// Why the configuration at the base tip could not be read, when it could not.
    pub(super) fn broken(&self) -> Option<&String> {
        match &self.source {
            Source::Trusted(_) => None,
            Source::Broken { error, .. } => Some(error),
        }
    }

    /// The trusted read, when it succeeded.
    pub(super) fn trusted(&self) -> Option<&inputs::Trusted> {
        match &self.source {
            Source::Trusted(trusted) => Some(trusted),
            Source::Broken { .. } => None,
        }
    }

    /// What a decision must have been made under to count (SPEC §9, §26.1): the configuration
    /// blob at the base tip before the transaction, and the tip contracts are read from.
    pub(super) fn under(&self) -> Under {
        // No base tip at all (a base being created): nothing to be stale against.
        let trusted = self.trusted();
        let config = trusted
            .filter(|t| t.tip.is_some())
            .map(|t| t.config_blob.clone());
        Under::new(config, trusted.and_then(|t| t.tip.clone()))
    }

    /// The blob id of the trusted configuration, which parsed: the same bytes at a pushed tip
    /// need no second parse.
    pub(super) fn parsed_blob(&self) -> Option<&str> {
        self.trusted()?.config_blob.as_deref()
    }
}

/// The refs (full names) the installed script hands to closegate when they move: `main`,
/// `master`, the bases this repository's configuration and refs name now, and origin/HEAD and its
/// target when the configuration is read from there (`refresh::guarded_refs`).
pub fn guarded_bases(repo: &Repo) -> Vec<String> {
    super::refresh::guarded_refs(repo, &Setting::read(repo), &[])
}

/// The slow path: open the repository from git's environment, keep the installed script in step
/// with the configuration, and judge the branch updates.
fn decide(updates: &[Update], hook_file: Option<&Path>) -> Result<Answer> {
    let repo = Repo::from_env()?;
    let setting = Setting::read(&repo);
    super::refresh::refresh(&repo, &setting, updates, hook_file)?;
    let heads: Vec<&Update> = updates
        .iter()
        .filter(|u| u.refname.starts_with("refs/heads/"))
        .collect();
    if heads.is_empty() {
        return Ok(Answer::Accepted);
    }
    let judge = Judge::new(&repo, &setting, &heads)?;
    // Most updates (a commit on a feature branch or on an agent branch) need nothing more.
    if !judge.needs_judging()? {
        return Ok(Answer::Accepted);
    }
    let mut decisions = judge.deletions()?;
    decisions.extend(judge.base_moves()?);
    let common = repo.common_dir();
    for d in &decisions {
        audit_line(d)
            .append(&common)
            .context("cannot record the hook's decision")?;
    }
    Ok(answer(&repo, decisions, &setting.config().status_file))
}

/// One transaction's branch updates, with what judging them needs: the base's tips (now, and
/// after this transaction when it moves the base too) and the passing records, read at most
/// once per transaction and only when a decision needs them.
struct Judge<'a> {
    repo: &'a Repo,
    setting: &'a Setting,
    heads: &'a [&'a Update],
    base_tips: Vec<Oid>,
    book: std::cell::OnceCell<Book>,
}

impl<'a> Judge<'a> {
    fn new(repo: &'a Repo, setting: &'a Setting, heads: &'a [&'a Update]) -> Result<Judge<'a>> {
        let mut judge = Judge {
            repo,
            setting,
            heads,
            base_tips: Vec::new(),
            book: std::cell::OnceCell::new(),
        };
        let mut tips: Vec<Oid> = setting
            .bases
            .iter()
            .filter_map(|b| repo.branch_tip(b))
            .collect();
        for u in judge.base_updates() {
            tips.extend(value(&u.new, &u.refname)?);
        }
        judge.base_tips = tips;
        Ok(judge)
    }

    fn short(u: &Update) -> &str {
        &u.refname["refs/heads/".len()..]
    }

    /// A branch that is the base, or would become it (SPEC §5: `main`, else `master`): moving or
    /// creating `main` or `master` is judged even while another branch is the base, so deleting
    /// the base and creating it again, or creating `master` in the transaction that deletes
    /// `main`, cannot bring in agent commits unjudged.
    fn is_base(&self, u: &Update) -> bool {
        let short = Self::short(u);
        matches!(short, "main" | "master") || self.is_current_base(u)
    }

    /// One of the branches guarded as the base now (the configured base, the configuration tip).
    fn is_current_base(&self, u: &Update) -> bool {
        let short = Self::short(u);
        self.setting.bases.iter().any(|b| short == b.as_str())
    }

    fn base_updates(&self) -> impl Iterator<Item = &'a Update> + '_ {
        self.heads.iter().copied().filter(|u| self.is_base(u))
    }

    /// Does any update move the base or delete an agent branch?
    fn needs_judging(&self) -> Result<bool> {
        for u in self.heads {
            let agent = u.is_agent(self.setting.config());
            if self.is_base(u) || (agent && value(&u.new, &u.refname)?.is_none()) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The decisions of the audit log, read at most once per transaction and only when a
    /// decision needs them.
    fn book(&self) -> Result<&Book> {
        if self.book.get().is_none() {
            let _ = self.book.set(Book::read(&self.repo.common_dir())?);
        }
        Ok(self.book.get().expect("just set"))
    }

    /// Is `branch` at `id` covered (SPEC §9, §26.1): does the newest decision for this branch at
    /// this commit, made under the base tip's configuration and contract, pass? With `merge` it
    /// must let the work be merged (a `closed-without-merge` teardown covers deleting only).
    fn covered(&self, branch: &str, id: Oid, merge: bool) -> Result<bool> {
        let claim = Claim::on_branch(branch, id);
        let status_file = &self.setting.config().status_file;
        let under = self.setting.under();
        let decision = self
            .book()?
            .decision(self.repo, &claim, status_file, &under);
        Ok(decision.is_some_and(|d| if merge { d.merges() } else { d.retires() }))
    }

    /// Whether `branch`'s `tip` is merged into `base` (SPEC §7, landings of this branch
    /// included).
    fn merged(&self, branch: &str, base: Oid, tip: Oid) -> Result<bool> {
        let status_file = &self.setting.config().status_file;
        Ok(self.repo.reaches(base, tip)?
            || holds_changes(self.repo, self.book()?, branch, base, tip, status_file))
    }

    fn decision(&self, action: Action, branch: &str, commit: Oid, accepted: bool) -> Decision {
        Decision {
            accepted,
            ..Decision::new(action, branch, commit, self.setting.base.clone())
        }
    }

    /// Deleting an agent branch: accepted when its tip is merged into a base tip or covered.
    fn deletions(&self) -> Result<Vec<Decision>> {
        let mut decisions = Vec::new();
        for u in self.heads {
            let short = Self::short(u);
            if !u.is_agent(self.setting.config()) || value(&u.new, &u.refname)?.is_some() {
                continue; // creating or moving an agent branch is the agent's work
            }
            let Some(tip) = u.old_value(self.repo)? else {
                continue;
            };
            if let Some(broken) = self.setting.broken() {
                let mut refused = self.decision(Action::Delete, short, tip, false);
                refused.reason = Some(broken.clone());
                decisions.push(refused);
                continue;
            }
            let mut merged = false;
            for b in &self.base_tips {
                merged = merged || self.merged(short, *b, tip)?;
            }
            let accepted = merged || self.covered(short, tip, false)?;
            decisions.push(self.decision(Action::Delete, short, tip, accepted));
        }
        Ok(decisions)
    }

    /// Moving the base: refused onto a broken configuration, or onto agent commits whose newest
    /// is not covered.
    fn base_moves(&self) -> Result<Vec<Decision>> {
        let mut decisions = Vec::new();
        for u in self.base_updates() {
            let short = Self::short(u);
            let Some(new_base) = value(&u.new, &u.refname)? else {
                decisions.extend(self.base_deletion(u)?);
                continue;
            };
            let parsed = self.setting.parsed_blob();
            if let Some(error) = unparsable_config(self.repo, short, new_base, parsed) {
                let mut refused = self.decision(Action::Config, short, new_base, false);
                refused.reason = Some(error);
                decisions.push(refused);
            }
            let merged = newly_merged(self.repo, self.setting, self.heads, u, new_base)?;
            let squashed =
                squash_merged(self.repo, self.setting, self.heads, u, new_base, &merged)?;
            let all: Vec<_> = merged
                .iter()
                .map(|m| (m, false))
                .chain(squashed.iter().map(|m| (m, true)))
                .collect();
            let mut judged = Vec::new();
            for ((branch, newest), squash) in &all {
                let mut d = self.decision(Action::Merge, branch, *newest, false);
                d.squash = *squash;
                match self.setting.broken() {
                    Some(broken) => d.reason = Some(broken.clone()),
                    None => d.accepted = self.covered(branch, *newest, true)?,
                }
                judged.push(d);
            }
            decisions.extend(shared_tips(judged));
        }
        Ok(decisions)
    }
}

/// Each branch is judged on its own decisions (SPEC §26.1); but when the move brings in one
/// commit as the newest of several agent branches at once — a branch made at another's tip, with
/// nothing of its own yet — the commit is that one branch's work: it is covered when one of them
/// covers it. A branch with a commit of its own is never covered by another's decision.
fn shared_tips(mut judged: Vec<Decision>) -> Vec<Decision> {
    let covered: Vec<Oid> = judged
        .iter()
        .filter(|d| d.accepted && !d.squash)
        .map(|d| d.commit)
        .collect();
    for d in &mut judged {
        if !d.accepted && d.reason.is_none() && !d.squash && covered.contains(&d.commit) {
            d.accepted = true;
        }
    }
    judged
}

impl Judge<'_> {
    /// Deleting the base is refused, as the server gate refuses it: without the base the next
    /// branch created as `main` or `master` would be judged against nothing, and another branch
    /// could become the base holding agent commits no transaction moved it onto.
    fn base_deletion(&self, u: &Update) -> Result<Option<Decision>> {
        if !self.is_current_base(u) {
            return Ok(None);
        }
        let Some(old) = u.old_value(self.repo)? else {
            return Ok(None);
        };
        let mut d = self.decision(Action::Config, Self::short(u), old, false);
        d.reason = Some(BASE_DELETED.to_string());
        d.deletes_base = true;
        Ok(Some(d))
    }
}

/// The reason a deletion of the base is refused.
const BASE_DELETED: &str = "the base branch cannot be deleted while the hook is installed";

/// Why the configuration or a contract committed at `commit` (the base's new tip) does not
/// parse, if it does not (SPEC §9: a broken configuration must never reach the base).
pub(super) fn unparsable_config(
    repo: &Repo,
    branch: &str,
    commit: Oid,
    parsed: Option<&str>,
) -> Option<String> {
    let blob = repo.blob_id(commit, crate::config::FILE_NAME);
    let known = blob.is_some_and(|b| parsed == Some(b.to_string().as_str()));
    if !known && let Err(err) = inputs::base_config(repo, branch, commit) {
        return Some(format!("{err:#}"));
    }
    const DIR: &str = ".closegate/contracts";
    let entries = match repo.list_dir(commit, DIR) {
        Ok(entries) => entries,
        Err(err) => return Some(format!("{branch}:{DIR}: {err:#}")),
    };
    for (name, _, is_dir) in entries {
        if is_dir || !name.ends_with(".toml") {
            continue;
        }
        let path = format!("{DIR}/{name}");
        let reason = match repo.read_file(commit, &path) {
            Ok(Some(bytes)) => crate::contract::parse(&bytes).err(),
            Ok(None) => None,
            Err(err) => Some(format!("{err:#}")),
        };
        if let Some(reason) = reason {
            return Some(format!("{branch}:{path}: {reason}"));
        }
    }
    None
}

/// For each agent branch whose commits the base newly contains after `update`, the newest such
/// commit: the merge base of the new base tip and the agent tip (SPEC §9), when the old base did
/// not already reach it. Agent tips are taken before and after this transaction. A base this
/// update creates is measured against the tips of the other bases and of the branch the
/// configuration is read from: creating `trunk` at `main` brings in nothing new, creating it at
/// an agent commit does.
pub(super) fn newly_merged(
    repo: &Repo,
    setting: &Setting,
    heads: &[&Update],
    update: &Update,
    new_base: Oid,
) -> Result<Vec<(String, Oid)>> {
    let before_tips = bases_before(repo, setting, update)?;
    let tips = agent_tips(repo, setting, heads)?;
    let mut newly = Vec::new();
    for (branch, tip) in tips {
        let Some(newest) = repo.merge_base(new_base, tip) else {
            continue;
        };
        let mut before = false;
        for old in &before_tips {
            before = before || repo.reaches(*old, newest)?;
        }
        if !before {
            newly.push((branch, newest));
        }
    }
    Ok(newly)
}

/// The base as it was before `update`: its old value, or when it is being created, the tips of
/// every guarded base name and the configured base.
fn bases_before(repo: &Repo, setting: &Setting, update: &Update) -> Result<Vec<Oid>> {
    Ok(match update.old_value(repo)? {
        Some(old) => vec![old],
        None => setting
            .bases
            .iter()
            .filter_map(|b| repo.branch_tip(b))
            .chain(setting.tip)
            .collect(),
    })
}

/// Every agent branch with its tip: the branches as they are, plus the new values this
/// transaction gives agent branches (`heads`); sorted, each pair once.
fn agent_tips(repo: &Repo, setting: &Setting, heads: &[&Update]) -> Result<Vec<(String, Oid)>> {
    let config = setting.config();
    let mut tips = repo.branches_matching(|short| is_agent(config, short))?;
    for u in heads {
        if u.is_agent(config)
            && let Some(id) = value(&u.new, &u.refname)?
        {
            tips.push((u.refname["refs/heads/".len()..].to_string(), id));
        }
    }
    tips.sort();
    tips.dedup();
    Ok(tips)
}

/// For each agent branch that the base did not hold before `update` and holds by content after it
/// (SPEC §9, §7's blob rule: a squash merge, a cherry-pick of its commits, a hand-copied change),
/// its tip; branches `already` judged as merged by commits are left out. A branch whose tip the
/// new base reaches is a merge by commits (`newly_merged`). Each tip's change set (against its
/// merge base with the new base) is computed once and asked of the old and the new base.
pub(super) fn squash_merged(
    repo: &Repo,
    setting: &Setting,
    heads: &[&Update],
    update: &Update,
    new_base: Oid,
    already: &[(String, Oid)],
) -> Result<Vec<(String, Oid)>> {
    let status_file = &setting.config().status_file;
    let before = bases_before(repo, setting, update)?;
    let tips = agent_tips(repo, setting, heads)?;
    let mut squashed = Vec::new();
    for (branch, tip) in tips {
        if already.iter().any(|(b, _)| *b == branch) || repo.reaches(new_base, tip)? {
            continue;
        }
        let Some(merge_base) = repo.merge_base(new_base, tip) else {
            continue;
        };
        let changes = repo.change_set(merge_base, tip)?;
        if !repo.holds_changes(new_base, &changes, status_file)? {
            continue;
        }
        let mut held_before = false;
        for old in &before {
            held_before = held_before || repo.reaches(*old, tip)? || {
                let same_base = repo.merge_base(*old, tip) == Some(merge_base);
                if same_base {
                    repo.holds_changes(*old, &changes, status_file)?
                } else {
                    repo.merged_into(*old, tip, status_file)?.is_merged()
                }
            };
        }
        if !held_before {
            squashed.push((branch, tip));
        }
    }
    Ok(squashed)
}

/// The local branches the hook guards as the base for a configured or discovered base name: the
/// branch itself, or the branch part of a remote-tracking base (`origin/main` → `main`). A name
/// that is no branch yet is guarded as the local branch it names once created (`trunk`; for
/// `<remote>/<branch>` of a configured remote, `<branch>` too), so creating the base is judged.
pub(super) fn base_branches(repo: &Repo, name: &str) -> Vec<String> {
    if let Some(short) = name.strip_prefix("refs/heads/") {
        return vec![short.to_string()];
    }
    if repo.branch_tip(name).is_some() {
        return vec![name.to_string()];
    }
    let remote = name.strip_prefix("refs/remotes/");
    let split = remote.unwrap_or(name).split_once('/');
    let branch = split.map(|(_, branch)| branch.to_string());
    if remote.is_some() || repo.resolve_branch(name).is_some() {
        return branch.into_iter().collect();
    }
    if name.starts_with("refs/") || name.is_empty() {
        return Vec::new();
    }
    let is_remote = split.is_some_and(|(r, _)| repo.is_remote(r));
    std::iter::once(name.to_string())
        .chain(branch.filter(|_| is_remote))
        .collect()
}

/// The audit line of one decision: event `hook`, verdict VERIFIED when accepted, FAIL when refused.
pub(super) fn audit_line(d: &Decision) -> ledger::Record {
    let report = Report {
        commit: Some(d.commit.to_string()),
        branch: Some(d.branch.clone()),
        base: d.base.clone(),
        verdict: if d.accepted {
            Verdict::Verified
        } else {
            Verdict::Fail
        },
        ..Report::default()
    };
    let fields = ledger::HookFields {
        action: d.action.as_str().to_string(),
        accepted: d.accepted,
        reason: d.reason.clone(),
    };
    ledger::hook_record(&report, fields)
}

/// The refused decisions, each with the commands that move it on; accepted when there is none.
fn answer(repo: &Repo, decisions: Vec<Decision>, status_file: &str) -> Answer {
    let refused: Vec<Refusal> = decisions
        .into_iter()
        .filter(|d| !d.accepted)
        .map(|d| Refusal {
            next: d
                .reason
                .is_none()
                .then(|| next_commands(repo, &d.branch, d.commit, status_file)),
            decision: d,
        })
        .collect();
    if refused.is_empty() {
        return Answer::Accepted;
    }
    Answer::Refused(refused)
}

/// The exact `closegate check` and `closegate approve` commands that can make `commit` (judged on
/// `branch`) covered, runnable as printed from any worktree of the repository. Both read the
/// status document where it is: in the worktree checked out on the branch, else at the branch's
/// tip (`--rev <branch> --no-worktree`; a name that is not UTF-8 cannot be typed, so the commit
/// itself). `approve --commit` names the commit the gate checks: the commit the close line names,
/// which for a single trailing status-only commit is its parent (SPEC §4.3, §9). Quoted for sh,
/// not escaped: `render` escapes them where they are printed.
pub(super) fn next_commands(
    repo: &Repo,
    branch: &str,
    commit: Oid,
    status_file: &str,
) -> (String, String) {
    let checked = crate::verdict::stands_for(repo, commit, status_file).unwrap_or(commit);
    let wanted = format!("refs/heads/{branch}");
    let worktree = repo
        .worktrees()
        .into_iter()
        .find(|w| w.exists && w.head_ref().as_deref() == Some(wanted.as_str()));
    use crate::shell::shell_word;
    let target = match worktree {
        Some(wt) => shell_word(&wt.path.display().to_string()),
        // `path_text` spells an invalid byte `\xNN`: a backslash, which no ref name holds
        None if branch.contains('\\') => format!("--rev {commit} --no-worktree"),
        None => format!("--rev {} --no-worktree", shell_word(branch)),
    };
    (
        format!("closegate check {target}"),
        format!("closegate approve {target} --commit {checked}"),
    )
}

/// Whether `branch`'s `tip` is merged into `base` (SPEC §7: reachable, the blob rule, or a
/// landing of this branch's tip); an error reads as "not merged", so the hook then needs a
/// passing record (fails closed).
pub(super) fn holds_changes(
    repo: &Repo,
    book: &Book,
    branch: &str,
    base: Oid,
    tip: Oid,
    status_file: &str,
) -> bool {
    repo.merged_into(base, tip, status_file)
        .is_ok_and(|merged| merged.is_merged())
        || book.landed(repo, branch, tip, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_refuses_malformed_ones() {
        let zero = "0".repeat(40);
        let input = format!("{zero} {} refs/tags/v1\n\n", "a".repeat(40));
        let updates = parse(input.as_bytes()).unwrap();
        assert_eq!(updates.len(), 1);
        assert_eq!(updates[0].refname, "refs/tags/v1");
        assert!(parse(b"abc refs/heads/x\n").is_err());
        assert!(parse(b"\xff\xfe").is_err());
        // a ref name that is not UTF-8 is read, kept as bytes and shown escaped
        let line = [
            format!("{zero} {zero} refs/heads/feat/").as_bytes(),
            b"\xff\n",
        ]
        .concat();
        let updates = parse(&line).unwrap();
        assert_eq!(updates[0].refname, "refs/heads/feat/\\xff");
        assert_eq!(updates[0].name, b"refs/heads/feat/\xff".to_vec());
    }

    #[test]
    fn a_name_that_is_not_utf8_is_an_agent_branch_when_either_reading_matches() {
        let default = Config::default();
        assert!(is_agent(&default, b"agent/\xff"));
        assert!(!is_agent(&default, b"feat/\xff"));
        // `?` counts the characters of the escaped reading, `\xff`
        let four = Config::parse("agent_branches = [\"agent/????\"]\n", "t").unwrap();
        assert!(is_agent(&four, b"agent/\xff"));
        // `\x` spelled out matches the escaped reading only
        let spelled = Config::parse("agent_branches = [\"agent/*x*\"]\n", "t").unwrap();
        assert!(is_agent(&spelled, b"agent/\xff"));
        assert!(!is_agent(&spelled, b"agent/y"));
    }

    #[test]
    fn values_are_ids_or_absent() {
        let zero = "0".repeat(40);
        assert_eq!(value(&zero, "r").unwrap(), None);
        assert!(value(&"ab".repeat(20), "r").unwrap().is_some());
        assert!(value("ref:refs/heads/main", "r").is_err());
    }

    #[test]
    fn non_prepared_states_and_non_branch_refs_pass_without_a_repository() {
        let zero = "0".repeat(40);
        let line = format!("{zero} {} refs/heads/agent/x\n", "a".repeat(40));
        for state in ["committed", "aborted"] {
            assert_eq!(
                main(
                    "reference-transaction",
                    Some(state),
                    None,
                    &mut line.as_bytes()
                )
                .code(),
                0
            );
        }
        let tag = format!("{zero} {} refs/tags/t\n", "a".repeat(40));
        assert_eq!(
            main(
                "reference-transaction",
                Some("prepared"),
                None,
                &mut tag.as_bytes()
            )
            .code(),
            0
        );
        assert_eq!(
            main("pre-push", Some("prepared"), None, &mut tag.as_bytes()).code(),
            1
        );
    }
}
