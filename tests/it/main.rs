//! One integration test binary: real repositories, the real `closegate` binary.

mod approve;
mod board;
mod check;
mod checks;
mod config;
mod contract;
mod doc;
mod explain;
mod fixture;
mod guard;
mod hook;
mod lint;
mod log;
mod objects;
mod props;
mod record;
mod render;
mod sandbox;
mod scan;
mod signal;
mod teardown;
mod worktrees;
