//! What builds a Python project's compiled extensions, read from its files (SPEC §26.4): the
//! guess builds them again in every check and checks that each named one imports, and
//! `validate --run` asks it whether a skipped test may be a compiled part that was missing.

use std::path::Path;

/// What builds compiled extensions in a Python project, read through `read` (a file at the
/// project root, or at the base tip's tree root): setuptools `ext_modules` or `Extension` (or
/// `cythonize`) named in `setup.py`, `[tool.setuptools] ext-modules`, or a build backend that
/// compiles (meson-python, scikit-build, maturin). `None` for a pure-Python project.
pub fn compiled_python(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<String> {
    if let Some(setup) = read("setup.py") {
        let text = String::from_utf8_lossy(&setup);
        for word in ["ext_modules", "Extension", "cythonize"] {
            if text.contains(word) {
                return Some(format!("setup.py names `{word}`"));
            }
        }
    }
    let table: toml::Table = read("pyproject.toml")
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|t| t.parse().ok())?;
    let setuptools = table.get("tool").and_then(|t| t.get("setuptools"));
    if setuptools.is_some_and(|s| s.get("ext-modules").is_some() || s.get("ext_modules").is_some())
    {
        return Some("pyproject.toml has `[tool.setuptools] ext-modules`".to_string());
    }
    let system = table.get("build-system");
    let backend = system
        .and_then(|b| b.get("build-backend"))
        .and_then(|b| b.as_str())
        .unwrap_or_default();
    let requires: Vec<&str> = system
        .and_then(|b| b.get("requires"))
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    for (name, backends) in COMPILING_BACKENDS {
        let named =
            backends.contains(&backend) || requires.iter().any(|r| requirement_name(r) == name);
        if named {
            return Some(format!("its build backend is {name}"));
        }
    }
    None
}

/// `[build-system] requires`, or setuptools' default without one; `wheel` beside setuptools (an
/// editable build with setuptools before 70 needs it) and `editables` beside hatchling (its
/// editable build may ask for it): what an editable build needs with no isolated environment.
pub(super) fn python_build_requires(root: &Path) -> Vec<String> {
    let listed: Option<Vec<String>> = pyproject(root).and_then(|t| {
        let requires = t.get("build-system")?.get("requires")?.as_array()?.clone();
        Some(
            requires
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        )
    });
    let mut requires = listed.unwrap_or_else(|| vec!["setuptools>=40.8.0".to_string()]);
    let setuptools = requires.iter().any(|r| requirement_name(r) == "setuptools");
    if setuptools && !requires.iter().any(|r| requirement_name(r) == "wheel") {
        requires.push("wheel".to_string());
    }
    let hatchling = requires.iter().any(|r| requirement_name(r) == "hatchling");
    if hatchling && !requires.iter().any(|r| requirement_name(r) == "editables") {
        requires.push("editables".to_string());
    }
    requires
}

/// The project's `pyproject.toml` as a table (`None`: absent, unreadable or not TOML).
pub(super) fn pyproject(root: &Path) -> Option<toml::Table> {
    let bytes = crate::input_file::read(&root.join("pyproject.toml")).ok()?;
    String::from_utf8(bytes).ok()?.parse().ok()
}

/// Build backends that compile extensions: the distribution name and its backend modules.
const COMPILING_BACKENDS: [(&str, &[&str]); 4] = [
    ("meson-python", &["mesonpy"]),
    ("scikit-build-core", &["scikit_build_core.build"]),
    ("scikit-build", &["skbuild"]),
    ("maturin", &["maturin"]),
];

/// The distribution name of a requirement string (`maturin>=1,<2` → `maturin`), normalized as
/// the package index compares names: lower-case, `_` and `.` read as `-`.
fn requirement_name(req: &str) -> String {
    let req = req.trim_start();
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    req[..end].to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The extension modules a project names literally: `Extension("pkg._mod", …)` (any
/// `…Extension(` class, the name positional or `name=`) in `setup.py`, and each
/// `[[tool.setuptools.ext-modules]] name`. Only dotted Python identifiers; a name computed at
/// build time is not found (and not probed).
pub(super) fn extension_modules(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(setup) = read("setup.py") {
        let text = String::from_utf8_lossy(&setup).into_owned();
        for (at, _) in text.match_indices("Extension(") {
            let rest = text[at + "Extension(".len()..].trim_start();
            let rest = rest.strip_prefix("name").map_or(rest, |r| {
                r.trim_start().strip_prefix('=').unwrap_or(r).trim_start()
            });
            names.extend(quoted(rest));
        }
    }
    let table: Option<toml::Table> = read("pyproject.toml")
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|t| t.parse().ok());
    let modules = table
        .as_ref()
        .and_then(|t| {
            t.get("tool")?
                .get("setuptools")?
                .get("ext-modules")?
                .as_array()
                .cloned()
        })
        .unwrap_or_default();
    for module in &modules {
        names.extend(
            module
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string),
        );
    }
    names.retain(|n| is_module_name(n));
    names.dedup();
    names
}

/// The string literal `text` starts with (`"…"` or `'…'`), without its quotes.
fn quoted(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &text[1..];
    body.find(quote).map(|end| body[..end].to_string())
}

/// A dotted Python module name (`pkg._speedups`).
fn is_module_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files<'a>(list: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<Vec<u8>> + 'a {
        move |name| {
            list.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.as_bytes().to_vec())
        }
    }

    #[test]
    fn literally_named_extensions_are_found() {
        let setup = "from setuptools import Extension, setup\n\
                     ext = [Extension(\"markupsafe._speedups\", [\"src/x.c\"]),\n\
                     Pybind11Extension(name='pkg.fast', sources=[]), Extension(NAME, [])]\n";
        assert_eq!(
            extension_modules(&files(&[("setup.py", setup)])),
            ["markupsafe._speedups", "pkg.fast"]
        );
        let pyproject =
            "[[tool.setuptools.ext-modules]]\nname = \"demo._c\"\nsources = [\"c.c\"]\n";
        assert_eq!(
            extension_modules(&files(&[("pyproject.toml", pyproject)])),
            ["demo._c"]
        );
        let odd = "Extension('a b', []), Extension(\"../x\", [])";
        assert!(extension_modules(&files(&[("setup.py", odd)])).is_empty());
    }
}
