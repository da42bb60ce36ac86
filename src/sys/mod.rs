//! The system calls std does not offer, and the only place `unsafe` may appear (issue #31).
//!
//! Everything here goes through rustix where rustix offers the call safely (directory handles,
//! `getdents64`, `fstatat`, `renameat2`, `waitid`, `kill`, `geteuid`); what it cannot do safely
//! stays `unsafe`, allowed on the one function that needs it, each block with its SAFETY
//! comment: `fork` (the namespace probe, the detached removal), the code a check's child runs
//! between fork and exec (`PR_SET_PDEATHSIG`, `close_range`), `_exit`, and `sigaction`.
//!
//! The fence is the compiler's: Cargo.toml denies `unsafe_code` crate-wide, every other
//! top-level module of `lib.rs` is declared `#[forbid(unsafe_code)]` (which no inner `allow`
//! can lift) and `main.rs` forbids it; a test below fails when a module is declared without.
//! Why not std: its `symlink_metadata` and `ReadDir` copy every path and name (a third of the
//! scan's walk, measured with `scripts/bench.sh`), and it has no `openat`-relative removal.

pub mod env;
pub mod fs;
pub mod interrupt;
pub mod ns;
pub mod process;

pub use env::test_switch;

#[cfg(test)]
mod tests {
    /// Every module `lib.rs` declares, but `sys`, forbids `unsafe` (an attribute on the line
    /// before or on the same line), and `main.rs` forbids it: a new module cannot forget.
    #[test]
    fn every_module_but_sys_forbids_unsafe() {
        let lib = include_str!("../lib.rs");
        let lines: Vec<&str> = lib.lines().map(str::trim).collect();
        let mut modules = 0;
        for (i, line) in lines.iter().enumerate() {
            let decl = line
                .trim_start_matches("#[forbid(unsafe_code)]")
                .trim_start();
            let is_mod = ["mod ", "pub mod ", "pub(crate) mod "]
                .iter()
                .any(|p| decl.starts_with(p));
            if !is_mod {
                continue;
            }
            modules += 1;
            let name = decl
                .rsplit(' ')
                .next()
                .unwrap_or("")
                .trim_end_matches([';', '{']);
            let above = i.checked_sub(1).map_or("", |j| lines[j]);
            let forbids =
                line.starts_with("#[forbid(unsafe_code)]") || above == "#[forbid(unsafe_code)]";
            if name == "sys" {
                assert!(!forbids, "sys is where unsafe lives");
            } else {
                assert!(forbids, "src/lib.rs: `{line}` lacks #[forbid(unsafe_code)]");
            }
        }
        assert!(
            modules > 30,
            "found only {modules} module declarations in src/lib.rs"
        );
        assert!(
            lib.contains("#![deny(unsafe_code)]"),
            "src/lib.rs: the crate root denies unsafe"
        );
        let main = include_str!("../main.rs");
        assert!(
            main.contains("#![forbid(unsafe_code)]"),
            "src/main.rs forbids unsafe"
        );
    }
}
