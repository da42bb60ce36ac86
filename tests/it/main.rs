//! One integration test binary: real repositories, the real `closegate` binary.

mod approve;
mod check;
mod checks;
mod config;
mod explain;
mod fixture;
mod log;
mod record;
mod render;
mod teardown;
