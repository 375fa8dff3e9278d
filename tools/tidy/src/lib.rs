//! # chatwire-tidy
//!
//! The architecture invariants of `ARCHITECTURE.md`, checked on the tree: no import circle between
//! the files (modules) of any crate of the workspace or of the npm package's TypeScript, and no
//! forbidden edge (`session` → transport, the monitor → the scenario format, the schema crate →
//! any other crate of the project, …). The test `tests/architecture.rs` holds the repository to
//! them, with the circles and edges known today listed (each with why) so the lists only shrink.
//!
//! What an edge is, exactly:
//! - Rust ([`rust`]): file A → file B when A names an item B defines, through a `use` or a path in
//!   its code (`crate::…`, `super::…`, `self::…`, a child module, a name a `use` or glob brought
//!   in; a child's `use super::X` makes an edge to its parent module's file). `use` trees with
//!   braces, globs and renames are followed; a `pub use` that only re-exports is no edge, and a
//!   name used through it resolves to the file that defines it. `mod` declarations alone are no
//!   edges. Paths in macro bodies and in serde's `with = "crate::…"` strings count. Nested inline
//!   modules and `#[path]` are followed. Test code is left out: `#[cfg(test)]` items and modules,
//!   `#[test]` functions, and `tests/`, `benches/`, `examples/` (not library or binary targets).
//! - TypeScript ([`ts`]): file A → file B when A imports or re-exports from B by a relative
//!   specifier (type imports included).

pub mod files;
pub mod graph;
pub mod rules;
pub mod rust;
pub mod ts;
pub mod workspace;
