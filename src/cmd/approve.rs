//! `closegate approve`: approve a PENDING_REVIEW return, bound to the exact commit, the
//! configuration blob and the contract blob (SPEC §8).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::catalog::Code;
use crate::cmd::gate::GateArgs;
use crate::finding::Verdict;
use crate::gates::Session;
use crate::inputs::{self, GateOptions, Signing, Signs};
use crate::render::{self, Format, escape};
use crate::repo::CommitLookup;
use crate::report::{Approval, Report};
use crate::{attest, gates, ledger, record};

/// Record a human's approval of a PENDING_REVIEW return, bound to the exact commit
///
/// The approval also binds the base's configuration and the task contract, if any. Runs the
/// gate, refuses on FAIL, when --commit is not that commit, or under --config / another --base;
/// prints the protected changes it approves with the `git diff` command that shows them, and on
/// a terminal asks `approve? [y/N]`; then `check` reports the protected changes as warnings until
/// a new commit, configuration or contract voids it. Off a terminal it acts only with --yes: a
/// human runs it. It prints the verdict the next `check` gives (exit 0 recorded, 1 refused or
/// declined, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    /// The commit being approved; must be the one the gate checks (full or abbreviated id)
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Who approves (recorded; default: git's `user.name`, else GIT_COMMITTER_NAME or
    /// GIT_AUTHOR_NAME)
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Why (recorded)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Sign the approval with an SSH key and store it as a note under refs/notes/closegate
    #[arg(long)]
    pub sign: bool,
    /// The SSH key that signs (default: git's user.signingKey when gpg.format = ssh)
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub key: Option<PathBuf>,
    /// Do not ask `approve? [y/N]` on a terminal: approve what is shown. Off a terminal approve
    /// acts only with it
    #[arg(long, short = 'y', conflicts_with = "dry_run")]
    pub yes: bool,
    /// Show what would be approved and record nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object instead of the human report (never asks: pass --yes or --dry-run
    /// on a terminal)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// The reviewer's name for `verb` (`approve`, `reject`): `--by`, else git's `user.name` as
/// `repo` sees it, else `GIT_COMMITTER_NAME`, else `GIT_AUTHOR_NAME` (SPEC §21); never empty.
/// None set: exit 2.
pub fn reviewer(by: Option<&str>, repo: &crate::repo::Repo, verb: &str) -> Result<String> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let by = match by {
        Some(by) => by.trim().to_string(),
        None => user_name(repo)
            .or_else(|| env("GIT_COMMITTER_NAME"))
            .or_else(|| env("GIT_AUTHOR_NAME"))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{verb} needs the reviewer's name: pass --by NAME, or set git's user.name \
                     or GIT_COMMITTER_NAME"
                )
            })?,
    };
    if by.is_empty() {
        anyhow::bail!("--by needs a name");
    }
    Ok(by)
}

/// The `--json` object of `approve`.
#[derive(serde::Serialize)]
struct Shown<'a> {
    schema: u32,
    /// Whether an approval was recorded (false on a refusal, a decline and under --dry-run).
    approved: bool,
    dry_run: bool,
    /// The verdict the next `check` gives (with the approval recorded, as the gate applies it);
    /// null when approve refused before the gate ran.
    verdict: Option<Verdict>,
    commit: Option<&'a str>,
    by: &'a str,
    note: Option<&'a str>,
    /// Why the approval cannot be recorded; null when it can.
    refused: Option<&'a str>,
    /// The report the next `check` gives; null when approve refused before the gate ran.
    report: Option<&'a Report>,
}

/// Why `verb` (`approve`, `reject`) may not act here (SPEC §26.5), or `None`: off a terminal it
/// acts only with `--yes` (`yes`), so an agent's tool call never approves or rejects its own work
/// by running a command a hint showed it.
pub fn off_terminal(verb: &str, yes: bool) -> Option<String> {
    if yes || on_terminal() {
        return None;
    }
    Some(format!(
        "{verb} acts off a terminal only with --yes, and nothing was recorded: a human who has \
         reviewed the work runs `closegate {verb}` on a terminal (it shows what is decided), or \
         passes --yes; an agent never runs it on its own work"
    ))
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let by = reviewer(args.by.as_deref(), &repo, "approve")?;
    // The key is found before anything is judged or recorded (no key is an error, exit 2), and
    // the session hides it from the checks, which run the agent's code.
    let signing = args.sign.then(|| Signing {
        key: args.key.clone(),
        signs: Signs::Approval,
    });
    let opts = GateOptions {
        signing,
        ..args.gate.options()
    };
    let session = Session::in_repo(repo, root, &opts)?;
    // Before the gate runs anything: off a terminal, only with --yes (SPEC §26.5).
    if let Some(why) = off_terminal("approve", args.yes || args.dry_run) {
        return refused_off_terminal(&args, &by, &why);
    }
    let judged = Judged::judge(session, args.commit.as_deref())?;
    if args.json {
        return json(&args, &judged, &by);
    }
    human(&args, &judged, &by, color)
}

/// The gate's report on the approved commit and whether an approval may be recorded.
struct Judged {
    session: Session,
    /// The report as it stands (a rejection of the commit left out: an approval given now is
    /// newer and overrides it).
    report: Report,
    /// The report before any recorded approval or rejection was applied.
    unapproved: Report,
    /// The commit approved, when the approval is not refused.
    approved: Option<git2::Oid>,
    refusal: Option<String>,
}

impl Judged {
    fn judge(session: Session, asked: Option<&str>) -> Result<Judged> {
        let outcome = gates::evaluate(&session)?;
        let mut report = outcome.report;
        report.findings.retain(|f| f.code != Code::ReviewRejected);
        report.finish();
        let refusal = refusal(session.repo(), &report, outcome.commit, asked);
        let approved = outcome.commit.filter(|_| refusal.is_none());
        Ok(Judged {
            session,
            report,
            unapproved: outcome.unapproved,
            approved,
            refusal,
        })
    }

    /// The report the next `check` gives once the approval by `by` is recorded (and, with
    /// `--sign`, its note stored): the gate's own rule, never one of approve's making (SPEC
    /// §26.5). Refused, the report as it stands.
    fn next(&self, given: Approval) -> Result<Report> {
        let Some(commit) = self.approved else {
            return Ok(self.report.clone());
        };
        let mut next = self.unapproved.clone();
        gates::apply_given_approval(&self.session, commit, &mut next, given)?;
        Ok(next)
    }
}

/// The human run: the report and the changes approved, the question on a terminal, then the
/// approval recorded and the verdict the next check gives.
fn human(args: &Args, judged: &Judged, by: &str, color: bool) -> Result<i32> {
    let (session, refusal) = (&judged.session, judged.refusal.as_deref());
    let mut out = crate::term::human();
    show(session, &judged.report, judged.approved, color, &mut out)?;
    if args.dry_run {
        writeln!(out)?;
        match refusal {
            Some(why) => writeln!(out, "approval would be refused: {}", escape(why))?,
            None => writeln!(out, "dry run: nothing was approved or recorded")?,
        }
        return Ok(if refusal.is_some() { 1 } else { 0 });
    }
    if refusal.is_none() && !args.yes && on_terminal() && !confirmed(&mut out)? {
        writeln!(out, "not approved: nothing was recorded")?;
        return Ok(1);
    }
    let note = args.note.as_deref();
    let key = session.signing_key();
    let given = approval(&judged.report, by);
    if let (Some(key), Some(commit)) = (key, judged.approved) {
        sign(session, key, commit, (&judged.report, &given), note)?;
    }
    // What is recorded, and printed, is the verdict the next check gives (SPEC §26.5).
    let next = judged.next(given)?;
    let common = session.repo().common_dir();
    ledger::record_approve(&common, &next, by, note, refusal)?;
    announce(&next, by, refusal, key.is_some(), &mut out)
}

/// The approval given now, by `by`, of the report's commit.
fn approval(report: &Report, by: &str) -> Approval {
    Approval {
        by: by.to_string(),
        at: record::now_rfc3339(),
        commit: report.commit.clone().unwrap_or_default(),
    }
}

/// Off a terminal without `--yes`: refused before the gate runs, nothing recorded (exit 1).
fn refused_off_terminal(args: &Args, by: &str, why: &str) -> Result<i32> {
    if args.json {
        let shown = Shown {
            schema: crate::report::SCHEMA,
            approved: false,
            dry_run: false,
            verdict: None,
            commit: None,
            by,
            note: args.note.as_deref(),
            refused: Some(why),
            report: None,
        };
        render::write_json(&shown, &mut crate::term::stdout())?;
    } else {
        writeln!(crate::term::human(), "approval refused: {}", escape(why))?;
    }
    Ok(1)
}

/// `--sign` (SPEC §20): the approval applied to `report`, signed with `key` and stored as a note
/// on `commit`.
fn sign(
    session: &Session,
    key: &std::path::Path,
    commit: git2::Oid,
    (report, approval): (&Report, &Approval),
    note: Option<&str>,
) -> Result<()> {
    let expect = attest::Expect {
        commit,
        tree: None,
        config: report.config.as_deref(),
        contract: report.contract.as_deref(),
    };
    let statement = attest::approve_statement(&expect, approval, note);
    let trust = (session.config(), session.trust());
    attest::sign_and_store(session.repo(), trust, key, "approve", commit, &statement)
}

/// `--json`: the object, and the approval recorded unless refused or `--dry-run` (a terminal is
/// never asked: `--yes` says yes; on a terminal without it, --json is an error).
fn json(args: &Args, judged: &Judged, by: &str) -> Result<i32> {
    let refusal = judged.refusal.as_deref();
    if args.sign {
        anyhow::bail!("--json does not sign: run approve --sign without --json");
    }
    if refusal.is_none() && !args.yes && !args.dry_run && on_terminal() {
        anyhow::bail!("approve --json on a terminal needs --yes (or --dry-run): it cannot ask");
    }
    let record = !args.dry_run;
    // The verdict shown is the one the next check gives: with the approval when it is recorded,
    // as it stands when nothing is (a refusal, a dry run).
    let next = if record {
        judged.next(approval(&judged.report, by))?
    } else {
        judged.report.clone()
    };
    if record {
        let common = judged.session.repo().common_dir();
        ledger::record_approve(&common, &next, by, args.note.as_deref(), refusal)?;
    }
    let shown = Shown {
        schema: crate::report::SCHEMA,
        approved: record && refusal.is_none(),
        dry_run: args.dry_run,
        verdict: Some(next.verdict),
        commit: next.commit.as_deref(),
        by,
        note: args.note.as_deref(),
        refused: refusal,
        report: Some(&next),
    };
    let mut out = crate::term::stdout();
    render::write_json(&shown, &mut out)?;
    Ok(if refusal.is_some() { 1 } else { 0 })
}

/// Whether a person is at the terminal to answer: stdin and stdout both terminals.
fn on_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Ask `approve? [y/N]` and read one line: `y` or `yes` (any case) approves; anything else,
/// an empty line or the end of input declines.
fn confirmed(out: &mut dyn Write) -> Result<bool> {
    writeln!(out)?;
    write!(out, "approve? [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    let answer = answer.trim().to_ascii_lowercase();
    Ok(answer == "y" || answer == "yes")
}

/// Everything a reviewer needs, printed before the approval is recorded: the report (its
/// approval block left out: it is announced once, after it is recorded), then, for an approved
/// commit, the protected changes being approved and the command that shows them in full.
fn show(
    session: &Session,
    report: &Report,
    approved: Option<git2::Oid>,
    color: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let shown = Report {
        approval: None,
        ..report.clone()
    };
    render::render(&shown, Format::Human, color, out)?;
    if let Some(commit) = approved {
        let merge_base = session
            .base()
            .and_then(|(_, base)| session.repo().merge_base(*base, commit));
        write_changes(session.repo(), report, merge_base, commit, out)?;
    }
    out.flush()?;
    Ok(())
}

/// The approval (or its refusal) as recorded and the verdict the next `check` gives (SPEC
/// §26.5), and the exit code: 0 approved, 1 refused.
fn announce(
    next: &Report,
    by: &str,
    refusal: Option<&str>,
    signed: bool,
    out: &mut dyn Write,
) -> Result<i32> {
    writeln!(out)?;
    if let Some(why) = refusal {
        writeln!(out, "approval refused: {}", escape(why))?;
        return Ok(1);
    }
    let commit = next.commit.as_deref().unwrap_or_default();
    let at = record::now_rfc3339();
    writeln!(out, "approved {commit} by {} at {at}", escape(by))?;
    if signed {
        writeln!(
            out,
            "signed under {} (push it: git push <remote> {})",
            attest::NOTES_REF,
            attest::NOTES_REF
        )?;
    }
    let verdict = next.verdict.as_str();
    match next
        .findings
        .iter()
        .find(|f| f.code == Code::ApprovalUnsigned)
    {
        Some(unsigned) => writeln!(
            out,
            "the approval is recorded but does not count: the next `closegate check` gives \
             {verdict}: {}",
            escape(&unsigned.message)
        )?,
        None => writeln!(out, "the next `closegate check` gives {verdict}")?,
    }
    Ok(0)
}

/// git's `user.name` as `repo` sees it, when it is set and not blank.
fn user_name(repo: &crate::repo::Repo) -> Option<String> {
    let name = repo.config_string("user.name")?;
    let name = name.trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// The protected changes being approved, `git diff --stat` style, and the exact `git diff`
/// command that shows them in full. Display only: the gate has already judged these paths.
fn write_changes(
    repo: &crate::repo::Repo,
    report: &Report,
    merge_base: Option<git2::Oid>,
    commit: git2::Oid,
    out: &mut dyn Write,
) -> Result<()> {
    let mut paths: Vec<&str> = report.protected.iter().map(|p| p.path.as_str()).collect();
    paths.dedup();
    if paths.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "protected changes approved:")?;
    let Some(merge_base) = merge_base else {
        for change in &report.protected {
            writeln!(out, " {} ({})", escape(&change.path), change.change)?;
        }
        writeln!(
            out,
            "no merge base with the base branch: the changes cannot be shown as a diff"
        )?;
        return Ok(());
    };
    let stats = repo
        .diff_stat(merge_base, commit, &paths)
        .unwrap_or_default();
    let stats: Vec<_> = (stats.into_iter())
        .map(|(path, plus, minus, binary)| (escape(&path), plus, minus, binary))
        .collect();
    let (added, deleted) = write_stat_lines(&stats, out)?;
    let summary = stat_summary(stats.len(), added, deleted);
    writeln!(out, "{summary}")?;
    let quoted: Vec<String> = paths.iter().map(|p| crate::render::shell_word(p)).collect();
    writeln!(
        out,
        "see them in full: git diff {merge_base} {commit} -- {}",
        escape(&quoted.join(" "))
    )?;
    Ok(())
}

/// One `git diff --stat` line per path, the bars scaled to 40 columns; the total insertions and
/// deletions.
fn write_stat_lines(
    stats: &[(String, usize, usize, bool)],
    out: &mut dyn Write,
) -> Result<(usize, usize)> {
    let width = stats.iter().map(|s| s.0.chars().count()).max().unwrap_or(0);
    let most = stats.iter().map(|s| s.1 + s.2).max().unwrap_or(0);
    let digits = most.max(1).to_string().len();
    let (mut added, mut deleted) = (0, 0);
    for (path, plus, minus, binary) in stats {
        added += plus;
        deleted += minus;
        let pad = width - path.chars().count();
        if *binary {
            writeln!(out, " {path}{} | Bin", " ".repeat(pad))?;
            continue;
        }
        // Scale the bar to at most 40 columns, keeping at least one mark for any change.
        let scale = |n: usize| {
            if most <= 40 || n == 0 {
                n
            } else {
                (n * 40 / most).max(1)
            }
        };
        writeln!(
            out,
            " {path}{} | {:>digits$} {}{}",
            " ".repeat(pad),
            plus + minus,
            "+".repeat(scale(*plus)),
            "-".repeat(scale(*minus))
        )?;
    }
    Ok((added, deleted))
}

/// `git diff --stat`'s last line, as git words it: a zero count is left out unless both are zero.
fn stat_summary(n: usize, added: usize, deleted: usize) -> String {
    let plural = |k: usize| if k == 1 { "" } else { "s" };
    let mut summary = format!(" {n} file{} changed", plural(n));
    if added > 0 || deleted == 0 {
        summary.push_str(&format!(", {added} insertion{}(+)", plural(added)));
    }
    if deleted > 0 || added == 0 {
        summary.push_str(&format!(", {deleted} deletion{}(-)", plural(deleted)));
    }
    summary
}

/// Why this approval cannot be recorded, if it cannot.
fn refusal(
    repo: &crate::repo::Repo,
    report: &Report,
    verified: Option<git2::Oid>,
    asked: Option<&str>,
) -> Option<String> {
    if report.verdict == Verdict::Fail {
        return Some(
            "the verdict is FAIL: a refused return cannot be approved; the report's refusals say \
             what the agent fixes, and once `closegate check` no longer says FAIL, approve again"
                .into(),
        );
    }
    if report.provenance.is_some_and(|p| !p.trusted()) {
        return Some(
            "an approval counts only under the base tip's configuration and the configured base: \
             run approve without --config and without a --base naming another branch"
                .into(),
        );
    }
    let Some(verified) = verified else {
        return Some(
            "the gate found no commit to bind the approval to: the work is committed and the \
             status document's close line names that commit (`closegate close`), then approve"
                .into(),
        );
    };
    let asked = asked?;
    match repo.lookup_commit(asked) {
        CommitLookup::Found(id) if id == verified => None,
        CommitLookup::Found(id) => Some(format!(
            "--commit {id} is not the checked commit {verified}: an approval is bound to the \
             exact commit; review {verified} and approve it with `--commit {verified}`"
        )),
        _ => Some(format!(
            "--commit {asked} does not name exactly one commit: give the full commit id \
             (the checked one is {verified})"
        )),
    }
}
