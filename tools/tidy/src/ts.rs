//! TypeScript modules: the edges of `import … from "./x.js"` and `export … from "./x.js"`.
//!
//! A statement is read where it starts a line (after indentation): `import`, `import type`,
//! `export { … } from`, `export * from`, and a bare `import "./x.js"`; a statement that spans lines
//! is read up to its module specifier. Only relative specifiers are edges, resolved to the `.ts`
//! file they name (`./x.js` is `x.ts`); `dist/` of a package is its `src/`. The names are the
//! imported bindings (`type` imports included: a type is a dependency too), `*` for a namespace or
//! star import, `default` for a default import, nothing for a bare import.

use std::collections::BTreeSet;

use crate::files::{self, Files};
use crate::graph::Graph;

/// One import or re-export statement of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The module specifier as written (`./items.js`).
    pub specifier: String,
    /// The bindings it takes.
    pub names: Vec<String>,
}

/// The import statements of a TypeScript source.
pub fn imports(text: &str) -> Vec<Import> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let starts = line.starts_with("import ")
            || line.starts_with("import{")
            || line.starts_with("import\"")
            || line.starts_with("import'")
            || line.starts_with("export {")
            || line.starts_with("export type {")
            || line.starts_with("export *");
        if !starts {
            i += 1;
            continue;
        }
        // Gather the statement until its specifier (a quoted string after `from`, or right after
        // `import` for a bare import), at most a few dozen lines.
        let mut statement = String::new();
        let mut j = i;
        while j < lines.len() && j < i + 64 {
            statement.push_str(lines[j]);
            statement.push('\n');
            j += 1;
            if specifier(&statement).is_some() || statement.contains(';') {
                break;
            }
        }
        if let Some((spec, clause)) = specifier(&statement) {
            // `export { x };` re-exports a local name: no specifier, not an import.
            out.push(Import { specifier: spec, names: bindings(&clause) });
        }
        i = j;
    }
    out
}

/// The module specifier of an import statement and the clause before it.
fn specifier(statement: &str) -> Option<(String, String)> {
    let (clause, rest) = if let Some(at) = statement.find(" from") {
        (&statement[..at], statement[at + " from".len()..].trim_start())
    } else {
        let rest = statement.trim_start().strip_prefix("import")?.trim_start();
        ("", rest)
    };
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some((body[..end].to_owned(), clause.to_owned()))
}

/// The bindings of an import clause (`import a, { b, type c as d } from`).
fn bindings(clause: &str) -> Vec<String> {
    let clause = clause.trim();
    let clause = clause.strip_prefix("import").or_else(|| clause.strip_prefix("export")).unwrap_or(clause).trim();
    let clause = clause.strip_prefix("type ").unwrap_or(clause).trim();
    let mut names = Vec::new();
    if clause.contains('*') {
        names.push("*".to_owned());
    }
    let (before, braces) = match (clause.find('{'), clause.rfind('}')) {
        (Some(open), Some(close)) if open < close => (&clause[..open], &clause[open + 1..close]),
        _ => (clause, ""),
    };
    let default = before.trim().trim_end_matches(',').trim();
    if !default.is_empty() && !default.contains('*') {
        names.push("default".to_owned());
    }
    for part in braces.split(',') {
        let part = part.trim();
        let part = part.strip_prefix("type ").unwrap_or(part).trim();
        // `a as b` takes `a`.
        let name = part.split_whitespace().next().unwrap_or("");
        if !name.is_empty() {
            names.push(name.to_owned());
        }
    }
    names
}

/// The file a relative specifier of `from` names, if it is one of `known`.
fn resolve(from: &str, spec: &str, known: &BTreeSet<String>) -> Option<String> {
    if !spec.starts_with("./") && !spec.starts_with("../") {
        return None;
    }
    let joined = files::normalize(&files::join(files::parent(from), spec));
    let stem = joined.strip_suffix(".js").or_else(|| joined.strip_suffix(".ts")).unwrap_or(&joined);
    let candidates = [format!("{stem}.ts"), stem.replace("/dist/", "/src/") + ".ts", format!("{stem}/index.ts")];
    candidates.into_iter().find(|c| known.contains(c))
}

/// The graph of the `.ts` files directly in each of `dirs` (declaration files left out).
pub fn package_graph(files: &dyn Files, dirs: &[&str]) -> Graph {
    let sources: BTreeSet<String> =
        dirs.iter().flat_map(|dir| files.list(dir)).filter(|p| p.ends_with(".ts") && !p.ends_with(".d.ts")).collect();
    let mut graph = Graph::new();
    for file in &sources {
        graph.add_node(file);
        let Some(text) = files.read(file) else { continue };
        for import in imports(&text) {
            if let Some(target) = resolve(file, &import.specifier, &sources) {
                for name in &import.names {
                    graph.add_edge(file, &target, name, &BTreeSet::new());
                }
                if import.names.is_empty() {
                    graph.add_edge(file, &target, "(side effects)", &BTreeSet::new());
                }
            }
        }
    }
    graph
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_forms_give_their_specifiers_and_bindings() {
        let text = r#"// a comment: import nothing from "./not.js"
import { a, type B, c as d } from "./one.js";
import type { E } from "../dist/index.js";
import f, { g } from './two.js';
import * as ns from "./three.js";
import "./side.js";
export { h } from "./four.js";
export * from "./five.js";
export const notAnImport = 1;
import {
  multi,
  line,
} from "./six.js";
"#;
        let found: Vec<(String, Vec<String>)> = imports(text).into_iter().map(|i| (i.specifier, i.names)).collect();
        let expect =
            |spec: &str, names: &[&str]| (spec.to_owned(), names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
        assert_eq!(
            found,
            vec![
                expect("./one.js", &["a", "B", "c"]),
                expect("../dist/index.js", &["E"]),
                expect("./two.js", &["default", "g"]),
                expect("./three.js", &["*"]),
                expect("./side.js", &[]),
                expect("./four.js", &["h"]),
                expect("./five.js", &["*"]),
                expect("./six.js", &["multi", "line"]),
            ]
        );
    }

    #[test]
    fn relative_specifiers_resolve_to_ts_files_and_dist_to_src() {
        let known: BTreeSet<String> = ["pkg/ui/a.ts", "pkg/src/index.ts"].iter().map(|s| s.to_string()).collect();
        assert_eq!(resolve("pkg/ui/b.ts", "./a.js", &known).as_deref(), Some("pkg/ui/a.ts"));
        assert_eq!(resolve("pkg/ui/b.ts", "../dist/index.js", &known).as_deref(), Some("pkg/src/index.ts"));
        assert_eq!(resolve("pkg/ui/b.ts", "ws", &known), None);
    }
}
