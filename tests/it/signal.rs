//! `closegate signal` through the binary (SPEC §10).
