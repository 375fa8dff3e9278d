//! Compares two schemas of one message, keyword by keyword, and records every change with its rule.
//!
//! `$ref` is transparent (each referenced definition is compared once per message and the
//! findings name it), `Option<T>` in either spelling (`"type": [T, "null"]` or
//! `anyOf: [T, {"type": "null"}]`) is split into "nullable" plus `T`, enum-like unions
//! (`oneOf` of `const` branches, as schemars writes documented enums) compare as value sets, and
//! tagged unions match their branches on the `const` of the tag property.

use std::collections::{BTreeSet, HashSet};

use chatwire_schema::since::since_through_ref;
use chatwire_schema::ProtocolVersion;
use serde_json::{Map, Value};

use super::finding::Finding;
#[cfg(test)]
use super::rules::Level;
use super::rules::{Flow, Rule};
use super::shape::*;

/// Lower bounds: raising one narrows what validates.
const LOWER_BOUNDS: &[&str] = &["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"];
/// Upper bounds: lowering one narrows what validates.
const UPPER_BOUNDS: &[&str] = &["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"];

/// Every keyword the walker understands; a change in any other one is
/// [`Rule::UnknownKeywordChanged`], because the gate cannot prove it compatible.
const KNOWN: &[&str] = &[
    "$schema",
    "$ref",
    "$defs",
    "definitions",
    "deprecated",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "format",
    "pattern",
    "multipleOf",
    "uniqueItems",
];

/// Deeper than this, a schema is treated as pathological rather than walked further.
const MAX_DEPTH: usize = 96;

/// Most subschema pairs compared for one message: a recursive schema compared against an inlined
/// copy of itself could otherwise branch without end.
const MAX_COMPARISONS: usize = 200_000;

/// Compares one message's (or document's) old and new schema.
pub(crate) struct Walker<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    flow: Flow,
    message: &'a str,
    file: &'a str,
    /// The baseline's protocol version: an addition annotated with a newer minor is negotiated.
    baseline: ProtocolVersion,
    /// `(old $ref, new $ref)` pairs already compared: a definition used in several places is
    /// reported once, and recursive definitions terminate.
    seen_refs: HashSet<(String, String)>,
    /// The definition being walked, for the report.
    def: Option<String>,
    depth: usize,
    comparisons: usize,
    pub(crate) findings: Vec<Finding>,
}

impl<'a> Walker<'a> {
    /// A walker for one message; `flow` decides every finding's level, `baseline` (the old set's
    /// version) which annotated additions are negotiated.
    pub(crate) fn new(
        old_root: &'a Value,
        new_root: &'a Value,
        flow: Flow,
        message: &'a str,
        file: &'a str,
        baseline: ProtocolVersion,
    ) -> Self {
        Walker {
            old_root,
            new_root,
            flow,
            message,
            file,
            baseline,
            seen_refs: HashSet::new(),
            def: None,
            depth: 0,
            comparisons: 0,
            findings: Vec::new(),
        }
    }

    /// Compares the two document roots.
    pub(crate) fn run(mut self) -> Vec<Finding> {
        let (old, new) = (self.old_root, self.new_root);
        if let (Some(o), Some(n)) = (old.get("$schema"), new.get("$schema")) {
            if o != n {
                self.push(Rule::DialectChanged, "/$schema", format!("dialect {o} -> {n}"));
            }
        }
        self.compare(old, new, "");
        self.findings
    }

    fn push(&mut self, rule: Rule, path: &str, detail: String) {
        self.findings.push(Finding {
            level: rule.level(self.flow),
            rule,
            message: self.message.to_owned(),
            file: self.file.to_owned(),
            flow: self.flow,
            path: if path.is_empty() { "/".to_owned() } else { path.to_owned() },
            detail,
            def: self.def.clone(),
        });
    }

    /// Records an addition: a [`Rule::NegotiatedAddition`] when `added` carries a since annotation
    /// newer than the baseline (`COMPAT-015`), else `rule`.
    fn push_addition(&mut self, rule: Rule, added: &Value, path: &str, detail: String) {
        let (rule, detail) =
            addition_rule(rule, self.flow, since_through_ref(added, self.new_root), self.baseline, detail);
        self.push(rule, path, detail);
    }

    /// Full comparison of two subschemas at `path`: nullability first, then the rest.
    fn compare(&mut self, old: &Value, new: &Value, path: &str) {
        if self.depth >= MAX_DEPTH {
            self.push(Rule::SchemaRestructured, path, format!("nesting deeper than {MAX_DEPTH} levels; not compared"));
            return;
        }
        self.comparisons += 1;
        if self.comparisons > MAX_COMPARISONS {
            if self.comparisons == MAX_COMPARISONS + 1 {
                self.push(
                    Rule::SchemaRestructured,
                    path,
                    format!("more than {MAX_COMPARISONS} subschemas; stopped here"),
                );
            }
            return;
        }
        self.depth += 1;
        let (old_nullable, old_inner) = split_nullable(old);
        let (new_nullable, new_inner) = split_nullable(new);
        match (old_nullable, new_nullable) {
            (false, true) => self.push(Rule::NullableAdded, path, "null is now accepted".into()),
            (true, false) => self.push(Rule::NullableRemoved, path, "null is no longer accepted".into()),
            _ => {}
        }
        self.compare_inner(&old_inner, &new_inner, path);
        self.depth -= 1;
    }

    fn compare_inner(&mut self, old: &Value, new: &Value, path: &str) {
        let (o, n) = match (old, new) {
            (Value::Object(o), Value::Object(n)) => (o, n),
            _ => return self.compare_boolean_schemas(old, new, path),
        };
        self.compare_annotations(o, n, path);
        match (ref_of(o), ref_of(n)) {
            (Some(old_ref), Some(new_ref)) => {
                // Keywords beside `$ref` apply together with the target: compare them, then the targets.
                let siblings = |m: &Map<String, Value>| {
                    Value::Object(m.iter().filter(|(k, _)| *k != "$ref").map(|(k, v)| (k.clone(), v.clone())).collect())
                };
                let (so, sn) = (siblings(o), siblings(n));
                self.compare_keywords(as_map(&so), as_map(&sn), path);
                self.follow_refs(old_ref, new_ref, path);
            }
            (Some(_), None) | (None, Some(_)) => {
                let old_inline = inline_ref(o, self.old_root);
                let new_inline = inline_ref(n, self.new_root);
                match (old_inline, new_inline) {
                    (Ok(oi), Ok(ni)) => {
                        // Annotations were compared above; strip them so they are not reported twice.
                        let (oi, ni) = (strip_annotations(&oi), strip_annotations(&ni));
                        self.compare(&oi, &ni, path)
                    }
                    (Err(r), _) | (_, Err(r)) => {
                        self.push(Rule::UnresolvableRef, path, format!("cannot resolve $ref {r:?}"))
                    }
                }
            }
            (None, None) => self.compare_keywords(o, n, path),
        }
    }

    fn follow_refs(&mut self, old_ref: &str, new_ref: &str, path: &str) {
        if !self.seen_refs.insert((old_ref.to_owned(), new_ref.to_owned())) {
            return;
        }
        let (Some(old_target), Some(new_target)) = (resolve(self.old_root, old_ref), resolve(self.new_root, new_ref))
        else {
            let bad = if resolve(self.old_root, old_ref).is_none() { old_ref } else { new_ref };
            return self.push(Rule::UnresolvableRef, path, format!("cannot resolve $ref {bad:?}"));
        };
        let name = new_ref.rsplit('/').next().unwrap_or(new_ref).to_owned();
        let outer = self.def.replace(name);
        self.compare(old_target, new_target, path);
        self.def = outer;
    }

    fn compare_boolean_schemas(&mut self, old: &Value, new: &Value, path: &str) {
        if old == new {
            return;
        }
        let accepts_all = |v: &Value| v == &Value::Bool(true) || v.as_object().is_some_and(Map::is_empty);
        let rejects_all = |v: &Value| v == &Value::Bool(false);
        let rule = if accepts_all(new) || rejects_all(old) {
            Rule::ConstraintRemoved
        } else if accepts_all(old) || rejects_all(new) {
            Rule::ConstraintAdded
        } else {
            Rule::SchemaRestructured
        };
        self.push(rule, path, format!("schema {} -> {}", brief(old), brief(new)));
    }

    fn compare_annotations(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        for key in ANNOTATIONS {
            if o.get(*key) != n.get(*key) {
                let what = match (o.get(*key), n.get(*key)) {
                    (None, Some(_)) => "added",
                    (Some(_), None) => "removed",
                    _ => "changed",
                };
                self.push(Rule::AnnotationChanged, &format!("{path}/{key}"), format!("{key} {what}"));
            }
        }
        let deprecated = |m: &Map<String, Value>| m.get("deprecated") == Some(&Value::Bool(true));
        match (deprecated(o), deprecated(n)) {
            (false, true) => self.push(Rule::DeprecatedAdded, &format!("{path}/deprecated"), "now deprecated".into()),
            (true, false) => {
                self.push(Rule::DeprecatedRemoved, &format!("{path}/deprecated"), "no longer deprecated".into())
            }
            _ => {}
        }
    }

    /// Compares two inline (no `$ref` of their own to follow) schemas.
    fn compare_keywords(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let old_values = value_set(o, self.old_root);
        let new_values = value_set(n, self.new_root);
        let enum_like = old_values.is_some() || new_values.is_some();
        self.compare_value_sets(old_values.as_ref(), new_values.as_ref(), path);

        // Listed values already pin the type; compare `type` when both spell it out or neither lists values.
        if (o.contains_key("type") && n.contains_key("type")) || !enum_like {
            self.compare_types(o.get("type"), n.get("type"), path);
        }
        self.compare_bounds(o, n, path);
        self.compare_pattern(o.get("pattern"), n.get("pattern"), path);
        self.compare_format(o.get("format"), n.get("format"), path);
        for key in ["multipleOf", "uniqueItems", "not"] {
            self.compare_plain_constraint(key, o.get(key), n.get(key), path);
        }
        if ["properties", "required", "additionalProperties"].iter().any(|k| o.contains_key(*k) || n.contains_key(*k)) {
            self.compare_objects(o, n, path);
        }
        self.compare_arrays(o, n, path);
        self.compare_all_of(o.get("allOf"), n.get("allOf"), path);
        let old_enum_union = old_values.as_ref().is_some_and(|v| v.from_union);
        let new_enum_union = new_values.as_ref().is_some_and(|v| v.from_union);
        if !old_enum_union && !new_enum_union {
            self.compare_unions(o, n, path);
        }

        let unknown: BTreeSet<&String> = o
            .keys()
            .chain(n.keys())
            .filter(|k| !KNOWN.contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str()))
            .filter(|k| !LOWER_BOUNDS.contains(&k.as_str()) && !UPPER_BOUNDS.contains(&k.as_str()))
            .collect();
        for key in unknown {
            if o.get(key) != n.get(key) {
                self.push(Rule::UnknownKeywordChanged, &format!("{path}/{key}"), format!("keyword {key:?} changed"));
            }
        }
    }

    fn compare_value_sets(&mut self, old: Option<&ValueSet>, new: Option<&ValueSet>, path: &str) {
        let at = format!("{path}/enum");
        match (old, new) {
            (Some(old), Some(new)) => {
                for (value, branch) in &new.values {
                    match old.values.iter().find(|(v, _)| v == value) {
                        None => {
                            let detail = format!("value {value} added");
                            match branch {
                                Some(branch) => self.push_addition(Rule::EnumValueAdded, branch, &at, detail),
                                None => self.push(Rule::EnumValueAdded, &at, detail),
                            }
                        }
                        Some((_, old_branch)) => {
                            let describe = |b: &Option<Value>| b.as_ref().and_then(|b| b.get("description")).cloned();
                            if describe(old_branch) != describe(branch) {
                                self.push(
                                    Rule::AnnotationChanged,
                                    &format!("{at}/{}", pointer_token(value)),
                                    format!("description of value {value} changed"),
                                );
                            }
                        }
                    }
                }
                for (value, _) in &old.values {
                    if !new.values.iter().any(|(v, _)| v == value) {
                        self.push(Rule::EnumValueRemoved, &at, format!("value {value} removed"));
                    }
                }
            }
            (Some(old), None) => self.push(Rule::ValueSetRemoved, &at, format!("value list {} removed", old.listing())),
            (None, Some(new)) => self.push(Rule::ValueSetAdded, &at, format!("values restricted to {}", new.listing())),
            (None, None) => {}
        }
    }

    fn compare_types(&mut self, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let (old_types, new_types) = (type_set(old), type_set(new));
        if old_types == new_types {
            return;
        }
        let at = format!("{path}/type");
        let show = |t: &Option<BTreeSet<String>>| match t {
            None => "any".to_owned(),
            Some(t) => format!("{:?}", t.iter().collect::<Vec<_>>()),
        };
        let detail = format!("type {} -> {}", show(&old_types), show(&new_types));
        let (widened, narrowed) = match (&old_types, &new_types) {
            (None, Some(_)) => (false, true),
            (Some(_), None) => (true, false),
            (Some(o), Some(n)) => (n.iter().any(|t| !covered(t, o)), o.iter().any(|t| !covered(t, n))),
            (None, None) => (false, false),
        };
        let rule = match (widened, narrowed) {
            (true, true) => Rule::TypeChanged,
            (true, false) => Rule::TypeWidened,
            (false, true) => Rule::TypeNarrowed,
            (false, false) => return,
        };
        self.push(rule, &at, detail);
    }

    fn compare_bounds(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        for (keys, lower) in [(LOWER_BOUNDS, true), (UPPER_BOUNDS, false)] {
            for key in keys {
                let (old, new) = (o.get(*key), n.get(*key));
                if old == new {
                    continue;
                }
                let (old_effective, new_effective) = (effective_bound(key, o), effective_bound(key, n));
                if old_effective.is_some() && old_effective == new_effective {
                    // Spelling out the bound an integer format already implies changes nothing.
                    continue;
                }
                let at = format!("{path}/{key}");
                let show = |v: Option<&Value>| v.map_or_else(|| "none".to_owned(), Value::to_string);
                let detail = format!("{key} {} -> {}", show(old), show(new));
                let rule = match (old_effective, new_effective) {
                    (None, Some(_)) => Rule::BoundAdded,
                    (Some(_), None) => Rule::BoundRemoved,
                    (Some(a), Some(b)) if (b > a) == lower => Rule::BoundTightened,
                    (Some(_), Some(_)) => Rule::BoundRelaxed,
                    // Present but not a number on either side: not a bound the gate can order.
                    (None, None) => Rule::ConstraintChanged,
                };
                self.push(rule, &at, detail);
            }
        }
    }

    fn compare_pattern(&mut self, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let at = format!("{path}/pattern");
        match (old, new) {
            (None, Some(p)) => self.push(Rule::PatternAdded, &at, format!("pattern {p} added")),
            (Some(p), None) => self.push(Rule::PatternRemoved, &at, format!("pattern {p} removed")),
            (Some(a), Some(b)) if a != b => self.push(Rule::PatternChanged, &at, format!("pattern {a} -> {b}")),
            _ => {}
        }
    }

    fn compare_format(&mut self, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let at = format!("{path}/format");
        let (a, b) = match (old, new) {
            (None, Some(f)) => return self.push(Rule::FormatAdded, &at, format!("format {f} added")),
            (Some(f), None) => return self.push(Rule::FormatRemoved, &at, format!("format {f} removed")),
            (Some(a), Some(b)) if a != b => (a, b),
            _ => return,
        };
        let detail = format!("format {a} -> {b}");
        let rule = match (a.as_str().and_then(format_range), b.as_str().and_then(format_range)) {
            (Some((amin, amax)), Some((bmin, bmax))) if bmin >= amin && bmax <= amax => Rule::FormatNarrowed,
            (Some((amin, amax)), Some((bmin, bmax))) if bmin <= amin && bmax >= amax => Rule::FormatWidened,
            _ => Rule::FormatChanged,
        };
        self.push(rule, &at, detail);
    }

    fn compare_plain_constraint(&mut self, key: &str, old: Option<&Value>, new: Option<&Value>, path: &str) {
        // `uniqueItems: false` is the same as leaving it out.
        let is_default = |v: &&Value| key == "uniqueItems" && **v == Value::Bool(false);
        let (old, new) = (old.filter(|v| !is_default(v)), new.filter(|v| !is_default(v)));
        let at = format!("{path}/{key}");
        match (old, new) {
            (None, Some(v)) => self.push(Rule::ConstraintAdded, &at, format!("{key} {} added", brief(v))),
            (Some(v), None) => self.push(Rule::ConstraintRemoved, &at, format!("{key} {} removed", brief(v))),
            (Some(a), Some(b)) if a != b => {
                self.push(Rule::ConstraintChanged, &at, format!("{key} {} -> {}", brief(a), brief(b)))
            }
            _ => {}
        }
    }

    fn compare_objects(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let empty = Map::new();
        let old_props = o.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let new_props = n.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let old_required = required_set(o);
        let new_required = required_set(n);
        let old_closed = o.get("additionalProperties") == Some(&Value::Bool(false));
        let new_closed = n.get("additionalProperties") == Some(&Value::Bool(false));

        for (name, schema) in new_props {
            if old_props.contains_key(name) {
                continue;
            }
            let at = format!("{path}/properties/{}", escape(name));
            let required = new_required.contains(name.as_str());
            if !old_closed {
                self.push(
                    Rule::OpenObjectPropertyAdded,
                    &at,
                    format!("member {name:?} ({}) now described on an open object", brief(schema)),
                );
                if required && !old_required.contains(name.as_str()) {
                    self.push(Rule::PropertyMadeRequired, &at, format!("member {name:?} is now required"));
                }
            } else if required {
                self.push_addition(Rule::RequiredPropertyAdded, schema, &at, format!("required member {name:?} added"));
            } else {
                self.push_addition(Rule::OptionalPropertyAdded, schema, &at, format!("optional member {name:?} added"));
            }
        }
        for name in old_props.keys() {
            if new_props.contains_key(name) {
                continue;
            }
            let at = format!("{path}/properties/{}", escape(name));
            if old_required.contains(name.as_str()) {
                self.push(Rule::RequiredPropertyRemoved, &at, format!("required member {name:?} removed"));
            } else if new_closed {
                self.push(Rule::OptionalPropertyRemoved, &at, format!("optional member {name:?} removed"));
            } else {
                self.push(Rule::OpenObjectPropertyRemoved, &at, format!("member {name:?} no longer described"));
            }
        }
        // Required-ness of members described on both sides, or named only in `required`.
        let described_once = |name: &str| old_props.contains_key(name) != new_props.contains_key(name);
        for name in new_required.difference(&old_required) {
            if !described_once(name) {
                let at = format!("{path}/properties/{}", escape(name));
                self.push(Rule::PropertyMadeRequired, &at, format!("member {name:?} is now required"));
            }
        }
        for name in old_required.difference(&new_required) {
            if !described_once(name) {
                let at = format!("{path}/properties/{}", escape(name));
                self.push(Rule::PropertyMadeOptional, &at, format!("member {name:?} is now optional"));
            }
        }
        for (name, old_schema) in old_props {
            if let Some(new_schema) = new_props.get(name) {
                self.compare(old_schema, new_schema, &format!("{path}/properties/{}", escape(name)));
            }
        }
        self.compare_additional(o.get("additionalProperties"), n.get("additionalProperties"), path);
    }

    fn compare_additional(&mut self, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let at = format!("{path}/additionalProperties");
        let absent_is_true = Value::Bool(true);
        let (old, new) = (old.unwrap_or(&absent_is_true), new.unwrap_or(&absent_is_true));
        if old == new {
            return;
        }
        match (old, new) {
            (Value::Bool(true), _) | (_, Value::Bool(false)) => {
                self.push(Rule::AdditionalPropertiesClosed, &at, format!("{} -> {}", brief(old), brief(new)))
            }
            (_, Value::Bool(true)) | (Value::Bool(false), _) => {
                self.push(Rule::AdditionalPropertiesOpened, &at, format!("{} -> {}", brief(old), brief(new)))
            }
            _ => self.compare(old, new, &at),
        }
    }

    fn compare_arrays(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let at = format!("{path}/items");
        match (o.get("items"), n.get("items")) {
            (Some(a), Some(b)) => self.compare(a, b, &at),
            (None, Some(b)) => self.push(Rule::ConstraintAdded, &at, format!("items {} added", brief(b))),
            (Some(a), None) => self.push(Rule::ConstraintRemoved, &at, format!("items {} removed", brief(a))),
            (None, None) => {}
        }
        let prefix = |m: &Map<String, Value>| m.get("prefixItems").and_then(Value::as_array).cloned();
        match (prefix(o), prefix(n)) {
            (Some(a), Some(b)) if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                    self.compare(x, y, &format!("{path}/prefixItems/{i}"));
                }
            }
            (None, None) => {}
            (a, b) => self.push(
                Rule::ConstraintChanged,
                &format!("{path}/prefixItems"),
                format!("tuple of {} -> {} items", a.map_or(0, |v| v.len()), b.map_or(0, |v| v.len())),
            ),
        }
    }

    fn compare_all_of(&mut self, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
        let (a, b) = (list(old), list(new));
        for i in 0..a.len().max(b.len()) {
            let at = format!("{path}/allOf/{i}");
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) => self.compare(x, y, &at),
                (None, Some(y)) => self.push(Rule::ConstraintAdded, &at, format!("allOf member {} added", brief(y))),
                (Some(x), None) => {
                    self.push(Rule::ConstraintRemoved, &at, format!("allOf member {} removed", brief(x)))
                }
                (None, None) => {}
            }
        }
    }

    fn compare_unions(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, path: &str) {
        let union = |m: &Map<String, Value>| {
            ["oneOf", "anyOf"].into_iter().find_map(|k| m.get(k).and_then(Value::as_array).map(|v| (k, v.clone())))
        };
        let (old_union, new_union) = (union(o), union(n));
        let ((old_kw, old_branches), (new_kw, new_branches)) = match (old_union, new_union) {
            (None, None) => return,
            (Some((kw, _)), None) => {
                return self.push(
                    Rule::SchemaRestructured,
                    &format!("{path}/{kw}"),
                    format!("{kw} replaced by a plain schema"),
                )
            }
            (None, Some((kw, _))) => {
                return self.push(
                    Rule::SchemaRestructured,
                    &format!("{path}/{kw}"),
                    format!("plain schema replaced by {kw}"),
                )
            }
            (Some(a), Some(b)) => (a, b),
        };
        let at = format!("{path}/{new_kw}");
        let old_tagged = tagged_branches(&old_branches, self.old_root);
        let new_tagged = tagged_branches(&new_branches, self.new_root);
        if let (Some((old_tag, old_map)), Some((new_tag, new_map))) = (&old_tagged, &new_tagged) {
            if old_tag == new_tag {
                for (value, new_branch) in new_map {
                    let branch_at = format!("{at}[{new_tag}={value}]");
                    match old_map.get(value) {
                        Some(old_branch) => self.compare(old_branch, new_branch, &branch_at),
                        None => self.push_addition(
                            Rule::VariantAdded,
                            new_branch,
                            &branch_at,
                            format!("variant {new_tag}={value:?} added"),
                        ),
                    }
                }
                for value in old_map.keys() {
                    if !new_map.contains_key(value) {
                        let branch_at = format!("{at}[{old_tag}={value}]");
                        self.push(Rule::VariantRemoved, &branch_at, format!("variant {old_tag}={value:?} removed"));
                    }
                }
                if old_kw != new_kw {
                    self.push(Rule::SchemaRestructured, &at, format!("{old_kw} -> {new_kw}"));
                }
                return;
            }
        }
        // Untagged: match branches by their `$ref` target or their `type`, when those are unique.
        match (branch_keys(&old_branches), branch_keys(&new_branches)) {
            (Some(old_keys), Some(new_keys)) => {
                for (key, new_branch) in &new_keys {
                    let branch_at = format!("{at}[{key}]");
                    match old_keys.get(key) {
                        Some(old_branch) => self.compare(old_branch, new_branch, &branch_at),
                        None => self.push_addition(
                            Rule::VariantAdded,
                            new_branch,
                            &branch_at,
                            format!("branch {key} added"),
                        ),
                    }
                }
                for key in old_keys.keys() {
                    if !new_keys.contains_key(key) {
                        self.push(Rule::VariantRemoved, &format!("{at}[{key}]"), format!("branch {key} removed"));
                    }
                }
                if old_kw != new_kw {
                    self.push(Rule::SchemaRestructured, &at, format!("{old_kw} -> {new_kw}"));
                }
            }
            _ if old_branches.len() == new_branches.len() && old_kw == new_kw => {
                for (i, (a, b)) in old_branches.iter().zip(&new_branches).enumerate() {
                    self.compare(a, b, &format!("{at}/{i}"));
                }
            }
            _ => self.push(
                Rule::SchemaRestructured,
                &at,
                format!("{old_kw} of {} branches -> {new_kw} of {} branches", old_branches.len(), new_branches.len()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn findings(old: Value, new: Value, flow: Flow) -> Vec<(Rule, String)> {
        Walker::new(&old, &new, flow, "m", "m.json", ProtocolVersion { major: 1, minor: 0 })
            .run()
            .into_iter()
            .map(|f| (f.rule, f.path))
            .collect()
    }

    #[test]
    fn both_spellings_of_an_option_split_into_nullable_and_the_inner_schema() {
        let option = json!({"type": ["string", "null"], "description": "d"});
        let (nullable, inner) = split_nullable(&option);
        assert!(nullable);
        assert_eq!(*inner, json!({"type": "string", "description": "d"}));
        let any_of = json!({"anyOf": [{"$ref": "#/$defs/Id"}, {"type": "null"}], "description": "d"});
        let (nullable, inner) = split_nullable(&any_of);
        assert!(nullable);
        assert_eq!(*inner, json!({"$ref": "#/$defs/Id", "description": "d"}));
        let only_null = json!({"type": "null"});
        let (nullable, _) = split_nullable(&only_null);
        assert!(!nullable, "a schema that only allows null is not an Option");
    }

    #[test]
    fn tagged_unions_are_keyed_by_their_const_tag() {
        let branches = [
            json!({"properties": {"op": {"const": "say"}, "text": {"type": "string"}}}),
            json!({"$ref": "#/$defs/Wait"}),
        ];
        let root = json!({"$defs": {"Wait": {"properties": {"op": {"const": "wait"}, "ms": {"type": "integer"}}}}});
        let (tag, map) = tagged_branches(&branches, &root).expect("tagged");
        assert_eq!(tag, "op");
        assert_eq!(map.keys().collect::<Vec<_>>(), ["say", "wait"]);
        let duplicate =
            [json!({"properties": {"op": {"const": "say"}}}), json!({"properties": {"op": {"const": "say"}}})];
        assert!(tagged_branches(&duplicate, &root).is_none(), "a repeated tag is not a tagged union");
    }

    #[test]
    fn an_integer_format_implies_its_range() {
        let m = json!({"type": "integer", "format": "uint32", "minimum": 0}).as_object().cloned().unwrap();
        assert_eq!(effective_bound("maximum", &m), Some(u32::MAX as f64));
        assert_eq!(effective_bound("minimum", &m), Some(0.0));
        assert_eq!(effective_bound("maxLength", &m), None);
    }

    #[test]
    fn a_recursive_schema_against_its_inlined_copy_terminates() {
        let old = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Node"}, "b": {"$ref": "#/$defs/Node"}}}}});
        let new = json!({"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}}});
        let found = findings(old, new, Flow::ClientToServer);
        assert!(found.iter().all(|(rule, _)| *rule == Rule::SchemaRestructured), "{found:?}");
    }

    #[test]
    fn the_same_change_is_graded_by_direction() {
        let old = json!({"type": "object", "properties": {"s": {"enum": ["a"]}}});
        let new = json!({"type": "object", "properties": {"s": {"enum": ["a", "b"]}}});
        for (flow, level) in
            [(Flow::ClientToServer, Level::Info), (Flow::ServerToClient, Level::Err), (Flow::Unknown, Level::Err)]
        {
            let found = Walker::new(&old, &new, flow, "m", "m.json", ProtocolVersion { major: 1, minor: 0 }).run();
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].rule, found[0].level, found[0].path.as_str()),
                (Rule::EnumValueAdded, level, "/properties/s/enum")
            );
        }
    }
}
