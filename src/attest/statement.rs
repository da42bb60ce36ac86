//! The signed contracts of SPEC §20 as types: the note line that carries a signature
//! ([`NoteLine`]), and the two statements closegate signs — an attestation
//! ([`AttestStatement`], `closegate-attest/v1`) and an approval ([`ApproveStatement`],
//! `closegate-approve/v1`). Nothing else is signed (`land` and every other record is an audit
//! line, authenticated by the record key instead).
//!
//! The bytes are the contract: a statement is signed as written and stored as those very bytes,
//! so a verifier never needs a canonical form. Each type's fields are declared in the order
//! serde_json's map sorts them, which is the order the `json!` objects written before these types
//! had: a statement or note line written through them is byte for byte the one written before
//! (`tests/it/contracts.rs` holds lines captured from the binary before the types existed).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The `type` of an attestation statement.
pub const ATTEST_TYPE: &str = "closegate-attest/v1";
/// The `type` of an approval statement.
pub const APPROVE_TYPE: &str = "closegate-approve/v1";

/// One line of a note under `refs/notes/closegate`: `{"closegate": kind, "signature",
/// "signer"?, "statement"}`. `kind` is `attest` or `approve` as written (another word is carried
/// and ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteLine {
    #[serde(rename = "closegate")]
    pub kind: String,
    /// ssh-keygen's armored signature over `statement`'s bytes.
    pub signature: String,
    /// Who the signer expected to be in `allowed_signers` (a hint only: verification decides);
    /// a value that is not a string reads as none.
    #[serde(
        default,
        deserialize_with = "string_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub signer: Option<String>,
    /// The exact signed text.
    pub statement: String,
}

/// A note line that is not a [`NoteLine`]: its kind when it names one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub kind: Option<String>,
    pub why: String,
}

impl NoteLine {
    /// The line as stored: one JSON object, no newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a note line serializes")
    }

    /// One stored line, or why it is not a closegate entry.
    pub fn parse(line: &str) -> Result<NoteLine, BadLine> {
        let value: Value = serde_json::from_str(line).map_err(|_| BadLine {
            kind: None,
            why: "a note line that is not a closegate entry (not JSON)".to_string(),
        })?;
        if let Ok(entry) = NoteLine::deserialize(&value) {
            return Ok(entry);
        }
        match value.get("closegate").and_then(Value::as_str) {
            Some(kind) => Err(BadLine {
                why: format!("an unsigned or incomplete `{kind}` entry"),
                kind: Some(kind.to_string()),
            }),
            None => Err(BadLine {
                kind: None,
                why: "a note line that is not a closegate entry".to_string(),
            }),
        }
    }
}

/// A field that is a string, or none when absent or of another type.
fn string_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// The attestation of a VERIFIED report (SPEC §20): commit, tree, configuration and contract
/// blobs, the checks with their exit codes, the verdict and the tool version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttestStatement {
    #[serde(default)]
    pub checks: Vec<AttestedCheck>,
    pub commit: String,
    pub config: Option<String>,
    pub contract: Option<String>,
    #[serde(default)]
    pub tool: String,
    pub tree: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub verdict: String,
}

/// One check an attestation names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttestedCheck {
    #[serde(default)]
    pub command: String,
    /// Null when the process was killed or could not start.
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub name: String,
}

/// A signed approval (SPEC §8, §20): bound to commit, configuration and contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApproveStatement {
    /// When it was approved (RFC 3339, UTC).
    #[serde(default)]
    pub at: String,
    /// Who approved; the verified principal stands in when absent.
    pub by: Option<String>,
    pub commit: String,
    pub config: Option<String>,
    pub contract: Option<String>,
    pub note: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
}

/// A statement's JSON as the statement of type `kind`, or why it is not one.
fn read_as<T: for<'de> Deserialize<'de>>(value: &Value, kind: &str) -> Result<T, String> {
    if value.get("type").and_then(Value::as_str) != Some(kind) {
        return Err(format!("its statement is not a {kind} statement"));
    }
    T::deserialize(value).map_err(|e| format!("its {kind} statement is malformed ({e})"))
}

impl AttestStatement {
    /// The statement as signed: one JSON object.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("a statement serializes")
    }

    /// A signed text as an attestation statement, or why it is not one.
    pub fn parse(statement: &str) -> Result<AttestStatement, String> {
        let value: Value =
            serde_json::from_str(statement).map_err(|_| "its statement is not JSON".to_string())?;
        read_as(&value, ATTEST_TYPE)
    }
}

impl ApproveStatement {
    /// The statement as signed: one JSON object.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("a statement serializes")
    }

    /// A signed text as an approval statement, or why it is not one (text that is not JSON is
    /// not one either).
    pub fn parse(statement: &str) -> Result<ApproveStatement, String> {
        let value: Value = serde_json::from_str(statement).unwrap_or(Value::Null);
        read_as(&value, APPROVE_TYPE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `attest::entry_line` before `NoteLine`, verbatim.
    fn entry_before(kind: &str, statement: &str, signature: &str, signer: Option<&str>) -> String {
        let mut line = json!({"closegate": kind, "statement": statement, "signature": signature});
        if let Some(signer) = signer {
            line["signer"] = json!(signer);
        }
        line.to_string()
    }

    const ODD: &str = "a \"quoted\" \\ line\nwith é, \u{1}, </script> and \u{2028}";

    #[test]
    fn a_note_line_is_byte_for_byte_the_one_written_before() {
        for signer in [None, Some("ci@example.com"), Some(ODD)] {
            let line = NoteLine {
                kind: "attest".into(),
                signature: format!("-----BEGIN SSH SIGNATURE-----\n{ODD}\n"),
                signer: signer.map(str::to_string),
                statement: ODD.into(),
            };
            let before = entry_before("attest", ODD, &line.signature, signer);
            assert_eq!(line.to_line(), before);
            assert_eq!(NoteLine::parse(&before), Ok(line));
        }
    }

    #[test]
    fn attestations_are_byte_for_byte_the_ones_written_before() {
        let attest = AttestStatement {
            checks: vec![
                AttestedCheck {
                    command: ODD.into(),
                    exit_code: Some(0),
                    name: "unit".into(),
                },
                AttestedCheck {
                    command: "x".into(),
                    exit_code: None,
                    name: ODD.into(),
                },
            ],
            commit: "c".repeat(40),
            config: None,
            contract: Some("d".repeat(40)),
            tool: "closegate 0.1.0".into(),
            tree: Some("t".repeat(40)),
            kind: ATTEST_TYPE.into(),
            verdict: "VERIFIED".into(),
        };
        let before = json!({
            "type": ATTEST_TYPE,
            "commit": "c".repeat(40),
            "tree": "t".repeat(40),
            "config": null,
            "contract": "d".repeat(40),
            "checks": [
                {"name": "unit", "command": ODD, "exit_code": 0},
                {"name": ODD, "command": "x", "exit_code": null},
            ],
            "verdict": "VERIFIED",
            "tool": "closegate 0.1.0",
        })
        .to_string();
        assert_eq!(attest.to_text(), before);
        assert_eq!(AttestStatement::parse(&before), Ok(attest));
    }

    #[test]
    fn approvals_are_byte_for_byte_the_ones_written_before() {
        for note in [None, Some(ODD)] {
            let approve = ApproveStatement {
                at: "2026-01-01T00:00:00Z".into(),
                by: Some(ODD.into()),
                commit: "c".repeat(40),
                config: Some("f".repeat(40)),
                contract: None,
                note: note.map(str::to_string),
                kind: APPROVE_TYPE.into(),
            };
            let before = json!({
                "type": APPROVE_TYPE,
                "commit": "c".repeat(40),
                "config": "f".repeat(40),
                "contract": null,
                "by": ODD,
                "at": "2026-01-01T00:00:00Z",
                "note": note,
            })
            .to_string();
            assert_eq!(approve.to_text(), before);
            assert_eq!(ApproveStatement::parse(&before), Ok(approve));
        }
    }

    #[test]
    fn lines_that_are_no_entry_say_why() {
        let bad = |line: &str| NoteLine::parse(line).unwrap_err();
        assert_eq!(bad("garbage").kind, None);
        assert!(bad("garbage").why.contains("not JSON"));
        let unsigned = bad(r#"{"closegate":"attest","statement":"{}"}"#);
        assert_eq!(unsigned.kind.as_deref(), Some("attest"));
        assert_eq!(unsigned.why, "an unsigned or incomplete `attest` entry");
        assert_eq!(
            bad("[1]").why,
            "a note line that is not a closegate entry",
            "an array"
        );
        let odd_signer = r#"{"closegate":"approve","statement":"s","signature":"g","signer":7}"#;
        assert_eq!(NoteLine::parse(odd_signer).unwrap().signer, None);
        assert_eq!(
            AttestStatement::parse("{}").unwrap_err(),
            "its statement is not a closegate-attest/v1 statement"
        );
        assert_eq!(
            ApproveStatement::parse("nope").unwrap_err(),
            "its statement is not a closegate-approve/v1 statement"
        );
        assert_eq!(
            AttestStatement::parse("nope").unwrap_err(),
            "its statement is not JSON"
        );
        let malformed = format!(r#"{{"type":"{ATTEST_TYPE}","commit":7}}"#);
        assert!(
            AttestStatement::parse(&malformed)
                .unwrap_err()
                .starts_with("its closegate-attest/v1 statement is malformed"),
        );
    }
}
