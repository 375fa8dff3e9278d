//! The repository held to ARCHITECTURE.md's invariants: no import circle in any crate of the
//! workspace or in the npm package's TypeScript (`tools/npm/src`, `tools/npm/ui`), and no forbidden
//! edge, except those listed below as known, each with why it is still there.
//!
//! The known lists only shrink: a listed circle or edge the tree no longer has fails the test
//! ("stale": remove the entry, or list what is left of a circle that shrank), and so does any
//! circle or forbidden edge not listed. A circle is listed by its exact set of files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chatwire_tidy::files::Disk;
use chatwire_tidy::graph::Graph;
use chatwire_tidy::rules::{judge, Forbidden, KnownCycle, KnownViolation};
use chatwire_tidy::{ts, workspace};

/// The npm package's TypeScript: the library and the chat page.
const NPM_DIRS: &[&str] = &["tools/npm/src", "tools/npm/ui"];

/// What must never import what (ARCHITECTURE.md, "Architecture Invariant").
const FORBIDDEN: &[Forbidden] = &[
    Forbidden {
        name: "schema-imports-no-project-crate",
        from: &["schema/**"],
        to: &["crate:*"],
        except_from: &[],
        except_feature: None,
        why: "chatwire-schema is the protocol's one source of truth: every other crate depends on it, it on none of them",
    },
    Forbidden {
        name: "session-never-imports-the-transport",
        from: &["tools/reference/src/session.rs", "tools/reference/src/session/**"],
        to: &["tools/reference/src/transport.rs", "tools/reference/src/transport/**"],
        except_from: &[],
        except_feature: None,
        why: "the session core decides and returns frames, commits and timers; the transport carries them out, never the other way",
    },
    Forbidden {
        name: "monitor-never-imports-the-scenario-format",
        from: &["conformance/monitor/**"],
        to: &["conformance/src/scenario.rs", "conformance/src/step.rs", "crate:chatwire_conformance"],
        except_from: &[],
        except_feature: None,
        why: "the monitor judges any session's frames (a run, a wire log, soak), so it cannot depend on how a scenario is written",
    },
    Forbidden {
        name: "runner-depends-on-no-implementation",
        from: &["conformance/src/**"],
        to: &["crate:chatwire_reference"],
        except_from: &["conformance/src/bundled_reference.rs"],
        except_feature: None,
        why: "the harness tests any backend; the bundled reference is a convenience in the bundled_reference module, \
              compiled only with the default-on bundled-reference feature",
    },
];

/// Circles the tree has today outside `schema/` and `tools/npm/src/`, each with who breaks it: none
/// since issue #32 broke the last (the driver's, cli's, soak's and pgtmp's). Remove an entry when
/// its circle is gone; when a circle shrinks, list what is left.
const KNOWN_CYCLES: &[KnownCycle] = &[];

/// Forbidden edges the tree has today, each with who removes it (issue #32).
const KNOWN_VIOLATIONS: &[KnownViolation] = &[];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The graph of the whole repository: every crate's files and the npm package's.
fn repository_graph() -> (Graph, Vec<workspace::Package>) {
    let root = repo_root();
    let files = Disk::new(&root);
    let packages = workspace::packages(&root).unwrap_or_else(|e| panic!("the workspace: {e}"));
    let mut graph = workspace::rust_graph(&files, &packages).unwrap_or_else(|e| panic!("the Rust sources: {e}"));
    graph.extend(ts::package_graph(&files, NPM_DIRS));
    (graph, packages)
}

#[test]
fn the_tree_keeps_the_architecture_invariants_but_the_known_exceptions() {
    let (graph, _) = repository_graph();
    let verdict = judge(&graph, FORBIDDEN, KNOWN_CYCLES, KNOWN_VIOLATIONS);
    assert!(verdict.is_clean(), "ARCHITECTURE.md's invariants are broken:\n{verdict}");
}

#[test]
fn the_schema_crate_and_the_npm_package_have_no_circle_at_all() {
    let (graph, _) = repository_graph();
    for cycle in graph.cycles() {
        let exempt = |f: &String| !f.starts_with("schema/") && !f.starts_with("tools/npm/src/");
        assert!(cycle.files.iter().all(exempt), "no circle may be listed here:\n{cycle}");
    }
}

#[test]
fn the_schema_crate_depends_on_no_crate_of_the_project() {
    let (_, packages) = repository_graph();
    let schema = packages.iter().find(|p| p.name == "chatwire-schema").expect("the schema crate is a member");
    assert!(schema.depends_on.is_empty(), "chatwire-schema depends on {:?}", schema.depends_on);
    let members: BTreeSet<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    for expected in [
        "chatwire-schema",
        "chatwire-monitor",
        "chatwire-conformance",
        "chatwire-reference",
        "chatwire-schema-tool",
        "chatwire-tidy",
    ] {
        assert!(members.contains(expected), "{expected} is read by the test");
    }
}
