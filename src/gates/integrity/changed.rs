//! What the overlays put back (SPEC §23, §26.4): every changed path of the overlaid surfaces,
//! whole (the bytes git stores, so a name that is not UTF-8 is put back like any other), and the
//! test modules inside changed Rust source files, spliced (the commit's code with the base's
//! `#[cfg(test)]` modules, and the reverse).

use anyhow::Result;
use git2::Oid;

use super::Ctx;
use crate::config::Config;
use crate::gates::protected::inline::{self, Inline};
use crate::gates::protected::rust_items;
use crate::repo::{Change, ChangeKind};

/// A changed path the overlays judge: the bytes git stores, the path as printed, its change,
/// and how the overlays put the base's version back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub bytes: Vec<u8>,
    pub text: String,
    pub kind: ChangeKind,
    pub how: How,
}

/// A file the overlay writes: its path and its new content.
pub type Rewrite = (Vec<u8>, Vec<u8>);

/// How the overlays put a changed path back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// The path is a test path: restored whole from the other tree.
    Whole,
    /// A source file with test modules inside: the overlay's and the reverse overlay's version
    /// of it (`None` where the file is absent on the side spliced onto), and what changed.
    Spliced {
        overlay: Option<Vec<u8>>,
        reverse: Option<Vec<u8>>,
        inline: Box<Inline>,
    },
    /// A source file whose test modules cannot be moved (one inside another item, or a side
    /// that does not read as Rust): the overlays leave it as each tree has it.
    Unspliced,
}

/// The changed paths the overlays put back: test paths (both sides of a rename: the old side a
/// deletion, the new an addition) and source files whose test modules changed.
pub fn changed(ctx: &Ctx<'_>) -> Result<Vec<Changed>> {
    let mut out = whole(ctx.config, ctx.changes);
    let inline = inline::inline_changes(
        ctx.repo,
        ctx.config,
        ctx.changes,
        ctx.merge_base,
        ctx.commit,
    )?;
    for found in inline {
        if found.modules.is_empty() {
            continue; // only code that tests whether it runs under test: nothing to put back
        }
        let kind = match found.modules.as_slice() {
            [(_, kind)] => *kind,
            _ => ChangeKind::Modified,
        };
        let how = match (found.whole_file, found.overlay(ctx.config)) {
            (true, _) => How::Whole,
            (false, Some((overlay, reverse))) => How::Spliced {
                overlay,
                reverse,
                inline: Box::new(found.clone()),
            },
            (false, None) => How::Unspliced,
        };
        out.push(Changed {
            bytes: found.bytes,
            text: found.text,
            kind,
            how,
        });
    }
    Ok(out)
}

/// The changed paths on the overlaid surfaces, both sides of a rename, each with its change.
fn whole(config: &Config, changes: &[Change]) -> Vec<Changed> {
    let surfaces = config.integrity_surfaces();
    let mut out: Vec<Changed> = Vec::new();
    for change in changes {
        for (bytes, text) in change.touched() {
            let on = surfaces.iter().any(|s| s.is_match(bytes));
            if on && !out.iter().any(|c| c.bytes == bytes) {
                // A rename's old side is gone from the commit: for the overlays it is a
                // deletion; its new side an addition.
                let kind = match change.kind {
                    ChangeKind::Renamed if bytes == change.old_bytes => ChangeKind::Deleted,
                    ChangeKind::Renamed => ChangeKind::Added,
                    kind => kind,
                };
                out.push(Changed {
                    bytes: bytes.to_vec(),
                    text: text.to_string(),
                    kind,
                    how: How::Whole,
                });
            }
        }
    }
    out
}

/// The paths restored whole and the files rewritten, for the overlay (`reverse` false) or the
/// reverse overlay.
pub fn put_back(changed: &[Changed], reverse: bool) -> (Vec<Vec<u8>>, Vec<Rewrite>) {
    let mut paths = Vec::new();
    let mut rewrites = Vec::new();
    for c in changed {
        match &c.how {
            How::Whole => paths.push(c.bytes.clone()),
            How::Spliced {
                overlay,
                reverse: back,
                ..
            } => {
                let content = if reverse { back } else { overlay };
                if let Some(content) = content {
                    rewrites.push((c.bytes.clone(), content.clone()));
                }
            }
            How::Unspliced => {}
        }
    }
    (paths, rewrites)
}

/// Why an overlay that failed proves nothing (SPEC §26.4: inconclusive, not weakened): a Rust
/// source file of the overlay declares a module whose file the overlay removed — a test file
/// the branch added, with its declaration left behind (the test module moved out of a source
/// file where it could not be moved back). `None` when no such declaration is left.
pub fn dangling(ctx: &Ctx<'_>, changed: &[Changed], overlay: Oid) -> Result<Option<String>> {
    let removed: Vec<&Changed> = changed
        .iter()
        .filter(|c| c.kind == ChangeKind::Added && matches!(c.how, How::Whole))
        .collect();
    if removed.is_empty() {
        return Ok(None);
    }
    for change in ctx.changes {
        let path = change.new_bytes.as_slice();
        if change.kind == ChangeKind::Deleted || !path.ends_with(b".rs") {
            continue;
        }
        if removed.iter().any(|r| r.bytes == path) {
            continue;
        }
        let spliced = changed.iter().find_map(|c| match &c.how {
            How::Spliced { overlay, .. } if c.bytes == path => Some(overlay.clone()),
            _ => None,
        });
        let source = match spliced {
            Some(content) => content,
            None => ctx.repo.read_file(ctx.commit, path)?,
        };
        let Some(source) = source else { continue };
        let Some(decls) = rust_items::regions(&source, &|_, _| true) else {
            continue;
        };
        for decl in decls.iter().filter(|d| !d.inline && d.depth == 0) {
            let files = inline::module_files(path, &decl.name, decl.path_attr.as_deref());
            let Some(gone) = removed.iter().find(|r| files.contains(&r.bytes)) else {
                continue;
            };
            let mut present = false;
            for file in &files {
                present |= ctx.repo.try_tree_entry(overlay, file)?.is_some();
            }
            if !present {
                return Ok(Some(format!(
                    "the overlay does not build: `{}` declares `mod {}`, whose file `{}` the \
                     branch added and the overlay removed (test code moved between files)",
                    crate::repo::path_text(path),
                    decl.name,
                    gone.text
                )));
            }
        }
    }
    Ok(None)
}
