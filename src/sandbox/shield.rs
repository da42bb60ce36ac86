//! What of the operator's a check must not see (SPEC §4.6): the secret paths the sandbox covers,
//! the environment a check starts from, and the secret values masked in the output kept from it.
//!
//! A [`Shield`] is a value, computed once per run from the resolved configuration
//! (`[sandbox] hide`), closegate's environment, git's `user.signingKey` and the keys the command
//! itself uses (`--key FILE`), and handed to every check run: no command that runs checks can
//! forget to hide what another command hides.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::git_config;
use crate::repo::Repo;

/// Variables a check receives from closegate's environment whatever its `env` says (SPEC §4.6);
/// `PATH` (relative and empty entries removed) and every `LC_*` come on top.
const ALLOWED: [&str; 24] = [
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TERM",
    "TZ",
    "SHELL",
    "CARGO_HOME",
    "CARGO_NET_OFFLINE",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOPROXY",
    "VIRTUAL_ENV",
    "PYTHONDONTWRITEBYTECODE",
    "JAVA_HOME",
    "CC",
    "CXX",
    "npm_config_cache",
    "LC_ALL",
];

/// Parts of a variable's name that make its value a secret to mask in kept output.
const SECRET_NAMES: [&str; 6] = [
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "PRIVATE",
];
/// The shortest value that is masked (shorter ones would mask ordinary words).
const MASK_MIN_CHARS: usize = 8;

/// Variables naming a socket that talks to an agent holding the operator's keys or session:
/// `validate` warns when a check's `env` lists one.
pub const AGENT_SOCKETS: [&str; 5] = [
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AGENT_PID",
    "GNOME_KEYRING_CONTROL",
];

/// Paths under `$HOME` that hold credentials (SPEC §4.6).
const HOME_SECRETS: [&str; 15] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
];

/// Variables that move a credential file or folder of [`HOME_SECRETS`] elsewhere.
const RELOCATED: [&str; 8] = [
    "GNUPGHOME",
    "DOCKER_CONFIG",
    "KUBECONFIG",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AZURE_CONFIG_DIR",
    "CLOUDSDK_CONFIG",
    "GH_CONFIG_DIR",
    "NETRC",
];

/// The sockets of the machine's container and VM daemons: whoever can connect to one is root on
/// the host (a container with `/` mounted), network or not, so no check may reach one.
const DAEMON_SOCKETS: [&str; 8] = [
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/buildkit/buildkitd.sock",
    "/run/crio/crio.sock",
    "/run/libvirt/libvirt-sock",
    "/run/incus/unix.socket",
];

/// Variables naming a daemon's socket elsewhere (`unix:///path`, or a plain path).
const DAEMON_HOSTS: [&str; 2] = ["DOCKER_HOST", "CONTAINER_HOST"];

/// What the checks of one run must not see, and the environment they start from.
#[derive(Debug, Clone, Default)]
pub struct Shield {
    /// Directories covered with an empty tmpfs (canonical, existing).
    pub dirs: Vec<PathBuf>,
    /// Files (and sockets) covered with an empty file (canonical, existing).
    pub files: Vec<PathBuf>,
    /// Secret files that must have no other name (hard link) the covers would miss: the record
    /// key and the keys in use.
    pub keys: Vec<PathBuf>,
    /// Closegate's environment when the shield was made.
    vars: Vec<(OsString, OsString)>,
    /// Secret values to mask in kept output, longest first.
    masks: Vec<String>,
}

impl Shield {
    /// The shield of a run: the built-in secret paths, `hide` (`[sandbox] hide`, absolute or
    /// `~/…`), the file git's `user.signingKey` names in `repo`, and `keys` (every `--key FILE`
    /// of the run).
    pub fn new(repo: Option<&Repo>, hide: &[String], keys: &[PathBuf]) -> Shield {
        let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let mut shield = Shield {
            masks: masks(&vars),
            vars,
            ..Shield::default()
        };
        let (files, dirs) = super::record_key_paths();
        shield.keys.extend(files.iter().cloned());
        for dir in &dirs {
            let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
            shield.keys.extend(entries.map(|e| e.path()));
        }
        shield.files.extend(files);
        shield.dirs.extend(dirs);
        let home = shield
            .var("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        if let Some(home) = &home {
            for rel in HOME_SECRETS {
                shield.cover(&home.join(rel));
            }
        }
        for (var, subs) in [
            ("XDG_CONFIG_HOME", &["gcloud", "gh", "git/credentials"][..]),
            ("CARGO_HOME", &["credentials", "credentials.toml"][..]),
        ] {
            let Some(base) = shield.var(var).map(PathBuf::from) else {
                continue;
            };
            for sub in subs.iter().filter(|_| base.is_absolute()) {
                shield.cover(&base.join(sub));
            }
        }
        shield.cover_git_config();
        shield.cover_relocated();
        shield.cover_sockets(repo.map(Repo::common_dir));
        shield.cover_daemons();
        if let Some(key) = repo.and_then(signing_key_file) {
            shield.cover(&key);
        }
        for entry in hide {
            if let Ok(path) = super::expand_home(entry) {
                shield.cover(&path);
            }
        }
        for key in keys {
            if let Ok(key) = std::fs::canonicalize(key) {
                shield.cover(&key);
                shield.keys.push(key);
            }
        }
        shield
    }

    /// The value of `name` in closegate's environment.
    fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_os_str())
            .filter(|v| !v.is_empty())
    }

    /// The operator's global git configuration and the files it includes (SPEC §26.4), and the
    /// credentials in it as masks.
    fn cover_git_config(&mut self) {
        let var = |name: &str| self.var(name).map(PathBuf::from);
        let found = super::git_config::find(&var);
        for file in &found.files {
            self.cover(file);
        }
        self.masks
            .extend(found.masks.into_iter().filter(|v| maskable(v)));
        self.masks.sort_by_key(|v| std::cmp::Reverse(v.len()));
        self.masks.dedup();
    }

    /// The same secrets where a variable of closegate's environment moved them (`GNUPGHOME`,
    /// `DOCKER_CONFIG`, `KUBECONFIG`, …): the check does not receive the variable, but a path is
    /// a path, and the agent's code may guess it.
    fn cover_relocated(&mut self) {
        for var in RELOCATED {
            let Some(value) = self.var(var).map(OsStr::to_os_string) else {
                continue;
            };
            // KUBECONFIG is a list, like PATH; the others hold one path.
            for path in std::env::split_paths(&value).filter(|p| p.is_absolute()) {
                self.cover(&path);
            }
        }
    }

    /// `$XDG_RUNTIME_DIR` (and `/run/user/<uid>`) and the directory of `$SSH_AUTH_SOCK`; a
    /// directory that holds what the checks need (the temporary directory, the home directory,
    /// the repository whose objects the checkout borrows) is not covered whole: then only the
    /// socket itself is.
    fn cover_sockets(&mut self, common_dir: Option<PathBuf>) {
        let shared = [
            Some(std::env::temp_dir()),
            self.var("HOME").map(PathBuf::from),
            common_dir,
        ];
        let shared: Vec<PathBuf> = shared
            .into_iter()
            .flatten()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let holds_shared =
            |dir: &Path| dir == Path::new("/") || shared.iter().any(|s| s.starts_with(dir));
        // `/run/user/<uid>` too: under sudo, cron or a service manager `XDG_RUNTIME_DIR` may be
        // unset while the session's agent sockets still live there.
        let uid = std::os::unix::fs::MetadataExt::uid;
        let own = std::fs::metadata("/proc/self").map(|m| format!("/run/user/{}", uid(&m)));
        let runtime = self.var("XDG_RUNTIME_DIR").map(PathBuf::from);
        for run in runtime.into_iter().chain(own.ok().map(PathBuf::from)) {
            if let Ok(run) = std::fs::canonicalize(run)
                && !holds_shared(&run)
            {
                self.cover(&run);
            }
        }
        if let Some(sock) = self.var("SSH_AUTH_SOCK").map(PathBuf::from)
            && let Ok(sock) = std::fs::canonicalize(sock)
        {
            match sock.parent() {
                Some(dir) if !holds_shared(dir) => self.cover(dir),
                _ => self.cover(&sock),
            }
        }
    }

    /// The container and VM daemons' sockets ([`DAEMON_SOCKETS`]) and the one `DOCKER_HOST` or
    /// `CONTAINER_HOST` names when it is a Unix socket: the check does not receive the variable,
    /// but the agent's code may guess the path.
    fn cover_daemons(&mut self) {
        for path in DAEMON_SOCKETS {
            self.cover(Path::new(path));
        }
        for var in DAEMON_HOSTS {
            let Some(value) = self.var(var).and_then(OsStr::to_str) else {
                continue;
            };
            let path = PathBuf::from(value.strip_prefix("unix://").unwrap_or(value));
            if path.is_absolute() {
                self.cover(&path);
            }
        }
    }

    /// Cover `path` (resolved through links) when it exists: a directory with an empty tmpfs,
    /// anything else with an empty file.
    fn cover(&mut self, path: &Path) {
        let Ok(path) = std::fs::canonicalize(path) else {
            return;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            return;
        };
        let list = if meta.is_dir() {
            &mut self.dirs
        } else {
            &mut self.files
        };
        if !list.contains(&path) {
            list.push(path);
        }
    }

    /// Every covered path, for `checks-unsandboxed` to name what stays visible without a
    /// sandbox.
    pub fn covered(&self) -> Vec<&Path> {
        let dirs = self.dirs.iter().map(PathBuf::as_path);
        dirs.chain(self.files.iter().map(PathBuf::as_path))
            .collect()
    }

    /// The environment a check with `env = names` starts from: the allow-list, `PATH` with its
    /// relative and empty entries removed, and the listed names closegate has (never the
    /// caller's `CLOSEGATE_*`, which closegate sets itself or which name the record key), and
    /// `GIT_CONFIG_GLOBAL=/dev/null` whatever `env` lists (SPEC §26.4).
    pub fn env(&self, names: &[String]) -> Vec<(OsString, OsString)> {
        let mut env = Vec::new();
        for (name, value) in &self.vars {
            let text = name.to_string_lossy();
            if name == "PATH" {
                env.push((name.clone(), absolute_path_entries(value)));
                continue;
            }
            let listed = names.iter().any(|n| n.as_str() == text);
            let allowed = ALLOWED.contains(&text.as_ref()) || text.starts_with("LC_") || listed;
            let ours = text.starts_with("CLOSEGATE_") || git_config::is_global_config_var(name);
            if allowed && !ours {
                env.push((name.clone(), value.clone()));
            }
        }
        let (name, value) = git_config::NO_GLOBAL_CONFIG;
        env.push((name.into(), value.into()));
        env
    }

    /// `text` with every secret value of closegate's environment replaced by `***`.
    pub fn mask(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.masks {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }
}

/// The values (valid UTF-8, at least [`MASK_MIN_CHARS`] characters) of every variable whose
/// name holds one of [`SECRET_NAMES`], longest first.
fn masks(vars: &[(OsString, OsString)]) -> Vec<String> {
    let mut masks: Vec<String> = vars
        .iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy().to_ascii_uppercase();
            SECRET_NAMES.iter().any(|s| name.contains(s))
        })
        .filter_map(|(_, value)| value.to_str())
        .filter(|value| maskable(value))
        .map(str::to_string)
        .collect();
    masks.sort_by_key(|v| std::cmp::Reverse(v.len()));
    masks.dedup();
    masks
}

/// Whether a secret value is long enough to mask: shorter ones would mask ordinary words.
fn maskable(value: &str) -> bool {
    value.chars().count() >= MASK_MIN_CHARS
}

/// `PATH` without relative or empty entries (an entry `bin` would run the checkout's own `sh`).
fn absolute_path_entries(path: &OsStr) -> OsString {
    let kept: Vec<&[u8]> = path
        .as_encoded_bytes()
        .split(|&b| b == b':')
        .filter(|entry| entry.starts_with(b"/"))
        .collect();
    std::os::unix::ffi::OsStringExt::from_vec(kept.join(&b':'))
}

/// `validate`'s warnings: one per check whose `env` hands it an agent socket, which lets the
/// agent's code use the operator's keys or session (SPEC §4.6).
pub fn socket_warnings(config: &crate::config::Config) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, check) in config.checks.iter().enumerate() {
        for name in check
            .env
            .iter()
            .filter(|n| AGENT_SOCKETS.contains(&n.as_str()))
        {
            warnings.push(format!(
                "checks[{i}].env: `{name}` hands check `{}` an agent socket: the agent's code can \
                 then use the keys or session behind it",
                check.name
            ));
        }
    }
    warnings
}

/// The file git's `user.signingKey` names (a path, `~/` expanded), when it is one.
fn signing_key_file(repo: &Repo) -> Option<PathBuf> {
    let key = repo.config_string("user.signingKey")?;
    if key.starts_with("key::") || key.starts_with("ssh-") {
        return None;
    }
    let path = match key.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => PathBuf::from(&key),
    };
    path.is_file().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_keeps_only_absolute_entries() {
        let kept = absolute_path_entries(OsStr::new("bin::/usr/bin:./x:/bin:"));
        assert_eq!(kept, OsString::from("/usr/bin:/bin"));
    }

    #[test]
    fn secret_values_are_masked_longest_first() {
        let vars = [
            ("GITHUB_TOKEN", "ghp_abcdefgh"),
            ("my_api_key", "ghp_abcdefgh12345"),
            ("DB_PASSWORD", "short"),
            ("EDITOR", "vim-editor-long"),
        ];
        let vars: Vec<_> = vars
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        let shield = Shield {
            masks: masks(&vars),
            ..Shield::default()
        };
        assert_eq!(
            shield.mask("a ghp_abcdefgh12345 b ghp_abcdefgh short vim-editor-long"),
            "a *** b *** short vim-editor-long"
        );
    }

    #[test]
    fn only_the_allow_list_and_listed_names_pass() {
        let vars = [
            ("PATH", "bin:/usr/bin"),
            ("HOME", "/h"),
            ("LC_CTYPE", "C"),
            ("GIT_DIR", "/x"),
            ("SSH_AUTH_SOCK", "/s"),
            ("GITHUB_TOKEN", "t"),
            ("CLOSEGATE_RECORD_KEY_FILE", "/k"),
            ("FOO", "bar"),
            ("GIT_CONFIG_GLOBAL", "/home/op/.gitconfig-work"),
        ];
        let shield = Shield {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            ..Shield::default()
        };
        let names = |env: Vec<(OsString, OsString)>| -> Vec<String> {
            env.into_iter()
                .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
                .collect()
        };
        // SPEC §26.4: git inside a check reads no global configuration, listed or not.
        let none = "GIT_CONFIG_GLOBAL=/dev/null";
        assert_eq!(
            names(shield.env(&[])),
            ["PATH=/usr/bin", "HOME=/h", "LC_CTYPE=C", none]
        );
        let listed = [
            "FOO".to_string(),
            "CLOSEGATE_RECORD_KEY_FILE".to_string(),
            "GIT_CONFIG_GLOBAL".to_string(),
        ];
        assert_eq!(
            names(shield.env(&listed)),
            ["PATH=/usr/bin", "HOME=/h", "LC_CTYPE=C", "FOO=bar", none]
        );
    }
}
