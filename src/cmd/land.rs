//! `closegate land`: land verified branches so the base only ever moves to a tree that passed
//! (SPEC §22).

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use crate::land::{self, Landing, Outcome, Request, Strategy};
use crate::render::escape;

/// Land verified branches onto the base: compose in memory, check the composed tree, move the base
/// by compare-and-swap, record, tear down
///
/// Each branch's recorded verdict must pass under the base tip's configuration; the status
/// document never reaches the base; the base only ever moves to a tree whose checks passed (exit
/// 0 every branch landed, 1 any refused, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Branches or worktrees to land, in landing order (none: the current worktree's branch)
    pub targets: Vec<String>,
    /// Every COMPLETED (or CONFLICT) agent branch, oldest verdict first
    #[arg(long)]
    pub all: bool,
    /// How the branch is composed onto the base
    #[arg(long, value_enum, default_value_t = Strategy::Merge)]
    pub strategy: Strategy,
    /// The base branch to land on (default: the configured base)
    #[arg(long, value_name = "NAME")]
    pub base: Option<String>,
    /// Compose up to N branches and check their combined tree once (bisected when it fails)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// Keep the worktrees (and so the branches) of landed branches
    #[arg(long)]
    pub no_teardown: bool,
    /// Tear the worktree down but keep the branch
    #[arg(long)]
    pub keep_branch: bool,
    /// Compose on REMOTE's base and push there with a lease (never a force), then the notes
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Compose and check, print the plan; move, record and remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for another `land` of the same base before `land-base-busy` (90s, 10m, 1h)
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub wait: String,
    /// One JSON object: every branch's outcome and the base's move
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let wait = crate::sweep::parse_duration(&args.wait).map_err(|_| {
        anyhow::anyhow!(
            "--wait {}: expected a number and a unit (90s, 10m, 1h)",
            args.wait
        )
    })?;
    let request = Request {
        wait,
        targets: args.targets,
        all: args.all,
        strategy: args.strategy,
        base: args.base,
        batch: args.batch as usize,
        no_teardown: args.no_teardown,
        keep_branch: args.keep_branch,
        dry_run: args.dry_run,
        push: args.push,
    };
    let landing = land::run(&request)?;
    if let Some(why) = &landing.notes_error {
        eprintln!(
            "closegate: landed, but the notes could not be pushed: {}",
            escape(why)
        );
    }
    if args.json {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string_pretty(&to_json(&landing))?)?;
    } else {
        let mut out = crate::term::human();
        human(&landing, &mut out)?;
    }
    Ok(landing.exit())
}

fn to_json(l: &Landing) -> serde_json::Value {
    let branches: Vec<serde_json::Value> = l
        .branches
        .iter()
        .map(|b| {
            let findings: Vec<serde_json::Value> = b
                .findings
                .iter()
                .map(|f| json!({"code": f.code.as_str(), "message": f.message}))
                .collect();
            let codes: Vec<&str> = b.findings.iter().map(|f| f.code.as_str()).collect();
            json!({
                "branch": b.branch,
                "slug": b.slug,
                "tip": b.tip.to_string(),
                "outcome": b.outcome,
                "codes": codes,
                "findings": findings,
                "composed": b.composed.map(|c| c.to_string()),
                "checks": b.checks,
                "teardown": b.teardown,
                "teardown_codes": b.teardown_codes,
            })
        })
        .collect();
    json!({
        "schema": 1,
        "dry_run": l.dry_run,
        "strategy": l.strategy.as_str(),
        "base": {
            "name": l.base,
            "before": l.before.map(|c| c.to_string()),
            "after": l.after.map(|c| c.to_string()),
        },
        "checks_run": l.checks_run,
        "branches": branches,
    })
}

fn human(l: &Landing, out: &mut dyn Write) -> Result<()> {
    for b in &l.branches {
        let word = match (b.outcome, l.dry_run) {
            (Outcome::Landed, true) => "would land",
            (Outcome::Landed, false) => "landed",
            (Outcome::Refused, _) => "refused",
            (Outcome::Skipped, _) => "skipped",
        };
        let composed = b.composed.map_or(String::new(), |c| format!(" as {c}"));
        writeln!(
            out,
            "{word} {} ({}){composed}",
            escape(&b.branch),
            escape(&b.slug)
        )?;
        for f in &b.findings {
            writeln!(out, "  {}: {}", f.code, escape(&f.message))?;
        }
        for step in &b.teardown {
            writeln!(out, "  teardown: {}", escape(step))?;
        }
        if !b.teardown_codes.is_empty() {
            writeln!(
                out,
                "  teardown refused ({}): the worktree is left for `closegate sweep`",
                b.teardown_codes.join(", ")
            )?;
        }
    }
    let show = |c: Option<git2::Oid>| c.map_or("none".to_string(), |c| c.to_string());
    let moved = if l.before == l.after {
        "unchanged"
    } else {
        "moved"
    };
    let dry = if l.dry_run {
        " (dry run: nothing was moved, recorded or removed)"
    } else {
        ""
    };
    writeln!(
        out,
        "base {} {moved}: {} -> {} ({} check run(s)){dry}",
        escape(&l.base),
        show(l.before),
        show(l.after),
        l.checks_run
    )?;
    Ok(())
}
