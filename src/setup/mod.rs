//! Before any agent is dispatched (SPEC §17): what `init` writes (a starter configuration, a
//! task contract) and what `validate` judges on the base tip, as data; `cmd/init.rs` and
//! `cmd/validate.rs` read the flags and print.

pub mod starter;
pub mod validate;
