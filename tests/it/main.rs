//! One integration test binary: real repositories, the real `closegate` binary.

mod explain;
mod fixture;
mod render;
