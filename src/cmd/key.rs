//! `closegate key init`: create the record key that authenticates the audit log (SPEC §6).

use std::io::Write;

use anyhow::Result;

use crate::record::key;

/// Manage the record key that authenticates audit records
///
/// The key lives outside every repository: $CLOSEGATE_RECORD_KEY_FILE, else
/// $XDG_CONFIG_HOME/closegate/record.key, else ~/.config/closegate/record.key. With a key, every
/// record written carries an HMAC-SHA256 `mac` chained through `prev`, and the hook, approvals,
/// the board and `log --stats` ignore records without a valid one
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Create the record key: 32 random bytes, mode 0600; never overwrites an existing key
    /// (exit 0 created, 1 refused because a key exists, 2 error)
    Init,
}

pub fn run(args: Args) -> Result<i32> {
    match args.action {
        Action::Init => init(),
    }
}

fn init() -> Result<i32> {
    let Some(loc) = key::location() else {
        anyhow::bail!(
            "no place for the record key: set {} or HOME (or XDG_CONFIG_HOME)",
            key::ENV
        );
    };
    if loc.path.symlink_metadata().is_ok() {
        eprintln!(
            "closegate: {} already exists; a record key is never overwritten",
            loc.path.display()
        );
        return Ok(1);
    }
    key::create(&loc.path)?;
    let mut out = crate::term::human();
    writeln!(out, "created the record key {}", loc.path.display())?;
    writeln!(
        out,
        "records written from now on are authenticated; keep the key where agents cannot read it"
    )?;
    Ok(0)
}
