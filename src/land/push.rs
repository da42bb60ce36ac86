//! `land --push REMOTE` (SPEC §22): compose on the remote's base and push the composed commit
//! with a lease on the tip read (never a force), then the notes; the server gate judges the push.

use anyhow::{Result, bail};

use super::{Landing, Request};

pub fn run(_req: &Request, remote: &str) -> Result<Landing> {
    bail!("land --push {remote}: not built yet")
}
