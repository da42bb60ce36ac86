//! One git configuration file read as git reads it (libgit2: sections, subsections, quoting,
//! escapes, continuation lines, `include.path`), for what of the operator's global configuration
//! a check must not see (SPEC §26.4): the values kept output masks and the files it includes.

use std::path::Path;

/// Every `(name, value)` of the configuration file at `path` and of the files it includes, the
/// name as libgit2 spells it (section and key lower-case, subsection as written:
/// `http.https://host/.extraheader`); a value-less key gives an empty value. Empty when the file
/// cannot be read or parsed: a secret that cannot be read cannot be masked either, and the file
/// itself is still covered.
pub fn entries(path: &Path) -> Vec<(String, String)> {
    let Ok(config) = git2::Config::open(path) else {
        return Vec::new();
    };
    let Ok(mut all) = config.entries(None) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(Ok(entry)) = all.next() {
        let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
        let value = String::from_utf8_lossy(entry.value_bytes()).into_owned();
        out.push((name, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsections_quoting_and_includes_are_read_as_git_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let extra = dir.path().join("extra.inc");
        std::fs::write(
            &extra,
            "[http]\n\textraHeader = \"X-Token: from-include\"\n",
        )
        .unwrap();
        let main = dir.path().join("config");
        std::fs::write(
            &main,
            format!(
                "[http \"https://Host.example/\"]\n\textraheader = \"AUTHORIZATION: basic \\\n\
                 dXNlcjpwYXNz\"\n[include]\n\tpath = {}\n[url \"https://u:p@x/\"]\n\
                 \tinsteadOf = https://x/\n",
                extra.display()
            ),
        )
        .unwrap();
        let got = entries(&main);
        let has = |n: &str, v: &str| got.iter().any(|(a, b)| a == n && b == v);
        assert!(
            has(
                "http.https://Host.example/.extraheader",
                "AUTHORIZATION: basic dXNlcjpwYXNz"
            ),
            "{got:?}"
        );
        assert!(has("http.extraheader", "X-Token: from-include"), "{got:?}");
        assert!(has("url.https://u:p@x/.insteadof", "https://x/"), "{got:?}");
        assert!(entries(&dir.path().join("missing")).is_empty());
    }
}
