//! `validate`'s rules (SPEC §17, §18): the configuration and every task contract as `check`
//! will read them from the base tip, judged with the same parsers, each problem worded (agent
//! text escaped) with file, key and reason; warnings apart, and with `run` the checks on the base.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result};
use git2::Oid;

use crate::config::{self, Config};
use crate::contract::{self, Contract};
use crate::gates::Session;
use crate::repo::Repo;
use crate::term::escape::escape;
use crate::{inputs, readiness};

/// What `validate` is asked: its flags as plain values.
pub struct Asked {
    /// The base branch to read from (default: as `check` chooses it).
    pub base: Option<String>,
    /// A configuration file instead of the base tip's.
    pub config: Option<PathBuf>,
    /// A contract file instead of the base tip's contracts.
    pub contract: Option<PathBuf>,
    /// Also run every configured check on the base tip.
    pub run: bool,
}

/// What `validate` found.
pub struct Validated {
    /// Where the configuration was read (`main:.closegate.toml`, a file, `built-in defaults`).
    pub config: String,
    pub checks: usize,
    pub contracts: usize,
    /// Each problem, worded as printed.
    pub problems: Vec<String>,
    /// Each warning, worded as printed; warnings never change the exit code.
    pub warnings: Vec<String>,
}

/// Judge the configuration and contracts `args` names in `repo`; `warn` hears each warning
/// about the configuration's sandbox (shared caches, sockets) as soon as it is found.
pub fn validate(repo: Repo, args: &Asked, warn: &mut dyn FnMut(String)) -> Result<Validated> {
    let repo = Rc::new(repo);
    let mut problems: Vec<String> = Vec::new();
    let tip = inputs::config_tip(&repo, args.base.as_deref());
    if tip.is_none() {
        problems.push(no_base_problem(args.base.as_deref()));
    }
    let (config, config_origin) = read_config(&repo, args, tip.as_ref(), &mut problems)?;
    if let Some(config) = &config
        && args.base.is_none()
        && let Some(base) = &config.base
        && repo.resolve_branch(base).is_none()
    {
        problems.push(format!(
            "{}: base: branch `{}` does not resolve; every check would report base-unknown",
            escape(&config_origin),
            escape(base)
        ));
    }
    // A warning, not a problem: the operator may mean it, and says so by listing the name.
    let shared = config
        .iter()
        .flat_map(crate::sandbox::shared_caches::shared_cache_warnings);
    for warning in config
        .iter()
        .flat_map(crate::sandbox::shield::socket_warnings)
        .chain(shared)
    {
        warn(format!(
            "warning: {}: {}",
            escape(&config_origin),
            escape(&warning)
        ));
    }
    let contracts = read_contracts(&repo, args, tip.as_ref())?;
    let bound = judge_contracts(&contracts, config.as_ref(), &config_origin, &mut problems);
    bound_twice(&bound, &mut problems);
    // SPEC §17, §18: warnings (never the exit code), then the checks on the base tip.
    let warnings = readiness_notes(&repo, args, config.as_ref(), tip.as_ref(), &mut problems)?;
    Ok(Validated {
        config: config_origin,
        checks: config.as_ref().map_or(0, |c| c.checks.len()),
        contracts: contracts.len(),
        problems,
        warnings,
    })
}

/// One contract's origin and bytes.
struct ContractFile {
    origin: String,
    bytes: Vec<u8>,
}

/// What `validate` says beyond parsing (SPEC §17, §18): tracked tests no surface protects and a
/// stop hook not committed to the base (warnings), and with `--run` the checks on the base tip
/// (a failure is a problem).
fn readiness_notes(
    repo: &Rc<Repo>,
    args: &Asked,
    config: Option<&Config>,
    tip: Option<&(String, Oid)>,
    problems: &mut Vec<String>,
) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    if let (Some(config), Some((name, id))) = (config, tip) {
        if let Some(f) = readiness::unprotected_tests(repo, config, *id)? {
            notes.push(format!("warning {}: {}", f.code, escape(&f.message)));
        }
        notes.extend(left_out(repo, config, *id)?);
        if let Some(root) = repo.workdir() {
            notes.extend(readiness::hook_not_on_base(repo, &root, name, *id));
            notes.extend(hook_inactive(&root));
        }
        if args.run {
            let blob = match &args.config {
                Some(_) => None,
                None => repo.blob_id(*id, config::FILE_NAME).map(|b| b.to_string()),
            };
            // The checks run the base's code: their shield comes from a session, as every
            // command's does.
            let root = repo.workdir().unwrap_or_else(|| repo.common_dir());
            let given = inputs::Trusted::given(config.clone(), blob);
            let session = Session::on_base(Rc::clone(repo), root, given)?;
            let (lines, findings, runs) = readiness::run_on_base(&session, name, *id)?;
            notes.extend(lines);
            let built = crate::guess::compiled_python(&|path| repo.read_blob(*id, path));
            if let Some(built) = built {
                let short = &id.to_string()[..12];
                // The runner's skip reasons are the agent's (the base's) text: escaped here.
                let skipped = runs
                    .iter()
                    .filter_map(|r| readiness::skipped_compiled(r, name, short, &built));
                notes.extend(skipped.map(|line| escape(&line)));
            }
            for f in findings {
                let line = format!("{} {}: {}", f.severity.as_str(), f.code, f.message);
                if f.severity == crate::finding::Severity::Warning {
                    notes.push(line);
                } else {
                    problems.push(line);
                }
            }
        }
    }
    Ok(notes)
}

/// SPEC §27.4: every Go module and workspace package of the base tip `id` that no check tests,
/// named (the repository's paths are agent text: escaped).
fn left_out(repo: &Repo, config: &Config, id: Oid) -> Result<Vec<String>> {
    let mut files: Vec<String> = Vec::new();
    for change in repo.changes(None, id)? {
        files.push(change.new_path.clone());
    }
    let runs: Vec<&str> = config
        .checks
        .iter()
        .flat_map(|c| [Some(c.run.as_str()), c.prepare.as_deref()])
        .flatten()
        .collect();
    let read = |path: &str| repo.read_blob(id, path);
    let lines = crate::guess::layout::left_out(&files, &read, &runs);
    Ok(lines
        .iter()
        .map(|l| format!("warning: {}", escape(l)))
        .collect())
}

/// SPEC §26.3: `agent-hook-inactive` for each harness whose stop hook is installed here and
/// would not run as installed (what `closegate agent doctor` reports).
fn hook_inactive(root: &Path) -> Vec<String> {
    use crate::agent::{Target, doctor};
    Target::ALL
        .into_iter()
        .filter(|t| doctor::is_installed(*t, root))
        .flat_map(|t| doctor::check(t, root).unwrap_or_default())
        .map(|f| format!("warning {}: {}", f.code, escape(&f.message)))
        .collect()
}

/// The problem when no base branch resolves: the `--base` given, or none of the defaults.
fn no_base_problem(base: Option<&str>) -> String {
    match base {
        Some(name) => format!(
            "--base {}: no branch of that name (refs/heads/NAME or refs/remotes/NAME)",
            escape(name)
        ),
        None => "base: no base branch resolves (main, master, origin/HEAD's target): every check would report base-unknown".to_string(),
    }
}

/// The configuration as `check` would read it (`--config`, the base tip's file, or the
/// built-in defaults), with where it came from; `None` when it does not parse.
fn read_config(
    repo: &Repo,
    args: &Asked,
    tip: Option<&(String, Oid)>,
    problems: &mut Vec<String>,
) -> Result<(Option<Config>, String)> {
    if let Some(path) = &args.config {
        let bytes = inputs::read_bytes(path)
            .with_context(|| format!("cannot read the configuration {}", path.display()))?;
        let origin = path.display().to_string();
        return Ok((parse_config(&bytes, &origin, problems), origin));
    }
    let defaults = || (Some(Config::default()), "built-in defaults".to_string());
    let Some((name, id)) = tip else {
        return Ok(defaults());
    };
    let origin = format!("{name}:{}", config::FILE_NAME);
    Ok(
        match repo
            .read_file(*id, config::FILE_NAME)
            .with_context(|| format!("cannot read {origin}"))?
        {
            Some(bytes) => (parse_config(&bytes, &origin, problems), origin),
            None => defaults(),
        },
    )
}

/// The contracts as `check` would find them: `--contract`, or the base tip's contract files.
fn read_contracts(
    repo: &Repo,
    args: &Asked,
    tip: Option<&(String, Oid)>,
) -> Result<Vec<ContractFile>> {
    Ok(match (&args.contract, tip) {
        (Some(path), _) => {
            let bytes = inputs::read_bytes(path)
                .with_context(|| format!("cannot read the contract {}", path.display()))?;
            vec![ContractFile {
                origin: path.display().to_string(),
                bytes,
            }]
        }
        (None, Some((name, id))) => repo
            .dir_files(*id, contract::DIR)
            .into_iter()
            .filter(|(file, _)| file.ends_with(".toml"))
            .map(|(file, bytes)| ContractFile {
                origin: format!("{name}:{}/{file}", contract::DIR),
                bytes,
            })
            .collect(),
        (None, None) => Vec::new(),
    })
}

/// Each contract's parse and required_checks problems; the files binding each branch.
fn judge_contracts(
    contracts: &[ContractFile],
    config: Option<&Config>,
    config_origin: &str,
    problems: &mut Vec<String>,
) -> BTreeMap<String, Vec<String>> {
    let mut bound: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in contracts {
        let malformed =
            |reason: String| format!("contract-malformed: {}: {reason}", escape(&file.origin));
        let parsed: Contract = match contract::parse(&file.bytes) {
            Ok(parsed) => parsed,
            Err(reason) => {
                problems.push(malformed(escape(&reason)));
                continue;
            }
        };
        if let Some(config) = config {
            for name in &parsed.required_checks {
                if !config.checks.iter().any(|c| &c.name == name) {
                    problems.push(malformed(unconfigured_check(name, config, config_origin)));
                }
            }
        }
        if let Some(branch) = parsed.branch {
            bound.entry(branch).or_default().push(file.origin.clone());
        }
    }
    bound
}

/// The reason a contract's required check `name` is not one the configuration defines.
fn unconfigured_check(name: &str, config: &Config, config_origin: &str) -> String {
    let configured: Vec<&str> = config.checks.iter().map(|c| c.name.as_str()).collect();
    let configured = if configured.is_empty() {
        "none".to_string()
    } else {
        configured.join(", ")
    };
    format!(
        "required_checks: check `{}` is not configured in {} (configured: {}); every return would get contract-check-missing",
        escape(name),
        escape(config_origin),
        escape(&configured)
    )
}

/// One problem per file binding a branch another file binds too.
fn bound_twice(bound: &BTreeMap<String, Vec<String>>, problems: &mut Vec<String>) {
    for (branch, files) in bound {
        for (i, file) in files.iter().enumerate() {
            let others: Vec<String> = files
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, f)| escape(f))
                .collect();
            if others.is_empty() {
                continue;
            }
            problems.push(format!(
                "contract-malformed: {}: branch: branch `{}` is also bound by {}; bind each branch once",
                escape(file),
                escape(branch),
                others.join(", ")
            ));
        }
    }
}

/// The configuration, or `None` with its problem (the parser's own words: file, key, reason).
fn parse_config(bytes: &[u8], origin: &str, problems: &mut Vec<String>) -> Option<Config> {
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => Config::parse(text, origin),
        Err(_) => Err(anyhow::anyhow!("{origin}: not valid UTF-8")),
    };
    match parsed {
        Ok(config) => Some(config),
        Err(err) => {
            problems.push(escape(&format!("{err:#}")));
            None
        }
    }
}
