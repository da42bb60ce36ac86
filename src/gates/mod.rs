//! The gate sequence (SPEC §4), written once: doc, state, close, manifest, protected, checks, contract.
pub mod checks;
