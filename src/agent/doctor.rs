//! `closegate agent doctor` (SPEC §26.3): whether closegate's stop hook, as installed, would run
//! for the worktree at hand. Each reason it would not is an `agent-hook-inactive` warning naming
//! what and the fix: not installed where the harness reads it, Codex's project or hook trust
//! missing or stale, a harness timeout below the hook's time limit plus the margin, a time limit
//! below what the configured checks need now, or the `closegate` the hook names not on the PATH.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::clients::{Root, Trust};
use super::install::{self, HARNESS_MARGIN, Scope};
use super::settings::{self, Ours};
use super::{Target, codex_app, codex_plugin};
use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::Repo;

/// One hooks file a harness reads, and closegate's hooks in it.
struct Installed {
    file: PathBuf,
    text: String,
    ours: Vec<Ours>,
}

fn installed(target: Target, file: PathBuf) -> Option<Installed> {
    let bytes = crate::input_file::read(&file).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let ours = settings::ours(&text, &target.row().shape);
    (!ours.is_empty()).then_some(Installed { file, text, ours })
}

fn inactive(msg: String) -> Finding {
    Finding::new(Code::AgentHookInactive, msg)
}

/// Whether any file `target` could read holds closegate's hook, for the worktree around `cwd`
/// (which harnesses `doctor` without `--target`, and `validate`, look at).
pub fn is_installed(target: Target, cwd: &Path) -> bool {
    let mut files = candidates(target, cwd);
    files.extend(own_project_file(target, cwd));
    let plugin = matches!(
        super::switches::plugin(target, cwd),
        Some(super::switches::Plugin::Enabled(_))
    );
    plugin || files.into_iter().any(|f| installed(target, f).is_some())
}

/// For a client that reads project hooks from the main checkout, the worktree's own project file
/// (which it never reads); `None` for one that reads the worktree's.
fn own_project_file(target: Target, cwd: &Path) -> Option<PathBuf> {
    let files = &target.row().files;
    if files.project_root != Root::MainCheckout {
        return None;
    }
    Repo::discover(cwd)
        .ok()
        .and_then(|r| r.workdir())
        .map(|root| root.join(files.project))
}

/// The files `target` reads for the worktree around `cwd`, in the order the scopes are listed.
fn candidates(target: Target, cwd: &Path) -> Vec<PathBuf> {
    [Scope::Project, Scope::Local, Scope::User]
        .iter()
        .filter_map(|s| install::settings_path(target, *s, cwd).ok())
        .collect()
}

/// closegate installed as the client's plugin, in words (`agent doctor`'s note).
pub fn plugin_note(target: Target, cwd: &Path) -> Option<String> {
    let id = target.row().plugin.as_ref()?.id;
    match super::switches::plugin(target, cwd)? {
        super::switches::Plugin::Enabled(file) => Some(format!(
            "closegate's hook is installed as the plugin {id} (enabled in {})",
            file.display()
        )),
        super::switches::Plugin::Disabled(_) => None,
    }
}

/// How doctor judged Codex's trust (SPEC §27.3), in words.
pub fn trust_source(target: Target) -> Option<String> {
    (target.row().trust == Trust::Codex).then(|| match codex_app::binary() {
        Some(bin) => format!(
            "Codex's trust is Codex's own answer (`{} app-server`, hooks/list)",
            bin.display()
        ),
        None => "Codex's trust is judged by the hash closegate computes: no `codex` binary on \
                 the PATH"
            .to_string(),
    })
}

/// Every reason the hook of `target` would not run for the worktree around `cwd`.
pub fn check(target: Target, cwd: &Path) -> Result<Vec<Finding>> {
    let found: Vec<Installed> = candidates(target, cwd)
        .into_iter()
        .filter_map(|f| installed(target, f))
        .collect();
    let binary = (target.row().trust == Trust::Codex)
        .then(codex_app::binary)
        .flatten();
    let mut findings = super::switches::off(target, cwd, binary.is_none());
    let plugin = super::switches::plugin(target, cwd);
    let plugin = matches!(plugin, Some(super::switches::Plugin::Enabled(_)));
    if plugin && target == Target::Codex {
        findings.extend(plugin_drift_problem());
    }
    if found.is_empty() && plugin {
        // Installed as the client's plugin: the plugin's own hooks file, versioned with closegate;
        // for Codex, whether Codex trusts its hooks (asked, or judged in `switches`).
        if let Some(bin) = &binary {
            findings.extend(codex_plugin_listed(bin, cwd));
        }
        return Ok(findings);
    }
    if found.is_empty() {
        findings.push(not_installed(target, cwd));
        return Ok(findings);
    }
    let needed = install::time_limit(cwd);
    for one in &found {
        for &event in target.row().shape.events {
            if !one.ours.iter().any(|o| o.event == event) {
                let has: Vec<&str> = one.ours.iter().map(|o| o.event).collect();
                findings.push(inactive(format!(
                    "{} has closegate's hook for {} but not for {event}: run `closegate agent \
                     install --target {}`",
                    one.file.display(),
                    has.join(" and "),
                    target.as_str()
                )));
            }
        }
        for hook in &one.ours {
            findings.extend(timeout_problem(target, &one.file, hook));
            findings.extend(limit_problem(target, &one.file, hook, needed));
            findings.extend(path_problem(&one.file, hook));
        }
    }
    match target.row().trust {
        Trust::Codex => findings.extend(codex_problems(&found)),
        Trust::None => {}
    }
    if let Some(bin) = &binary {
        findings.extend(codex_listed(bin, cwd, &found));
    }
    findings.extend(drift_problem(target, cwd));
    Ok(findings)
}

/// Not installed anywhere the harness reads; for Codex, a hooks file in the worktree itself is
/// named (Codex never reads it).
fn not_installed(target: Target, cwd: &Path) -> Finding {
    let files: Vec<String> = candidates(target, cwd)
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    let own = own_project_file(target, cwd).filter(|f| installed(target, f.clone()).is_some());
    let msg = match own {
        Some(own) => format!(
            "{} has closegate's hook, but {} reads a worktree's hooks from the main checkout \
             ({}): run `closegate agent install --target {}`",
            own.display(),
            name(target),
            files.join(", "),
            target.as_str()
        ),
        None => format!(
            "no closegate stop hook where {} reads it for this worktree ({}): run `closegate \
             agent install --target {}`",
            name(target),
            files.join(", "),
            target.as_str()
        ),
    };
    inactive(msg)
}

fn name(target: Target) -> &'static str {
    target.row().display
}

/// Codex's hook listing for a session in `cwd` and the name Codex gives itself, or the finding
/// that it cannot be asked (`what`: which of closegate's hooks were to be looked up).
fn codex_listing(
    bin: &Path,
    cwd: &Path,
    what: &str,
) -> Result<(Vec<codex_app::Listed>, String), Finding> {
    codex_app::Session::start(bin)
        .and_then(|mut s| Ok((s.list(cwd)?, s.name.clone())))
        .map_err(|e| {
            inactive(format!(
                "cannot ask Codex whether it trusts closegate's {what}: {e:#}"
            ))
        })
}

/// Codex's own listing of closegate's hooks for a session in `cwd`: each one it would not run
/// (untrusted, or trusted as another version of itself), or a Codex that cannot be asked.
fn codex_listed(bin: &Path, cwd: &Path, found: &[Installed]) -> Vec<Finding> {
    let (listed, name) = match codex_listing(bin, cwd, "hooks") {
        Ok(listed) => listed,
        Err(finding) => return vec![finding],
    };
    let mut findings = Vec::new();
    for one in found {
        for hook in codex_app::ours(&listed, &one.file) {
            if hook.trust_status == "trusted" || hook.trust_status == "managed" {
                continue;
            }
            findings.push(inactive(format!(
                "Codex skips the hook {} without a word: {name} lists it as {}; run `closegate \
                 agent install --target codex` again",
                hook.key, hook.trust_status
            )));
        }
    }
    findings
}

/// Codex's own listing of closegate's plugin hooks for a session in `cwd`: none listed, or one it
/// would not run (untrusted, or trusted as another version of the plugin).
fn codex_plugin_listed(bin: &Path, cwd: &Path) -> Vec<Finding> {
    let (listed, name) = match codex_listing(bin, cwd, "plugin hooks") {
        Ok(listed) => listed,
        Err(finding) => return vec![finding],
    };
    let ours: Vec<&codex_app::Listed> = (listed.iter())
        .filter(|h| codex_plugin::is_plugin_key(&h.key) && settings::is_ours(&h.command))
        .collect();
    if ours.is_empty() {
        return vec![inactive(format!(
            "{name} lists no hook of the plugin {} for this worktree: run `codex plugin add {}`",
            codex_plugin::ID,
            codex_plugin::ID
        ))];
    }
    (ours.into_iter())
        .filter(|h| h.trust_status != "trusted" && h.trust_status != "managed")
        .map(|h| {
            inactive(format!(
                "Codex skips the plugin's hook {} without a word: {name} lists it as {}; {}",
                h.key,
                h.trust_status,
                codex_plugin::TRUST_FIX
            ))
        })
        .collect()
}

/// closegate's Codex plugin as Codex keeps it differs from the one this closegate ships.
fn plugin_drift_problem() -> Option<Finding> {
    let home = super::codex::home().ok()?;
    let found = super::drift::plugin_drift(&codex_plugin::cached(&home))?;
    Some(inactive(format!(
        "the stop hook as installed is not {}: {}; {}",
        found.against, found.difference, found.fix
    )))
}

/// The hook as installed differs from the committed one (SPEC §27.3): the base tip's for a file
/// every worktree shares, HEAD's for the worktree's own.
fn drift_problem(target: Target, cwd: &Path) -> Option<Finding> {
    let repo = Repo::discover(cwd).ok()?;
    let root = repo.workdir()?;
    let trusted = crate::inputs::trusted_config(&repo, None, None).ok();
    let tip = trusted.as_ref().and_then(|t| t.tip.as_ref());
    let found = super::drift::drift(&repo, &root, target, tip)?;
    Some(inactive(format!(
        "the stop hook as installed is not the committed one: {}; {}",
        found.difference, found.fix
    )))
}

/// A harness timeout that does not leave the hook its time limit plus the margin: the harness
/// would give up first and let the stop through unjudged.
fn timeout_problem(target: Target, file: &Path, hook: &Ours) -> Option<Finding> {
    let limit = settings::time_limit_of(&hook.command);
    let timeout = hook.timeout.unwrap_or(target.row().default_timeout);
    let needed = install::harness_timeout(limit);
    (timeout < needed).then(|| {
        inactive(format!(
            "{}: the {} hook's timeout is {timeout} s, below its --time-limit {limit} s plus \
             {HARNESS_MARGIN} s: {} would stop waiting and let the stop through unjudged; run \
             `closegate agent install --target {}` again",
            file.display(),
            hook.event,
            name(target),
            target.as_str()
        ))
    })
}

/// A hook whose `--time-limit` is below what the configured checks need now (installed before
/// the configuration grew): every claim whose checks run longer is blocked with
/// `checks-running`, and the harness timeout written with it is below the checks' time.
fn limit_problem(target: Target, file: &Path, hook: &Ours, needed: u64) -> Option<Finding> {
    let limit = settings::time_limit_of(&hook.command);
    (limit < needed).then(|| {
        inactive(format!(
            "{}: the {} hook's --time-limit is {limit} s, below the {needed} s the configured \
             checks need: a claim whose checks run longer is blocked with checks-running; run \
             `closegate agent install --target {}` again",
            file.display(),
            hook.event,
            target.as_str()
        ))
    })
}

/// The program the hook names is not found (on the PATH, or at the path it gives).
fn path_problem(file: &Path, hook: &Ours) -> Option<Finding> {
    let program = hook.command.split_whitespace().next()?;
    let found = if program.contains('/') {
        is_executable(Path::new(program))
    } else {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| is_executable(&d.join(program))))
    };
    (!found).then(|| {
        inactive(format!(
            "{}: the {} hook runs `{program}`, which is not found on the PATH ({}): install \
             closegate where the harness finds it, or name it by its full path",
            file.display(),
            hook.event,
            std::env::var("PATH").unwrap_or_default()
        ))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Codex refuses a hooks file with root keys other than `description` and `hooks` whole (its
/// trust and the `.codex/` folder are `switches`).
fn codex_problems(found: &[Installed]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for one in found {
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&one.text) {
            let extra: Vec<&String> = map
                .keys()
                .filter(|k| !["description", "hooks"].contains(&k.as_str()))
                .collect();
            if !extra.is_empty() {
                findings.push(inactive(format!(
                    "{}: Codex refuses a hooks file with keys other than `description` and \
                     `hooks` at the top; remove {extra:?}",
                    one.file.display()
                )));
            }
        }
    }
    findings
}
