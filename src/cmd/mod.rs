//! One module per subcommand: its clap arguments (whose doc is the help text) and one `run`.

pub mod agent;
pub mod approve;
pub mod board;
pub mod check;
pub mod close;
pub mod demo;
pub mod explain;
pub mod gate;
pub mod gc;
pub mod guard;
pub mod hook;
pub mod init;
pub mod key;
pub mod land;
pub mod lint;
pub mod log;
pub mod manual;
pub mod notes;
pub mod reject;
pub mod restore;
pub mod serve;
pub mod signal;
pub mod sweep;
pub mod teardown;
pub mod validate;
mod values;
