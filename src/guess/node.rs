//! The check guessed for a Node project (SPEC §17, §27.2, §27.4): npm, pnpm or yarn, chosen by
//! the `packageManager` pin in `package.json`, else by the lock file and workspace file the
//! project commits; the pinned version runs through corepack.
//!
//! Where the package manager can fetch without running code, the fetch is the check's `prepare`
//! (with network) and `run` has none: `npm ci --ignore-scripts` (or `npm install
//! --ignore-scripts` without a lock file), `pnpm fetch`, `yarn install --ignore-scripts` (yarn's
//! first version) or `--mode=skip-build` (yarn 2 and later). What those skipped runs in `run`, offline: the
//! dependencies' install scripts (`npm rebuild` once per install; pnpm's and yarn's own offline
//! install) and the root's own lifecycle scripts. A native addon of the root (`binding.gyp`)
//! needs node-gyp, which downloads Node's headers: that check keeps the network and installs in
//! `run`. The guess's own stamp lives where `npm ci` never empties it until it has finished.

use std::path::Path;

use super::{Guess, Project, census_flags, keep_with_private, package_scripts, private_cache};

/// The package managers the guess knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manager {
    Npm,
    Pnpm,
    /// yarn 1 (classic).
    Yarn,
    /// yarn 2 and later.
    Berry,
}

/// The package manager of the project: the `packageManager` pin (`pnpm@10.17.1+sha512…`), else
/// `pnpm-lock.yaml` or `pnpm-workspace.yaml`, else a committed `yarn.lock` with `workspaces`
/// (yarn 2 and later when `.yarnrc.yml` is there), else npm.
fn manager(project: &Project<'_>) -> Manager {
    let json = package_json(&project.root.join("package.json"));
    let pin = json["packageManager"].as_str().unwrap_or_default();
    if let Some((name, version)) = pin.split_once('@') {
        let major = version.split('.').next().unwrap_or_default();
        match name {
            "pnpm" => return Manager::Pnpm,
            "yarn" if major == "1" => return Manager::Yarn,
            "yarn" => return Manager::Berry,
            "npm" => return Manager::Npm,
            _ => {}
        }
    }
    if (project.tracked)("pnpm-lock.yaml") || project.has("pnpm-workspace.yaml") {
        return Manager::Pnpm;
    }
    if (project.tracked)("yarn.lock") && !json["workspaces"].is_null() {
        return match project.has(".yarnrc.yml") {
            true => Manager::Berry,
            false => Manager::Yarn,
        };
    }
    Manager::Npm
}

fn package_json(path: &Path) -> serde_json::Value {
    crate::input_file::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// What corepack's downloads need from closegate's environment: the extra certificate authority
/// Node trusts behind a TLS-inspecting proxy (npm reads its own `cafile`; corepack has only this).
/// Nothing is handed where it is unset.
const COREPACK_ENV: [&str; 1] = ["NODE_EXTRA_CA_CERTS"];

/// corepack, kept private to the workspace, and on `PATH` the package manager's name running
/// `release` (`pnpm@10.17.1+sha512.<hex>`): the project's own scripts call it by name (`pnpm -r
/// test`, lerna's `yarn run test`), and corepack puts nothing there. corepack never asks before
/// downloading, never writes a pin into `package.json`, and with no release named uses the one
/// it ships pinned by hash.
fn corepack(release: &str) -> String {
    let name = release.split('@').next().unwrap_or(release);
    let bin = private_cache("bin");
    format!(
        "export COREPACK_HOME={} COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_ENABLE_AUTO_PIN=0 \
         COREPACK_DEFAULT_TO_LATEST=0; mkdir -p {bin} && \
         printf '#!/bin/sh\\nexec corepack {release} \"$@\"\\n' > {bin}/{name} && \
         chmod +x {bin}/{name} && export PATH={bin}:\"$PATH\"",
        private_cache("corepack")
    )
}

/// The release `run` names to corepack (`corepack pnpm@10.17.1+sha512.<hex>`), written once by
/// `init` so that no later edit of `package.json` chooses what is downloaded: the version the
/// `packageManager` pin names, else the registry's latest; with the pin's own hash, else the
/// hash of the registry's tarball as `init` read it ([`registry_release`]), which corepack checks
/// every download against. A pin that is no plain `name@version[+algo.hex]` (a URL, a range) is
/// not followed. Without the registry, the bare pin (corepack then wants the registry's
/// signature) or the bare name.
fn release(project: &Project<'_>, manager: Manager) -> String {
    let (name, package) = match manager {
        Manager::Pnpm => ("pnpm", "pnpm"),
        Manager::Berry => ("yarn", "@yarnpkg/cli-dist"),
        Manager::Yarn | Manager::Npm => ("yarn", "yarn"),
    };
    let json = package_json(&project.root.join("package.json"));
    let pin = json["packageManager"].as_str().and_then(plain_pin);
    match pin {
        Some((pinned, version, Some(hash))) if pinned == name => format!("{name}@{version}+{hash}"),
        Some((pinned, version, None)) if pinned == name => (project.release)(package, version)
            .map_or(format!("{name}@{version}"), |r| format!("{name}@{r}")),
        _ => {
            (project.release)(package, "latest").map_or(name.to_string(), |r| format!("{name}@{r}"))
        }
    }
}

/// `name@version` with an optional `+algo.hex`, split; `None` for anything else.
fn plain_pin(pin: &str) -> Option<(&str, &str, Option<&str>)> {
    let (name, rest) = pin.split_once('@')?;
    let (version, hash) = match rest.split_once('+') {
        Some((v, h)) => (v, Some(h)),
        None => (rest, None),
    };
    let hash_ok = hash.is_none_or(is_hash);
    (!name.is_empty()
        && name.bytes().all(|b| b.is_ascii_lowercase())
        && is_version(version)
        && hash_ok)
        .then_some((name, version, hash))
}

/// A release version (`10.17.1`, `4.0.0-rc.1`): digits first, then the characters of semver.
fn is_version(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit())
        && text.split('.').count() >= 3
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
}

/// corepack's `algo.hex`.
fn is_hash(text: &str) -> bool {
    text.split_once('.').is_some_and(|(algo, hex)| {
        ["sha1", "sha224", "sha256", "sha512"].contains(&algo)
            && !hex.is_empty()
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    })
}

/// `version+sha512.<hex>` of a package's release (`wanted`: a version, or `latest`) on the npm
/// registry the user configured, as `npm view` reads it (the user's mirror and credentials);
/// `None` without npm or the registry.
pub fn registry_release(package: &str, wanted: &str) -> Option<String> {
    let out = std::process::Command::new("npm")
        .args(["view", "--json", &format!("{package}@{wanted}")])
        .args(["version", "dist.integrity"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let version = value["version"].as_str().filter(|v| is_version(v))?;
    let integrity = value["dist.integrity"].as_str()?.strip_prefix("sha512-")?;
    let digest = crate::attest::sshsig::base64(integrity.as_bytes())?;
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{version}+sha512.{hex}"))
}

/// The check for a Node project whose `package.json` has a test script.
pub fn node(project: &Project<'_>) -> Guess {
    match manager(project) {
        Manager::Npm => npm(project),
        Manager::Pnpm => pnpm(project),
        Manager::Yarn => yarn(project),
        Manager::Berry => berry(project),
    }
}

/// pnpm: `pnpm fetch` fills a store private to the workspace from the lock file; the install is
/// then offline and frozen (it runs the scripts pnpm allows, offline). `CI=true`: pnpm never
/// asks before replacing a `node_modules` another version made.
fn pnpm(project: &Project<'_>) -> Guess {
    let store = format!("--store-dir {}", private_cache("pnpm-store"));
    let census = census_flags(&project.root.join("package.json"));
    let env = corepack(&release(project, Manager::Pnpm));
    let pnpm = "pnpm";
    // `pnpm fetch` runs the builds the project allows unless told not to: they run in `run`,
    // offline (`rebuild --pending`).
    let (prepare, install, network) = match (project.tracked)("pnpm-lock.yaml") {
        true => (
            Some(format!("{env}; {pnpm} fetch --ignore-scripts {store}")),
            format!(
                "CI=true {pnpm} install --offline --frozen-lockfile {store} && \
                 {pnpm} rebuild --pending {store}"
            ),
            false,
        ),
        false => (None, format!("CI=true {pnpm} install {store}"), true),
    };
    Guess {
        name: "test",
        run: format!("{env}; {install} && {pnpm} test{census}"),
        prepare,
        network,
        writable: Vec::new(),
        env: COREPACK_ENV.to_vec(),
        keep: keep_with_private(Some("node_modules/")),
    }
}

/// yarn 1: `prepare` installs from `yarn.lock` into a cache private to the workspace with no
/// script run; `run` installs again offline, which runs the scripts (yarn records the flags of
/// the last install and installs again when they differ).
fn yarn(project: &Project<'_>) -> Guess {
    let cache = format!(
        "--non-interactive --no-progress --cache-folder {}",
        private_cache("yarn")
    );
    let census = census_flags(&project.root.join("package.json"));
    let env = corepack(&release(project, Manager::Yarn));
    let yarn = "yarn";
    Guess {
        name: "test",
        run: format!(
            "{env}; {yarn} install --frozen-lockfile --offline {cache} && {yarn} test{census}"
        ),
        prepare: Some(format!(
            "{env}; {yarn} install --frozen-lockfile --ignore-scripts {cache}"
        )),
        network: false,
        writable: Vec::new(),
        env: COREPACK_ENV.to_vec(),
        keep: keep_with_private(Some("node_modules/")),
    }
}

/// yarn 2 and later: `--mode=skip-build` fetches and links without running a build script; the
/// offline install (`YARN_ENABLE_NETWORK=0`) then builds.
fn berry(project: &Project<'_>) -> Guess {
    let census = census_flags(&project.root.join("package.json"));
    let env = format!(
        "{} YARN_ENABLE_GLOBAL_CACHE=0 YARN_CACHE_FOLDER={} YARN_ENABLE_TELEMETRY=0",
        corepack(&release(project, Manager::Berry)),
        private_cache("yarn")
    );
    let yarn = "yarn";
    Guess {
        name: "test",
        run: format!(
            "{env} YARN_ENABLE_NETWORK=0; {yarn} install --immutable && {yarn} test{census}"
        ),
        prepare: Some(format!(
            "{env}; {yarn} install --immutable --mode=skip-build"
        )),
        network: false,
        writable: Vec::new(),
        env: COREPACK_ENV.to_vec(),
        keep: keep_with_private(Some("node_modules/")),
    }
}

/// The root package's own lifecycle scripts that `npm install` and `npm ci` run, in their order.
const NPM_ROOT_SCRIPTS: [&str; 7] = [
    "preinstall",
    "install",
    "postinstall",
    "prepublish",
    "preprepare",
    "prepare",
    "postprepare",
];

/// The stamp of the dependency manifests, made in the check's private `TMPDIR` (never inside
/// `node_modules/`, which `npm ci` empties), and the install when it differs from the one kept
/// in `node_modules/` (copied there once the install has finished). The files are named by
/// pattern: a word naming a repository path would put the whole file on surface `ci`.
fn npm_install_step(install: &str) -> String {
    format!(
        "cat package*.json > \"$TMPDIR\"/closegate-deps; \
         cmp -s \"$TMPDIR\"/closegate-deps node_modules/.closegate-deps || \
         {{ {install} --no-audit --no-fund && mkdir -p node_modules && \
         cp \"$TMPDIR\"/closegate-deps node_modules/.closegate-deps; }}"
    )
}

/// npm: `npm ci` with a committed `package-lock.json` (its cache shared: npm checks every
/// tarball against the lock file's integrity on every read), else `npm install` (its cache
/// private). Fetched in `prepare` with no script run; `run` runs the dependencies' install
/// scripts once per install (`npm rebuild`, offline), the root's lifecycle scripts in every
/// check (their outputs are untracked: the reset removed them), then `npm test`.
fn npm(project: &Project<'_>) -> Guess {
    let package = project.root.join("package.json");
    let locked = (project.tracked)("package-lock.json");
    let (install, cache, writable) = if locked {
        let (entry, word) = project.cache_of("npm");
        ("npm ci", word, vec![entry])
    } else {
        ("npm install", private_cache("npm"), Vec::new())
    };
    // Flow keeps its server state in /tmp/flow: point it at the check's private TMPDIR, so it
    // also works unsandboxed, where /tmp is shared (in the sandbox /tmp is the check's own too).
    let flow = if super::package_mentions(&package, "flow-bin") {
        " FLOW_TEMP_DIR=\"$TMPDIR\"/flow"
    } else {
        ""
    };
    let census = census_flags(&package);
    let scripts = package_scripts(&package);
    let keep = match locked {
        true => vec!["node_modules/".to_string()],
        false => keep_with_private(Some("node_modules/")),
    };
    // A native addon (`binding.gyp`, built by npm's implicit `node-gyp rebuild`) has no script
    // to run, and node-gyp downloads Node's headers: the whole install runs every time, online.
    let gyp =
        project.has("binding.gyp") && !scripts.iter().any(|d| d == "install" || d == "preinstall");
    if gyp {
        return Guess {
            name: "test",
            run: format!(
                "export npm_config_cache={cache}{flow}; {{ {install} --no-audit --no-fund; }} && npm test{census}"
            ),
            prepare: None,
            network: true,
            writable,
            env: Vec::new(),
            keep,
        };
    }
    let steps = npm_steps(&scripts, &census);
    Guess {
        name: "test",
        run: format!(
            "export npm_config_cache={cache}{flow}; export npm_config_offline=true; {}",
            steps.join(" && ")
        ),
        prepare: Some(format!(
            "export npm_config_cache={cache}; {}",
            npm_install_step(&format!("{install} --ignore-scripts"))
        )),
        network: false,
        writable,
        env: Vec::new(),
        keep,
    }
}

/// What npm's `run` does offline once `prepare` installed with no script: the dependencies'
/// install scripts once per install (`npm rebuild`), the root's lifecycle scripts, `npm test`.
fn npm_steps(scripts: &[String], census: &str) -> Vec<String> {
    let mut steps = vec![
        "cmp -s node_modules/.closegate-deps node_modules/.closegate-rebuilt || \
         { npm rebuild --no-audit --no-fund && cp node_modules/.closegate-deps node_modules/.closegate-rebuilt; }"
            .to_string(),
    ];
    steps.extend(
        NPM_ROOT_SCRIPTS
            .iter()
            .filter(|s| scripts.iter().any(|d| d == *s))
            .map(|s| format!("npm run --ignore-scripts {s}")),
    );
    steps.push(format!("npm test{census}"));
    steps
}
