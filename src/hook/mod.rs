//! The reference-transaction hook (SPEC §9) and the server's pre-receive hook (SPEC §20): the
//! scripts closegate writes, installing and removing them, and the decisions they run.

pub mod install;
pub mod refresh;
pub mod run;
pub mod script;
pub mod server;
