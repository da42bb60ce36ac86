//! One integration test binary: real repositories, the real `closegate` binary.

mod checks;
mod config;
mod fixture;
mod record;
