//! Which file defines what a path names, and so the edges of a crate's files.
//!
//! A path is resolved as the compiler would, as far as the sources show it: `crate`, `self`,
//! `super` and `$crate` start where they say; any other first segment is looked up in the
//! module (a child module, an item, a `use` name, then its globs) and else taken for a crate of
//! the workspace (another crate's name) or left alone (the standard library, a dependency, a local
//! binding). A `use` is followed to what it names, so a name re-exported by `pub use` resolves to
//! the file that defines it. A name a module's sources do not show (made by a macro) is taken to
//! be defined by that module's file.

use std::collections::BTreeSet;

use super::tree::{Crate, UseDecl};
use crate::graph::{Graph, CRATE_PREFIX};

/// How deep `use` chains and globs are followed before giving up (a glob cycle).
const MAX_DEPTH: usize = 32;

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    /// A module.
    Module(usize),
    /// An item named `name`, defined by the module.
    Item(usize, String),
    /// Another crate (the name as code writes it).
    Crate(String),
    /// Nothing this crate defines (the standard library, a dependency, a local name).
    Outside,
}

/// Adds the edges between the files of `krate` to `graph`, and those to the crates of
/// `workspace_crates` (names as code writes them, `chatwire_schema`).
pub fn add_edges(krate: &Crate, workspace_crates: &BTreeSet<String>, graph: &mut Graph) {
    let resolver = Resolver { krate, workspace_crates };
    for (id, module) in krate.modules.iter().enumerate() {
        graph.add_node(&module.file);
        for decl in &module.uses {
            let Some(name) = &decl.name else { continue };
            // A re-export is a passage, not a use: only the module's own code using the name makes
            // it an edge of this file.
            if decl.public && !module.idents.contains(name) {
                continue;
            }
            let target = resolver.use_target(id, decl, 0);
            resolver.add(graph, &module.file, target, &decl.gates);
        }
        for path in &module.refs {
            let target = if path.absolute {
                resolver.crate_of(&path.segments[0])
            } else {
                resolver.resolve(id, &path.segments, 0)
            };
            resolver.add(graph, &module.file, target, &path.gates);
        }
    }
}

struct Resolver<'k> {
    krate: &'k Crate,
    workspace_crates: &'k BTreeSet<String>,
}

impl Resolver<'_> {
    fn add(&self, graph: &mut Graph, from: &str, target: Target, gates: &BTreeSet<String>) {
        match target {
            Target::Item(module, name) => graph.add_edge(from, &self.krate.modules[module].file, &name, gates),
            Target::Crate(name) => graph.add_edge(from, &format!("{CRATE_PREFIX}{name}"), &name, gates),
            Target::Module(_) | Target::Outside => {}
        }
    }

    fn crate_of(&self, name: &str) -> Target {
        if name != self.krate.name && self.workspace_crates.contains(name) {
            Target::Crate(name.to_owned())
        } else {
            Target::Outside
        }
    }

    /// What the `use` declaration `decl` of module `module` names.
    fn use_target(&self, module: usize, decl: &UseDecl, depth: usize) -> Target {
        if decl.absolute {
            return decl.path.first().map_or(Target::Outside, |first| self.crate_of(first));
        }
        self.resolve(module, &decl.path, depth)
    }

    /// What `segments`, written in `module`, names.
    fn resolve(&self, module: usize, segments: &[String], depth: usize) -> Target {
        let Some((first, rest)) = segments.split_first() else { return Target::Module(module) };
        let start = match first.as_str() {
            "crate" => Target::Module(0),
            "self" => Target::Module(module),
            "super" => match self.krate.modules[module].parent {
                Some(parent) => Target::Module(parent),
                None => return Target::Outside,
            },
            "Self" => return Target::Outside,
            name => match self.lookup(module, name, depth) {
                Some(found) => found,
                None => return self.crate_of(name),
            },
        };
        match start {
            Target::Module(m) => self.walk(m, rest, depth),
            other => other,
        }
    }

    /// Walks `segments` down from module `at`: modules lead on, the first item ends the walk.
    fn walk(&self, mut at: usize, segments: &[String], depth: usize) -> Target {
        for segment in segments {
            if segment == "super" {
                match self.krate.modules[at].parent {
                    Some(parent) => at = parent,
                    None => return Target::Outside,
                }
                continue;
            }
            if segment == "self" {
                continue;
            }
            match self.lookup(at, segment, depth) {
                Some(Target::Module(m)) => at = m,
                Some(found) => return found,
                // Not to be seen in the sources (made by a macro): the module's file makes it.
                None => return Target::Item(at, segment.clone()),
            }
        }
        Target::Module(at)
    }

    /// The name `name` in module `at`: a child module, an item, a `use` name, then a name of its
    /// globs (and the crate root's exported macros).
    fn lookup(&self, at: usize, name: &str, depth: usize) -> Option<Target> {
        if depth > MAX_DEPTH {
            return None;
        }
        let module = &self.krate.modules[at];
        if let Some(child) = module.children.get(name) {
            return Some(Target::Module(*child));
        }
        if module.items.contains(name) {
            return Some(Target::Item(at, name.to_owned()));
        }
        if at == 0 {
            if let Some(defining) = self.krate.macro_exports.get(name) {
                return Some(Target::Item(*defining, name.to_owned()));
            }
        }
        if let Some(decl) = module.uses.iter().find(|d| d.name.as_deref() == Some(name)) {
            return Some(self.use_target(at, decl, depth + 1));
        }
        for glob in module.uses.iter().filter(|d| d.name.is_none()) {
            if let Target::Module(source) = self.use_target(at, glob, depth + 1) {
                if let Some(found) = self.lookup(source, name, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }
}
