//! SPEC §26.4: the operator's `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config` are secrets for
//! checks. A check reads neither (nor a file they include), git inside it sees
//! `GIT_CONFIG_GLOBAL=/dev/null`, and every `http.*.extraheader` value and URL userinfo found
//! there is masked in the report and the record, as secret variables are.

use std::path::Path;

use crate::secrets::{SecretsScene, json, output, scene};

/// The bearer token of an extra header, the password and the user of a URL's userinfo, a token
/// in an included file, and a `Basic` credential (`ci-bot:basic-secret-42`).
const BEARER: &str = "ghs_bearer0123456789";
const PASSWORD: &str = "pat-password-0987";
const USER: &str = "deploy-bot-user";
const INCLUDED: &str = "inc-token-55555555";
const BASIC: &str = "Y2ktYm90OmJhc2ljLXNlY3JldC00Mg==";

/// Write the operator's global configuration under `home`: `~/.gitconfig` (with an include),
/// `$XDG_CONFIG_HOME/git/config` (the scene sets `XDG_CONFIG_HOME` to the home) and
/// `~/.config/git/config`.
fn plant_git_config(home: &Path) {
    let gitconfig = format!(
        "[user]\n\tname = Operator Person\n\
         [http \"https://git.example/\"]\n\textraHeader = AUTHORIZATION: bearer {BEARER}\n\
         [url \"https://{USER}:{PASSWORD}@git.example/\"]\n\tinsteadOf = https://git.example/\n\
         [include]\n\tpath = ~/.gitconfig-work\n"
    );
    std::fs::write(home.join(".gitconfig"), gitconfig).unwrap();
    let work = format!("[http]\n\textraheader = X-Api-Key: {INCLUDED}\n");
    std::fs::write(home.join(".gitconfig-work"), work).unwrap();
    std::fs::create_dir_all(home.join("git")).unwrap();
    let xdg = format!("[http]\n\textraheader = Authorization: Basic {BASIC}\n");
    std::fs::write(home.join("git/config"), xdg).unwrap();
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::write(
        home.join(".config/git/config"),
        "[user]\n\temail = op@corp.example\n",
    )
    .unwrap();
}

/// The check: print every global configuration file (the scene's `XDG_CONFIG_HOME` is its home),
/// then what git itself reads as the global configuration.
const PEEK: &str = "[[checks]]\nname = \"peek\"\nrun = \"cd \\\"$HOME\\\" && \
    cat .gitconfig .gitconfig-work git/config .config/git/config 2>/dev/null; \
    git config --global -l; echo done\"\n";

/// Attack: the agent's test reads the operator's global git configuration (tokens, identity),
/// through the files and through git itself. Sandboxed, it sees nothing. The control with the
/// sandbox off reads the files, and then every secret in them is masked, in the report and in
/// the record; git inside the check reads no global configuration either way.
#[test]
fn a_check_sees_no_global_git_config_and_its_secrets_are_masked() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(PEEK, &[]);
    plant_git_config(s.home.path());
    let (code, report) = s.check(&[]);
    assert_eq!(report["sandbox"], "bwrap", "{report:#}");
    assert_eq!(output(&report, 0), ["done"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");

    let s = scene(&format!("sandbox = \"off\"\n{PEEK}"), &[]);
    plant_git_config(s.home.path());
    let out = s
        .command(&["check", "--format", "json"], &[])
        .output()
        .unwrap();
    let (_, report) = json(&out);
    let lines = output(&report, 0);
    let text = lines.join("\n");
    assert!(
        text.contains("name = Operator Person"),
        "the control reads the files: {text}"
    );
    assert!(text.contains("extraHeader = ***"), "{text}");
    assert!(
        text.contains("[url \"https://***@git.example/\"]"),
        "{text}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("done"),
        "git read no global config: {text}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("user.name=")),
        "git config --global -l printed nothing: {text}"
    );
    let audit = std::fs::read_to_string(s.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    for secret in [BEARER, PASSWORD, USER, INCLUDED, BASIC, "basic-secret-42"] {
        assert!(!text.contains(secret), "{secret} in the report: {text}");
        assert!(!audit.contains(secret), "{secret} in the record: {audit}");
    }
}

/// Attack: the agent's code learned a token of the operator's git configuration some other way
/// and prints it (from its committed script); the report and the record keep `***` (sandboxed: the masking does not depend
/// on the check reading the file). The control: the same words are kept when the operator's
/// configuration does not hold them.
#[test]
fn a_git_config_token_printed_by_a_check_is_masked() {
    let script = format!("echo leaked {BEARER} {USER}:{PASSWORD} {INCLUDED}\n");
    let config = "[[checks]]\nname = \"leak\"\nrun = \"sh leak.sh\"\n";
    let files = [("leak.sh", Some(script.as_str()))];
    let s = scene(config, &files);
    plant_git_config(s.home.path());
    let out = s
        .command(&["check", "--format", "json"], &[])
        .output()
        .unwrap();
    let (code, report) = json(&out);
    assert_eq!(output(&report, 0), ["leaked *** *** ***"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
    let audit = std::fs::read_to_string(s.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    assert!(audit.contains("leaked *** *** ***"), "{audit}");
    for secret in [BEARER, PASSWORD, INCLUDED] {
        assert!(!audit.contains(secret), "{secret}: {audit}");
    }

    let s = scene(config, &files);
    let (_, report) = s.check(&[]);
    assert_eq!(
        output(&report, 0),
        [format!("leaked {BEARER} {USER}:{PASSWORD} {INCLUDED}")]
    );
}
