//! The task contract (SPEC §12) on any bytes.
//!
//! Beyond "no panic": a refusal says why; an accepted contract's branch is a valid branch name,
//! its required artifacts valid repository paths (the manifest's rules), and reading it again
//! gives the same contract.
#![no_main]

use closegate::contract::parse;
use closegate::doc::artifact_path_fault;
use closegate::doc::close_line::branch_fault;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let contract = match parse(data) {
        Ok(contract) => contract,
        Err(msg) => {
            assert!(!msg.trim().is_empty());
            return;
        }
    };
    if let Some(branch) = &contract.branch {
        assert!(branch_fault(branch).is_none(), "{branch}");
    }
    for path in &contract.required_artifacts {
        assert!(artifact_path_fault(path).is_none(), "{path}");
    }
    for globs in [&contract.scope, &contract.prohibited]
        .into_iter()
        .flatten()
    {
        let _ = globs.is_match("src/a.rs");
    }
    let again = parse(data).expect("parsed once");
    assert_eq!(format!("{again:?}"), format!("{contract:?}"));
});
