//! `closegate guard` through the binary (SPEC §10).
