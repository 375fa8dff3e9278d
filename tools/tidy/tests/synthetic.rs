//! The architecture test on synthetic trees held in memory: it fails on a planted 2-file, 3-file
//! and parent↔child circle and on a forbidden edge, passes a clean tree, and reads every form of
//! edge it defines (use trees, re-exports, `#[path]`, inline modules, macros, serde strings) and
//! none it leaves out (test code, `mod` declarations, a re-export alone).

use std::collections::BTreeSet;

use chatwire_tidy::files::Memory;
use chatwire_tidy::graph::Graph;
use chatwire_tidy::rules::{judge, Forbidden, KnownCycle, KnownViolation};
use chatwire_tidy::{rust, ts};

/// The graph of a one-crate tree rooted at `src/lib.rs`, crate `demo`; `other` is another crate of
/// the workspace.
fn graph(files: &[(&str, &str)]) -> Graph {
    let tree = files.iter().fold(Memory::new(), |tree, (path, text)| tree.with(path, text));
    let crates: BTreeSet<String> = ["demo".to_owned(), "other".to_owned()].into();
    rust::crate_graph(&tree, "demo", "src/lib.rs", &crates).unwrap_or_else(|e| panic!("the tree reads: {e}"))
}

/// The names on the edge `from -> to`, empty when there is no edge.
fn names(g: &Graph, from: &str, to: &str) -> Vec<String> {
    g.edge(from, to).map(|e| e.names.iter().cloned().collect()).unwrap_or_default()
}

const NO_RULES: &[Forbidden] = &[];

#[test]
fn a_clean_tree_passes() {
    let g = graph(&[
        ("src/lib.rs", "pub mod model;\npub mod store;\npub mod api;\n"),
        ("src/model.rs", "pub struct Item;\npub fn make() -> Item { Item }\n"),
        ("src/store.rs", "use crate::model::{self, Item};\npub fn keep(_: Item) { model::make(); }\n"),
        ("src/api.rs", "use crate::store::keep;\npub fn serve() { keep(crate::model::make()) }\n"),
    ]);
    let verdict = judge(&g, NO_RULES, &[], &[]);
    assert!(verdict.is_clean(), "{verdict}");
    assert_eq!(names(&g, "src/store.rs", "src/model.rs"), ["Item", "make"]);
    assert_eq!(names(&g, "src/api.rs", "src/store.rs"), ["keep"]);
    assert_eq!(names(&g, "src/api.rs", "src/model.rs"), ["make"]);
    assert!(g.edge("src/lib.rs", "src/model.rs").is_none(), "`mod` declarations are no edges");
}

#[test]
fn a_planted_two_file_circle_fails_and_names_what_ties_it() {
    let g = graph(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::Bee;\npub struct Ay(Bee);\n"),
        ("src/b.rs", "pub struct Bee;\npub fn back() -> crate::a::Ay { todo!() }\n"),
    ]);
    let verdict = judge(&g, NO_RULES, &[], &[]);
    assert!(!verdict.is_clean());
    let text = verdict.to_string();
    assert!(text.contains("import circle of 2 files"), "{text}");
    assert!(text.contains("src/a.rs -> src/b.rs: Bee"), "{text}");
    assert!(text.contains("src/b.rs -> src/a.rs: Ay"), "{text}");
    assert!(text.contains("src/a.rs\n      -> [Bee]\n    src/b.rs\n      -> [Ay]\n    src/a.rs"), "the chain: {text}");
}

#[test]
fn a_planted_three_file_circle_through_braces_renames_and_globs_fails() {
    let g = graph(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/a.rs", "use crate::{b::{Bee as B2}, c};\npub struct Ay;\nfn f(_: B2) { c::sea(); }\n"),
        ("src/b.rs", "use crate::c::*;\npub struct Bee;\nfn g() { let _ = Sea; }\n"),
        ("src/c.rs", "pub struct Sea;\npub fn sea() {}\nfn h(_: super::a::Ay) {}\n"),
    ]);
    let cycles = g.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].files, ["src/a.rs", "src/b.rs", "src/c.rs"]);
    assert_eq!(names(&g, "src/a.rs", "src/b.rs"), ["Bee"], "a rename names the item it renames");
    assert_eq!(names(&g, "src/a.rs", "src/c.rs"), ["sea"], "a module brought in by `use` leads on");
    assert_eq!(names(&g, "src/b.rs", "src/c.rs"), ["Sea"], "a name used through a glob");
    assert_eq!(names(&g, "src/c.rs", "src/a.rs"), ["Ay"]);
    assert!(!judge(&g, NO_RULES, &[], &[]).is_clean());
}

#[test]
fn a_parent_and_child_that_import_each_other_are_a_circle() {
    let g = graph(&[
        ("src/lib.rs", "mod monitor;\n"),
        ("src/monitor/mod.rs", "mod check;\npub struct Out;\npub fn run() { check::one(); }\n"),
        ("src/monitor/check.rs", "use super::Out;\npub fn one() -> Option<Out> { None }\n"),
    ]);
    assert_eq!(names(&g, "src/monitor/check.rs", "src/monitor/mod.rs"), ["Out"], "a child's `use super::X`");
    assert_eq!(names(&g, "src/monitor/mod.rs", "src/monitor/check.rs"), ["one"], "a parent's path into its child");
    let verdict = judge(&g, NO_RULES, &[], &[]);
    assert_eq!(verdict.new_cycles.len(), 1, "{verdict}");
}

const RULES: &[Forbidden] = &[
    Forbidden {
        name: "session-never-imports-the-transport",
        from: &["src/session/**"],
        to: &["src/transport.rs"],
        except_from: &[],
        except_feature: None,
        why: "the transport carries the session's decisions out",
    },
    Forbidden {
        name: "no-other-crate",
        from: &["src/**"],
        to: &["crate:other"],
        except_from: &["src/bundled.rs"],
        except_feature: Some("bundled"),
        why: "the harness depends on no implementation",
    },
];

#[test]
fn a_forbidden_edge_fails_unless_known_and_a_known_one_that_is_gone_is_stale() {
    let tree = [
        ("src/lib.rs", "mod session;\nmod transport;\n"),
        ("src/session/mod.rs", "mod emit;\n"),
        ("src/session/emit.rs", "use crate::transport::Outgoing;\npub fn emit(_: Outgoing) {}\n"),
        ("src/transport.rs", "pub struct Outgoing;\n"),
    ];
    let g = graph(&tree);
    let verdict = judge(&g, RULES, &[], &[]);
    assert_eq!(verdict.new_violations.len(), 1, "{verdict}");
    assert!(verdict.to_string().contains("src/session/emit.rs -> src/transport.rs: Outgoing"), "{verdict}");
    let known = [KnownViolation {
        rule: "session-never-imports-the-transport",
        from: "src/session/emit.rs",
        to: "src/transport.rs",
        why: "being moved",
    }];
    assert!(judge(&g, RULES, &[], &known).is_clean());
    let fixed = graph(&[tree[0], tree[1], ("src/session/emit.rs", "pub fn emit() {}\n"), tree[3]]);
    let verdict = judge(&fixed, RULES, &[], &known);
    assert_eq!(verdict.stale_violations.len(), 1, "{verdict}");
    assert!(verdict.to_string().contains("STALE known violation"), "{verdict}");
}

#[test]
fn another_crate_is_allowed_only_behind_the_feature_or_from_the_bundled_module() {
    let g = graph(&[
        ("src/lib.rs", "mod bundled;\nmod cli;\n#[cfg(feature = \"bundled\")]\nmod gated;\n"),
        ("src/bundled.rs", "pub fn start() { other::run() }\n"),
        ("src/gated.rs", "use other::Fault;\npub fn f(_: Fault) {}\n"),
        ("src/cli.rs", "#[cfg(feature = \"bundled\")]\nfn a() { other::run() }\nfn b() { ::other::faults(); }\n"),
    ]);
    let verdict = judge(&g, RULES, &[], &[]);
    let found: Vec<&str> = verdict.new_violations.iter().map(|v| v.from.as_str()).collect();
    assert_eq!(found, ["src/cli.rs"], "{verdict}");
    assert_eq!(names(&g, "src/cli.rs", "crate:other"), ["other"]);
}

#[test]
fn known_circles_excuse_exactly_their_files_and_go_stale_when_they_change() {
    let two = [
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/a.rs", "use crate::b::Bee;\npub struct Ay;\n"),
        ("src/b.rs", "use crate::a::Ay;\npub struct Bee;\n"),
        ("src/c.rs", "pub struct Sea;\n"),
    ];
    let known = [KnownCycle { files: &["src/b.rs", "src/a.rs"], why: "being broken" }];
    assert!(judge(&graph(&two), NO_RULES, &known, &[]).is_clean());
    // The circle grows by a file: it is new, and the entry is stale.
    let three = [
        two[0],
        two[1],
        ("src/b.rs", "use crate::c::Sea;\npub struct Bee;\n"),
        ("src/c.rs", "use crate::a::Ay;\npub struct Sea;\n"),
    ];
    let verdict = judge(&graph(&three), NO_RULES, &known, &[]);
    assert_eq!((verdict.new_cycles.len(), verdict.stale_cycles.len()), (1, 1), "{verdict}");
    // The circle is gone: the entry is stale.
    let none = [two[0], ("src/a.rs", "pub struct Ay;\n"), two[2], two[3]];
    let verdict = judge(&graph(&none), NO_RULES, &known, &[]);
    assert_eq!((verdict.new_cycles.len(), verdict.stale_cycles.len()), (0, 1), "{verdict}");
    assert!(verdict.to_string().contains("STALE known circle"), "{verdict}");
}

#[test]
fn test_code_is_left_out() {
    let g = graph(&[
        ("src/lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n"),
        (
            "src/a.rs",
            "pub struct Ay;\n#[cfg(test)]\nmod tests {\n    use crate::b::Bee;\n}\n#[cfg(all(test, unix))]\nfn helper() -> crate::b::Bee { todo!() }\n#[test]\nfn t() { crate::b::bee(); }\n",
        ),
        ("src/b.rs", "use crate::a::Ay;\npub struct Bee;\npub fn bee() {}\n"),
    ]);
    assert!(g.edge("src/a.rs", "src/b.rs").is_none(), "test code names b.rs: no edge");
    assert_eq!(names(&g, "src/b.rs", "src/a.rs"), ["Ay"]);
    assert!(g.cycles().is_empty());
}

#[test]
fn a_re_export_is_followed_to_the_defining_file_and_is_no_edge_itself() {
    let g = graph(&[
        ("src/lib.rs", "mod inner;\nmod user;\npub use inner::Thing;\npub const LIMIT: u32 = 1;\n"),
        ("src/inner.rs", "pub struct Thing;\nfn limit() -> u32 { crate::LIMIT }\n"),
        ("src/user.rs", "use crate::Thing;\nfn f(_: Thing) {}\n"),
    ]);
    assert_eq!(names(&g, "src/user.rs", "src/inner.rs"), ["Thing"]);
    assert!(g.edge("src/user.rs", "src/lib.rs").is_none());
    assert!(g.edge("src/lib.rs", "src/inner.rs").is_none(), "a `pub use` the file itself does not use");
    assert_eq!(names(&g, "src/inner.rs", "src/lib.rs"), ["LIMIT"]);
    assert!(g.cycles().is_empty(), "a facade's re-exports make no circle with what uses its own items");
}

#[test]
fn path_attributes_inline_modules_macros_and_serde_strings_are_read() {
    let g = graph(&[
        ("src/lib.rs", "#[path = \"impls/real.rs\"]\nmod shown;\nmod outer {\n    pub mod nested;\n}\nmod util;\nmod wire;\n"),
        ("src/impls/real.rs", "pub fn real() { crate::util::help() }\n"),
        ("src/outer/nested.rs", "pub fn nested() { let _ = vec![crate::util::Helper]; }\n"),
        ("src/util.rs", "pub struct Helper;\npub fn help() {}\npub fn parse<'de, D>(_: D) -> Result<u32, ()> { Ok(0) }\n"),
        (
            "src/wire.rs",
            "#[derive(Deserialize)]\npub struct Frame {\n    #[serde(deserialize_with = \"crate::util::parse\")]\n    pub n: u32,\n}\n",
        ),
    ]);
    assert_eq!(names(&g, "src/impls/real.rs", "src/util.rs"), ["help"], "a #[path] module");
    assert_eq!(
        names(&g, "src/outer/nested.rs", "src/util.rs"),
        ["Helper"],
        "a file under an inline module, a macro body"
    );
    assert_eq!(names(&g, "src/wire.rs", "src/util.rs"), ["parse"], "a serde attribute's function path");
}

#[test]
fn a_typescript_circle_fails_and_a_clean_package_passes() {
    let tree = Memory::new()
        .with("pkg/ui/items.ts", "import { schemaForm } from \"./form.js\";\nexport function el() {}\n")
        .with("pkg/ui/form.ts", "import { type Answer, el } from \"./items.js\";\nexport function schemaForm() {}\n")
        .with("pkg/ui/page.ts", "import { el } from \"./items.js\";\nimport { Client } from \"../dist/index.js\";\n")
        .with("pkg/src/index.ts", "export { Client } from \"./client.js\";\n")
        .with("pkg/src/client.ts", "export class Client {}\n");
    let g = ts::package_graph(&tree, &["pkg/src", "pkg/ui"]);
    let verdict = judge(&g, NO_RULES, &[], &[]);
    assert_eq!(verdict.new_cycles.len(), 1, "{verdict}");
    assert_eq!(verdict.new_cycles[0].files, ["pkg/ui/form.ts", "pkg/ui/items.ts"]);
    assert!(verdict.to_string().contains("pkg/ui/form.ts -> pkg/ui/items.ts: Answer, el"), "{verdict}");
    assert_eq!(names(&g, "pkg/ui/page.ts", "pkg/src/index.ts"), ["Client"], "dist/ is the package's src/");
    let clean = tree.with("pkg/ui/form.ts", "export function schemaForm() {}\n");
    assert!(judge(&ts::package_graph(&clean, &["pkg/src", "pkg/ui"]), NO_RULES, &[], &[]).is_clean());
}

#[test]
fn a_missing_module_file_is_an_error_not_a_silent_gap() {
    let tree = Memory::new().with("src/lib.rs", "mod gone;\n");
    let crates = BTreeSet::new();
    let error = rust::crate_graph(&tree, "demo", "src/lib.rs", &crates).expect_err("the module has no file");
    assert!(error.to_string().contains("src/gone.rs, src/gone/mod.rs"), "{error}");
}
