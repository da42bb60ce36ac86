//! The board's two formats (SPEC §13): aligned columns for people, one JSON object for scripts.
//!
//! Slugs, branches and paths come from agents and their worktrees: the human format escapes
//! them with `render::escape`, the JSON format with the report's own JSON escaping. Colour, on a
//! terminal only, marks the stage and nothing else.

use std::io::Write;

use console::{Style, measure_text_width};
use serde::Serialize;

use super::{escape, write_json};
use crate::board::radar::Pair;
use crate::board::{Row, Stage};

const HEADER: [&str; 7] = [
    "STAGE", "VERDICT", "REASON", "STATE", "SLUG", "BRANCH", "WORKTREE",
];
/// Shown for a field that is null.
const NONE: &str = "-";

#[derive(Serialize)]
struct Board<'a> {
    schema: u32,
    worktrees: &'a [Row],
}

/// `{"schema": 1, "worktrees": [...]}`.
pub fn json(rows: &[Row], out: &mut dyn Write) -> std::io::Result<()> {
    let board = Board {
        schema: crate::report::SCHEMA,
        worktrees: rows,
    };
    write_json(&board, out)
}

/// `board --json`'s output for these rows, byte for byte (`serve`'s `/api/board` answers with
/// exactly this, SPEC §25).
pub fn json_text(rows: &[Row]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    json(rows, &mut out)?;
    Ok(out)
}

/// `board --conflicts --json`: the pairs of live agent branches that conflict (SPEC §22).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Conflicts {
    pub schema: u32,
    pub conflicts: Vec<Pair>,
}

/// `{"schema": 1, "conflicts": [...]}` on one line, keys in order (as every version wrote it).
pub fn conflicts_json(pairs: &[Pair], out: &mut dyn Write) -> anyhow::Result<()> {
    let value = serde_json::to_value(Conflicts {
        schema: crate::report::SCHEMA,
        conflicts: pairs.to_vec(),
    })?;
    writeln!(out, "{value}")?;
    Ok(())
}

/// One line per conflicting pair, or one saying there is none.
pub fn conflicts_human(pairs: &[Pair], out: &mut dyn Write) -> std::io::Result<()> {
    if pairs.is_empty() {
        writeln!(out, "no two live agent branches conflict")?;
    }
    for p in pairs {
        writeln!(
            out,
            "{} <-> {}: {}",
            escape(&p.one),
            escape(&p.two),
            escape(&p.paths.join(", "))
        )?;
    }
    Ok(())
}

/// A header, then one line per worktree in aligned columns; the main worktree is marked. The
/// `TREE` column (before `WORKTREE`) is there when the rows carry it (`board --tree`).
pub fn human(rows: &[Row], color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let with_tree = rows.iter().any(|r| r.tree.is_some());
    let mut header: Vec<String> = HEADER.map(str::to_string).to_vec();
    if with_tree {
        header.insert(TREE_AT, "TREE".to_string());
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|r| cells(r, with_tree)).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| measure_text_width(h)).collect();
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(measure_text_width(cell));
        }
    }
    writeln!(out, "{}", line(&header, &widths, None, false))?;
    for (row, cell) in rows.iter().zip(&cells) {
        writeln!(out, "{}", line(cell, &widths, Some(row.stage), color))?;
    }
    Ok(())
}

/// Where the `TREE` column goes: just before `WORKTREE`.
const TREE_AT: usize = 6;

/// The text of each column, escaped.
fn cells(row: &Row, with_tree: bool) -> Vec<String> {
    let text = |v: Option<&str>| v.map_or_else(|| NONE.to_string(), escape);
    let mut path = escape(&row.path);
    if row.main {
        path.push_str("  (main)");
    }
    let mut cells = vec![
        row.stage.as_str().to_string(),
        text(row.verdict.map(|v| v.as_str())),
        text(row.reason.as_deref()),
        text(row.state.map(|s| s.as_str())),
        text(row.slug.as_deref()),
        text(row.branch.as_deref()),
        path,
    ];
    if with_tree {
        let tree = row.tree.as_ref().map(|t| t.cell());
        cells.insert(TREE_AT, text(tree.as_deref()));
    }
    cells
}

/// One line: each column padded to its width, the last one not padded; the stage painted.
fn line(cells: &[String], widths: &[usize], stage: Option<Stage>, color: bool) -> String {
    let mut parts = Vec::with_capacity(cells.len());
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        let pad = " ".repeat(width.saturating_sub(measure_text_width(cell)));
        let last = i + 1 == cells.len();
        let shown = match (i, stage) {
            (0, Some(stage)) if color => paint(stage, cell),
            _ => cell.clone(),
        };
        parts.push(if last { shown } else { format!("{shown}{pad}") });
    }
    parts.join("  ")
}

fn paint(stage: Stage, text: &str) -> String {
    let style = match stage {
        Stage::Completed => Style::new().green(),
        Stage::Merged => Style::new().green().bold(),
        Stage::Conflict => Style::new().red(),
        Stage::Failed | Stage::Rejected => Style::new().red().bold(),
        Stage::Review => Style::new().yellow(),
        Stage::Unverified => Style::new().magenta(),
        Stage::Blocked => Style::new().red(),
        Stage::Verifying => Style::new().cyan(),
        Stage::Running | Stage::Stopped => Style::new().dim(),
    };
    style.force_styling(true).apply_to(text).to_string()
}
