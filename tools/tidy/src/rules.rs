//! The architecture's rules held against a graph: no import circle, no forbidden edge, except the
//! known ones, each listed with why it is still there. A known entry the tree no longer has is
//! stale and fails too, so the lists only shrink.

use std::fmt;

use crate::graph::{Cycle, Graph};

/// An edge that must never be: from a file `from` matches to a file or crate `to` matches.
///
/// Patterns are paths from the repository root; `*` matches within one segment, `**` any number of
/// segments; a crate is `crate:name` (`crate:*` is any crate of the workspace but the file's own).
#[derive(Clone, Copy, Debug)]
pub struct Forbidden {
    /// The rule's name, as reports and known violations name it.
    pub name: &'static str,
    /// The files it applies to.
    pub from: &'static [&'static str],
    /// What they must not import.
    pub to: &'static [&'static str],
    /// Files the rule does not apply to.
    pub except_from: &'static [&'static str],
    /// A cargo feature under which the edge is allowed (every use of it gated behind the feature).
    pub except_feature: Option<&'static str>,
    /// Why (the architecture invariant it states).
    pub why: &'static str,
}

/// An import circle that exists today, by its exact set of files, with why.
#[derive(Clone, Copy, Debug)]
pub struct KnownCycle {
    /// Its files.
    pub files: &'static [&'static str],
    /// Why it is still there (who breaks it, and where).
    pub why: &'static str,
}

/// A forbidden edge that exists today, with why.
#[derive(Clone, Copy, Debug)]
pub struct KnownViolation {
    /// The rule it breaks.
    pub rule: &'static str,
    /// The file that imports.
    pub from: &'static str,
    /// The file or crate it imports.
    pub to: &'static str,
    /// Why it is still there.
    pub why: &'static str,
}

/// One forbidden edge found in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The rule it breaks.
    pub rule: &'static str,
    /// The file that imports.
    pub from: String,
    /// The file or crate imported.
    pub to: String,
    /// The names that tie them.
    pub names: Vec<String>,
    /// Why the rule exists.
    pub why: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "forbidden edge ({}): {} -> {}: {}\n  {}",
            self.rule,
            self.from,
            self.to,
            self.names.join(", "),
            self.why
        )
    }
}

/// Whether `path` matches `pattern` (`*` within a segment, `**` any number of segments).
pub fn matches(pattern: &str, path: &str) -> bool {
    fn segments(p: &[&str], s: &[&str]) -> bool {
        match (p.split_first(), s.split_first()) {
            (None, None) => true,
            (Some((&"**", rest)), _) => segments(rest, s) || (!s.is_empty() && segments(p, &s[1..])),
            (Some((first, rest)), Some((name, names))) => segment(first, name) && segments(rest, names),
            _ => false,
        }
    }
    fn segment(p: &str, s: &str) -> bool {
        match p.split_once('*') {
            None => p == s,
            Some((head, tail)) => s.len() >= head.len() + tail.len() && s.starts_with(head) && s.ends_with(tail),
        }
    }
    let p: Vec<&str> = pattern.split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    segments(&p, &s)
}

/// Every edge of `graph` that breaks one of `rules`.
pub fn violations(graph: &Graph, rules: &[Forbidden]) -> Vec<Violation> {
    let mut out = Vec::new();
    for rule in rules {
        for (from, to, edge) in graph.edges() {
            let applies =
                rule.from.iter().any(|p| matches(p, from)) && !rule.except_from.iter().any(|p| matches(p, from));
            let hits = rule.to.iter().any(|p| matches(p, to));
            let excused = rule.except_feature.is_some_and(|f| edge.gated_by.contains(f));
            if applies && hits && !excused {
                out.push(Violation {
                    rule: rule.name,
                    from: from.to_owned(),
                    to: to.to_owned(),
                    names: edge.names.iter().cloned().collect(),
                    why: rule.why,
                });
            }
        }
    }
    out
}

/// What the tree shows against the rules and the known lists.
#[derive(Debug, Default)]
pub struct Verdict<'k> {
    /// Circles no known entry lists.
    pub new_cycles: Vec<Cycle>,
    /// Known circles the tree no longer has (broken, or changed: list what is left).
    pub stale_cycles: Vec<&'k KnownCycle>,
    /// Forbidden edges no known entry lists.
    pub new_violations: Vec<Violation>,
    /// Known violations the tree no longer has.
    pub stale_violations: Vec<&'k KnownViolation>,
    /// How many circles and violations the known lists excused.
    pub excused: usize,
}

impl Verdict<'_> {
    /// Whether the tree keeps every rule but the known exceptions, and every exception is still
    /// there.
    pub fn is_clean(&self) -> bool {
        self.new_cycles.is_empty()
            && self.stale_cycles.is_empty()
            && self.new_violations.is_empty()
            && self.stale_violations.is_empty()
    }
}

impl fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for cycle in &self.new_cycles {
            writeln!(f, "NEW {cycle}")?;
        }
        for known in &self.stale_cycles {
            writeln!(
                f,
                "STALE known circle (the tree no longer has exactly these files in one circle: remove the entry, or \
                 list what is left of it):\n  {}",
                known.files.join("\n  ")
            )?;
        }
        for violation in &self.new_violations {
            writeln!(f, "NEW {violation}")?;
        }
        for known in &self.stale_violations {
            writeln!(
                f,
                "STALE known violation (the edge is gone: remove the entry): {} -> {} ({})",
                known.from, known.to, known.rule
            )?;
        }
        write!(f, "{} known circle(s) and violation(s) excused", self.excused)
    }
}

/// Holds `graph` against `rules` and the known lists.
pub fn judge<'k>(
    graph: &Graph,
    rules: &[Forbidden],
    known_cycles: &'k [KnownCycle],
    known_violations: &'k [KnownViolation],
) -> Verdict<'k> {
    let mut verdict = Verdict::default();
    let cycles = graph.cycles();
    for cycle in &cycles {
        let listed = known_cycles.iter().any(|k| same_files(k.files, &cycle.files));
        if listed {
            verdict.excused += 1;
        } else {
            verdict.new_cycles.push(cycle.clone());
        }
    }
    verdict.stale_cycles =
        known_cycles.iter().filter(|k| !cycles.iter().any(|c| same_files(k.files, &c.files))).collect();
    let found = violations(graph, rules);
    for violation in &found {
        let listed = known_violations
            .iter()
            .any(|k| k.rule == violation.rule && k.from == violation.from && k.to == violation.to);
        if listed {
            verdict.excused += 1;
        } else {
            verdict.new_violations.push(violation.clone());
        }
    }
    verdict.stale_violations = known_violations
        .iter()
        .filter(|k| !found.iter().any(|v| k.rule == v.rule && k.from == v.from && k.to == v.to))
        .collect();
    verdict
}

fn same_files(known: &[&str], found: &[String]) -> bool {
    let mut known: Vec<&str> = known.to_vec();
    known.sort_unstable();
    known.len() == found.len() && known.iter().zip(found).all(|(k, f)| *k == f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_segments_and_trees() {
        assert!(matches("a/src/session/**", "a/src/session/emit.rs"));
        assert!(matches("a/src/session/**", "a/src/session/deep/x.rs"));
        assert!(!matches("a/src/session/**", "a/src/sessions.rs"));
        assert!(matches("a/src/*.rs", "a/src/lib.rs"));
        assert!(!matches("a/src/*.rs", "a/src/x/lib.rs"));
        assert!(matches("crate:*", "crate:chatwire_reference"));
        assert!(matches("crate:chatwire_reference", "crate:chatwire_reference"));
        assert!(!matches("crate:chatwire_reference", "crate:chatwire_schema"));
        assert!(matches("**", "anything/at/all.rs"));
    }
}
