//! `closegate init`: a starter `.closegate.toml`, or a task contract (SPEC §17).

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};

use crate::config::{self, Config};
use crate::inputs;

/// Write a starter .closegate.toml (or, with --contract SLUG, a task contract)
///
/// The configuration names the current branch as the base, lists the default protected surfaces
/// as comments and guesses one check from the project. Commit it to the base branch: closegate
/// reads it from there. Exit 0 written, 1 refused (the file exists; --force overwrites), 2 error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Overwrite an existing file
    #[arg(long)]
    pub force: bool,
    /// Write `.closegate/contracts/SLUG.toml` with every key of a contract commented
    #[arg(long, value_name = "SLUG")]
    pub contract: Option<String>,
}

pub fn run(args: Args) -> Result<i32> {
    let (repo, root) = inputs::open(None)?;
    let branch = repo.head_branch();
    let (rel, text) = match &args.contract {
        Some(slug) => {
            if let Some(fault) = slug_fault(slug) {
                bail!("--contract {slug}: {fault}");
            }
            (format!(".closegate/contracts/{slug}.toml"), contract(slug))
        }
        None => (
            config::FILE_NAME.to_string(),
            starter(&root, branch.as_deref()),
        ),
    };
    let path = root.join(&rel);
    if path.symlink_metadata().is_ok() && !args.force {
        eprintln!(
            "closegate: init: {} exists; nothing was written (--force overwrites it)",
            path.display()
        );
        return Ok(1);
    }
    crate::cmd::close::write_atomic(&path, text.as_bytes())?;
    let mut out = crate::term::human();
    writeln!(out, "wrote {}", path.display())?;
    if args.contract.is_none()
        && let Some(check) = guess(&root)
    {
        writeln!(out, "check `{}`: {}", check.0, check.1)?;
    }
    let base = branch.as_deref().unwrap_or("the base branch");
    writeln!(
        out,
        "commit it to {base}: closegate reads it from the base tip, never from an agent's branch\n  \
         git add {rel} && git commit -m \"closegate: {}\"",
        if args.contract.is_some() {
            "task contract"
        } else {
            "configuration"
        }
    )?;
    Ok(0)
}

/// The check guessed from the files at the worktree root: (name, command).
pub fn guess(root: &Path) -> Option<(&'static str, &'static str)> {
    let has = |name: &str| root.join(name).is_file();
    if has("Cargo.toml") {
        return Some(("test", "cargo test --locked"));
    }
    if has("package.json") && package_has_test(&root.join("package.json")) {
        return Some(("test", "npm test"));
    }
    if has("pyproject.toml") || has("setup.cfg") || has("pytest.ini") {
        return Some(("test", "python3 -m pytest"));
    }
    if has("go.mod") {
        return Some(("test", "go test ./..."));
    }
    let makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file());
    if makefile.is_some_and(|p| makefile_has_test(&p)) {
        return Some(("test", "make test"));
    }
    None
}

/// Whether `package.json` has a `scripts.test` string (other than `npm init`'s placeholder).
fn package_has_test(path: &Path) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else {
        return false;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return false;
    };
    // `npm init`'s placeholder fails by design: it is not a test script.
    value["scripts"]["test"]
        .as_str()
        .is_some_and(|s| !s.contains("Error: no test specified"))
}

/// Whether a Makefile has a rule whose targets include `test` (`test:`, `check test:`, not
/// `test := value`).
fn makefile_has_test(path: &Path) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else {
        return false;
    };
    String::from_utf8_lossy(&bytes).lines().any(|line| {
        if line.starts_with('\t') || line.starts_with('#') {
            return false;
        }
        let Some((targets, rest)) = line.split_once(':') else {
            return false;
        };
        !rest.starts_with('=') && targets.split_whitespace().any(|t| t == "test")
    })
}

/// The starter configuration.
pub fn starter(root: &Path, branch: Option<&str>) -> String {
    let mut out = String::from(
        "# closegate configuration (SPEC §5). closegate reads it from the tip of the base branch,\n\
         # never from an agent's branch: commit it there.\n\n",
    );
    match branch {
        Some(b) => out.push_str(&format!("base = {}\n", toml_string(b))),
        None => out.push_str("# base = \"main\"\n"),
    }
    out.push_str(
        "# status_file = \"_EXEC_STATUS.md\"\n# agent_branches = [\"agent/*\"]\n\
         # require_contract = false\n\n\
         # Protected surfaces: a change there needs a human's approval (PENDING_REVIEW).\n\
         # These are the defaults; a surface listed under [protected] replaces the default of\n\
         # that name, a new name adds a surface.\n# [protected]\n",
    );
    for surface in Config::default().surfaces {
        let globs: Vec<String> = surface.globs.iter().map(|g| toml_string(g)).collect();
        out.push_str(&format!("# {} = [{}]\n", surface.name, globs.join(", ")));
    }
    out.push_str(
        "\n# The checks closegate runs itself, in a pristine checkout of the agent's commit.\n",
    );
    match guess(root) {
        Some((name, run)) => out.push_str(&format!(
            "[[checks]]\nname = {}\nrun = {}\ntimeout_s = 900\n",
            toml_string(name),
            toml_string(run)
        )),
        None => out.push_str(
            "# No project type recognised: write the command that tests this project.\n\
             # [[checks]]\n# name = \"test\"\n# run = \"make test\"\n# timeout_s = 600\n",
        ),
    }
    out
}

/// A task contract with every key of SPEC §12 commented.
pub fn contract(slug: &str) -> String {
    format!(
        "# Task contract for `{slug}` (SPEC §12), read from the base tip: commit it there.\n\
         # Uncomment what this task needs.\n\n\
         # goal = \"what done means for this task\"\n\
         # branch = \"agent/{slug}\"           # applies to this branch whatever slug the document claims\n\
         # scope = [\"src/**\"]                 # the only paths the branch may change\n\
         # prohibited = [\"db/**\"]             # never to be changed; wins over scope\n\
         # required_artifacts = [\"src/new.rs\"] # must be in the commit and changed by the branch\n\
         # required_checks = [\"test\"]         # names from [[checks]] that must run and pass\n\
         # approval = \"protected\"             # \"always\" | \"protected\" (default) | \"never\"\n\
         # max_changed_files = 40\n\
         # max_commits = 20\n"
    )
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Why `slug` is not a slug (1–100 of `[A-Za-z0-9._-]`, starting with a letter or digit).
fn slug_fault(slug: &str) -> Option<&'static str> {
    let first_ok = slug
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let chars_ok = slug
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if slug.is_empty() || slug.len() > 100 {
        Some("a slug is 1–100 characters")
    } else if !first_ok || !chars_ok {
        Some("a slug is letters, digits, `.`, `_` and `-`, starting with a letter or digit")
    } else {
        None
    }
}
