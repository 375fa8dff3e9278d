//! A crate's module tree as its sources declare it: each module's file, child modules, items,
//! `use` declarations and the paths its code names. Read with `syn`, nothing is built or expanded.
//!
//! Test code is left out: an item or module under `#[cfg(test)]` (or `cfg(all(test, …))`), and a
//! `#[test]` function. An item under `#[cfg(feature = "x")]` gates what it names behind `x`.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::files::{self, Files};

/// Why a crate's sources could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// A file the tree needs is missing.
    #[error("{file}: `mod {module};` names no file (looked for {looked_for})")]
    MissingModule {
        /// The file that declares the module.
        file: String,
        /// The module.
        module: String,
        /// The paths tried.
        looked_for: String,
    },
    /// A file is not Rust `syn` can read.
    #[error("{file}: not readable as Rust: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// The crate root is missing.
    #[error("{0}: no such crate root")]
    MissingRoot(String),
}

/// One `use` declaration, flattened: `use a::{b as c, d::*}` is two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseDecl {
    /// The name it brings into scope; `None` for a glob.
    pub name: Option<String>,
    /// The path it names, its first segment as written (`crate`, `super`, `self`, a name).
    pub path: Vec<String>,
    /// Whether it starts with `::` (an extern crate).
    pub absolute: bool,
    /// Whether it is a re-export (`pub`, `pub(crate)`, …).
    pub public: bool,
    /// The cargo features it is gated behind.
    pub gates: BTreeSet<String>,
}

/// A path the module's code names (a type, an expression, a pattern, a macro's tokens, a serde
/// attribute's function name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRef {
    /// Its segments, as written.
    pub segments: Vec<String>,
    /// Whether it starts with `::`.
    pub absolute: bool,
    /// The cargo features it is gated behind.
    pub gates: BTreeSet<String>,
}

/// One module of a crate.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The file that holds the module's items (an inline module's is its parent's).
    pub file: String,
    /// The parent module; `None` for the crate root.
    pub parent: Option<usize>,
    /// Child modules by name.
    pub children: BTreeMap<String, usize>,
    /// Names of the items defined here (functions, types, traits, constants, statics, macros).
    pub items: BTreeSet<String>,
    /// Its `use` declarations, including those inside function bodies.
    pub uses: Vec<UseDecl>,
    /// The paths its code names.
    pub refs: Vec<PathRef>,
    /// Every identifier its code names outside `use` declarations: a re-exported name the
    /// module's own code also uses makes the re-export an edge.
    pub idents: BTreeSet<String>,
}

/// A crate's modules; the root is `modules[0]`.
#[derive(Clone, Debug)]
pub struct Crate {
    /// The crate's name as code names it (`chatwire_schema`).
    pub name: String,
    /// Its modules.
    pub modules: Vec<Module>,
    /// `#[macro_export]` macros, which live at the crate root, with the module that defines them.
    pub macro_exports: BTreeMap<String, usize>,
}

/// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`).
pub fn read_crate(files: &dyn Files, name: &str, root: &str) -> Result<Crate, TreeError> {
    let text = files.read(root).ok_or_else(|| TreeError::MissingRoot(root.to_owned()))?;
    let mut reader =
        Reader { files, krate: Crate { name: name.to_owned(), modules: Vec::new(), macro_exports: BTreeMap::new() } };
    let parsed = parse(root, &text)?;
    reader.krate.modules.push(Module { file: root.to_owned(), ..Module::default() });
    let place = Place { file: root.to_owned(), mod_rs: true, inline: Vec::new() };
    reader.items(0, &place, &parsed.items, &BTreeSet::new())?;
    Ok(reader.krate)
}

fn parse(file: &str, text: &str) -> Result<syn::File, TreeError> {
    syn::parse_file(text).map_err(|e| TreeError::Parse { file: file.to_owned(), message: e.to_string() })
}

/// Where a module's items are written: the file, whether it is a `mod.rs`-like file (a crate
/// root, `mod.rs`, a `#[path]` file) whose child modules sit beside it, and the inline modules
/// (`mod a { … }`) between the file and the items.
struct Place {
    file: String,
    mod_rs: bool,
    inline: Vec<String>,
}

impl Place {
    /// The directory the files of this place's child modules sit in.
    fn child_dir(&self) -> String {
        let dir = files::parent(&self.file);
        let mut base = if self.mod_rs {
            dir.to_owned()
        } else {
            let stem = self.file.rsplit('/').next().unwrap_or(&self.file).trim_end_matches(".rs");
            files::join(dir, stem)
        };
        for name in &self.inline {
            base = files::join(&base, name);
        }
        base
    }
}

struct Reader<'f> {
    files: &'f dyn Files,
    krate: Crate,
}

impl Reader<'_> {
    fn items(
        &mut self,
        module: usize,
        place: &Place,
        items: &[syn::Item],
        gates: &BTreeSet<String>,
    ) -> Result<(), TreeError> {
        for item in items {
            let attrs = item_attrs(item);
            if is_test_only(attrs) {
                continue;
            }
            let gates = with_features(gates, attrs);
            match item {
                syn::Item::Mod(m) => self.module(module, place, m, &gates)?,
                syn::Item::Use(u) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    flatten_use(&u.tree, &mut Vec::new(), u.leading_colon.is_some(), public, &gates, &mut |decl| {
                        self.krate.modules[module].uses.push(decl)
                    });
                }
                other => {
                    if let Some(name) = item_name(other) {
                        self.krate.modules[module].items.insert(name.clone());
                        if is_macro_export(other) {
                            self.krate.macro_exports.insert(name, module);
                        }
                    }
                    let mut refs = Refs { gates: vec![gates.clone()], module: &mut self.krate.modules[module] };
                    refs.visit_item(other);
                }
            }
        }
        Ok(())
    }

    fn module(
        &mut self,
        parent: usize,
        place: &Place,
        m: &syn::ItemMod,
        gates: &BTreeSet<String>,
    ) -> Result<(), TreeError> {
        let name = m.ident.to_string();
        let path_attr = path_attribute(&m.attrs);
        let id = self.krate.modules.len();
        self.krate.modules[parent].children.insert(name.clone(), id);
        if let Some((_, items)) = &m.content {
            self.krate.modules.push(Module { file: place.file.clone(), parent: Some(parent), ..Module::default() });
            let mut inline = place.inline.clone();
            inline.push(path_attr.unwrap_or(name));
            let inner = Place { file: place.file.clone(), mod_rs: place.mod_rs, inline };
            return self.items(id, &inner, items, gates);
        }
        let dir = place.child_dir();
        let candidates = match &path_attr {
            // A `#[path]` outside inline modules is relative to the declaring file's directory.
            Some(path) if place.inline.is_empty() => {
                vec![files::normalize(&files::join(files::parent(&place.file), path))]
            }
            Some(path) => vec![files::normalize(&files::join(&dir, path))],
            None => vec![files::join(&dir, &format!("{name}.rs")), files::join(&dir, &format!("{name}/mod.rs"))],
        };
        let Some((file, text)) = candidates.iter().find_map(|c| self.files.read(c).map(|t| (c.clone(), t))) else {
            return Err(TreeError::MissingModule {
                file: place.file.clone(),
                module: name,
                looked_for: candidates.join(", "),
            });
        };
        let parsed = parse(&file, &text)?;
        let mod_rs = path_attr.is_some() || file.ends_with("/mod.rs");
        self.krate.modules.push(Module { file: file.clone(), parent: Some(parent), ..Module::default() });
        let inner = Place { file, mod_rs, inline: Vec::new() };
        self.items(id, &inner, &parsed.items, gates)
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The name an item defines in its module, if it defines one.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::ExternCrate(i) => i.rename.as_ref().map_or(&i.ident, |(_, r)| r),
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

fn is_macro_export(item: &syn::Item) -> bool {
    matches!(item, syn::Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")))
}

/// `#[path = "…"]`, if present.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether the attributes make the item test code: `#[test]`, or a `#[cfg(…)]` that holds only
/// under `test` (`cfg(test)`, `cfg(all(test, …))`).
pub(crate) fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        let syn::Meta::List(list) = &a.meta else { return false };
        requires_test(&list.tokens)
    })
}

/// Whether a cfg predicate holds only under `test`: `test`, or `all(…)` with `test` among its
/// operands.
fn requires_test(tokens: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(i)] => i == "test",
        [TokenTree::Ident(i), TokenTree::Group(g)] if i == "all" => split_commas(&g.stream()).iter().any(requires_test),
        _ => false,
    }
}

/// The cargo features a `#[cfg(…)]` on the item requires (`feature = "x"`, also inside `all(…)`),
/// added to the enclosing ones.
fn with_features(gates: &BTreeSet<String>, attrs: &[syn::Attribute]) -> BTreeSet<String> {
    let mut out = gates.clone();
    for a in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        if let syn::Meta::List(list) = &a.meta {
            required_features(&list.tokens, &mut out);
        }
    }
    out
}

fn required_features(tokens: &TokenStream, out: &mut BTreeSet<String>) {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(i), TokenTree::Punct(p), TokenTree::Literal(lit)] if i == "feature" && p.as_char() == '=' => {
            if let Some(name) = string_literal(lit) {
                out.insert(name);
            }
        }
        [TokenTree::Ident(i), TokenTree::Group(g)] if i == "all" => {
            for operand in split_commas(&g.stream()) {
                required_features(&operand, out);
            }
        }
        _ => {}
    }
}

fn split_commas(tokens: &TokenStream) -> Vec<TokenStream> {
    let mut out = vec![TokenStream::new()];
    for tt in tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => out.push(TokenStream::new()),
            _ => out.last_mut().map_or((), |last| last.extend([tt])),
        }
    }
    out.retain(|t| !t.is_empty());
    out
}

/// The value of a string literal token (`"a::b"` is `a::b`); `None` for other literals and for
/// strings with escapes.
fn string_literal(lit: &proc_macro2::Literal) -> Option<String> {
    let text = lit.to_string();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then(|| inner.to_owned())
}

/// Flattens a `use` tree into one declaration per name or glob.
fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    absolute: bool,
    public: bool,
    gates: &BTreeSet<String>,
    out: &mut dyn FnMut(UseDecl),
) {
    let decl = |name: Option<String>, path: Vec<String>| UseDecl { name, path, absolute, public, gates: gates.clone() };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, absolute, public, gates, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            // `use a::b::{self}` names the module `b` itself.
            if let Some(last) = prefix.last().cloned() {
                out(decl(Some(last), prefix.clone()));
            }
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out(decl(Some(n.ident.to_string()), path));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            if r.rename != "_" {
                out(decl(Some(r.rename.to_string()), path));
            }
        }
        syn::UseTree::Glob(_) => out(decl(None, prefix.clone())),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                flatten_use(tree, prefix, absolute, public, gates, out);
            }
        }
    }
}

/// Collects the paths and identifiers an item's code names, into its module.
struct Refs<'m> {
    /// The feature gates of the enclosing items, innermost last.
    gates: Vec<BTreeSet<String>>,
    module: &'m mut Module,
}

impl Refs<'_> {
    fn gates(&self) -> BTreeSet<String> {
        self.gates.last().cloned().unwrap_or_default()
    }

    fn record(&mut self, segments: Vec<String>, absolute: bool) {
        if let Some(first) = segments.first() {
            self.module.idents.insert(first.clone());
        }
        let gates = self.gates();
        self.module.refs.push(PathRef { segments, absolute, gates });
    }

    /// Runs `f` inside an item with `attrs`: not at all for test code, with its feature gates.
    fn within(&mut self, attrs: &[syn::Attribute], f: impl FnOnce(&mut Self)) {
        if is_test_only(attrs) {
            return;
        }
        let gates = with_features(&self.gates(), attrs);
        self.gates.push(gates);
        f(self);
        self.gates.pop();
    }

    /// The paths in a token stream that macros see unparsed: `a::b::c`, `$crate::x`, `::x::y`.
    fn scan_tokens(&mut self, tokens: &TokenStream) {
        let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.scan_tokens(&g.stream());
                    i += 1;
                }
                TokenTree::Ident(ident) => {
                    self.module.idents.insert(ident.to_string());
                    let dollar = i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let mut segments =
                        vec![if dollar && ident == "crate" { "crate".to_owned() } else { ident.to_string() }];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(next))) =
                        (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.record(segments, false);
                    }
                    i = j.max(i + 1);
                }
                TokenTree::Literal(lit) => {
                    self.string_path(lit);
                    i += 1;
                }
                TokenTree::Punct(_) => i += 1,
            }
        }
    }

    /// A string literal that spells a path (`"crate::serde_util::integer"` in a serde attribute).
    fn string_path(&mut self, lit: &proc_macro2::Literal) {
        let Some(text) = string_literal(lit) else { return };
        let segments: Vec<&str> = text.split("::").collect();
        let is_ident = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if segments.len() > 1 && segments.iter().all(|s| is_ident(s)) {
            self.record(segments.into_iter().map(str::to_owned).collect(), false);
        }
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        match item {
            // A module inside a function body: rare, and not a module of the tree; its uses and
            // paths still count as the enclosing module's.
            syn::Item::Use(u) => {
                let gates = with_features(&self.gates(), &u.attrs);
                if is_test_only(&u.attrs) {
                    return;
                }
                let module = &mut *self.module;
                flatten_use(&u.tree, &mut Vec::new(), u.leading_colon.is_some(), false, &gates, &mut |d| {
                    module.uses.push(d)
                });
            }
            other => self.within(item_attrs(other), |this| syn::visit::visit_item(this, other)),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        self.within(attrs, |this| syn::visit::visit_impl_item(this, item));
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        self.within(attrs, |this| syn::visit::visit_trait_item(this, item));
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        let attrs: &[syn::Attribute] = match stmt {
            syn::Stmt::Local(l) => &l.attrs,
            syn::Stmt::Macro(m) => &m.attrs,
            _ => &[],
        };
        self.within(attrs, |this| syn::visit::visit_stmt(this, stmt));
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.first().is_some_and(|s| s != "Self") {
            self.record(segments, path.leading_colon.is_some());
        }
        syn::visit::visit_path(self, path);
    }

    /// `pub(in crate::a)` names a module for visibility, not an item.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(&mac.tokens);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        let path = attr.path();
        if path.is_ident("doc") || path.is_ident("cfg") || path.is_ident("cfg_attr") || path.is_ident("path") {
            return;
        }
        if let syn::Meta::List(list) = &attr.meta {
            self.scan_tokens(&list.tokens);
        }
    }
}
