//! npm, yarn and pnpm running the package's scripts: `npm test`, `npm run X`, `yarn X`, `pnpm
//! X`. The scripts are followed through `package.json` (each with its `pre`/`post` scripts,
//! transitively), so the runners they invoke are invoked; the census reads every runner's output
//! (`auto`; the scripts are followed by `js::followed_scripts`). `exec`/`dlx` and a yarn or pnpm name that is a binary are unwrapped by the command
//! reader.

use super::command::{PM_COMMANDS, PM_VALUES, skip_options};
use super::{Hit, Invocation, Language, Row, Runner, js};

pub(super) const ROW: Row = Row {
    runner: Runner::Npm,
    name: "npm",
    language: Language::Js,
    recognise,
    graded: &js::GRADED,
    keys: &js::KEYS,
    wiring: &[],
    configs: &["package.json"],
    census: None,
    under_test: &js::UNDER_TEST,
    only: None,
};

/// `npm test`, `npm run X`, `yarn X`, `pnpm run X`: the script names (the census reads every
/// runner); any other use of the package managers (`npm ci`, `npx`) still grades their files.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    let program = invocation.program();
    if !matches!(
        program,
        "npm" | "yarn" | "pnpm" | "npx" | "bun" | "bunx" | "pnpx"
    ) {
        return None;
    }
    let args = invocation.args();
    let at = skip_options(args, &PM_VALUES);
    let arg = |i: usize| args.get(at + i).map_or("", String::as_str);
    let script = match (program, arg(0)) {
        ("npm", "test" | "t" | "tst") | ("yarn" | "pnpm", "test") => Some("test"),
        ("npm", "run" | "run-script" | "rum" | "urn") | ("yarn" | "pnpm" | "bun", "run") => {
            Some(arg(1))
        }
        ("yarn" | "pnpm", s) if !PM_COMMANDS.contains(&s) => Some(s),
        _ => None,
    };
    let mut hit = Hit::wrapper()?;
    if let Some(s) = script.filter(|s| !s.is_empty() && !s.starts_with('-')) {
        hit.scripts.push(s.to_string());
    } else {
        hit = Hit::graded_only()?;
    }
    Some(hit)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value as Json;

    use super::super::Invoked;
    use super::js::followed_scripts;
    use super::*;

    #[test]
    fn scripts_come_from_the_package_manager_words() {
        let r = Invoked::of(["export npm_config_cache=x; npm install && npm test"]);
        assert!(r.has(Runner::Npm) && r.npm_scripts.contains("test"));
        assert!(!r.npm_scripts.contains("install"));
        let r = Invoked::of(["yarn lint && pnpm run build"]);
        assert!(r.npm_scripts.contains("lint") && r.npm_scripts.contains("build"));
        let r = Invoked::of(["npm --prefix web run test:unit"]);
        assert!(r.npm_scripts.contains("test:unit"), "{r:?}");
        assert!(
            Invoked::of(["npx eslint ."]).has(Runner::Npm),
            "npx grades npm's files"
        );
    }

    #[test]
    fn npm_scripts_are_followed_transitively_with_pre_and_post() {
        let pkg: Json = serde_json::from_str(
            r#"{"scripts": {"test": "npm run lint && tape t/*.js", "pretest": "x", "lint": "eslint ."}}"#,
        )
        .unwrap();
        let names = BTreeSet::from(["test".to_string()]);
        let keys: Vec<String> = followed_scripts(&pkg, &names)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for key in ["test", "pretest", "posttest", "lint", "prelint"] {
            assert!(keys.contains(&key.to_string()), "{key}: {keys:?}");
        }
        let invoked = Invoked::of(["npm test"]).with_scripts(&pkg);
        assert_eq!(invoked.test_globs, ["t/*.js"]);
        assert!(invoked.has(Runner::Tap));
    }
}
