//! The reference-transaction hook (SPEC §9): the script closegate writes, installing and
//! removing it, and the decision it runs.

pub mod install;
pub mod run;
pub mod script;
