//! Codex's trust from Codex itself (SPEC §27.3): `codex app-server`, spoken over stdio
//! (JSON-RPC 2.0 without the `jsonrpc` header, one JSON object per line, as its generated schema
//! describes it: `codex app-server generate-json-schema`). `hooks/list` says, for a working
//! folder, every hook Codex would load with its trust key, `currentHash` and `trustStatus`
//! (`trusted`, `untrusted`, `modified`, `managed`); `config/batchWrite` writes
//! `hooks.state.<key>.trusted_hash` into the user's `config.toml` as Codex itself writes it.
//! Measured with Codex 0.169.0 and 0.171.0.
//!
//! The server is a child of this process, killed when the session ends, and every answer is
//! awaited for at most [`ANSWER_LIMIT`]: a Codex that hangs makes this an error, never a wait.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The longest closegate waits for one answer of the app-server.
const ANSWER_LIMIT: Duration = Duration::from_secs(20);

/// The `codex` binary on the PATH, when there is one.
pub fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("codex"))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// One hook as Codex lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its trust key (`<file>:<event>:<group>:<handler>`).
    pub key: String,
    pub command: String,
    pub source_path: PathBuf,
    pub current_hash: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub trust_status: String,
}

/// A running `codex app-server`, initialized.
pub struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    /// `codex app-server` and the version its `initialize` answer names, for messages.
    pub name: String,
}

impl Session {
    /// Start `bin app-server` and initialize it.
    pub fn start(bin: &Path) -> Result<Session> {
        let mut child = Command::new(bin)
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start `{} app-server`", bin.display()))?;
        let stdin = child.stdin.take().context("the app-server has no stdin")?;
        let stdout = child
            .stdout
            .take()
            .context("the app-server has no stdout")?;
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            child,
            stdin,
            lines,
            next_id: 1,
            name: format!("{} app-server", bin.display()),
        };
        let info =
            json!({"clientInfo": {"name": "closegate", "version": env!("CARGO_PKG_VERSION")}});
        let answer = session.request("initialize", info)?;
        if let Some(agent) = answer["userAgent"].as_str() {
            // `closegate/0.171.0 (…)`: the Codex version after the client's name.
            let version = agent.split(['/', ' ']).nth(1).unwrap_or("?");
            session.name = format!("codex {version} app-server");
        }
        session.send(&json!({"method": "initialized"}))?;
        Ok(session)
    }

    /// Write one message. The error carries no `io::Error`: a broken pipe here is the server's
    /// end, never closegate's own stdout closed (which `main` takes as a quiet, successful end).
    fn send(&mut self, message: &Value) -> Result<()> {
        let line = format!("{message}\n");
        let written = (self.stdin.write_all(line.as_bytes())).and_then(|()| self.stdin.flush());
        match written {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                bail!("{} ended before it was asked anything", self.name)
            }
            Err(e) => bail!("cannot write to {}: {e}", self.name),
        }
    }

    /// Send one request and wait for its answer (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + ANSWER_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => bail!(
                    "{} did not answer `{method}` within {} s",
                    self.name,
                    ANSWER_LIMIT.as_secs()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    bail!("{} ended before it answered `{method}`", self.name)
                }
            };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] != json!(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                bail!("{} refused `{method}`: {error}", self.name);
            }
            return Ok(message["result"].clone());
        }
    }

    /// Every hook Codex would load for a session in `cwd`.
    pub fn list(&mut self, cwd: &Path) -> Result<Vec<Listed>> {
        let result = self.request("hooks/list", json!({"cwds": [cwd]}))?;
        let Some(entries) = result["data"].as_array() else {
            bail!("{} answered `hooks/list` without `data`", self.name);
        };
        let hooks = entries
            .iter()
            .flat_map(|e| e["hooks"].as_array().into_iter().flatten())
            .filter_map(|h| {
                Some(Listed {
                    key: h["key"].as_str()?.to_string(),
                    command: h["command"].as_str().unwrap_or_default().to_string(),
                    source_path: PathBuf::from(h["sourcePath"].as_str()?),
                    current_hash: h["currentHash"].as_str()?.to_string(),
                    trust_status: h["trustStatus"].as_str()?.to_string(),
                })
            })
            .collect();
        Ok(hooks)
    }

    /// Trust each `(key, hash)` as Codex writes trust: `hooks.state` upserted in the user's
    /// `config.toml`.
    pub fn trust(&mut self, hooks: &[(String, String)]) -> Result<()> {
        let state: serde_json::Map<String, Value> = hooks
            .iter()
            .map(|(key, hash)| (key.clone(), json!({"trusted_hash": hash})))
            .collect();
        let edit = json!({"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state});
        self.request("config/batchWrite", json!({"edits": [edit]}))?;
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// closegate's hooks from `file` among `listed` (the file compared as Codex resolves it).
pub fn ours<'l>(listed: &'l [Listed], file: &Path) -> Vec<&'l Listed> {
    let same = |p: &Path| p == file || p.canonicalize().ok() == file.canonicalize().ok();
    listed
        .iter()
        .filter(|h| super::settings::is_ours(&h.command) && same(&h.source_path))
        .collect()
}
