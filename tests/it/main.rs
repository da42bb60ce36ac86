//! One integration test binary: real repositories, the real `closegate` binary.

mod board;
mod check;
mod checks;
mod config;
mod contract;
mod doc;
mod explain;
mod fixture;
mod lint;
mod props;
mod record;
mod render;
