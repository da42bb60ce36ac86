//! The operator's own git configuration is a secret to checks (SPEC §26.4): it holds tokens
//! (`http.<url>.extraHeader = Authorization: …`, `url."https://user:token@host/".insteadOf`) and
//! the operator's identity, and nothing in a check needs it.
//!
//! - The files git reads as the global configuration — the one `GIT_CONFIG_GLOBAL` names,
//!   `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config` and `~/.config/git/config` — and every file
//!   they include are covered like the other secret paths.
//! - git inside a check reads `GIT_CONFIG_GLOBAL=/dev/null` (set by [`super::Shield::env`]), so
//!   it does not look for them either, sandboxed or not.
//! - Every value of an `http.*.extraheader` (the whole value, the header's value and each word
//!   of it, a `Basic` credential decoded) and every URL's userinfo found in a name or a value
//!   (whole, and each part of `user:password`, percent-decoded too) is masked in kept output,
//!   as the secret variables are: a check that runs unsandboxed (`sandbox = "off"`) can read the
//!   files, and a token can reach a check some other way.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What of the operator's global git configuration a check must not see.
#[derive(Debug, Default)]
pub struct GitSecrets {
    /// The configuration files and the files they include (existing or not; the caller covers
    /// those that exist).
    pub files: Vec<PathBuf>,
    /// Values to mask in kept output (not yet filtered by length).
    pub masks: Vec<String>,
}

/// The global configuration files and their secret values, with `var` closegate's environment.
pub fn find(var: &dyn Fn(&str) -> Option<PathBuf>) -> GitSecrets {
    let mut secrets = GitSecrets::default();
    let home = var("HOME").filter(|h| h.is_absolute());
    if let Some(global) = var("GIT_CONFIG_GLOBAL").filter(|p| p.is_absolute()) {
        secrets.files.push(global);
    }
    if let Some(home) = &home {
        secrets.files.push(home.join(".gitconfig"));
        secrets.files.push(home.join(".config/git/config"));
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME").filter(|x| x.is_absolute()) {
        secrets.files.push(xdg.join("git/config"));
    }
    let top: Vec<PathBuf> = secrets.files.clone();
    for file in top.iter().filter(|f| f.is_file()) {
        for (name, value) in crate::repo::config_file::entries(file) {
            secrets.masks.extend(masks_of(&name, &value));
            if is_include(&name) {
                secrets
                    .files
                    .extend(include_path(&value, file, home.as_deref()));
            }
        }
    }
    secrets
}

/// `include.path` and `includeIf.<condition>.path`.
fn is_include(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "include.path" || (lower.starts_with("includeif.") && lower.ends_with(".path"))
}

/// Where an include names its file: `~/` against the home directory, a relative path against
/// the including file's directory, as git resolves them.
fn include_path(value: &str, from: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = value.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let path = Path::new(value);
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    from.parent().map(|dir| dir.join(path))
}

/// The secret values one configuration entry holds.
fn masks_of(name: &str, value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("http.") && lower.ends_with(".extraheader") {
        out.extend(header_masks(value));
    }
    out.extend(userinfo_masks(name));
    out.extend(userinfo_masks(value));
    out
}

/// An extra header's secrets: the whole value, the header's value, each of its words, and a
/// `Basic` credential decoded (`user:password` and each part).
fn header_masks(value: &str) -> Vec<String> {
    let mut out = vec![value.trim().to_string()];
    let Some((_, field)) = value.split_once(':') else {
        return out;
    };
    let field = field.trim();
    out.push(field.to_string());
    let words: Vec<&str> = field.split_whitespace().collect();
    out.extend(words.iter().map(|w| w.to_string()));
    if let [scheme, credential] = words[..]
        && scheme.eq_ignore_ascii_case("basic")
        && let Some(decoded) = crate::attest::sshsig::base64(credential.as_bytes())
    {
        let decoded = String::from_utf8_lossy(&decoded).into_owned();
        out.extend(decoded.split(':').map(str::to_string));
        out.push(decoded);
    }
    out
}

/// The userinfo of every URL in `text` (`scheme://userinfo@host…`): whole, each part of
/// `user:password`, and each percent-decoded.
fn userinfo_masks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        rest = &rest[at + 3..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            let mut parts: Vec<String> = vec![userinfo.to_string()];
            parts.extend(userinfo.split(':').map(str::to_string));
            for part in parts {
                let decoded = percent_decoded(&part);
                out.push(part);
                out.extend(decoded);
            }
        }
        rest = &rest[end..];
    }
    out
}

/// `text` with `%XX` escapes decoded, when it has any and decodes to UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The value git inside a check reads as its global configuration file.
pub const NO_GLOBAL_CONFIG: (&str, &str) = ("GIT_CONFIG_GLOBAL", "/dev/null");

/// Whether `name` is the variable [`NO_GLOBAL_CONFIG`] sets (never taken from `env`).
pub fn is_global_config_var(name: &OsStr) -> bool {
    name == NO_GLOBAL_CONFIG.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_headers_and_basic_credentials_are_masked_whole_and_in_parts() {
        let masks = masks_of(
            "http.https://git.example/.extraheader",
            "AUTHORIZATION: basic dXNlcjpzM2NyZXQtcGFzc3dvcmQ=",
        );
        for want in [
            "AUTHORIZATION: basic dXNlcjpzM2NyZXQtcGFzc3dvcmQ=",
            "basic dXNlcjpzM2NyZXQtcGFzc3dvcmQ=",
            "dXNlcjpzM2NyZXQtcGFzc3dvcmQ=",
            "user:s3cret-password",
            "s3cret-password",
        ] {
            assert!(masks.iter().any(|m| m == want), "{want}: {masks:?}");
        }
        let bearer = masks_of("http.extraHeader", "X-Auth: Bearer ghs_0123456789abcdef");
        assert!(
            bearer.iter().any(|m| m == "ghs_0123456789abcdef"),
            "{bearer:?}"
        );
        assert!(masks_of("core.editor", "vim -u NONE").is_empty());
    }

    #[test]
    fn url_userinfo_is_masked_in_names_and_values() {
        let masks = masks_of(
            "url.https://bot:tok%40en-123456@git.example/.insteadof",
            "https://git.example/",
        );
        for want in ["bot:tok%40en-123456", "tok%40en-123456", "tok@en-123456"] {
            assert!(masks.iter().any(|m| m == want), "{want}: {masks:?}");
        }
        let token_as_user = masks_of(
            "remote.origin.url",
            "https://ghp_abcdef123456@github.com/o/r",
        );
        assert!(
            token_as_user.iter().any(|m| m == "ghp_abcdef123456"),
            "{token_as_user:?}"
        );
        assert!(masks_of("remote.origin.url", "git@github.com:o/r.git").is_empty());
    }

    #[test]
    fn includes_resolve_as_git_resolves_them() {
        let from = Path::new("/home/op/.gitconfig");
        let home = Some(Path::new("/home/op"));
        assert_eq!(
            include_path("~/.secrets", from, home),
            Some(PathBuf::from("/home/op/.secrets"))
        );
        assert_eq!(
            include_path("work.inc", from, home),
            Some(PathBuf::from("/home/op/work.inc"))
        );
        assert!(is_include("includeIf.gitdir:~/work/.path"));
        assert!(!is_include("include.other"));
    }
}
