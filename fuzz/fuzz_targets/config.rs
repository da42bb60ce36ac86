//! `.closegate.toml` (SPEC §19) on any text.
//!
//! Beyond "no panic": an error names the file it came from; an accepted configuration keeps
//! itself, every `.gitattributes` and `.gitmodules` on surface `ci` whatever `[protected]` says
//! (SPEC §4.5), also with the paths the checks run added and with case folded; `jobs` is at
//! least 1.
#![no_main]

use closegate::config::Config;
use libfuzzer_sys::fuzz_target;

const ORIGIN: &str = "main:.closegate.toml";

fn assert_on_ci(config: &Config, paths: &[&str]) {
    for path in paths {
        let surfaces = config.surfaces_for(path);
        assert!(
            surfaces.iter().any(|s| s == "ci"),
            "{path} is on {surfaces:?}, not on ci"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut config = match Config::parse(text, ORIGIN) {
        Ok(config) => config,
        Err(e) => {
            let msg = format!("{e:#}");
            assert!(msg.starts_with("main:.closegate.toml: "), "{msg}");
            return;
        }
    };
    assert!(config.jobs >= 1);
    let always = [
        ".closegate.toml",
        ".gitattributes",
        "a/b/.gitattributes",
        ".gitmodules",
    ];
    assert_on_ci(&config, &always);
    let _ = config.is_agent_branch("agent/x");
    config.protect_always(&["scripts/ci.sh".into(), "tools/".into(), "[*]".into()]);
    assert_on_ci(&config, &always);
    assert_on_ci(&config, &["scripts/ci.sh", "tools/x/y", "[*]"]);
    config.fold_case();
    assert_on_ci(
        &config,
        &[".CloseGate.toml", "A/.GITATTRIBUTES", "Scripts/CI.sh"],
    );
});
