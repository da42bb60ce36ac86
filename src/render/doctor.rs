//! `agent doctor`'s two formats (SPEC §26.3): a line per reason the installed stop hook would not
//! run (or one saying it runs) for people; one object for scripts, a type that reads back as it
//! was written, under the one `report::SCHEMA`.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::{escape, write_json};
use crate::agent::Target;
use crate::finding::Finding;

/// `agent doctor --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doctor {
    pub schema: u32,
    /// Whether the hook runs as installed for every target looked at.
    pub ok: bool,
    /// The harnesses looked at (`claude-code`, `codex`).
    pub targets: Vec<String>,
    pub findings: Vec<DoctorFinding>,
    /// How each judgement was reached where there is a choice (SPEC §27.3: Codex's trust from
    /// Codex itself, or from the hash closegate computes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One reason a target's hook would not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorFinding {
    pub target: String,
    pub code: String,
    pub severity: String,
    pub message: String,
}

impl Doctor {
    pub fn of(targets: &[Target], findings: &[(Target, Finding)], notes: Vec<String>) -> Doctor {
        Doctor {
            notes,
            schema: crate::report::SCHEMA,
            ok: findings.is_empty(),
            targets: targets.iter().map(|t| t.as_str().to_string()).collect(),
            findings: (findings.iter())
                .map(|(t, f)| DoctorFinding {
                    target: t.as_str().to_string(),
                    code: f.code.as_str().to_string(),
                    severity: f.severity.as_str().to_string(),
                    message: f.message.clone(),
                })
                .collect(),
        }
    }
}

/// The object, keys in order (as every version wrote it), with the report's JSON escaping.
pub fn json(doctor: &Doctor, out: &mut dyn Write) -> anyhow::Result<()> {
    write_json(&serde_json::to_value(doctor)?, out)?;
    Ok(())
}

/// A warning line per finding, or the line saying the hook runs.
pub fn human(doctor: &Doctor, out: &mut dyn Write) -> std::io::Result<()> {
    for f in &doctor.findings {
        writeln!(
            out,
            "warning {} ({}): {}",
            f.code,
            f.target,
            escape(&f.message)
        )?;
    }
    for note in &doctor.notes {
        writeln!(out, "note: {}", escape(note))?;
    }
    if doctor.ok {
        writeln!(
            out,
            "ok: the stop hook runs as installed ({})",
            doctor.targets.join(", ")
        )?;
    }
    Ok(())
}
