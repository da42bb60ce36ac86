//! The trusted configuration `.closegate.toml` (SPEC §5), read from the base tip.
