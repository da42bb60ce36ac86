//! The command line's fast path (`cli::parse`): a line parsed against the reduced tree (the
//! global flags and the one subcommand it names) must mean exactly what it means to the whole
//! tree, and anything the reduced tree does not accept must be left to the whole tree.

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches};
use closegate::cli::{self, Cli};
use proptest::prelude::*;

/// What the whole tree makes of `args`: the parsed command line, or clap's error text.
fn whole(args: &[OsString]) -> Result<String, String> {
    let mut command = Cli::command();
    let mut matches = command
        .try_get_matches_from_mut(args)
        .map_err(|e| e.to_string())?;
    let cli = Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.to_string())?;
    Ok(format!("{cli:?}"))
}

fn line(words: &[&str]) -> Vec<OsString> {
    std::iter::once("closegate")
        .chain(words.iter().copied())
        .map(OsString::from)
        .collect()
}

/// Every subcommand of the whole tree is in the fast path's table under its own name, with
/// exactly its own arguments: a table entry pointing at another subcommand's arguments fails.
#[test]
fn every_subcommand_is_in_the_fast_table_with_its_own_arguments() {
    let mut whole_tree = Cli::command();
    whole_tree.build();
    let mut seen = 0;
    // `help` is clap's own, added at build; it is not in the table, so it takes the whole tree.
    for sub in whole_tree
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
    {
        let name = sub.get_name();
        let mut reduced =
            cli::reduced(name).unwrap_or_else(|| panic!("{name} is not in the table"));
        reduced.build();
        let fast = reduced.find_subcommand(name).unwrap();
        let ids = |c: &clap::Command| {
            let mut ids: Vec<String> = c.get_arguments().map(|a| a.get_id().to_string()).collect();
            ids.sort();
            ids
        };
        assert_eq!(
            ids(fast),
            ids(sub),
            "{name}: the table builds other arguments"
        );
        let subs = |c: &clap::Command| {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            subs(fast),
            subs(sub),
            "{name}: the table builds other subcommands"
        );
        seen += 1;
    }
    assert_eq!(
        seen, 26,
        "a subcommand was added or removed: update cli::SUBCOMMANDS"
    );
    assert!(cli::reduced("no-such-subcommand").is_none());
}

/// The lines the gate's users run most take the fast path, and mean what the whole tree says.
#[test]
fn the_common_lines_take_the_fast_path_and_mean_the_same() {
    let lines: &[&[&str]] = &[
        &["check", "--no-checks", "--no-record", "--no-worktree"],
        &["check", "--format", "json", "wt"],
        &[
            "-C",
            "repo",
            "-q",
            "check",
            "--rev",
            "agent/x",
            "--no-worktree",
        ],
        &["-Crepo", "--color=never", "board"],
        &["--color", "always", "teardown", "wt"],
        &["hook", "run", "reference-transaction", "prepared"],
        &["approve", "agent/x", "--by", "me"],
        &["log", "--limit", "3"],
        &["check", "-C", "wt", "--quiet"],
    ];
    for words in lines {
        let args = line(words);
        let fast = cli::parse_fast(&args).unwrap_or_else(|| panic!("{words:?} left the fast path"));
        assert_eq!(Ok(format!("{fast:?}")), whole(&args), "{words:?}");
    }
}

/// Help, versions and errors are never answered by the reduced tree: its usage line and its
/// list of subcommands would differ from the whole tree's.
#[test]
fn help_version_and_errors_leave_the_fast_path() {
    let lines: &[&[&str]] = &[
        &[],
        &["-h"],
        &["--help"],
        &["-V"],
        &["--version"],
        &["check", "--help"],
        &["check", "-h"],
        &["check", "--bogus"],
        &["check", "--rev"],
        &["chek"],
        &["-q"],
        &["--", "check"],
        &["-qC", "x", "check"],
        &["hook"],
        &["hook", "run", "--help"],
        &["--color", "sometimes", "check"],
    ];
    for words in lines {
        assert!(
            cli::parse_fast(&line(words)).is_none(),
            "{words:?} took the fast path"
        );
    }
}

/// The words a line naming `sub` may hold: the global flags, its own flags and subcommands
/// (one level down too), the values they take, and words of every other kind.
fn vocabulary(sub: &clap::Command) -> Vec<String> {
    let mut words: Vec<String> = ["-C", "-Cdir", "--color", "--color=never", "always", "-q"]
        .map(String::from)
        .to_vec();
    words.extend(
        [
            "--", "-", "x", "agent/x", "main", "3", "json", "wt", "-h", "--help", "-V", "check",
        ]
        .map(String::from),
    );
    fn flags(c: &clap::Command, words: &mut Vec<String>) {
        for arg in c.get_arguments() {
            words.extend(arg.get_long().map(|l| format!("--{l}")));
            words.extend(arg.get_short().map(|s| format!("-{s}")));
            words.extend(
                arg.get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_string()),
            );
        }
        for sub in c.get_subcommands() {
            words.push(sub.get_name().to_string());
            flags(sub, words);
        }
    }
    flags(sub, &mut words);
    words.sort();
    words.dedup();
    words
}

/// Every subcommand of the whole tree, built, with its vocabulary.
fn subcommands() -> &'static [(String, Vec<String>)] {
    static SUBS: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    SUBS.get_or_init(|| {
        let mut tree = Cli::command();
        tree.build();
        tree.get_subcommands()
            .map(|s| (s.get_name().to_string(), vocabulary(s)))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    /// Any line of a subcommand's words: when the fast path answers, the whole tree answers the
    /// same parsed command line.
    #[test]
    fn the_fast_path_never_disagrees_with_the_whole_tree(
        sub in any::<prop::sample::Index>(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..7),
        before in 0usize..3,
    ) {
        let (name, words) = sub.get(subcommands());
        let mut chosen: Vec<&str> = picks.iter().map(|i| i.get(words).as_str()).collect();
        // The subcommand's name, after some of the picked words (global flags, or not).
        chosen.insert(before.min(chosen.len()), name);
        let args = line(&chosen);
        if let Some(fast) = cli::parse_fast(&args) {
            prop_assert_eq!(Ok(format!("{fast:?}")), whole(&args), "{:?}", chosen);
        }
    }
}

/// The direct server hook's `#!<closegate> hook run pre-receive` line reaches closegate as one
/// word `hook run pre-receive` then the hook file (Linux); it means what the three words mean.
/// Any other word with blanks in it is left to clap, which refuses it.
#[test]
fn the_server_hooks_shebang_word_means_hook_run_pre_receive() {
    let split = cli::parse(line(&["hook", "run", "pre-receive", "hooks/pre-receive"]));
    let joined = cli::parse(line(&["hook run pre-receive", "hooks/pre-receive"]));
    assert_eq!(format!("{joined:?}"), format!("{split:?}"));
    assert!(
        format!("{joined:?}").contains("hooks/pre-receive"),
        "{joined:?}"
    );
    assert!(whole(&line(&["hook run reference-transaction", "prepared"])).is_err());
}

/// SPEC §21: `-C DIR`, `--color` and `-q` are global flags on every subcommand. An argument of
/// a subcommand with the same id as a global one shadows it (gc's `DIR` once took `-C` away).
#[test]
fn every_subcommand_takes_the_global_flags_after_its_name() {
    let mut tree = Cli::command();
    tree.build();
    let mut seen = 0;
    for sub in tree.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        let global = |id: &str| {
            sub.get_arguments()
                .find(|a| a.get_id() == id)
                .is_some_and(|a| a.is_global_set())
        };
        for id in ["dir", "color", "quiet"] {
            assert!(global(id), "`{name}` does not take the global `{id}`");
        }
        let short_c = sub.get_arguments().filter(|a| a.get_short() == Some('C'));
        assert_eq!(short_c.count(), 1, "`{name}`: -C");
        seen += 1;
    }
    assert!(seen >= 19, "{seen}");
    assert!(whole(&line(&["gc", "-C", ".", "--dry-run"])).is_ok());
}
