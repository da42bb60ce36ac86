//! The trusted configuration `.closegate.toml` (SPEC §5), read from the base tip.
//!
//! The file is walked key by key from a `toml::Table` rather than deserialised, so every error
//! names the origin, the exact key (`checks[1].timeout_s`) and the reason; an unknown key is an
//! error, never ignored. Globs use globset with `literal_separator(true)` so `*` stays inside one
//! path component while `**/` also matches zero directories (`**/tests/**` matches `tests/x.rs`).

use anyhow::{Context, Result, anyhow, bail};
use toml::{Table, Value};

use crate::globs::Globs;
use crate::toml_read;

/// The configuration file's name, at the repository root.
pub const FILE_NAME: &str = ".closegate.toml";
/// Seconds a check may run when its `timeout_s` is not given.
pub const DEFAULT_TIMEOUT_S: u64 = 600;
/// The status document's default name.
pub const DEFAULT_STATUS_FILE: &str = "_EXEC_STATUS.md";

/// Every top-level key, as error messages list them (the manual's configuration reference,
/// docs/configuration.md, names each; a test keeps the two in step).
pub const TOP_KEYS: &str = "base, status_file, agent_branches, protected, checks, require_contract, sandbox, jobs, \
     allowed_signers, require_signed_approvals, server_checks, escrow_days, flaky_retries";
/// How long escrows live by default (SPEC §24).
pub const DEFAULT_ESCROW_DAYS: u32 = 30;
/// The most checks `jobs` may run at once.
pub const MAX_JOBS: u64 = 64;
/// Every key of a `[[checks]]` table (kept in step with the README like [`TOP_KEYS`]).
pub const CHECK_KEYS: &str =
    "name, run, prepare, timeout_s, writable, network, keep, env, reuse, census, flaky_retries";
/// How many times a failing run is run again by default (SPEC §27.2 `flaky_retries`).
pub const DEFAULT_FLAKY_RETRIES: u32 = 2;
/// The most reruns `flaky_retries` may ask for.
pub const MAX_FLAKY_RETRIES: u32 = 10;
/// The keys of `[protected.integrity]` that are not surfaces (SPEC §27.1).
pub const INTEGRITY_KEYS: &str = "fail_to_pass";
/// Every key of a `[sandbox]` table (kept in step with the README like [`TOP_KEYS`]).
pub const SANDBOX_KEYS: &str = "mode, hide";
/// The values of `[protected.policy]`: which changes on a surface need review.
const POLICY_VALUES: &str = "\"all\", \"modify\", \"integrity\"";

/// Where the signers of attestations and approvals are listed by default (SPEC §20).
pub const DEFAULT_ALLOWED_SIGNERS: &str = ".closegate/allowed_signers";

/// The default protected surfaces of SPEC §4.5, in order.
const DEFAULT_SURFACES: [(&str, &[&str]); 4] = [
    (
        "tests",
        &[
            "**/tests/**",
            "**/test/**",
            "**/__tests__/**",
            "**/testdata/**",
            "**/fixtures/**",
            "**/spec/**",
            "**/specs/**",
            "**/e2e/**",
            "**/cypress/**",
            "**/test.*",
            "**/tests.*",
            "**/*_test.*",
            "**/*_tests.*",
            "**/test_*.*",
            "**/*.test.*",
            "**/*.spec.*",
            "**/*_spec.*",
            "**/*Test.java",
            "**/*Tests.java",
            "**/*Test.kt",
            "**/*Tests.cs",
            "**/conftest.py",
            "**/*.snap",
            "**/snapshots/**",
        ],
    ),
    (
        "evals",
        &[
            "**/evals/**",
            "**/eval/**",
            "**/*.eval.*",
            "**/golden/**",
            "**/benchmarks/**",
        ],
    ),
    (
        "ci",
        &[
            "**/.gitattributes",
            ".gitmodules",
            ".github/workflows/**",
            ".github/actions/**",
            ".ci/**",
            ".gitlab-ci.yml",
            ".circleci/**",
            ".buildkite/**",
            "Jenkinsfile",
            "azure-pipelines.yml",
            ".pre-commit-config.yaml",
            ".githooks/**",
            "CODEOWNERS",
            ".github/CODEOWNERS",
            ".closegate.toml",
            ".closegate/**",
        ],
    ),
    (
        "instructions",
        &[
            "**/AGENTS.md",
            "**/CLAUDE.md",
            "**/GEMINI.md",
            ".cursorrules",
            ".cursor/rules/**",
            ".github/copilot-instructions.md",
            ".claude/**",
            ".codex/**",
            ".gemini/**",
            ".windsurfrules",
            "CONVENTIONS.md",
        ],
    ),
];

/// What is on surface `ci` whatever the configuration says (SPEC §4.5): the configuration
/// itself, and what changes the checkout the checks are handed.
const ALWAYS_CI: [&str; 3] = [FILE_NAME, "**/.gitattributes", ".gitmodules"];

/// One configured check: a shell command run in a pristine checkout (SPEC §4.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSpec {
    pub name: String,
    pub run: String,
    /// `prepare` (SPEC §27.2): a command run with network, before `run` and in the same
    /// checkout, that fetches the dependencies without running the project's own code.
    pub prepare: Option<String>,
    pub timeout_s: u64,
    /// Paths outside its checkout the check may write (`writable`, SPEC §4.6): absolute, or
    /// `~` / `~/…` for the user's home, expanded when the check runs.
    pub writable: Vec<String>,
    /// `network = false` leaves the sandboxed check only the loopback interface.
    pub network: bool,
    /// Paths inside the checkout kept between runs (`keep`, SPEC §19), without a trailing `/`:
    /// when not empty the check runs in a warm workspace.
    pub keep: Vec<String>,
    /// Names of closegate's environment variables handed to the check beyond the allow-list
    /// (`env`, SPEC §4.6).
    pub env: Vec<String>,
    /// `reuse = "commit"` (SPEC §19): the commit id joins the check's reuse key.
    pub reuse_commit: bool,
    /// Which test runners' output the census reads (SPEC §26.4): `census = …`, else what `run`
    /// names ([`crate::runners::census::Mode::infer`]).
    pub census: crate::runners::census::Mode,
    /// How many times a failing run of the check is run again on the same tree (SPEC §27.2):
    /// its own `flaky_retries`, else the top-level one, else [`DEFAULT_FLAKY_RETRIES`].
    pub flaky_retries: u32,
}

impl CheckSpec {
    /// A check with the defaults: no `writable` paths, network on.
    pub fn new(name: impl Into<String>, run: impl Into<String>, timeout_s: u64) -> CheckSpec {
        let run = run.into();
        CheckSpec {
            name: name.into(),
            census: crate::runners::census::Mode::infer(&run),
            run,
            prepare: None,
            timeout_s,
            writable: Vec::new(),
            network: true,
            keep: Vec::new(),
            env: Vec::new(),
            reuse_commit: false,
            flaky_retries: DEFAULT_FLAKY_RETRIES,
        }
    }
}

/// `sandbox = "auto" | "required" | "off"` (SPEC §4.6): how the checks are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Sandbox when possible; otherwise run anyway with warning `checks-unsandboxed`.
    #[default]
    Auto,
    /// No sandbox, no check: `checks-unsandboxed` is a gap.
    Required,
    /// The operator's explicit choice to run checks unconfined, named in the report.
    Off,
}

impl SandboxMode {
    /// The configuration word.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Required => "required",
            SandboxMode::Off => "off",
        }
    }
}

/// Files whose mere addition changes how the tests already there run, by their names (pytest's
/// `conftest.py`, package `__init__.py` and configuration files, Jest's automatic `__mocks__`,
/// test-runner set-up and config files), from the runners table: under `[protected.policy]
/// <surface> = "modify"` or `"integrity"` adding one still needs review. What only the trees can
/// tell (a Go `TestMain`, a file a runner configuration names) is `gates::protected::wiring`'s
/// (SPEC §26.4).
fn wiring_names() -> Vec<String> {
    crate::runners::wiring_names()
        .into_iter()
        .map(String::from)
        .collect()
}

/// `[protected.policy] <surface> = "all" | "modify"`: which changes on a surface need review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SurfacePolicy {
    /// Every change needs review: additions, modifications, deletions, renames, type changes.
    #[default]
    All,
    /// Additions of new paths are allowed; every change to what is already there (modified,
    /// deleted, renamed — both sides —, type-changed) still needs review.
    Modify,
    /// Additions and modifications go through without a human when the test integrity runs
    /// (SPEC §23) show the base's tests pass on the commit and the new tests fail on the base;
    /// deletions, renames and type changes always need review.
    Integrity,
}

impl SurfacePolicy {
    /// The configuration word.
    pub fn as_str(self) -> &'static str {
        match self {
            SurfacePolicy::All => "all",
            SurfacePolicy::Modify => "modify",
            SurfacePolicy::Integrity => "integrity",
        }
    }
}

/// A named protected surface: the globs whose paths grade the work (SPEC §4.5).
#[derive(Debug, Clone)]
pub struct Surface {
    pub name: String,
    pub globs: Vec<String>,
    /// Which changes on this surface need review (`[protected.policy]`, default all).
    pub policy: SurfacePolicy,
    set: Globs,
}

impl Surface {
    /// Compile a surface; the error names the surface and the bad glob.
    pub fn new(name: impl Into<String>, globs: Vec<String>) -> Result<Surface> {
        let name = name.into();
        let set = Globs::paths(&globs)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("surface `{name}`"))?;
        Ok(Surface {
            name,
            globs,
            policy: SurfacePolicy::All,
            set,
        })
    }

    /// Whether a repo-relative path (with `/` separators; text, or the bytes git stores) lies
    /// on this surface.
    pub fn is_match(&self, path: impl AsRef<[u8]>) -> bool {
        self.set.is_match(path)
    }
}

/// The parsed configuration. Build it with [`Config::parse`] or [`Config::default`]; the public
/// fields are for reading (changing `agent_branches` afterwards does not recompile its matcher).
#[derive(Debug, Clone)]
pub struct Config {
    pub base: Option<String>,
    pub status_file: String,
    pub agent_branches: Vec<String>,
    pub surfaces: Vec<Surface>,
    pub checks: Vec<CheckSpec>,
    pub sandbox: SandboxMode,
    /// `[sandbox] hide`: paths (absolute or `~/…`) no check may read, beside the built-in
    /// secret paths (SPEC §4.6).
    pub sandbox_hide: Vec<String>,
    /// Every returned state needs a task contract (SPEC §12 `contract-missing`).
    pub require_contract: bool,
    /// How many independent checks run at once (SPEC §19 `jobs`, default 1).
    pub jobs: usize,
    /// `allowed_signers`: the path, in the base tip's tree, of git's allowed-signers file (SPEC §20).
    pub allowed_signers: String,
    /// `require_signed_approvals = true`: only approvals signed by an allowed signer count.
    pub require_signed_approvals: bool,
    /// `server_checks = "run"`: the server gate runs the checks instead of requiring an
    /// attestation (SPEC §20; default `"attest"`).
    pub server_checks_run: bool,
    /// `escrow_days`: how long `closegate gc` keeps teardown escrows (SPEC §24, default 30).
    pub escrow_days: u32,
    agent_set: Globs,
    /// Paths on surface `ci` whatever `[protected]` says: [`ALWAYS_CI`] and the repository paths
    /// the checks' `run` strings name ([`Config::protect_always`]).
    always_ci: Globs,
    /// The paths the checks' commands name (the word as written, the check's name), in order.
    run_named: Vec<(String, String)>,
    /// [`wiring_names`]: additions that still need review under policy `modify`.
    wiring: Globs,
    folds_case: bool,
    /// Surfaces marked `[protected.integrity] <surface> = true`: run on the overlays of SPEC §23
    /// beside `tests` (and every surface whose policy is `integrity`).
    pub integrity: Vec<String>,
    /// `[protected.integrity] fail_to_pass = true`: run the reverse overlay (the new tests on the
    /// base's code) and hold a return none of whose new tests fails there (SPEC §27.1).
    pub fail_to_pass: bool,
    /// The top-level `flaky_retries` (SPEC §27.2): each check's default.
    pub flaky_retries: u32,
}

impl Default for Config {
    fn default() -> Config {
        let agent_branches = vec!["agent/*".to_string()];
        Config {
            base: None,
            status_file: DEFAULT_STATUS_FILE.to_string(),
            agent_set: Globs::new(&agent_branches).expect("built-in branch glob is valid"),
            agent_branches,
            surfaces: default_surfaces(),
            checks: Vec::new(),
            sandbox: SandboxMode::Auto,
            sandbox_hide: Vec::new(),
            require_contract: false,
            jobs: 1,
            allowed_signers: DEFAULT_ALLOWED_SIGNERS.to_string(),
            require_signed_approvals: false,
            server_checks_run: false,
            escrow_days: DEFAULT_ESCROW_DAYS,
            always_ci: Globs::paths(&ALWAYS_CI.map(String::from))
                .expect("built-in globs are valid"),
            wiring: Globs::paths(&wiring_names()).expect("built-in globs are valid"),
            run_named: Vec::new(),
            folds_case: false,
            integrity: Vec::new(),
            fail_to_pass: false,
            flaky_retries: DEFAULT_FLAKY_RETRIES,
        }
    }
}

impl Config {
    /// The protected policy in force (SPEC §26.1: records carry it): each surface whose
    /// `[protected.policy]` is not the default `all`, with its word.
    pub fn policies(&self) -> std::collections::BTreeMap<String, String> {
        self.surfaces
            .iter()
            .filter(|s| s.policy != SurfacePolicy::All)
            .map(|s| (s.name.clone(), s.policy.as_str().to_string()))
            .collect()
    }

    /// Parse `.closegate.toml` text; `origin` (e.g. `main:.closegate.toml`) starts every error.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        let table: Table = text
            .parse()
            .map_err(|e| anyhow!("{origin}: {}", toml_read::syntax_error(&e, text)))?;
        Config::from_table(table).map_err(|e| anyhow!("{origin}: {e:#}"))
    }

    /// Names of the surfaces a repo-relative path lies on. The configuration file itself, every
    /// `.gitattributes`, `.gitmodules` and the paths the checks run are always on `ci`, whatever
    /// the configuration says (SPEC §4.5).
    pub fn surfaces_for(&self, path: impl AsRef<[u8]>) -> Vec<String> {
        let path = path.as_ref();
        let mut names: Vec<String> = self
            .surfaces
            .iter()
            .filter(|s| s.is_match(path))
            .map(|s| s.name.clone())
            .collect();
        if self.always_ci.is_match(path) && !names.iter().any(|n| n == "ci") {
            names.push("ci".to_string());
        }
        names
    }

    /// Whether adding the new path `path` needs review: it lies on a surface whose policy is
    /// `all`, is always on `ci` (the configuration, `.gitattributes`, the paths the checks run),
    /// or is a file that changes how the tests already there run by its name ([`wiring_names`]).
    /// A path on no surface needs none.
    pub fn addition_needs_review(&self, path: impl AsRef<[u8]>) -> bool {
        let path = path.as_ref();
        let on: Vec<&Surface> = self.surfaces.iter().filter(|s| s.is_match(path)).collect();
        if self.always_ci.is_match(path) {
            return true;
        }
        if on.is_empty() {
            return false;
        }
        // Under policy `integrity` an addition waits for the overlays (`integrity_may_pass`).
        on.iter().any(|s| s.policy != SurfacePolicy::Modify) || self.wiring.is_match(path)
    }

    /// Why `path` is on `ci` when a check's command made it so (SPEC §4.5): the check and the
    /// word naming the path or a folder above it.
    pub fn why_ci(&self, path: &str) -> Option<String> {
        let (word, check) = self.run_named.iter().find(|(word, _)| {
            let under = path.strip_prefix(word.as_str());
            under.is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })?;
        Some(format!(
            "on `ci` because check `{check}`'s command names `{word}`: what a check runs is graded input"
        ))
    }

    /// Whether `path`'s name alone makes it runner wiring ([`wiring_names`], SPEC §26.4).
    pub fn is_wiring_name(&self, path: impl AsRef<[u8]>) -> bool {
        self.wiring.is_match(path)
    }

    /// Put repository paths (files, or folders: everything under them) on surface `ci` whatever
    /// `[protected]` says: the paths the checks' `run` strings name (SPEC §4.5).
    /// Each path comes with the name of the check whose command names it: [`Config::why_ci`].
    pub fn protect_always(&mut self, paths: &[(String, String)]) {
        let mut all: Vec<String> = self.always_ci.patterns().to_vec();
        // Literal paths: escape what globset would read as glob syntax; a folder covers
        // everything under it.
        for (path, check) in paths {
            let word = path.trim_end_matches('/');
            let path = globset::escape(word);
            self.run_named.push((word.to_string(), check.clone()));
            all.push(format!("{path}/**"));
            all.push(path);
        }
        let mut set = Globs::paths(&all).expect("escaped paths are valid globs");
        if self.folds_case {
            set.fold_case();
        }
        self.always_ci = set;
    }

    /// Put the test globs a runner is given on its command line (tape, ava, nyc: SPEC §26.4) on
    /// surface `tests`: a new test file they would run is a test. A word globset cannot read is
    /// taken as a literal path.
    pub fn add_test_globs(&mut self, globs: &[String]) {
        let Some(tests) = self.surfaces.iter_mut().find(|s| s.name == "tests") else {
            return;
        };
        for glob in globs {
            let glob = match Globs::paths(std::slice::from_ref(glob)) {
                Ok(_) => glob.clone(),
                Err(_) => globset::escape(glob),
            };
            if !tests.globs.contains(&glob) {
                tests.globs.push(glob);
            }
        }
        let mut set = Globs::paths(&tests.globs).expect("checked or escaped globs are valid");
        if self.folds_case {
            set.fold_case();
        }
        tests.set = set;
    }

    /// Match every path pattern ignoring ASCII case (`core.ignorecase = true`, SPEC §4.5).
    pub fn fold_case(&mut self) {
        self.folds_case = true;
        self.always_ci.fold_case();
        self.wiring.fold_case();
        for surface in &mut self.surfaces {
            surface.set.fold_case();
        }
    }

    /// Whether a branch (the short name after `refs/heads/`) is an agent branch.
    pub fn is_agent_branch(&self, short_name: &str) -> bool {
        self.agent_set.is_match(short_name)
    }

    fn from_table(table: Table) -> Result<Config> {
        let mut config = Config::default();
        // The checks are read last: their `flaky_retries` defaults to the top-level one.
        let mut checks_value = None;
        for (key, value) in table {
            match key.as_str() {
                "base" => config.base = Some(non_empty_string(&value, "base")?),
                "status_file" => config.status_file = status_file(&value)?,
                "agent_branches" => config.set_agent_branches(&value)?,
                "protected" => config.set_protected(&value)?,
                "checks" => checks_value = Some(value),
                "sandbox" if value.is_table() => config.set_sandbox(&value)?,
                "sandbox" => config.sandbox = sandbox_mode(&value, "sandbox")?,
                "require_contract" => {
                    config.require_contract = value
                        .as_bool()
                        .ok_or_else(|| wrong_type("require_contract", "a boolean", &value))?;
                }
                "jobs" => config.jobs = jobs(&value)?,
                "allowed_signers" => {
                    config.allowed_signers = repo_path(&value, "allowed_signers")?;
                }
                "require_signed_approvals" => {
                    config.require_signed_approvals = value.as_bool().ok_or_else(|| {
                        wrong_type("require_signed_approvals", "a boolean", &value)
                    })?;
                }
                "server_checks" => config.server_checks_run = server_checks(&value)?,
                "escrow_days" => config.escrow_days = escrow_days(&value)?,
                "flaky_retries" => config.flaky_retries = flaky_retries(&value, "flaky_retries")?,
                _ => bail!("unknown key `{key}` (expected one of {TOP_KEYS})"),
            }
        }
        if let Some(value) = checks_value {
            config.checks = checks(&value, config.flaky_retries)?;
        }
        Ok(config)
    }

    /// `[sandbox]`: `mode` (what `sandbox = "…"` says) and `hide`, the paths no check may read.
    fn set_sandbox(&mut self, value: &Value) -> Result<()> {
        let table = value.as_table().expect("checked by the caller");
        for (key, value) in table {
            let path = format!("sandbox.{key}");
            match key.as_str() {
                "mode" => self.sandbox = sandbox_mode(value, &path)?,
                "hide" => self.sandbox_hide = writable_paths(value, &path)?,
                _ => bail!("unknown key `{path}` (expected one of {SANDBOX_KEYS})"),
            }
        }
        Ok(())
    }

    fn set_agent_branches(&mut self, value: &Value) -> Result<()> {
        let globs = toml_read::strings(value, "agent_branches").map_err(anyhow::Error::msg)?;
        self.agent_set = Globs::new(&globs)
            .map_err(anyhow::Error::msg)
            .context("`agent_branches`")?;
        self.agent_branches = globs;
        Ok(())
    }

    /// `[protected]`: a listed default surface is replaced, a new name adds a surface.
    fn set_protected(&mut self, value: &Value) -> Result<()> {
        let table = value
            .as_table()
            .ok_or_else(|| wrong_type("protected", "a table of surface = [globs]", value))?;
        // Surface names to positions: a configuration may name tens of thousands of surfaces,
        // and a search per name would make reading it quadratic (SPEC §11).
        let mut index: std::collections::HashMap<String, usize> = (self.surfaces.iter())
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let mut policy = None;
        let mut integrity = None;
        for (name, globs) in table {
            // `policy` and `integrity` are reserved names (SPEC §4.5): tables, never surfaces.
            if name == "policy" {
                policy = Some(globs);
                continue;
            }
            // `[protected.integrity]`: a reserved name (SPEC §4.5, §23); a table or an error.
            if name == "integrity" {
                integrity = Some(globs);
                continue;
            }
            if name.trim().is_empty() {
                bail!("`protected` has a surface with an empty name");
            }
            let key = format!("protected.{name}");
            let globs = self.surface_globs(globs, &key, index.get(name).copied())?;
            let set = Globs::paths(&globs)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("`{key}`"))?;
            let surface = Surface {
                name: name.clone(),
                globs,
                policy: SurfacePolicy::All,
                set,
            };
            match index.get(name) {
                Some(&i) => self.surfaces[i] = surface,
                None => {
                    index.insert(name.clone(), self.surfaces.len());
                    self.surfaces.push(surface);
                }
            }
        }
        if let Some(integrity) = integrity {
            self.set_integrity(integrity, &index)?;
        }
        match policy {
            Some(policy) if policy.is_table() => self.set_policies(policy, &index),
            Some(policy) => Err(wrong_type(
                "protected.policy",
                "a table of surface = \"all\" | \"modify\" | \"integrity\"",
                policy,
            )),
            None => Ok(()),
        }
    }

    /// `[protected.integrity]`: `<surface> = true | false`, each naming a known surface, and
    /// `fail_to_pass = true | false` (SPEC §27.1).
    fn set_integrity(
        &mut self,
        value: &Value,
        index: &std::collections::HashMap<String, usize>,
    ) -> Result<()> {
        let table = value.as_table().ok_or_else(|| {
            wrong_type(
                "protected.integrity",
                "a table of surface = true | false",
                value,
            )
        })?;
        for (name, on) in table {
            let key = format!("protected.integrity.{name}");
            if name == INTEGRITY_KEYS {
                self.fail_to_pass = on
                    .as_bool()
                    .ok_or_else(|| wrong_type(&key, "true or false", on))?;
                continue;
            }
            if !index.contains_key(name) {
                bail!("unknown key `{key}`: no protected surface `{name}`");
            }
            let on = on
                .as_bool()
                .ok_or_else(|| wrong_type(&key, "true or false", on))?;
            if on && name == "ci" {
                bail!("`{key}`: surface `ci` decides how the checks run; it cannot be overlaid");
            }
            if on && !self.integrity.contains(name) {
                self.integrity.push(name.clone());
            }
        }
        Ok(())
    }

    /// The surfaces whose paths the overlays of SPEC §23 put back: `tests`, the surfaces marked
    /// in `[protected.integrity]` and every surface under policy `integrity`.
    pub fn integrity_surfaces(&self) -> Vec<&Surface> {
        (self.surfaces.iter())
            .filter(|s| {
                s.name == "tests"
                    || s.policy == SurfacePolicy::Integrity
                    || self.integrity.contains(&s.name)
            })
            .collect()
    }

    /// Whether a changed path may go through without a human under policy `integrity` once the
    /// overlays vouch for the change and the change is one the policy lets through (SPEC §26.4:
    /// an added test file that is not runner wiring, or lines only added): every surface the
    /// path is on has policy `integrity` and it is not always on `ci`.
    pub fn integrity_may_pass(&self, path: impl AsRef<[u8]>) -> bool {
        let path = path.as_ref();
        let on: Vec<&Surface> = self.surfaces.iter().filter(|s| s.is_match(path)).collect();
        let all_integrity = on.iter().all(|s| s.policy == SurfacePolicy::Integrity);
        !on.is_empty() && all_integrity && !self.always_ci.is_match(path)
    }

    /// The policy of the surface named `name`, when there is one.
    pub fn policy_of(&self, name: &str) -> Option<SurfacePolicy> {
        self.surfaces
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.policy)
    }

    /// A surface's globs: a list replaces the surface, `{ extend = [globs] }` adds to the surface
    /// at position `at` (when there is one).
    fn surface_globs(&self, value: &Value, key: &str, at: Option<usize>) -> Result<Vec<String>> {
        Ok(match extended(value, key)? {
            Some(more) => {
                let mut all = at.map_or_else(Vec::new, |i| self.surfaces[i].globs.clone());
                all.extend(more);
                all
            }
            None => toml_read::strings(value, key).map_err(anyhow::Error::msg)?,
        })
    }

    /// `[protected.policy]`: `<surface> = "all" | "modify"`, each naming a known surface.
    fn set_policies(
        &mut self,
        value: &Value,
        index: &std::collections::HashMap<String, usize>,
    ) -> Result<()> {
        let table = value.as_table().expect("checked by the caller");
        for (name, word) in table {
            let key = format!("protected.policy.{name}");
            let Some(&i) = index.get(name) else {
                bail!("unknown key `{key}`: no protected surface `{name}`");
            };
            let word = word
                .as_str()
                .ok_or_else(|| wrong_type(&key, "a string", word))?;
            self.surfaces[i].policy = match word {
                "all" => SurfacePolicy::All,
                // A new workflow, hook or contract changes what grades every branch.
                "modify" if name == "ci" => bail!(
                    "`{key}`: surface `ci` grades every branch; every change to it needs review"
                ),
                "modify" => SurfacePolicy::Modify,
                "integrity" if name == "ci" => bail!(
                    "`{key}`: surface `ci` grades every branch; every change to it needs review"
                ),
                "integrity" => SurfacePolicy::Integrity,
                other => bail!("`{key}` must be one of {POLICY_VALUES}, found `{other}`"),
            };
        }
        Ok(())
    }
}

/// `protected.NAME = { extend = [globs] }`: the globs to add, or `None` when the value is not a
/// table (a plain list replaces the surface). A table with any other key is an error.
fn extended(value: &Value, key: &str) -> Result<Option<Vec<String>>> {
    let Some(table) = value.as_table() else {
        return Ok(None);
    };
    if let Some(other) = table.keys().find(|k| *k != "extend") {
        bail!(
            "unknown key `{key}.{other}` (a surface is a list of globs or {{ extend = [globs] }})"
        );
    }
    let more = table.get("extend").ok_or_else(|| {
        anyhow!(
            "`{key}`: missing key `extend` (a surface is a list of globs or {{ extend = [globs] }})"
        )
    })?;
    let globs = toml_read::strings(more, &format!("{key}.extend")).map_err(anyhow::Error::msg)?;
    Ok(Some(globs))
}

/// The built-in surfaces of SPEC §4.5.
fn default_surfaces() -> Vec<Surface> {
    DEFAULT_SURFACES
        .iter()
        .map(|(name, globs)| {
            let globs = globs.iter().map(|g| g.to_string()).collect();
            Surface::new(*name, globs).expect("built-in surface globs are valid")
        })
        .collect()
}

/// `[[checks]]`: an array of tables with unique non-empty names; `flaky_retries` is the
/// top-level default (`retries`) of their own `flaky_retries`.
fn checks(value: &Value, retries: u32) -> Result<Vec<CheckSpec>> {
    let items = value
        .as_array()
        .ok_or_else(|| wrong_type("checks", "an array of tables ([[checks]])", value))?;
    let mut specs: Vec<CheckSpec> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut spec = check(item, &format!("checks[{i}]"))?;
        spec.flaky_retries = match item.get("flaky_retries") {
            Some(value) => flaky_retries(value, &format!("checks[{i}].flaky_retries"))?,
            None => retries,
        };
        if specs.iter().any(|s| s.name == spec.name) {
            bail!("`checks[{i}].name`: duplicate check name `{}`", spec.name);
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// One `[[checks]]` table.
fn check(value: &Value, at: &str) -> Result<CheckSpec> {
    let table = value
        .as_table()
        .ok_or_else(|| wrong_type(at, "a table", value))?;
    let (mut name, mut run, mut timeout_s) = (None, None, DEFAULT_TIMEOUT_S);
    let mut prepare = None;
    let (mut writable, mut network, mut keep) = (Vec::new(), true, Vec::new());
    let mut env = Vec::new();
    let mut reuse_commit = false;
    let mut census = None;
    for (key, value) in table {
        let path = format!("{at}.{key}");
        match key.as_str() {
            "name" => name = Some(non_empty_string(value, &path)?),
            "run" => run = Some(non_empty_string(value, &path)?),
            "prepare" => prepare = Some(non_empty_string(value, &path)?),
            "timeout_s" => timeout_s = timeout(value, &path)?,
            "writable" => writable = writable_paths(value, &path)?,
            "keep" => keep = keep_paths(value, &path)?,
            "env" => env = env_names(value, &path)?,
            "reuse" => reuse_commit = reuse_mode(value, &path)?,
            "census" => census = Some(census_mode(value, &path)?),
            // Read by `checks`, which knows the top-level default.
            "flaky_retries" => {}
            "network" => {
                network = value
                    .as_bool()
                    .ok_or_else(|| wrong_type(&path, "true or false", value))?
            }
            _ => bail!("unknown key `{path}` (expected one of {CHECK_KEYS})"),
        }
    }
    let name = name.ok_or_else(|| anyhow!("`{at}`: missing key `name`"))?;
    let run = run.ok_or_else(|| anyhow!("`{at}`: missing key `run`"))?;
    let census = census.unwrap_or_else(|| crate::runners::census::Mode::infer(&run));
    Ok(CheckSpec {
        name,
        run,
        prepare,
        timeout_s,
        writable,
        network,
        keep,
        env,
        reuse_commit,
        census,
        flaky_retries: DEFAULT_FLAKY_RETRIES,
    })
}

/// `checks[i].census`: `"auto"`, `"off"`, a runner's name or a list of runners' names.
fn census_mode(value: &Value, key: &str) -> Result<crate::runners::census::Mode> {
    use crate::runners::{Runner, census::Mode};
    let names: Vec<String> = match value {
        Value::String(s) => vec![s.clone()],
        _ => toml_read::strings(value, key).map_err(anyhow::Error::msg)?,
    };
    match names.as_slice() {
        [one] if one == "auto" => return Ok(Mode::Auto),
        [one] if one == "off" => return Ok(Mode::Off),
        _ => {}
    }
    let mut runners = Vec::new();
    for name in &names {
        let Some(runner) = Runner::parse(name).filter(|r| r.has_census()) else {
            let known: Vec<&str> = Runner::with_census().map(|r| r.name()).collect();
            bail!(
                "`{key}`: `{name}` is not a runner closegate reads (expected \"auto\", \"off\" or \
                 runners among {})",
                known.join(", ")
            );
        };
        if !runners.contains(&runner) {
            runners.push(runner);
        }
    }
    if runners.is_empty() {
        bail!("`{key}`: an empty list names no runner (use \"off\" for no census)");
    }
    runners.sort();
    Ok(Mode::Named(runners))
}

/// `checks[i].env`: names of environment variables (no `=`, no NUL, not empty).
fn env_names(value: &Value, key: &str) -> Result<Vec<String>> {
    let names = toml_read::strings(value, key).map_err(anyhow::Error::msg)?;
    for name in &names {
        if name.is_empty() || name.contains(['=', '\0']) {
            bail!("`{key}`: `{name}` is not an environment variable name");
        }
    }
    Ok(names)
}

/// `checks[i].reuse`: `"tree"` (the default: the result is keyed by the commit's tree) or
/// `"commit"` (the commit id joins the key, for a check that reads history); whether `commit`.
fn reuse_mode(value: &Value, key: &str) -> Result<bool> {
    match value.as_str() {
        Some("commit") => Ok(true),
        Some("tree") => Ok(false),
        _ => Err(wrong_type(key, "\"commit\" or \"tree\"", value)),
    }
}

/// `checks[i].keep`: relative paths inside the checkout, without `.`, `..` or `.git` parts;
/// stored without a trailing `/`.
fn keep_paths(value: &Value, key: &str) -> Result<Vec<String>> {
    let paths = toml_read::strings(value, key).map_err(anyhow::Error::msg)?;
    let mut kept = Vec::with_capacity(paths.len());
    for path in paths {
        let trimmed = path.trim_end_matches('/');
        let bad = trimmed.is_empty()
            || trimmed.starts_with('/')
            || trimmed.contains('\0')
            || trimmed
                .split('/')
                .any(|part| matches!(part, "" | "." | ".." | ".git"));
        if bad {
            bail!(
                "`{key}`: `{path}` must be a relative path inside the checkout (no `.`, `..` or `.git` parts)"
            );
        }
        kept.push(trimmed.to_string());
    }
    Ok(kept)
}

/// `checks[i].writable`: absolute paths, or `~` / `~/…` (expanded when the check runs).
fn writable_paths(value: &Value, key: &str) -> Result<Vec<String>> {
    let paths = toml_read::strings(value, key).map_err(anyhow::Error::msg)?;
    for path in &paths {
        let home = path == "~" || path.starts_with("~/");
        if !(home || path.starts_with('/')) || path.contains('\0') {
            bail!("`{key}`: `{path}` must be an absolute path or start with `~/`");
        }
    }
    Ok(paths)
}

/// `jobs`: an integer from 1 to [`MAX_JOBS`].
/// `escrow_days`: a whole number of days, 0 to 36,500 (0: `gc` drops every escrow).
fn escrow_days(value: &Value) -> Result<u32> {
    let n = value
        .as_integer()
        .ok_or_else(|| wrong_type("escrow_days", "an integer", value))?;
    match u32::try_from(n) {
        Ok(n @ 0..=36_500) => Ok(n),
        _ => bail!("`escrow_days` must be from 0 to 36500, found {n}"),
    }
}

/// `flaky_retries` (top-level or a check's, named `key`): an integer from 0 (no reruns) to
/// [`MAX_FLAKY_RETRIES`].
fn flaky_retries(value: &Value, key: &str) -> Result<u32> {
    let n = value
        .as_integer()
        .ok_or_else(|| wrong_type(key, "an integer", value))?;
    match u32::try_from(n) {
        Ok(n) if n <= MAX_FLAKY_RETRIES => Ok(n),
        _ => bail!("`{key}` must be from 0 to {MAX_FLAKY_RETRIES}, found {n}"),
    }
}

fn jobs(value: &Value) -> Result<usize> {
    let n = value
        .as_integer()
        .ok_or_else(|| wrong_type("jobs", "an integer", value))?;
    match u64::try_from(n) {
        Ok(n @ 1..=MAX_JOBS) => Ok(n as usize),
        _ => bail!("`jobs` must be from 1 to {MAX_JOBS}, found {n}"),
    }
}

/// `sandbox` (or `sandbox.mode`, named `key`): one of `auto`, `required`, `off`.
fn sandbox_mode(value: &Value, key: &str) -> Result<SandboxMode> {
    let word = value
        .as_str()
        .ok_or_else(|| wrong_type(key, "a string or a [sandbox] table", value))?;
    match word {
        "auto" => Ok(SandboxMode::Auto),
        "required" => Ok(SandboxMode::Required),
        "off" => Ok(SandboxMode::Off),
        other => bail!("`{key}` must be \"auto\", \"required\" or \"off\", found `{other}`"),
    }
}

fn timeout(value: &Value, key: &str) -> Result<u64> {
    let n = value
        .as_integer()
        .ok_or_else(|| wrong_type(key, "an integer number of seconds", value))?;
    if n < 1 {
        bail!("`{key}` must be at least 1 second, found {n}");
    }
    Ok(n as u64)
}

/// `server_checks`: `"attest"` (the default: an attestation stands for the checks) or `"run"`.
fn server_checks(value: &Value) -> Result<bool> {
    let word = value
        .as_str()
        .ok_or_else(|| wrong_type("server_checks", "a string", value))?;
    match word {
        "attest" => Ok(false),
        "run" => Ok(true),
        other => bail!("`server_checks` must be \"attest\" or \"run\", found `{other}`"),
    }
}

/// `status_file`: a non-empty relative path with no `.`/`..` component.
fn status_file(value: &Value) -> Result<String> {
    repo_path(value, "status_file")
}

/// A non-empty path inside the repository, relative, with no `.`/`..` component.
fn repo_path(value: &Value, key: &str) -> Result<String> {
    let path = non_empty_string(value, key)?;
    let bad = path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        bail!("`{key}` must be a relative path without `.` or `..` components, found `{path}`");
    }
    Ok(path)
}

fn non_empty_string(value: &Value, key: &str) -> Result<String> {
    let text = value
        .as_str()
        .ok_or_else(|| wrong_type(key, "a string", value))?;
    if text.trim().is_empty() {
        bail!("`{key}` must not be empty");
    }
    Ok(text.to_string())
}

/// The shared wrong-type message as an error.
fn wrong_type(key: &str, expected: &str, found: &Value) -> anyhow::Error {
    anyhow!(toml_read::wrong_type(key, expected, found))
}
