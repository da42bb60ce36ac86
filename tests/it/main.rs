//! One integration test binary: real repositories, the real `closegate` binary.

mod board;
mod check;
mod checks;
mod config;
mod contract;
mod explain;
mod fixture;
mod record;
mod render;
