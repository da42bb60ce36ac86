//! The test switches: environment variables only a debug build reads.

/// A test switch from the environment (`CLOSEGATE_TEST_NO_SANDBOX`, `CLOSEGATE_TEST_FAILPOINT`,
/// `CLOSEGATE_TEST_FAILPOINT_DIR`, `CLOSEGATE_TRACE_CODES`, `CLOSEGATE_TEST_LAND_BEFORE_MOVE`). Only builds with debug assertions
/// read one (`cargo test` builds the binary that way); a release build never does, so no
/// environment a hook or a check inherits can take the sandbox away, stop a teardown midway or
/// have closegate append to a file it names.
pub fn test_switch(name: &str) -> Option<std::ffi::OsString> {
    if cfg!(debug_assertions) {
        std::env::var_os(name)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A debug build reads the switch from the environment; a release build never does.
    #[test]
    fn only_a_debug_build_reads_the_switch() {
        assert_eq!(test_switch("CLOSEGATE_TEST_SURELY_UNSET_SWITCH"), None);
        let path = std::env::var_os("PATH");
        assert!(path.is_some());
        let expected = if cfg!(debug_assertions) { path } else { None };
        assert_eq!(test_switch("PATH"), expected);
    }
}
