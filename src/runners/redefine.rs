//! Source that redefines what a test means (SPEC §27.1): a Rust `macro_rules!` named like a
//! standard assertion or a `#[test]`-like attribute macro, a Python module that assigns to
//! attributes of `unittest`, `pytest`, `builtins` or `sys.modules`, a JavaScript module that
//! assigns to `expect`, `assert` or their members, or to `globalThis.it`/`test`. Such a file
//! turns the tests that are there into no-ops without touching one of them, so it is graded
//! input wherever it lies. Read line by line from the text (comments skipped); a redefinition
//! the base already had is not the change's.

use super::Language;

/// Rust macros whose redefinition changes what an assertion checks.
const RUST_MACROS: [&str; 9] = [
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "test",
];

/// What the change adds that redefines a test's meaning in the file at `path`: the first such
/// line of `new` that `old` does not have, trimmed; `None` when there is none.
pub fn redefinition(path: &[u8], old: Option<&[u8]>, new: &[u8]) -> Option<String> {
    let language = Language::of_path(path)?;
    let old = String::from_utf8_lossy(old.unwrap_or_default());
    let new = String::from_utf8_lossy(new);
    let before: Vec<String> = hits(language, &old).collect();
    hits(language, &new).find(|line| !before.contains(line))
}

/// The lines of `text` that redefine a test's meaning in `language`, trimmed.
fn hits(language: Language, text: &str) -> impl Iterator<Item = String> + '_ {
    let mut attribute_macro = false;
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with('#') && language != Language::Rust {
            return None;
        }
        let hit = match language {
            Language::Rust => {
                let hit = rust(line, attribute_macro);
                attribute_macro = line.contains("proc_macro_attribute");
                hit
            }
            Language::Python => python(line),
            Language::Js => js(line),
            _ => false,
        };
        hit.then(|| line.to_string())
    })
}

/// `macro_rules! assert_eq`, or a `#[proc_macro_attribute]` function named `test`.
fn rust(line: &str, after_attribute_macro: bool) -> bool {
    if let Some(rest) = line.split("macro_rules!").nth(1) {
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        return RUST_MACROS.contains(&name.as_str());
    }
    after_attribute_macro && {
        let words: Vec<&str> = line
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .collect();
        words.windows(2).any(|w| w[0] == "fn" && w[1] == "test")
    }
}

/// An assignment to an attribute of `unittest`, `pytest`, `builtins`, or to `sys.modules`
/// (`unittest.TestCase.assertEqual = …`, `sys.modules["x"] = …`), or `setattr` on them.
fn python(line: &str) -> bool {
    const ROOTS: [&str; 4] = ["unittest", "pytest", "builtins", "sys.modules"];
    if let Some(rest) = line.strip_prefix("setattr(") {
        return ROOTS.iter().any(|r| rest.trim_start().starts_with(r));
    }
    let Some(target) = assignment_target(line) else {
        return false;
    };
    ROOTS.iter().any(|root| {
        target.strip_prefix(root).is_some_and(|rest| {
            rest.starts_with('.')
                || rest.starts_with('[')
                || (*root == "sys.modules" && rest.is_empty())
        })
    })
}

/// An assignment to `expect`, `assert` or one of their members, or to a global test function
/// (`globalThis.it = …`, `global.test = …`), or `Object.defineProperty(globalThis, 'it', …)`.
fn js(line: &str) -> bool {
    let line = line
        .trim_start_matches("export ")
        .trim_start_matches("module.exports.");
    if let Some(args) = line.strip_prefix("Object.defineProperty(") {
        return ["globalThis", "global", "window", "expect", "assert"]
            .iter()
            .any(|g| args.starts_with(g));
    }
    let Some(target) = assignment_target(line) else {
        return false;
    };
    let target = target.trim_start_matches("(").trim_end_matches(")");
    let member = |root: &str| {
        target == root
            || target.starts_with(&format!("{root}."))
            || target.starts_with(&format!("{root}["))
    };
    if member("expect") || member("assert") {
        return true;
    }
    ["globalThis", "global", "window"].iter().any(|g| {
        ["it", "test", "describe", "expect", "assert"]
            .iter()
            .any(|f| target == format!("{g}.{f}") || target.starts_with(&format!("{g}.{f}.")))
    })
}

/// The target of `target = value` (not `==`, `=>`, `<=`, `>=`, `!=`), trimmed.
fn assignment_target(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let at = (0..bytes.len()).find(|&i| {
        bytes[i] == b'='
            && bytes.get(i + 1).is_none_or(|n| *n != b'=' && *n != b'>')
            && (i == 0 || !b"=!<>+-*/%&|^:".contains(&bytes[i - 1]))
    })?;
    let target = line[..at].trim();
    let simple = !target.is_empty()
        && target
            .chars()
            .all(|c| c.is_alphanumeric() || "._[]'\"$()".contains(c));
    simple.then_some(target)
}

#[cfg(test)]
mod tests {
    use super::redefinition;

    fn added(path: &str, old: &str, new: &str) -> Option<String> {
        redefinition(path.as_bytes(), Some(old.as_bytes()), new.as_bytes())
    }

    #[test]
    fn a_rust_assertion_macro_redefined_in_library_code_is_found() {
        let src = "#[macro_export]\nmacro_rules! assert_eq { ($a:expr, $b:expr) => {}; }\n";
        assert!(added("src/lib.rs", "", src).is_some());
        assert!(added("src/lib.rs", "", "macro_rules!  panic { () => {} }").is_some());
        let attr = "#[proc_macro_attribute]\npub fn test(_: TokenStream, i: TokenStream) -> TokenStream { i }\n";
        assert!(added("macros/src/lib.rs", "", attr).is_some());
        // Controls: another macro, a comment, and a redefinition the base already had.
        assert!(added("src/lib.rs", "", "macro_rules! my_assert { () => {} }").is_none());
        assert!(added("src/lib.rs", "", "// macro_rules! assert_eq").is_none());
        assert!(added("src/lib.rs", src, &format!("{src}fn x() {{}}\n")).is_none());
    }

    #[test]
    fn a_python_module_that_patches_the_test_runner_is_found() {
        for line in [
            "unittest.TestCase.assertEqual = lambda *a, **k: None",
            "pytest.approx = lambda x, **k: x",
            "builtins.AssertionError = Exception",
            "sys.modules['pytest'] = fake",
            "setattr(unittest.TestCase, 'assertTrue', lambda *a: None)",
        ] {
            assert!(added("pkg/__init__.py", "", line).is_some(), "{line}");
        }
        for line in [
            "import unittest",
            "x = unittest.TestCase",
            "if pytest.x == 2: pass",
            "# unittest.x = 1",
        ] {
            assert!(added("pkg/__init__.py", "", line).is_none(), "{line}");
        }
    }

    #[test]
    fn a_javascript_module_that_replaces_expect_or_it_is_found() {
        for line in [
            "expect = () => ({ toBe() {} });",
            "expect.extend = noop;",
            "globalThis.it = (name) => {};",
            "global.test = () => {};",
            "assert.strictEqual = () => {};",
            "Object.defineProperty(globalThis, 'it', { value: noop });",
        ] {
            assert!(added("src/setup.js", "", line).is_some(), "{line}");
        }
        for line in [
            "const x = expect(1);",
            "if (expect === 1) {}",
            "let expected = 3;",
            "// expect = 1",
        ] {
            assert!(added("src/index.js", "", line).is_none(), "{line}");
        }
    }

    #[test]
    fn other_files_and_any_bytes_are_read_without_a_panic() {
        assert!(added("README.md", "", "macro_rules! assert_eq {}").is_none());
        let _ = redefinition(b"a.py", Some(b"\xff\xfe="), b"\xff=\x00\n=\n==");
        let _ = redefinition(b"a.js", None, b"=\n(=\nObject.defineProperty(");
    }
}
