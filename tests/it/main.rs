//! One integration test binary: real repositories, the real `closegate` binary.

mod check;
mod checks;
mod config;
mod explain;
mod fixture;
mod record;
mod render;
mod scan;
