//! The real clients the stop hook is tested against (issue 38), and the one scene their tests
//! share: Claude Code and Codex at pinned versions, installed from npm by
//! `scripts/install-clients.sh` into a cache (`$CLOSEGATE_CLIENTS`, else
//! `$XDG_CACHE_HOME/closegate-ci/clients`, else `~/.cache/closegate-ci/clients`), each pointed at
//! the scripted model server (`tests/clients/model_server.py`, 127.0.0.1 only, bounded) that
//! replays a fixed conversation, so the client runs real tools and fires its real Stop and
//! SubagentStop hooks, which run the test build of closegate.
//!
//! A client that is not installed is skipped with one line, `skipped <test>: <why>`, written past
//! the test harness's capture (as `fixture::require` writes it); with `CLOSEGATE_REQUIRE_CLIENTS=1`
//! or `CLOSEGATE_TESTS_REQUIRE_ALL=1` (as `.ci/run` sets them) a missing client fails the test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixture::{git, hermetic, parts};
use crate::scene::Scene;

/// The Claude Code version tested.
pub const CLAUDE_CODE: &str = "2.1.332";
/// The Codex versions tested.
pub const CODEX: [&str; 2] = ["0.169.0", "0.171.0"];
/// The Gemini CLI version tested.
pub const GEMINI: &str = "0.61.0";

/// The longest one client run may take before the test kills it and fails.
const RUN_LIMIT: Duration = Duration::from_secs(150);

/// Which client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Kind {
    fn package(self) -> &'static str {
        match self {
            Kind::ClaudeCode => "claude-code",
            Kind::Codex => "codex",
            Kind::Gemini => "gemini-cli",
        }
    }

    fn bin(self) -> &'static str {
        match self {
            Kind::ClaudeCode => "claude",
            Kind::Codex => "codex",
            Kind::Gemini => "gemini",
        }
    }

    /// closegate's `--target` for it.
    pub fn target(self) -> &'static str {
        match self {
            Kind::ClaudeCode => "claude-code",
            Kind::Codex => "codex",
            Kind::Gemini => "gemini",
        }
    }

    /// The settings file `agent install --scope project` writes, relative to the main checkout.
    pub fn settings(self) -> &'static str {
        match self {
            Kind::ClaudeCode => ".claude/settings.json",
            Kind::Codex => ".codex/hooks.json",
            Kind::Gemini => ".gemini/settings.json",
        }
    }
}

/// One installed client.
#[derive(Debug, Clone)]
pub struct Client {
    pub kind: Kind,
    pub version: &'static str,
    pub bin: PathBuf,
}

/// Where `scripts/install-clients.sh` installs the clients.
pub fn clients_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CLOSEGATE_CLIENTS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("closegate-ci/clients")
}

/// The client at `version`, or `None` (after the `skipped` line) when it is not installed; a
/// failure instead under `CLOSEGATE_REQUIRE_CLIENTS=1` or `CLOSEGATE_TESTS_REQUIRE_ALL=1`.
pub fn require(kind: Kind, version: &'static str) -> Option<Client> {
    let dir = clients_dir().join(format!("{}-{version}", kind.package()));
    let bin = dir.join("node_modules/.bin").join(kind.bin());
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = match (bin.exists(), python) {
        (true, true) => return Some(Client { kind, version, bin }),
        (false, _) => format!(
            "{} {version} is not installed in {} (scripts/install-clients.sh)",
            kind.package(),
            dir.display()
        ),
        (true, false) => "python3 (the scripted model server) is not installed".to_string(),
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    for switch in ["CLOSEGATE_REQUIRE_CLIENTS", crate::fixture::REQUIRE_ALL] {
        if std::env::var(switch).is_ok_and(|v| v == "1") {
            panic!("{test}: {missing}, and {switch}=1 forbids skipping it");
        }
    }
    // Written past the test harness's capture (`eprintln!` is swallowed), as `fixture::require`
    // does: the skip shows in `cargo test` output and `.ci/run` fails on it.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped {test}: {missing}");
    None
}

/// The scripted model server, killed when dropped.
pub struct ModelServer {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl ModelServer {
    /// Start the server on `script` (`{"threads": {marker: [steps]}}`), its files in `dir`.
    pub fn start(dir: &Path, script: &Value) -> ModelServer {
        std::fs::create_dir_all(dir).unwrap();
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, script.to_string()).unwrap();
        let (log, port_file) = (dir.join("requests.jsonl"), dir.join("port"));
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/model_server.py");
        let child = Command::new("python3")
            .arg(server)
            .arg("--script")
            .arg(&script_path)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .args(["--max-seconds", "240", "--max-requests", "300"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the model server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        ModelServer { child, port, log }
    }

    /// Every request the server answered, in order.
    pub fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r.get("n").is_some())
            .collect()
    }

    /// The requests of one thread (`scene:main`, `scene:sub`), side requests left out.
    pub fn thread(&self, marker: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["thread"] == marker && r["side"] != true)
            .collect()
    }

    /// The input the thread's request at `step` carried (what came after the assistant's last
    /// turn: a tool's output, or a hook's reason fed back); the test fails when there is none.
    pub fn input(&self, marker: &str, step: u64) -> String {
        let found = self.thread(marker).into_iter().find(|r| r["step"] == step);
        let found = found.unwrap_or_else(|| {
            panic!(
                "no request of {marker} at step {step}: {:#?}",
                self.requests()
            )
        });
        found["input"].as_str().unwrap_or_default().to_string()
    }

    /// The steps the thread asked for, in order; a step asked again at once (a client's retry of
    /// the same request) is counted once.
    pub fn steps(&self, marker: &str) -> Vec<u64> {
        let mut steps: Vec<u64> = (self.thread(marker).iter())
            .map(|r| r["step"].as_u64().unwrap())
            .collect();
        steps.dedup();
        steps
    }

    /// Whether any request went past the end of its thread's script.
    pub fn overran(&self) -> bool {
        self.requests().iter().any(|r| r["overrun"] == true)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One step of a scripted conversation.
pub fn say(text: &str) -> Value {
    json!({"say": text})
}

pub fn run(command: &str) -> Value {
    json!({"run": command})
}

/// The agent's false claim: nothing is committed or closed.
pub const FALSE_DONE: &str = "VERIFIED: everything is done\n\n@signal done";
/// The agent's true claim, once `closegate check` said VERIFIED.
pub const REAL_DONE: &str = "VERIFIED: x added, closegate check passed\n\n@signal done";
pub const QUESTION: &str = "Should the parser also accept tabs? I can do either.";
/// The agent's honest work: add `src/lib.rs`, commit, `closegate close`, `closegate check`.
pub const WORK: &str = "mkdir -p src && printf 'pub fn x() {}\\n' > src/lib.rs && git add src/lib.rs \
     && git commit -qm 'add x' && closegate close --abstract 'adds x, proven by the smoke check' \
     --artifact src/lib.rs && closegate check";

/// A check that passes while `src/lib.rs` exists.
pub const PASSING_CONFIG: &str =
    "[[checks]]\nname = \"smoke\"\nrun = \"test -f \\\"$PWD/src/lib.rs\\\"\"\ntimeout_s = 60\n";

/// A repository with closegate configured and the client's stop hook installed and committed on
/// `main` (as a user does), and the agent's worktree `wt/x` on `agent/x` made from it; the
/// client's home, Codex's home and a `closegate` on the PATH it gives tools and hooks.
pub struct Agent {
    pub s: Scene,
    pub client: Client,
    pub server: ModelServer,
    /// `HOME` of the client (Claude Code keeps its transcripts there).
    pub home: PathBuf,
    /// `CODEX_HOME`.
    pub codex_home: PathBuf,
    bin: PathBuf,
}

/// How a client run ended.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Agent {
    /// The scene for `client` talking to a server replaying `script`, the configuration
    /// `config` committed on `main`, the hook installed with `install` (extra `agent install`
    /// flags; `None`: not installed) and committed.
    pub fn new(client: &Client, script: &Value, config: &str, install: Option<&[&str]>) -> Agent {
        let s = Scene::new().configured(Some(config));
        let tmp = s.fx.tmp.path().to_path_buf();
        let server = ModelServer::start(&tmp.join("server"), script);
        let (home, codex_home, bin) = (tmp.join("home"), tmp.join("codex-home"), tmp.join("bin"));
        for dir in [&home, &codex_home, &bin] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_closegate"), bin.join("closegate")).unwrap();
        // Codex runs tools in a login shell, whose profile resets the PATH: the user's profile
        // puts closegate on it, as an install in ~/.cargo/bin or ~/.local/bin does.
        let profile = format!("export PATH=\"{}:$PATH\"\n", bin.display());
        for name in [".profile", ".bash_profile"] {
            std::fs::write(home.join(name), &profile).unwrap();
        }
        let agent = Agent {
            s,
            client: client.clone(),
            server,
            home,
            codex_home,
            bin,
        };
        agent.write_codex_config();
        if let Some(flags) = install {
            agent.install(&agent.s.root(), flags);
            agent.commit_on_main(&[client.kind.settings()], "the stop hook");
        }
        git(&agent.s.root(), &["branch", "agent/x", "main"]);
        let mut agent = agent;
        agent.s.wt = agent.s.fx.worktree("x", "agent/x");
        agent.write_gemini_settings();
        agent
    }

    /// Gemini CLI's user settings: its API key as the way in (the key and the server's address
    /// come from the environment), and the worktree trusted (it runs no hook in a folder it
    /// does not trust).
    fn write_gemini_settings(&self) {
        let dir = self.home.join(".gemini");
        std::fs::create_dir_all(&dir).unwrap();
        let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
        std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
        let trusted = json!({ self.s.wt.to_str().unwrap(): "TRUST_FOLDER" });
        std::fs::write(dir.join("trustedFolders.json"), trusted.to_string()).unwrap();
    }

    /// Codex's configuration: the scripted server as its model provider.
    fn write_codex_config(&self) {
        let text = format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\n\
             name = \"scripted\"\nbase_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\n\
             env_key = \"SCRIPTED_API_KEY\"\n",
            self.server.port
        );
        std::fs::write(self.codex_home.join("config.toml"), text).unwrap();
    }

    /// The environment every command of the scene runs with: hermetic, the client's home, Codex's
    /// home, and `closegate` (the test build) first on the PATH.
    fn env(&self, cmd: &mut Command, cwd: &Path) {
        cmd.current_dir(cwd);
        hermetic(cmd, &self.home);
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", self.bin.display()))
            .env("CODEX_HOME", &self.codex_home);
    }

    /// `closegate ARGS` in `cwd`.
    pub fn closegate(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args);
        self.env(&mut cmd, cwd);
        parts(&cmd.output().unwrap())
    }

    /// `closegate agent install --target <client> FLAGS` in `cwd`.
    pub fn install(&self, cwd: &Path, flags: &[&str]) -> String {
        let mut args = vec!["agent", "install", "--target", self.client.kind.target()];
        args.extend_from_slice(flags);
        let (code, out, err) = self.closegate(cwd, &args);
        assert_eq!(code, 0, "{out}{err}");
        out
    }

    /// The client's own binary with `args` in `cwd` (`codex plugin add …`), in the scene's
    /// environment.
    pub fn codex(&self, cwd: &Path, args: &[String]) -> (i32, String, String) {
        let mut cmd = Command::new(&self.client.bin);
        cmd.args(args);
        self.env(&mut cmd, cwd);
        parts(&cmd.output().unwrap())
    }

    /// Commit `paths` of the main checkout on `main`.
    pub fn commit_on_main(&self, paths: &[&str], msg: &str) {
        let root = self.s.root();
        let mut add = vec!["add", "-f", "--"];
        add.extend_from_slice(paths);
        git(&root, &add);
        git(&root, &["commit", "-qm", msg]);
    }

    /// Run the client in `cwd` on the prompt `scene:main`, bounded by [`RUN_LIMIT`].
    pub fn run_in(&self, cwd: &Path) -> Ran {
        let mut cmd = Command::new(&self.client.bin);
        self.env(&mut cmd, cwd);
        let prompt = "scene:main — do the task";
        let base = format!("http://127.0.0.1:{}", self.server.port);
        match self.client.kind {
            Kind::ClaudeCode => {
                // Unattended, as a coordinator runs it: every tool allowed. As root, Claude Code
                // allows that only in a sandbox it is told about (IS_SANDBOX).
                cmd.args(["-p", prompt, "--permission-mode", "bypassPermissions"])
                    .args(["--output-format", "json"])
                    .env("ANTHROPIC_BASE_URL", base)
                    .env("ANTHROPIC_API_KEY", "scripted")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("IS_SANDBOX", "1");
            }
            Kind::Codex => {
                cmd.args([
                    "exec",
                    "-s",
                    "danger-full-access",
                    "--skip-git-repo-check",
                    prompt,
                ])
                .env("SCRIPTED_API_KEY", "scripted");
            }
            Kind::Gemini => {
                // Headless, every tool allowed; Google's API at the scripted server.
                cmd.args(["-p", prompt, "--yolo", "-m", "scripted"])
                    .args(["--output-format", "json"])
                    .env("GEMINI_API_KEY", "scripted")
                    .env("GOOGLE_GEMINI_BASE_URL", base);
            }
        }
        bounded(cmd)
    }

    /// Run the client in the agent's worktree.
    pub fn run(&self) -> Ran {
        self.run_in(&self.s.wt)
    }

    /// The audit log's records.
    pub fn audit(&self) -> Vec<Value> {
        self.s.audit()
    }
}

/// Run `cmd` (stdin closed) to its end, killed and failed after [`RUN_LIMIT`].
fn bounded(mut cmd: Command) -> Ran {
    let started = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    let (code, stdout, stderr) = parts(&output);
    Ran {
        code,
        stdout,
        stderr,
        elapsed: started.elapsed(),
    }
}

/// A `codex app-server` the test speaks to as Codex's own hooks review does (JSON-RPC over
/// stdio, one object a line): `hooks/list`, then `config/batchWrite` of `hooks.state`.
pub struct CodexApp {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    next: u64,
}

impl CodexApp {
    /// Start the agent's Codex app-server and initialize it.
    pub fn start(a: &Agent) -> CodexApp {
        let mut cmd = Command::new(&a.client.bin);
        a.env(&mut cmd, &a.s.wt);
        cmd.arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok)
            {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut app = CodexApp {
            child,
            lines,
            next: 1,
        };
        app.request(
            "initialize",
            json!({"clientInfo": {"name": "t", "version": "0"}}),
        );
        app.send(&json!({"method": "initialized"}));
        app
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        std::io::Write::write_all(stdin, format!("{message}\n").as_bytes()).unwrap();
    }

    /// One request's result, awaited for at most 30 s.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"id": id, "method": method, "params": params}));
        loop {
            let line = (self.lines.recv_timeout(Duration::from_secs(30)))
                .unwrap_or_else(|e| panic!("codex app-server, {method}: {e}"));
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Every hook Codex would load for a session in `cwd`.
    pub fn hooks(&mut self, cwd: &Path) -> Vec<Value> {
        let listed = self.request("hooks/list", json!({"cwds": [cwd]}));
        (listed["data"].as_array().unwrap().iter())
            .flat_map(|e| e["hooks"].as_array().unwrap().clone())
            .collect()
    }

    /// Trust every hook `keep` picks among those listed for `cwd`, as listed (its current hash).
    pub fn trust(&mut self, cwd: &Path, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        let picked: Vec<Value> = self.hooks(cwd).into_iter().filter(|h| keep(h)).collect();
        let state: serde_json::Map<String, Value> = (picked.iter())
            .map(|h| {
                let key = h["key"].as_str().unwrap().to_string();
                (key, json!({"trusted_hash": h["currentHash"]}))
            })
            .collect();
        let edit = json!({"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state});
        self.request("config/batchWrite", json!({"edits": [edit]}));
        picked
    }
}

impl Drop for CodexApp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
