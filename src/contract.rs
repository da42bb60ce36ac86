//! The task contract (SPEC §12): a coordinator's finish line, fixed before dispatch.
//!
//! The contract lives at `.closegate/contracts/<slug>.toml` on the base tip (trusted, like the
//! configuration) or comes from `--contract FILE`; it is never read from the agent's branch or
//! worktree. Like the configuration it is walked key by key from a `toml::Table`, so every fault
//! names the key and the reason. A contract that does not parse is not an error but a finding
//! (`contract-malformed`): the coordinator asked for a finish line and none could be checked.
//!
//! The agent writes its own slug, so a contract is not found by slug alone: a contract may be
//! bound to a branch (`branch = "agent/inv"`) and then applies to that branch whatever slug the
//! document claims; a slug that disagrees with the binding is `contract-slug-mismatch`.

use anyhow::{Context, Result};
use git2::Oid;
use toml::{Table, Value};

use crate::catalog::Code;
use crate::finding::Finding;
use crate::globs::Globs;
use crate::repo::Repo;
use crate::toml_read::{strings, syntax_error, wrong_type};

/// Where contracts live on the base tip, one file per slug.
pub const DIR: &str = ".closegate/contracts";

/// Every key a contract may hold, as error messages list them (the README's reference names
/// each; a test keeps the two in step).
pub const KEYS: &str = "goal, branch, scope, prohibited, required_artifacts, required_checks, \
                    approval, max_changed_files, max_commits, expect_changed, fail_to_pass";

/// The contract file of `slug` inside the base tip's tree.
pub fn path_for(slug: &str) -> String {
    format!("{DIR}/{slug}.toml")
}

/// When the contract itself asks for a human (SPEC §12 `approval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Every return needs an approval (`contract-approval-required`).
    Always,
    /// Only what the protected gate sends to review (the contract adds nothing).
    #[default]
    Protected,
    /// The contract adds no approval requirement; it cannot waive the protected gate's review.
    Never,
}

/// A parsed contract. Absent keys impose nothing.
#[derive(Debug, Clone, Default)]
pub struct Contract {
    pub goal: Option<String>,
    /// The branch the contract is bound to (short name, e.g. `agent/inv`): it then applies to
    /// that branch whatever slug the document claims.
    pub branch: Option<String>,
    /// The only paths the branch may change; `None` when the key is absent (no limit).
    pub scope: Option<Globs>,
    pub prohibited: Option<Globs>,
    pub required_artifacts: Vec<String>,
    pub required_checks: Vec<String>,
    pub approval: ApprovalPolicy,
    pub max_changed_files: Option<u64>,
    pub max_commits: Option<u64>,
    /// The base tests the task is expected to change (SPEC §27.1): test ids or globs over ids
    /// (`*` matches any text, `/` and spaces included).
    pub expect_changed: Vec<String>,
    /// Run the reverse overlay (the new tests on the base's code) and hold a return whose new
    /// tests all pass there (SPEC §27.1).
    pub fail_to_pass: bool,
}

impl Contract {
    /// Whether the base test `id` is one the task is expected to change.
    pub fn expects_changed(&self, id: &str) -> bool {
        self.expect_changed
            .iter()
            .any(|p| id_glob(p).is_some_and(|g| g.is_match(id)))
    }
}

/// A glob over test ids: `*` matches any text (ids hold `/`, `::` and spaces alike).
fn id_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

impl Contract {
    /// Match `scope` and `prohibited` ignoring ASCII case (`core.ignorecase = true`, SPEC §4.5).
    pub fn fold_case(&mut self) {
        self.scope.iter_mut().for_each(Globs::fold_case);
        self.prohibited.iter_mut().for_each(Globs::fold_case);
    }
}

/// The contract's bytes and where they came from (`main:.closegate/contracts/x.toml`, a path).
#[derive(Debug, Clone)]
pub struct Source {
    pub origin: String,
    pub bytes: Vec<u8>,
}

impl Source {
    /// The blob id `git hash-object` gives the file: what an approval is bound to.
    pub fn blob_id(&self) -> String {
        Repo::hash_blob(&self.bytes).map_or_else(|| Oid::zero().to_string(), |id| id.to_string())
    }
}

/// Where to look for the contract once the slug and branch are known.
#[derive(Debug, Clone, Default)]
pub enum Lookup {
    /// No base tip resolved and no `--contract`: no contract applies.
    #[default]
    Nothing,
    /// `.closegate/contracts/` in this trusted tip (name as given, commit).
    Tip(String, Oid),
    /// `--contract FILE`, read when the inputs were resolved.
    File(Source),
}

/// The contract that applies to a return, and what is wrong with how slug and branch meet it.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The contract to check the commit against; `None` when the only candidate is bound to
    /// another branch.
    pub source: Option<Source>,
    /// `contract-slug-mismatch`, and `contract-malformed` when two contracts bind one branch.
    pub findings: Vec<Finding>,
}

impl Lookup {
    /// The contract for a return claiming `slug` on `branch` (SPEC §12): every contract bound to
    /// the branch applies whatever the slug; else the slug's own contract, unless it is bound to
    /// another branch. `None` when no contract concerns this return; an error when something
    /// other than a file is at the slug's contract path (SPEC §11) or it cannot be read.
    pub fn find(&self, repo: &Repo, slug: &str, branch: Option<&str>) -> Result<Option<Found>> {
        Ok(match self {
            Lookup::Nothing => None,
            Lookup::File(source) => Some(from_file(source, branch)),
            Lookup::Tip(name, tip) => from_tip(repo, name, *tip, slug, branch)?,
        })
    }
}

/// `--contract FILE` applies as given; bound to another branch it is a mismatch.
fn from_file(source: &Source, branch: Option<&str>) -> Found {
    let mut found = Found {
        source: Some(source.clone()),
        findings: Vec::new(),
    };
    if let Ok(Contract {
        branch: Some(bound),
        ..
    }) = parse(&source.bytes)
        && Some(bound.as_str()) != branch
    {
        found
            .findings
            .push(bound_elsewhere(&source.origin, &bound, branch));
    }
    found
}

fn from_tip(
    repo: &Repo,
    name: &str,
    tip: Oid,
    slug: &str,
    branch: Option<&str>,
) -> Result<Option<Found>> {
    let bound = bound_to(repo, name, tip, branch);
    if let Some((_, first)) = bound.first() {
        let branch = branch.unwrap_or_default();
        let mut findings: Vec<Finding> = bound
            .iter()
            .filter(|(stem, _)| stem != slug)
            .map(|(stem, source)| {
                let msg = format!(
                    "the contract {} is bound to branch `{branch}` and is for slug `{stem}`, but the document claims slug `{slug}`: write `{stem}`",
                    source.origin
                );
                Finding::new(Code::ContractSlugMismatch, msg)
            })
            .collect();
        if let [_, second, ..] = &bound[..] {
            let msg = format!(
                "{}: `branch`: branch `{branch}` is also bound by {}; bind each branch once",
                first.origin, second.1.origin
            );
            findings.push(Finding::new(Code::ContractMalformed, msg));
        }
        return Ok(Some(Found {
            source: Some(first.clone()),
            findings,
        }));
    }
    let path = path_for(slug);
    let origin = format!("{name}:{path}");
    let read = repo.read_config_file(tip, &path);
    let Some(bytes) = read.with_context(|| format!("cannot read the contract {origin}"))? else {
        return Ok(None);
    };
    let source = Source { origin, bytes };
    Ok(match parse(&source.bytes) {
        Ok(Contract {
            branch: Some(other),
            ..
        }) => Some(Found {
            findings: vec![bound_elsewhere(&source.origin, &other, branch)],
            source: None,
        }),
        _ => Some(Found {
            source: Some(source),
            findings: Vec::new(),
        }),
    })
}

/// The contracts on the tip bound to `branch` (slug, source).
fn bound_to(repo: &Repo, name: &str, tip: Oid, branch: Option<&str>) -> Vec<(String, Source)> {
    let mut bound = Vec::new();
    let Some(branch) = branch else {
        return bound;
    };
    for (file, bytes) in repo.dir_files(tip, DIR) {
        let Some(stem) = file.strip_suffix(".toml") else {
            continue;
        };
        if parse(&bytes).is_ok_and(|c| c.branch.as_deref() == Some(branch)) {
            let origin = format!("{name}:{DIR}/{file}");
            bound.push((stem.to_string(), Source { origin, bytes }));
        }
    }
    bound
}

/// `contract-slug-mismatch`: the contract is bound to `bound`, the return is on `branch`.
fn bound_elsewhere(origin: &str, bound: &str, branch: Option<&str>) -> Finding {
    let on = branch.map_or("no branch".to_string(), |b| format!("branch `{b}`"));
    let msg = format!(
        "the contract {origin} is bound to branch `{bound}`, but this return is on {on}: a bound contract is met only on its branch"
    );
    Finding::new(Code::ContractSlugMismatch, msg)
}

/// Parse a contract; the error names the key (or line) and the reason.
pub fn parse(bytes: &[u8]) -> Result<Contract, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?;
    let table: Table = text.parse().map_err(|e| syntax_error(&e, text))?;
    let mut contract = Contract::default();
    for (key, value) in &table {
        match key.as_str() {
            "goal" => contract.goal = Some(string(value, key)?),
            "branch" => contract.branch = Some(branch(value)?),
            "scope" => contract.scope = Some(globs(value, key)?),
            "prohibited" => contract.prohibited = Some(globs(value, key)?),
            "required_artifacts" => contract.required_artifacts = artifacts(value, key)?,
            "required_checks" => contract.required_checks = strings(value, key)?,
            "approval" => contract.approval = approval(value)?,
            "max_changed_files" => contract.max_changed_files = Some(count(value, key)?),
            "max_commits" => contract.max_commits = Some(count(value, key)?),
            "expect_changed" => contract.expect_changed = id_globs(value, key)?,
            "fail_to_pass" => {
                contract.fail_to_pass = value
                    .as_bool()
                    .ok_or_else(|| wrong_type(key, "true or false", value))?;
            }
            _ => return Err(format!("unknown key `{key}` (expected one of {KEYS})")),
        }
    }
    Ok(contract)
}

/// `branch`: a valid git branch name, written as the short name (`agent/inv`).
fn branch(value: &Value) -> Result<String, String> {
    let name = string(value, "branch")?;
    let short = name.strip_prefix("refs/heads/").unwrap_or(&name);
    match crate::doc::close_line::branch_fault(short) {
        Some(fault) => Err(format!("`branch`: {fault}")),
        None => Ok(short.to_string()),
    }
}

fn string(value: &Value, key: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| wrong_type(key, "a string", value))
}

/// Globs where `*` does not cross `/`; the error names the key and the bad glob.
fn globs(value: &Value, key: &str) -> Result<Globs, String> {
    Globs::paths(&strings(value, key)?).map_err(|e| format!("`{key}`: {e}"))
}

/// Test ids or globs over them; the error names the key and the bad glob.
fn id_globs(value: &Value, key: &str) -> Result<Vec<String>, String> {
    let patterns = strings(value, key)?;
    for pattern in &patterns {
        if pattern.is_empty() || id_glob(pattern).is_none() {
            return Err(format!(
                "`{key}`: `{}` is not a test id or a glob",
                pattern.escape_debug()
            ));
        }
    }
    Ok(patterns)
}

/// Repository-relative paths, with the same rules as the manifest's entries.
fn artifacts(value: &Value, key: &str) -> Result<Vec<String>, String> {
    let paths = strings(value, key)?;
    for path in &paths {
        if let Some(fault) = crate::doc::artifact_path_fault(path) {
            return Err(format!(
                "`{key}`: `{}` is not a valid path: {fault}",
                path.escape_debug()
            ));
        }
    }
    Ok(paths)
}

fn approval(value: &Value) -> Result<ApprovalPolicy, String> {
    match value.as_str() {
        Some("always") => Ok(ApprovalPolicy::Always),
        Some("protected") => Ok(ApprovalPolicy::Protected),
        Some("never") => Ok(ApprovalPolicy::Never),
        Some(other) => Err(format!(
            "`approval` must be \"always\", \"protected\" or \"never\", found \"{}\"",
            other.escape_debug()
        )),
        None => Err(wrong_type("approval", "a string", value)),
    }
}

fn count(value: &Value, key: &str) -> Result<u64, String> {
    let n = value
        .as_integer()
        .ok_or_else(|| wrong_type(key, "a non-negative integer", value))?;
    u64::try_from(n).map_err(|_| format!("`{key}` must be a non-negative integer, found {n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text.as_bytes()).unwrap_err()
    }

    /// SPEC §27.1: `expect_changed` names base test ids or globs over them (`*` crosses `/` and
    /// spaces, as ids hold them); `fail_to_pass` is a boolean. A bad value names the key.
    #[test]
    fn expect_changed_and_fail_to_pass_parse_and_match_test_ids() {
        let c = parse(b"expect_changed = [\"tests/t.py::test_*\", \"crate::tests::exact\"]\nfail_to_pass = true\n").unwrap();
        assert!(c.fail_to_pass);
        assert!(c.expects_changed("tests/t.py::test_old[1-2]"));
        assert!(c.expects_changed("crate::tests::exact"));
        assert!(!c.expects_changed("crate::tests::exactly"));
        assert!(!c.expects_changed("tests/u.py::test_old"));
        assert!(err("expect_changed = [\"\"]").contains("`expect_changed`"));
        assert!(err("expect_changed = [\"a[\"]").contains("`expect_changed`"));
        assert!(err("fail_to_pass = \"yes\"").contains("fail_to_pass"));
        assert!(!parse(b"").unwrap().fail_to_pass);
    }

    #[test]
    fn full_contract_parses() {
        let text = r#"
goal = "CSV export"
scope = ["invoice/**"]
prohibited = ["db/**", "billing/**"]
required_artifacts = ["invoice/export.go"]
required_checks = ["test"]
approval = "always"
max_changed_files = 40
max_commits = 20
"#;
        let c = parse(text.as_bytes()).unwrap();
        assert_eq!(c.goal.as_deref(), Some("CSV export"));
        assert_eq!(
            c.scope.as_ref().unwrap().first_match("invoice/a.go"),
            Some("invoice/**")
        );
        assert_eq!(
            c.prohibited.as_ref().unwrap().first_match("db/x"),
            Some("db/**")
        );
        assert_eq!(c.approval, ApprovalPolicy::Always);
        assert_eq!((c.max_changed_files, c.max_commits), (Some(40), Some(20)));
    }

    #[test]
    fn branch_is_a_valid_short_branch_name() {
        let c = parse(br#"branch = "refs/heads/agent/inv""#).unwrap();
        assert_eq!(c.branch.as_deref(), Some("agent/inv"));
        assert!(err(r#"branch = "agent/a..b""#).starts_with("`branch`: "));
        assert!(err(r#"branch = "" "#).starts_with("`branch`: "));
        assert_eq!(
            err("branch = 1"),
            "`branch` must be a string, found integer"
        );
    }

    #[test]
    fn empty_contract_imposes_nothing() {
        let c = parse(b"").unwrap();
        assert!(c.scope.is_none() && c.prohibited.is_none());
        assert_eq!(c.approval, ApprovalPolicy::Protected);
    }

    #[test]
    fn star_does_not_cross_a_slash() {
        let c = parse(br#"scope = ["src/*"]"#).unwrap();
        let scope = c.scope.unwrap();
        assert!(scope.first_match("src/a.rs").is_some());
        assert!(scope.first_match("src/x/a.rs").is_none());
    }

    #[test]
    fn faults_name_key_and_reason() {
        assert!(err("scopes = []").contains("unknown key `scopes`"));
        assert_eq!(
            err("scope = \"a\""),
            "`scope` must be an array of strings, found string"
        );
        assert_eq!(
            err("scope = [1]"),
            "`scope` must be an array of strings, found integer"
        );
        assert!(err("approval = \"sometimes\"").starts_with("`approval` must be"));
        assert_eq!(
            err("max_commits = -1"),
            "`max_commits` must be a non-negative integer, found -1"
        );
        assert_eq!(
            err("max_commits = \"3\""),
            "`max_commits` must be a non-negative integer, found string"
        );
        assert!(err("prohibited = [\"a[\"]").starts_with("`prohibited`: bad glob `a[`"));
        assert!(err("required_artifacts = [\"/etc/x\"]").contains("is absolute"));
        assert!(err("goal = ").starts_with("line 1: "));
        assert_eq!(parse(b"\xff").unwrap_err(), "not valid UTF-8");
    }
}
