//! Rust crates: their module trees ([`tree`]) and the edges between their files ([`resolve`]).
//!
//! An edge runs from file A to file B when A names an item that B defines, through a `use` or a
//! path in its code (`crate::…`, `super::…`, `self::…`, a child module's name, a name a `use` or a
//! glob brought in; a child's `use super::X` is an edge to its parent module's file). A `mod`
//! declaration alone is no edge, nor is a `pub use` that only re-exports: what is used through it
//! is resolved to the file that defines it. Test code (`#[cfg(test)]`, `#[test]`) is left out.

pub mod resolve;
pub mod tree;

use std::collections::BTreeSet;

use crate::files::Files;
use crate::graph::Graph;

pub use tree::TreeError;

/// The graph of the files of the crate rooted at `root` (named `name` in code), with its edges to
/// the crates of `workspace_crates`.
pub fn crate_graph(
    files: &dyn Files,
    name: &str,
    root: &str,
    workspace_crates: &BTreeSet<String>,
) -> Result<Graph, TreeError> {
    let krate = tree::read_crate(files, name, root)?;
    let mut graph = Graph::new();
    resolve::add_edges(&krate, workspace_crates, &mut graph);
    Ok(graph)
}
