//! All libgit2 use lives here: owned values out, "not found" as `Option`.
