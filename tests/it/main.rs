//! One integration test binary: real repositories, the real `closegate` binary.

mod doc;
mod fixture;
mod lint;
