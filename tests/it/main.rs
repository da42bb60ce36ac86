//! One integration test binary: real repositories, the real `closegate` binary.

mod approve;
mod board;
mod check;
mod checks;
mod close;
mod config;
mod contract;
mod doc;
mod explain;
mod fixture;
mod guard;
mod hook;
mod inputs;
mod integrity;
mod keyed;
mod layouts;
mod lint;
mod log;
mod objects;
mod props;
mod record;
mod render;
mod scan;
mod signal;
mod teardown;
mod worktrees;
