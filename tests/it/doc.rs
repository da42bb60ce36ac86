//! The status-document grammar through the library: the `testdata/docs` corpus, the tricky
//! cases by name, and properties over random and mutated input.

use std::path::{Path, PathBuf};

use closegate::doc::{self, ParseOptions, State};
use closegate::finding::Severity;
use proptest::prelude::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/docs")
}

fn codes(bytes: &[u8], legacy: bool) -> Vec<&'static str> {
    let mut codes: Vec<_> = doc::parse(bytes, ParseOptions { legacy })
        .findings
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    codes.sort_unstable();
    codes
}

/// Every `NAME.md` produces exactly the codes listed in `NAME.codes`, and the corpus
/// covers every `doc-*` code of the catalog.
#[test]
fn corpus_produces_exactly_the_listed_codes() {
    let mut covered = std::collections::BTreeSet::new();
    let mut docs = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let listed = std::fs::read_to_string(path.with_extension("codes"))
            .unwrap_or_else(|e| panic!("{} has no .codes file: {e}", path.display()));
        let mut want: Vec<&str> = listed
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        want.sort_unstable();
        let got = codes(&std::fs::read(&path).unwrap(), false);
        assert_eq!(got, want, "{}", path.display());
        covered.extend(want.iter().map(|c| c.to_string()));
        docs += 1;
    }
    assert!(docs >= 32, "the corpus shrank to {docs} documents");
    for info in closegate::catalog::CODES
        .iter()
        .filter(|c| c.code.as_str().starts_with("doc-"))
    {
        assert!(
            covered.contains(info.code.as_str()),
            "no document under testdata/docs produces {}",
            info.code
        );
    }
}

/// The corpus has a valid document for each of the five writable state words.
#[test]
fn corpus_has_a_valid_document_per_state() {
    for state in State::ALL {
        let path = corpus_dir().join(format!("valid-{}.md", state.as_str()));
        let parsed = doc::parse(&std::fs::read(&path).unwrap(), ParseOptions::default());
        assert!(
            parsed.findings.is_empty(),
            "{}: {:?}",
            path.display(),
            parsed.findings
        );
        assert_eq!(parsed.doc.and_then(|d| d.state), Some(state));
    }
}

#[test]
fn seed_001_reads_every_key() {
    let parsed = doc::parse(
        &std::fs::read(corpus_dir().join("seed-001.md")).unwrap(),
        ParseOptions::default(),
    );
    assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
    let d = parsed.doc.unwrap();
    assert_eq!(d.slug, "invoice-export-csv");
    assert_eq!(d.state, Some(State::Stop2Ready));
    assert_eq!(
        d.done.len(),
        3,
        "three claims joined across lines and split on ` · `"
    );
    assert_eq!((d.done[0].line, d.done[1].line, d.done[2].line), (7, 7, 8));
    assert!(
        d.done[1]
            .text
            .starts_with("the export refuses an unknown column")
    );
    let paths: Vec<_> = d.artifacts.unwrap().into_iter().map(|e| e.text).collect();
    assert_eq!(paths, ["invoice/export.go", "invoice/export_test.go"]);
    let lc = d.last_commit.unwrap();
    assert_eq!((lc.sha.as_str(), lc.line), ("4b19c7ae0f2", 6));
    assert_eq!(d.updated.as_deref(), Some("2026-09-02"));
    let close = d.close.unwrap();
    assert_eq!((close.commit.as_str(), close.line), ("4b19c7ae0f2", 22));
    assert_eq!(
        close.worktree,
        "/srv/workspace/worktrees/wt-invoice-export-csv"
    );
}

const MINIMAL: &str = "# STATUS — t\n\n- state: close-ok\n- abstract: a\n- artifacts:\n\nCLOSE-OK · t · commit abcdef0 · branch b · worktree /w\n";

#[test]
fn crlf_and_bom_read_like_lf() {
    let crlf = format!("\u{feff}{}", MINIMAL.replace('\n', "\r\n"));
    let parsed = doc::parse(crlf.as_bytes(), ParseOptions::default());
    assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
    assert_eq!(
        parsed.doc.unwrap().close.unwrap().worktree,
        "/w",
        "no CR left in the last field"
    );
}

#[test]
fn not_utf8_reads_nothing_else_and_names_the_line() {
    let parsed = doc::parse(
        b"# STATUS \xe2\x80\x94 t\n- state: \xff\n- bogus: x\n",
        ParseOptions::default(),
    );
    assert!(parsed.doc.is_none());
    assert_eq!(parsed.findings.len(), 1);
    assert_eq!(
        (parsed.findings[0].code.as_str(), parsed.findings[0].line),
        ("doc-not-utf8", Some(2))
    );
}

#[test]
fn h1_missing_reads_nothing_else() {
    let parsed = doc::parse(b"\n\n# STATUS - t\n- bogus: x\n", ParseOptions::default());
    assert_eq!(parsed.findings.len(), 1);
    let f = &parsed.findings[0];
    assert_eq!((f.code.as_str(), f.line), ("doc-h1-missing", Some(3)));
    assert!(
        f.message
            .contains("'-' after `STATUS`; write U+2014 EM DASH"),
        "{}",
        f.message
    );
}

#[test]
fn look_alike_dashes_are_named_by_code_point() {
    for (dash, name) in [
        ('\u{2013}', "U+2013 EN DASH"),
        ('\u{2212}', "U+2212 MINUS SIGN"),
        ('\u{2010}', "U+2010 HYPHEN"),
    ] {
        let text = MINIMAL.replace("CLOSE-OK", &format!("CLOSE{dash}OK"));
        let parsed = doc::parse(text.as_bytes(), ParseOptions::default());
        let f = parsed
            .findings
            .iter()
            .find(|f| f.code.as_str() == "doc-close-malformed")
            .expect("malformed");
        assert_eq!(f.message, format!("{name} in the marker; write ASCII '-'"));
        assert_eq!(f.line, Some(7));
        assert!(
            !parsed
                .findings
                .iter()
                .any(|f| f.code.as_str() == "doc-close-missing"),
            "a malformed line is not a missing one"
        );
    }
}

#[test]
fn legacy_state_is_refused_unless_legacy() {
    let text = MINIMAL.replace("close-ok", "done");
    let strict = doc::parse(text.as_bytes(), ParseOptions { legacy: false });
    let f = strict
        .findings
        .iter()
        .find(|f| f.code.as_str() == "doc-state-legacy")
        .expect("legacy finding");
    assert_eq!((f.severity, f.line), (Severity::Refusal, Some(3)));
    assert!(f.message.contains("write `close-ok`"), "{}", f.message);
    assert_eq!(strict.doc.unwrap().state, None);

    let lenient = doc::parse(text.as_bytes(), ParseOptions { legacy: true });
    assert_eq!(lenient.findings.len(), 1, "{:?}", lenient.findings);
    assert_eq!(lenient.findings[0].severity, Severity::Warning);
    assert_eq!(lenient.doc.unwrap().state, Some(State::CloseOk));
}

#[test]
fn every_legacy_spelling_names_its_canonical_word() {
    let pairs = [
        ("in_progress", "in-progress"),
        ("working", "in-progress"),
        ("stuck", "blocked"),
        ("stop-2", "stop-2-ready"),
        ("ready", "stop-2-ready"),
        ("done", "close-ok"),
        ("closed", "close-ok"),
        ("abandoned", "closed-without-merge"),
    ];
    for (old, new) in pairs {
        let text = format!("# STATUS — t\n- state: {old}\n");
        let parsed = doc::parse(text.as_bytes(), ParseOptions::default());
        let f = parsed
            .findings
            .iter()
            .find(|f| f.code.as_str() == "doc-state-legacy")
            .expect(old);
        assert!(
            f.message.contains(&format!("write `{new}`")),
            "{old}: {}",
            f.message
        );
    }
}

#[test]
fn unknown_keys_name_the_near_known_key() {
    let text =
        "# STATUS — t\n- State: in-progress\n- last_commit: x\n- Next/Blocked-On: y\n- colour: z\n";
    let parsed = doc::parse(text.as_bytes(), ParseOptions::default());
    let unknown: Vec<_> = parsed
        .findings
        .iter()
        .filter(|f| f.code.as_str() == "doc-key-unknown")
        .collect();
    assert_eq!(unknown.len(), 4);
    let hints = [
        "write `state`",
        "write `last commit`",
        "write `next / blocked-on`",
    ];
    for (finding, hint) in unknown.iter().zip(hints) {
        assert!(finding.message.ends_with(hint), "{}", finding.message);
    }
    assert!(
        unknown[3].message.contains("expected one of"),
        "{}",
        unknown[3].message
    );
    let lines: Vec<_> = unknown.iter().map(|f| f.line).collect();
    assert_eq!(lines, [Some(2), Some(3), Some(4), Some(5)]);
}

#[test]
fn duplicated_keys_name_both_lines() {
    let text =
        "# STATUS — t\n- state: in-progress\n- commit: abcdef0 — x\n\n- last commit: abcdef0 — y\n";
    let parsed = doc::parse(text.as_bytes(), ParseOptions::default());
    let f = parsed
        .findings
        .iter()
        .find(|f| f.code.as_str() == "doc-key-duplicated")
        .expect("duplicated");
    assert_eq!(f.line, Some(5));
    assert!(
        f.message.contains("line 5") && f.message.contains("line 3"),
        "{}",
        f.message
    );
    assert_eq!(
        parsed.doc.unwrap().last_commit.unwrap().subject,
        "x",
        "the first is kept"
    );
}

#[test]
fn decorated_states() {
    for value in [
        "close-ok (mostly)",
        "close-ok.",
        "close-ok — see note",
        "`close-ok`",
        "close-ok-pending",
        "close-ok\n  and more",
    ] {
        let text = MINIMAL.replace("close-ok", value);
        let c = codes(text.as_bytes(), false);
        assert_eq!(c, ["doc-state-decorated"], "{value:?}");
    }
    assert_eq!(
        codes(MINIMAL.replace("close-ok", "Close-OK").as_bytes(), false),
        ["doc-state-unknown"]
    );
}

#[test]
fn a_header_item_mentioning_commit_is_not_a_close_line() {
    let text = MINIMAL.replace(
        "- abstract: a",
        "- abstract: fixed · commit abc reverted the bug",
    );
    assert_eq!(codes(text.as_bytes(), false), Vec::<&str>::new());
    let wrapped = MINIMAL.replace(
        "- abstract: a",
        "- abstract: a\n  wrapped · commit abc reverted it",
    );
    assert_eq!(
        codes(wrapped.as_bytes(), false),
        Vec::<&str>::new(),
        "a continuation line is content"
    );
    let stray = MINIMAL.replace("- abstract: a", "- abstract: a\nshipped · commit abc");
    let want = [
        "doc-close-duplicated",
        "doc-close-malformed",
        "doc-close-not-last",
    ];
    assert_eq!(
        codes(stray.as_bytes(), false),
        want,
        "a column-0 line that is no item is a candidate"
    );
}

#[test]
fn find_in_message_takes_the_last_candidate() {
    let msg = "Done.\n\n    CLOSE-OK · t · commit abcdef0 · branch b · worktree /w\n";
    let close = doc::close_line::find_in_message(msg).unwrap().unwrap();
    assert_eq!((close.slug.as_str(), close.line), ("t", 3));
    assert!(doc::close_line::find_in_message("no close line here").is_none());
    let bad = doc::close_line::find_in_message("CLOSE\u{2014}OK · t").unwrap();
    assert!(bad.unwrap_err().starts_with("U+2014 EM DASH in the marker"));
}

#[test]
fn large_inputs_are_read_whole() {
    let mut text = String::from("# STATUS — t\n- state: in-progress\n");
    for i in 0..20_000 {
        text.push_str(&format!("- key{i}: v\n- note: n\n"));
    }
    text.push_str(&format!("- abstract: {}\n", "word ".repeat(200_000)));
    text.push_str(&"  continuation line\n".repeat(50_000));
    // Speed is measured by scripts/bench-lint.sh, not asserted here.
    let parsed = doc::parse(text.as_bytes(), ParseOptions::default());
    assert_eq!(
        parsed
            .findings
            .iter()
            .filter(|f| f.code.as_str() == "doc-key-unknown")
            .count(),
        20_000
    );
}

/// A valid document to mutate.
fn valid() -> Vec<u8> {
    std::fs::read(corpus_dir().join("seed-001.md")).unwrap()
}

/// Bytes that tend to reach the grammar's edges when spliced in.
fn splice() -> impl Strategy<Value = Vec<u8>> {
    let pieces: Vec<&'static [u8]> = vec![
        b"\n",
        b"\r\n",
        b"- ",
        b"  ",
        b"\t",
        b": ",
        b" \xc2\xb7 ",
        b" \xe2\x80\x94 ",
        b"CLOSE-",
        b"CLOSE\xe2\x80\x93",
        b" \xc2\xb7 commit ",
        b"`",
        b"..",
        b"/",
        b"\\",
        b"\0",
        b"\x1b[31m",
        b"\xff",
        b"\xe2\x80",
        b"\xef\xbb\xbf",
        b"- state: ",
        b"- artifacts:\n  - ",
        b"none \xe2\x80\x94 ",
        b"#",
    ];
    prop_oneof![
        proptest::sample::select(pieces).prop_map(|p| p.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..8),
    ]
}

/// Every finding is a `doc-*` code with a line inside the document (or one past it).
fn well_formed(bytes: &[u8], parsed: &closegate::doc::Parsed) {
    let lines = 1 + bytes.iter().filter(|b| **b == b'\n').count();
    for f in &parsed.findings {
        assert!(f.code.as_str().starts_with("doc-"), "{}", f.code);
        let line = f.line.expect("every doc finding has a line");
        assert!(
            (1..=lines).contains(&line),
            "{} at line {line} of {lines}",
            f.code
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), legacy in any::<bool>()) {
        let parsed = doc::parse(&bytes, ParseOptions { legacy });
        well_formed(&bytes, &parsed);
    }

    #[test]
    fn mutated_documents_never_panic(
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0usize..4, splice()), 1..6),
        legacy in any::<bool>(),
    ) {
        let mut bytes = valid();
        for (at, cut, piece) in edits {
            let at = at.index(bytes.len() + 1);
            let end = (at + cut).min(bytes.len());
            bytes.splice(at..end, piece);
        }
        let parsed = doc::parse(&bytes, ParseOptions { legacy });
        well_formed(&bytes, &parsed);
    }
}
