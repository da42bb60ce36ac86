//! Records the commit closegate is built from, for `closegate version --verbose` (SPEC §21):
//! `git rev-parse HEAD` when the source is a git checkout with git on PATH, else "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    // A new commit moves HEAD's reflog; watch it (and HEAD itself) when they exist, so the
    // recorded id follows the checkout without rebuilding on every build.
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(file) = git(&["rev-parse", "--git-path", path])
            && std::path::Path::new(&file).exists()
        {
            println!("cargo:rerun-if-changed={file}");
        }
    }
    println!("cargo:rustc-env=CLOSEGATE_COMMIT={commit}");
}
