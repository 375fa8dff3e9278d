//! Chooses the spec text the requirement registry embeds (`src/requirements.rs`).
//!
//! In the repository that is `spec/` itself, so an edit to the spec is seen at once. A published
//! package has no `spec/` next to it and embeds its own copy, `schema/spec/`, which
//! `chatwire-schema export` writes from `spec/` and CI keeps identical (`chatwire-schema check`).

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repository = manifest.join("..").join("spec");
    let packaged = manifest.join("spec");
    // The checkout's layout, not merely a `spec/` next to the crate (a vendor directory may hold one).
    let in_repository = manifest.file_name().is_some_and(|n| n == "schema")
        && manifest.join("..").join("Cargo.toml").is_file()
        && has_markdown(&repository);
    let dir = if in_repository { repository } else { packaged };
    // Only the directory in use: a path that does not exist would rerun this script, and rebuild
    // the crate, on every build.
    println!("cargo::rerun-if-changed={}", dir.display());
    // The include_str! calls name their files; a missing one fails the build with its path.
    if !has_markdown(&dir) {
        panic!("no spec text: neither ../spec nor spec/ holds a .md file (a package must ship spec/)");
    }
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo::rustc-env=CHATWIRE_SPEC_DIR={}", dir.display());
}

fn has_markdown(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "md")))
        .unwrap_or(false)
}
