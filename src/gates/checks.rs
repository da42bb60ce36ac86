//! The `checks` gate (SPEC §4.6): closegate runs the trusted checks itself, on the exact commit.
//!
//! The commit is checked out into a fresh scratch directory (`sandbox::scratch`;
//! `Repo::checkout_pristine`: a
//! repository of its own that borrows the objects through alternates, HEAD detached at the
//! commit; this repository's index, HEAD, refs and every worktree stay untouched). A `git`
//! command in a check sees the exact commit and its history, and stops at
//! `GIT_CEILING_DIRECTORIES` instead of finding another repository.
//!
//! Each check runs as `sh -c <run>` under the sandbox (`crate::sandbox`, SPEC §4.6) in its own
//! process group with stdin closed and stdout and stderr interleaved in one anonymous file. The
//! whole group is killed with SIGKILL on timeout and also after a normal exit; in the sandbox that
//! also ends the check's PID namespace, so no background child outlives its check (unsandboxed, a
//! child that leaves the group with `setsid` escapes this).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use git2::Oid;

use crate::catalog::Code;
use crate::config::{CheckSpec, SandboxMode};
use crate::finding::Finding;
use crate::gates::reuse::{self, Key, Recorded};
use crate::gates::workspace::{Cache, Warm, snapshot_id};
use crate::repo::Repo;
use crate::report::CheckRun;
use crate::sandbox::scratch::{self, Scratch};
use crate::sandbox::{self, Confinement, Policy, Shield};
use crate::sys::interrupt;
use crate::sys::process::{has_exited, kill_group};

/// How many trailing output lines a run keeps.
pub const TAIL_LINES: usize = 40;
/// How many trailing bytes of output are read to find those lines.
const TAIL_WINDOW: u64 = 1 << 20;
const POLL_MAX: Duration = Duration::from_millis(50);
/// The longest `CLOSEGATE_*` value handed to a check; longer ones are handed over empty.
pub const ENV_VALUE_MAX: usize = 4096;

/// What each check is told about the commit under test, as `CLOSEGATE_*` variables.
#[derive(Debug, Clone)]
pub struct CheckEnv {
    /// Full commit id (`CLOSEGATE_COMMIT`).
    pub commit: String,
    /// Short branch name, e.g. `agent/x` (`CLOSEGATE_BRANCH`).
    pub branch: String,
    /// `CLOSEGATE_SLUG`.
    pub slug: String,
    /// The base as resolved (`CLOSEGATE_BASE`).
    pub base: String,
}

/// What a run of the checks produced: the runs, their findings (`check-failed`,
/// `check-timeout`, `checks-unsandboxed`) and the report's `sandbox` word (`None` when no
/// check was configured).
#[derive(Debug, Default)]
pub struct Checked {
    pub runs: Vec<CheckRun>,
    pub findings: Vec<Finding>,
    pub sandbox: Option<&'static str>,
    /// The `check` record's entry of each run, with its reuse key (SPEC §19).
    pub entries: Vec<crate::report::CheckEntry>,
}

/// How one run of the checks goes: the sandbox mode, how many checks run at once, and the
/// recorded results that stand for a run (SPEC §19).
pub(super) struct Plan<'a> {
    pub mode: SandboxMode,
    /// Independent checks run at once (`jobs`); each then gets its own checkout.
    pub jobs: usize,
    pub key: &'a Key,
    pub recorded: &'a Recorded,
    /// What the checks must not see or receive (SPEC §4.6): every run carries one.
    pub shield: &'a Shield,
    /// Stop at the first failing check (`check --fail-fast`): the checks after it do not run,
    /// one at a time, and are reported as not run (`checks-skipped`).
    pub fail_fast: bool,
    /// Shown before each check's name in the terminal's progress line.
    pub label: Option<&'a str>,
    /// Where a check with `keep` starts from (SPEC §27.2).
    pub warmth: Warmth<'a>,
}

/// Where the runs of checks with `keep` start from (SPEC §27.2).
#[derive(Debug, Clone, Copy)]
pub struct Warmth<'a> {
    /// The run is on the base's own code (trusted, SPEC §16): it builds the base snapshot of
    /// the commit it checks, unless that is complete.
    pub trusted: bool,
    /// The base tip whose snapshot a run on an agent's code starts from; without one, or
    /// without its snapshot, the run is cold (a pristine checkout).
    pub base: Option<Oid>,
    /// The configuration's blob id (part of a snapshot's id).
    pub config: Option<&'a str>,
}

/// Check out `commit`'s tree into a fresh scratch directory outside every worktree (or the
/// check's warm workspace), run each check there with `sh -c` under the sandbox `plan.mode`
/// allows, remove the directory; empty `specs` return nothing (the caller reports `checks-none`).
/// Scratch directories that an earlier, killed closegate left behind are removed first. Only the
/// runner (`gates::runner`) calls it: every run has the session's shield and key.
///
/// Takes from `plan.recorded` the result of every check whose key (`plan.key`, the
/// check's name, `run` and `timeout_s`, and the sandbox word) was recorded before (SPEC §19):
/// those checks do not run, and no checkout is made when none has to. With `plan.jobs` above 1
/// the remaining checks run up to that many at once, each in its own checkout; the runs are
/// reported in the configured order whatever order they end in.
pub(super) fn run_reusing(
    repo: &Repo,
    commit: Oid,
    specs: &[CheckSpec],
    env: &CheckEnv,
    plan: &Plan<'_>,
) -> Result<Checked> {
    if specs.is_empty() {
        return Ok(Checked::default());
    }
    // SPEC §19: the same input gives the same answer; a recorded result stands for a run. A
    // result obtained in the sandbox stands for any run (none is more confined), so when every
    // check has one the sandbox is not even probed; an `off` result stands only for
    // `sandbox = "off"` (the mode is in the configuration blob) and a `none` one only for a run
    // that cannot set up the sandbox either.
    let strongest = if plan.mode == SandboxMode::Off {
        "off"
    } else {
        "bwrap"
    };
    let mut results: Vec<Option<(Ran, &'static str)>> = specs
        .iter()
        .map(|spec| plan.recorded.find(plan.key, spec, strongest))
        .map(|found| found.map(|ran| (ran, strongest)))
        .collect();
    if results.iter().all(Option::is_some) {
        let mut checked = Checked {
            sandbox: Some(strongest),
            ..Checked::default()
        };
        collect(&mut checked, plan.key, specs, results);
        return Ok(checked);
    }
    let network_off = specs.iter().any(|s| !s.network);
    let decision = sandbox::decide(plan.mode, network_off, plan.shield);
    let label = decision.label;
    let mut checked = Checked {
        sandbox: Some(label),
        findings: decision.finding.into_iter().collect(),
        ..Checked::default()
    };
    let Some(confinement) = decision.confinement else {
        return Ok(checked);
    };
    if label != strongest {
        fill_recorded(plan, specs, label, &mut results);
    }
    let mut pending: Vec<usize> = (0..specs.len()).filter(|&i| results[i].is_none()).collect();
    if plan.fail_fast && results.iter().flatten().any(|((_, f), _)| f.is_some()) {
        pending.clear();
    }
    if !pending.is_empty() {
        let ran = run_settled(repo, commit, specs, env, plan, &confinement, &pending)?;
        for (i, ran) in ran {
            results[i] = Some((ran, label));
        }
    }
    collect(&mut checked, plan.key, specs, results);
    Ok(checked)
}

/// Fill each missing result with one recorded under the sandbox word `label`.
fn fill_recorded(
    plan: &Plan<'_>,
    specs: &[CheckSpec],
    label: &'static str,
    results: &mut [Option<(Ran, &'static str)>],
) {
    for (spec, result) in specs.iter().zip(results.iter_mut()) {
        if result.is_none() {
            *result = plan
                .recorded
                .find(plan.key, spec, label)
                .map(|ran| (ran, label));
        }
    }
}

/// [`run_pending`], then each failing run again from a fresh place on the same tree, up to its
/// check's `flaky_retries` times (SPEC §27.2, `gates::flaky`).
fn run_settled(
    repo: &Repo,
    commit: Oid,
    specs: &[CheckSpec],
    env: &CheckEnv,
    plan: &Plan<'_>,
    confinement: &Confinement,
    pending: &[usize],
) -> Result<Vec<(usize, Ran)>> {
    let ran = run_pending(repo, commit, specs, env, plan, confinement, pending)?;
    let rerun = |again: &[usize]| run_pending(repo, commit, specs, env, plan, confinement, again);
    crate::gates::flaky::settle(ran, specs, rerun, interrupt::requested)
}

/// Run the checks at `pending` (indexes into `specs`) under `confinement`, each in a place of its
/// own when they run at once, and remove the scratch checkouts after; the runs with their index.
fn run_pending(
    repo: &Repo,
    commit: Oid,
    specs: &[CheckSpec],
    env: &CheckEnv,
    plan: &Plan<'_>,
    confinement: &Confinement,
    pending: &[usize],
) -> Result<Vec<(usize, Ran)>> {
    let _signals = interrupt::Guard::install();
    scratch::sweep_stale(&std::env::temp_dir());
    let vars = env.bounded(repo);
    let sandboxed = matches!(confinement, Confinement::Bwrap(_));
    let mut scratches: Vec<Scratch> = Vec::new();
    let mut warms: Vec<Warm> = Vec::new();
    // The check each warm place is for.
    let mut warm_of: Vec<usize> = Vec::new();
    let mut failures: Vec<PathBuf> = Vec::new();
    let mut snapshots: Vec<(usize, Option<String>)> = Vec::new();
    let mut cmds = Vec::with_capacity(pending.len());
    for &i in pending {
        let spec = &specs[i];
        let warm = match spec.keep.is_empty() {
            true => None,
            false => warm_place(repo, commit, spec, &plan.warmth, &mut warms)?,
        };
        if warm_of.len() < warms.len() {
            warm_of.push(i);
        }
        let place = match warm {
            Some(place) => place,
            None => scratch_place(repo, commit, &mut scratches)?,
        };
        let job = job(repo, commit, confinement, plan.shield, spec, &vars, &place)?;
        failures.extend(place.mount.as_ref().map(|m| m.failure.clone()));
        snapshots.push((i, place.snapshot.clone()));
        cmds.push((i, job));
    }
    let mut ran = run_all(cmds, specs, plan, sandboxed)?;
    for (i, (run, _)) in &mut ran {
        run.snapshot = snapshots
            .iter()
            .find(|(j, _)| j == i)
            .and_then(|(_, s)| s.clone());
    }
    for scratch in scratches {
        scratch.remove()?;
    }
    let failure = finish_warm(warms, &warm_of, &failures, &ran)?;
    if let Some(failure) = failure {
        anyhow::bail!("{}", failure.trim_end());
    }
    if interrupt::requested() {
        anyhow::bail!("interrupted by a signal while the checks ran");
    }
    Ok(ran)
}

/// End the warm places: a snapshot is kept unless the run was interrupted, the mount helper
/// failed or the check's `prepare` failed (it would claim dependencies it lacks). Returns why
/// the helper failed, if it did: closegate's error, not the check's.
fn finish_warm(
    warms: Vec<Warm>,
    warm_of: &[usize],
    failures: &[PathBuf],
    ran: &[(usize, Ran)],
) -> Result<Option<String>> {
    let failure = failures
        .iter()
        .find_map(|f| std::fs::read_to_string(f).ok());
    let prepare_failed = |i: usize| {
        ran.iter().any(|(j, (_, f))| {
            *j == i
                && f.as_ref()
                    .is_some_and(|f| f.message.contains(PREPARE_FAILED))
        })
    };
    for (warm, &i) in warms.into_iter().zip(warm_of) {
        warm.finish(!interrupt::requested() && failure.is_none() && !prepare_failed(i))?;
    }
    Ok(failure)
}

/// A pristine checkout of `commit` for a check without `keep`, with its own `TMPDIR`: a new one
/// for every check whatever `jobs` says, so one check's writes are never another's input
/// (SPEC §4.6).
fn scratch_place(repo: &Repo, commit: Oid, scratches: &mut Vec<Scratch>) -> Result<Place> {
    let created = Scratch::create()?;
    repo.checkout_pristine(commit, &created.checkout())?;
    scratches.push(created);
    let scratch = scratches.last().expect("a scratch was just made");
    Ok(Place {
        root: scratch.root().to_path_buf(),
        checkout: scratch.checkout(),
        tmp: scratch.tmp(),
        empty: scratch.empty(),
        mount: None,
        snapshot: None,
        prepared_on: None,
    })
}

/// The place of a check with `keep` (SPEC §27.2): on the base's code, the base snapshot it
/// builds; on an agent's, its own layer over the base tip's snapshot — `None` (a cold, pristine
/// checkout) when there is no base or no complete snapshot of it.
fn warm_place(
    repo: &Repo,
    commit: Oid,
    spec: &CheckSpec,
    warmth: &Warmth<'_>,
    warms: &mut Vec<Warm>,
) -> Result<Option<Place>> {
    let cache = Cache::of(&repo.common_dir())?;
    let stop = &interrupt::requested;
    let warm = if warmth.trusted {
        cache.build(repo, spec, commit, warmth.config, stop)?
    } else {
        let Some(base) = warmth.base else {
            return Ok(None);
        };
        let id = snapshot_id(base, &spec.name, warmth.config);
        let Some(snap) = cache.snapshot(&spec.name, &id) else {
            return Ok(None);
        };
        cache.layer(repo, spec, commit, &snap, stop)?
    };
    let place = Place {
        root: warm.root.clone(),
        checkout: warm.checkout.clone(),
        tmp: warm.tmp.clone(),
        empty: warm.empty.clone(),
        mount: warm.mount.clone(),
        snapshot: Some(warm.snapshot.clone()),
        prepared_on: warm.prepared_on,
    };
    warms.push(warm);
    Ok(Some(place))
}

/// Fold the runs (each with the sandbox word it was obtained under) into `checked`, in the
/// configured order, with their record entries.
fn collect(
    checked: &mut Checked,
    key: &Key,
    specs: &[CheckSpec],
    results: Vec<Option<(Ran, &'static str)>>,
) {
    let mut failed: Option<&str> = None;
    for (spec, result) in specs.iter().zip(results) {
        // Only `--fail-fast` leaves a check without a result: one before it failed.
        let Some(((run, finding), word)) = result else {
            let msg = format!(
                "check `{}` was not run: --fail-fast stopped at the first failing check{}",
                spec.name,
                failed.map(|f| format!(" `{f}`")).unwrap_or_default()
            );
            checked
                .findings
                .push(Finding::new(Code::ChecksSkipped, msg));
            continue;
        };
        if finding.is_some() && failed.is_none() {
            failed = Some(&spec.name);
        }
        let entry = reuse::entry(key, spec, word, &run, finding.as_ref());
        checked.entries.push(entry);
        checked.runs.push(run);
        checked.findings.extend(finding);
    }
}

/// One check's run and its finding (`None` when it passed).
type Ran = (CheckRun, Option<Finding>);

/// Run the prepared commands, `jobs` at a time, each to completion or timeout; the results come
/// back with the index of their check. Each worker thread waits for the checks it started, so
/// `PR_SET_PDEATHSIG` (tied to the forking thread) only fires if closegate itself dies.
fn run_all(
    cmds: Vec<(usize, Job)>,
    specs: &[CheckSpec],
    plan: &Plan<'_>,
    sandboxed: bool,
) -> Result<Vec<(usize, Ran)>> {
    let jobs = plan.jobs;
    let progress = crate::term::progress::Progress::new();
    let run = |i: usize, job: Job| {
        let name = match plan.label {
            Some(label) => format!("{label}: {}", specs[i].name),
            None => specs[i].name.clone(),
        };
        let _line = progress.start(&name);
        run_job(job, &specs[i], sandboxed, plan.shield)
    };
    if jobs <= 1 || cmds.len() <= 1 || plan.fail_fast {
        let mut out = Vec::with_capacity(cmds.len());
        for (i, cmd) in cmds {
            let ran = run(i, cmd)?;
            let failed = ran.1.is_some();
            out.push((i, ran));
            if failed && plan.fail_fast {
                break;
            }
        }
        return Ok(out);
    }
    use std::sync::Mutex;
    let workers = jobs.min(cmds.len());
    let queue = Mutex::new(cmds.into_iter());
    let done: Mutex<Vec<(usize, Result<Ran>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                    let Some((i, cmd)) = next else { break };
                    let ran = run(i, cmd);
                    done.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, ran));
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.into_iter().map(|(i, ran)| Ok((i, ran?))).collect()
}

impl CheckEnv {
    /// The `CLOSEGATE_SLUG` and `CLOSEGATE_BRANCH` values a check is given, for its reuse key
    /// (SPEC §19).
    pub fn key_values(&self, repo: &Repo) -> (String, String) {
        let [_, (_, branch), (_, slug), _] = self.bounded(repo);
        (slug, branch)
    }

    /// The `CLOSEGATE_*` values as given to a check: each at most `ENV_VALUE_MAX` bytes and free
    /// of NUL (else empty), and the branch only when it names a branch of this repository, so
    /// nothing the agent wrote can make the check fail to start.
    fn bounded(&self, repo: &Repo) -> [(&'static str, String); 4] {
        let fit = |v: &str| {
            let ok = v.len() <= ENV_VALUE_MAX && !v.contains('\0');
            if ok { v.to_string() } else { String::new() }
        };
        let mut branch = fit(&self.branch);
        if !branch.is_empty() && repo.branch_tip(&branch).is_none() {
            branch.clear();
        }
        [
            ("CLOSEGATE_COMMIT", fit(&self.commit)),
            ("CLOSEGATE_BRANCH", branch),
            ("CLOSEGATE_SLUG", fit(&self.slug)),
            ("CLOSEGATE_BASE", fit(&self.base)),
        ]
    }
}

/// Where a check runs: a pristine scratch checkout, or its warm place (SPEC §19, §27.2).
#[derive(Clone)]
struct Place {
    /// The directory holding the checkout (`GIT_CEILING_DIRECTORIES`).
    root: PathBuf,
    checkout: PathBuf,
    tmp: PathBuf,
    empty: PathBuf,
    /// What the mount helper puts at `checkout` before the check starts.
    mount: Option<crate::sandbox::mount::Mount>,
    /// The base snapshot the run starts from or builds.
    snapshot: Option<String>,
    /// The base commit the place's dependencies were fetched for (its snapshot's); `None`:
    /// fetched for none (a cold checkout, a snapshot being built).
    prepared_on: Option<Oid>,
}

/// What `spec` may write and what stays read-only (SPEC §4.6); `writable` paths are created
/// when missing, so a tool cache can be listed before it exists.
fn policy(repo: &Repo, place: &Place, spec: &CheckSpec, shield: &Shield) -> Result<Policy> {
    let mut writable = Vec::with_capacity(spec.writable.len());
    for entry in &spec.writable {
        let fail = || format!("check `{}`: `writable` path `{entry}`", spec.name);
        let path = sandbox::expand_home(entry)
            .map_err(anyhow::Error::msg)
            .with_context(fail)?;
        if !path.exists() {
            std::fs::create_dir_all(&path).with_context(fail)?;
        }
        writable.push(std::fs::canonicalize(&path).with_context(fail)?);
    }
    let mut read_only = vec![repo.common_dir()];
    // Every repository's base snapshots: read-only even under a `writable` path that holds
    // them (SPEC §27.2); the check's own checkout and `TMPDIR` are bound writable after.
    read_only.extend(
        Cache::of(&repo.common_dir())
            .map(|c| c.every_repository())
            .unwrap_or_default(),
    );
    read_only.extend(repo.worktrees().into_iter().map(|w| w.path));
    read_only.extend(repo.hooks_dir().ok());
    let read_only = read_only
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let private_tmp = sandbox::private_tmp::all(&shield.env(&spec.env), &[repo.common_dir()]);
    Ok(Policy {
        checkout: place.checkout.clone(),
        tmp: place.tmp.clone(),
        writable,
        read_only,
        empty: place.empty.clone(),
        network: spec.network,
        private_tmp,
    })
}

/// What the message of a failed `prepare` says after the check's name.
const PREPARE_FAILED: &str = ": its `prepare`";

/// One check's commands: its `prepare` (network on) when that must run, then its `run`.
struct Job {
    prepare: Option<Command>,
    run: Command,
}

/// The commands of `spec` at `place` (SPEC §27.2): `prepare`, with network, runs when the
/// check has one and the place lacks what it fetches — always in a cold checkout, and on a base
/// snapshot only when the lock files differ from those the snapshot was built with; `run` then
/// runs as configured (without network when `network = false`). On a mount, `prepare` mounts and
/// resets and `run` goes on in the same layer.
fn job(
    repo: &Repo,
    commit: Oid,
    confinement: &Confinement,
    shield: &Shield,
    spec: &CheckSpec,
    vars: &[(&'static str, String)],
    place: &Place,
) -> Result<Job> {
    let policy = policy(repo, place, spec, shield)?;
    let Some(prepare_run) = spec.prepare.as_deref() else {
        return Ok(Job {
            prepare: None,
            run: command(confinement, &policy, shield, spec, vars, place)?,
        });
    };
    let fetched = match place.prepared_on {
        Some(base) => !crate::gates::workspace::fetch_needed(repo, base, commit, prepare_run)?,
        None => false,
    };
    if fetched {
        return Ok(Job {
            prepare: None,
            run: command(confinement, &policy, shield, spec, vars, place)?,
        });
    }
    let prep_spec = prepare_spec(spec, prepare_run);
    let prep_policy = Policy {
        network: true,
        ..policy.clone()
    };
    let prepare = command(confinement, &prep_policy, shield, &prep_spec, vars, place)?;
    let mut after = place.clone();
    if let Some(mount) = after.mount.as_mut() {
        mount.reset = None;
    }
    let run = command(confinement, &policy, shield, spec, vars, &after)?;
    Ok(Job {
        prepare: Some(prepare),
        run,
    })
}

/// `spec` as its `prepare` step: the same name and timeout, `prepare` for `run`, network on,
/// no census.
fn prepare_spec(spec: &CheckSpec, prepare: &str) -> CheckSpec {
    CheckSpec {
        run: prepare.to_string(),
        network: true,
        census: crate::runners::census::Mode::Off,
        ..spec.clone()
    }
}

/// Run `job`: its `prepare`, and when that passed its `run`. A failed `prepare` is the check's
/// `check-failed` naming `prepare`, with its output's excerpt (SPEC §27.2).
fn run_job(job: Job, spec: &CheckSpec, sandboxed: bool, shield: &Shield) -> Result<Ran> {
    if let Some(prepare) = job.prepare {
        let prep_spec = prepare_spec(spec, spec.prepare.as_deref().unwrap_or_default());
        let (mut run, finding) = run_one(prepare, &prep_spec, sandboxed, shield)?;
        if let Some(finding) = finding {
            let own = format!("check `{}`", spec.name);
            let message = finding
                .message
                .replacen(&own, &format!("{own}{PREPARE_FAILED}"), 1);
            run.command = spec.run.clone();
            return Ok((run, Some(Finding::new(finding.code, message))));
        }
    }
    run_one(job.run, spec, sandboxed, shield)
}

/// Run one check to completion or timeout; the finding is `None` when it passed.
fn run_one(
    mut cmd: Command,
    spec: &CheckSpec,
    sandboxed: bool,
    shield: &Shield,
) -> Result<(CheckRun, Option<Finding>)> {
    let out = tempfile::tempfile().context("creating a file for check output")?;
    let started = Instant::now();
    cmd.stdout(out.try_clone().context("sharing the output file")?)
        .stderr(out.try_clone().context("sharing the output file")?);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting check `{}` with sh -c", spec.name))?;
    let timeout = Duration::from_secs(spec.timeout_s);
    let (status, timed_out) = wait_group(&mut child, timeout)
        .with_context(|| format!("waiting for check `{}`", spec.name))?;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut out = out;
    let ended = Ended::from_status(status, sandboxed);
    let failed = timed_out || ended.code != Some(0);
    let output = excerpt(&mut out, spec, failed, shield)
        .with_context(|| format!("reading the output of check `{}`", spec.name))?;
    let tally = census(&mut out, spec, shield)
        .with_context(|| format!("reading the output of check `{}`", spec.name))?;
    let run = CheckRun {
        name: spec.name.clone(),
        command: spec.run.clone(),
        exit_code: if timed_out { None } else { ended.code },
        timed_out,
        duration_ms,
        output,
        reused: None,
        red_on_base: None,
        census: None,
        tally,
        census_note: None,
        snapshot: None,
        parallel: false,
        retries: 0,
        flaky: Vec::new(),
        rerun_passed: false,
    };
    Ok((run, finding(spec, ended, timed_out)))
}

/// The shell every check runs in, by absolute path: a relative `PATH` entry never picks the
/// checkout's own `sh` (SPEC §4.6).
const SH: &str = "/bin/sh";

/// `/bin/sh -c <run>` in the checkout, sandboxed or not: its own process group, stdin
/// `/dev/null`, no descriptor but 0, 1 and 2, the environment of the allow-list (SPEC §4.6),
/// `TMPDIR` the private temporary directory.
fn command(
    confinement: &Confinement,
    policy: &Policy,
    shield: &Shield,
    spec: &CheckSpec,
    vars: &[(&'static str, String)],
    place: &Place,
) -> Result<Command> {
    let args = [OsStr::new("-c"), OsStr::new(&spec.run)];
    let mut cmd = match confinement {
        Confinement::Bwrap(bwrap) => sandbox::command(bwrap, policy, shield, OsStr::new(SH), &args),
        Confinement::None => {
            let mut cmd = Command::new(SH);
            cmd.args(args);
            cmd
        }
    };
    if let Some(mount) = &place.mount {
        cmd = mount.wrap(&cmd)?;
    }
    let ceiling = &place.root;
    cmd.current_dir(&policy.checkout)
        .stdin(Stdio::null())
        .process_group(0);
    // A closegate killed with SIGKILL takes its check with it (bwrap then ends the check's PID
    // namespace), instead of leaving it running in a swept directory; no descriptor closegate
    // inherited reaches the check.
    crate::sys::process::confine_child(&mut cmd);
    cmd.env_clear()
        .envs(shield.env(&spec.env))
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .env("TMPDIR", &policy.tmp)
        .envs(vars.iter().map(|(k, v)| (k, v)));
    Ok(cmd)
}

/// How a check's process ended: its exit code, or the signal that killed it. Inside the
/// sandbox bwrap reports a check killed by signal N as exit status 128 + N (as a shell's `$?`
/// does), so there an exit status of 129–192 is read as that signal.
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
}

impl Ended {
    fn from_status(status: ExitStatus, sandboxed: bool) -> Ended {
        match (status.code(), status.signal()) {
            (Some(code), _) if sandboxed && (129..=192).contains(&code) => Ended {
                code: None,
                signal: Some(code - 128),
            },
            (code, signal) => Ended { code, signal },
        }
    }
}

/// Wait for the group leader to exit or the timeout to pass, kill the whole group, then reap.
/// The leader is only reaped after the kill, so its id (the group id) cannot have been reused.
fn wait_group(child: &mut Child, timeout: Duration) -> std::io::Result<(ExitStatus, bool)> {
    let pid = child.id();
    let started = Instant::now();
    let mut pause = Duration::from_millis(2);
    let timed_out = loop {
        if interrupt::requested() {
            kill_group(pid);
            let _ = child.wait();
            return Err(std::io::Error::other(
                "interrupted by a signal; the check's process group was killed",
            ));
        }
        match has_exited(pid) {
            Ok(true) => break false,
            Ok(false) if started.elapsed() >= timeout => break true,
            Ok(false) => {}
            Err(e) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(e);
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(POLL_MAX);
    };
    kill_group(pid);
    Ok((child.wait()?, timed_out))
}

/// The last `n` lines of the output file, lossily decoded, every secret value of closegate's
/// environment masked (SPEC §4.6); a trailing `\r` is dropped.
fn tail(file: &mut File, n: usize, shield: &Shield) -> std::io::Result<Vec<String>> {
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = shield.mask(&String::from_utf8_lossy(&bytes));
    Ok(last_lines(text.as_bytes(), n, start > 0))
}

/// What a run keeps of its output: for a failed run of a census runner, its failing tests' own
/// output (SPEC §27.2, `runners::census::excerpt`), else (or when that finds none) its last
/// [`TAIL_LINES`] lines; every secret value masked either way.
fn excerpt(
    file: &mut File,
    spec: &CheckSpec,
    failed: bool,
    shield: &Shield,
) -> std::io::Result<Vec<String>> {
    if failed && spec.census.is_on() {
        file.seek(SeekFrom::Start(0))?;
        let reader = std::io::BufReader::new(&mut *file);
        if let Some(lines) = crate::runners::census::excerpt(&spec.census, reader, TAIL_LINES)? {
            let masked = shield.mask(&lines.join("\n"));
            return Ok(masked.split('\n').map(str::to_string).collect());
        }
    }
    tail(file, TAIL_LINES, shield)
}

/// The test census of the whole output file, read as a stream from its start (SPEC §26.4), every
/// id masked as the kept output is; `None` for a check without one.
fn census(
    file: &mut File,
    spec: &CheckSpec,
    shield: &Shield,
) -> std::io::Result<Option<crate::runners::census::Tally>> {
    if !spec.census.is_on() {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(0))?;
    let tally = crate::runners::census::read(&spec.census, std::io::BufReader::new(file))?;
    Ok(tally.map(|mut tally| {
        tally.mask(|id| shield.mask(id));
        tally
    }))
}

/// The last `n` lines of `bytes`; `cut` says the first line was cut by the read window.
fn last_lines(bytes: &[u8], n: usize, cut: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    if text.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if cut && lines.len() > 1 {
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(n);
    lines[skip..]
        .iter()
        .map(|line| crate::runners::census::visible(line.as_bytes()).into_owned())
        .collect()
}

/// `check-timeout`, `check-failed`, or nothing when the check passed.
fn finding(spec: &CheckSpec, ended: Ended, timed_out: bool) -> Option<Finding> {
    let name = &spec.name;
    if timed_out {
        let msg = format!(
            "check `{name}` ran past its timeout of {} s and was killed",
            spec.timeout_s
        );
        return Some(Finding::new(Code::CheckTimeout, msg));
    }
    let found = match (ended.code, ended.signal) {
        (Some(0), _) => return None,
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended with an unknown status".to_string(),
    };
    let msg = format!("check `{name}` {found}, expected exit code 0");
    Some(Finding::new(Code::CheckFailed, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_keeps_the_tail() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let lines = last_lines(text.as_bytes(), 40, false);
        assert_eq!(lines.len(), 40);
        assert_eq!(lines[0], "line 61");
        assert_eq!(lines[39], "line 100");
    }

    #[test]
    fn last_lines_handles_empty_crlf_and_cut_windows() {
        assert!(last_lines(b"", 40, false).is_empty());
        assert_eq!(last_lines(b"a\r\nb", 40, false), ["a", "b"]);
        assert_eq!(
            last_lines(b"tail of a cut line\nwhole\n", 40, true),
            ["whole"]
        );
        assert_eq!(last_lines(b"\xff\n", 40, false), ["\u{fffd}"]);
        // SPEC §27.4: no terminal escape from a check's output reaches a message.
        assert_eq!(
            last_lines(
                b"\x1b[32m\xe2\x9c\x93\x1b[39m adds\n 50%\r100%\n",
                40,
                false
            ),
            ["\u{2713} adds", "100%"]
        );
    }
}
