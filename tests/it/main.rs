//! One integration test binary: real repositories, the real `closegate` binary.

mod fixture;
mod config;
mod record;
