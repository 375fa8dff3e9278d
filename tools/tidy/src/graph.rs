//! Files and the edges between them, and the import circles (strongly connected components) they
//! form.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// The prefix of a node that stands for another crate rather than a file (`crate:chatwire_schema`).
pub const CRATE_PREFIX: &str = "crate:";

/// What ties one file to another: the names the first takes from the second.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    /// The names used (an item's name, `*` for a glob).
    pub names: BTreeSet<String>,
    /// The cargo features every use of this edge is gated behind (`#[cfg(feature = "…")]` on an
    /// enclosing item or module); empty when some use is not gated.
    pub gated_by: BTreeSet<String>,
}

/// A directed graph of files (and of crates the files name), with the names on each edge.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    nodes: BTreeSet<String>,
    edges: BTreeMap<String, BTreeMap<String, Edge>>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Graph::default()
    }

    /// Adds a file with no edges yet (a file that imports nothing is still part of the tree).
    pub fn add_node(&mut self, file: &str) {
        self.nodes.insert(file.to_owned());
    }

    /// Records that `from` uses `name` from `to`, under the cargo features `gates` (none: ungated).
    /// An edge from a file to itself is no edge.
    pub fn add_edge(&mut self, from: &str, to: &str, name: &str, gates: &BTreeSet<String>) {
        if from == to {
            return;
        }
        self.nodes.insert(from.to_owned());
        if !to.starts_with(CRATE_PREFIX) {
            self.nodes.insert(to.to_owned());
        }
        let targets = self.edges.entry(from.to_owned()).or_default();
        let fresh = !targets.contains_key(to);
        let edge = targets.entry(to.to_owned()).or_default();
        edge.names.insert(name.to_owned());
        if fresh {
            edge.gated_by = gates.clone();
        } else {
            edge.gated_by = edge.gated_by.intersection(gates).cloned().collect();
        }
    }

    /// Adds every node and edge of `other`.
    pub fn extend(&mut self, other: Graph) {
        self.nodes.extend(other.nodes);
        for (from, targets) in other.edges {
            for (to, edge) in targets {
                for name in &edge.names {
                    self.add_edge(&from, &to, name, &edge.gated_by);
                }
            }
        }
    }

    /// Every file.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(String::as_str)
    }

    /// Every edge, `(from, to, edge)`, in path order.
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, &Edge)> {
        self.edges.iter().flat_map(|(from, targets)| targets.iter().map(move |(to, e)| (from.as_str(), to.as_str(), e)))
    }

    /// The edge from `from` to `to`, if there is one.
    pub fn edge(&self, from: &str, to: &str) -> Option<&Edge> {
        self.edges.get(from)?.get(to)
    }

    fn successors(&self, node: &str) -> impl Iterator<Item = &str> {
        self.edges
            .get(node)
            .into_iter()
            .flat_map(|targets| targets.keys().map(String::as_str))
            .filter(|t| !t.starts_with(CRATE_PREFIX))
    }

    /// Every import circle: each strongly connected component of two files or more, in path
    /// order of its first file.
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut components = Tarjan::run(self);
        components.retain(|c| c.len() > 1);
        for c in &mut components {
            c.sort();
        }
        components.sort();
        components.into_iter().map(|files| self.cycle(files)).collect()
    }

    fn cycle(&self, files: Vec<String>) -> Cycle {
        let inside: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let mut edges = Vec::new();
        for from in &files {
            for to in self.successors(from).filter(|t| inside.contains(t)) {
                let names = self.edge(from, to).map(|e| e.names.iter().cloned().collect()).unwrap_or_default();
                edges.push((from.clone(), to.to_owned(), names));
            }
        }
        let chain = self.shortest_cycle_through(&files[0], &inside);
        Cycle { files, edges, chain }
    }

    /// A shortest cycle from `start` back to it inside `inside` (breadth first), as its files in
    /// order, `start` first.
    fn shortest_cycle_through(&self, start: &str, inside: &BTreeSet<&str>) -> Vec<String> {
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        while let Some(node) = queue.pop_front() {
            for next in self.successors(node).filter(|n| inside.contains(n)) {
                if next == start {
                    let mut path = vec![node.to_owned()];
                    let mut at = node;
                    while at != start {
                        at = came_from[at];
                        path.push(at.to_owned());
                    }
                    path.reverse();
                    return path;
                }
                if !came_from.contains_key(next) {
                    came_from.insert(next, node);
                    queue.push_back(next);
                }
            }
        }
        vec![start.to_owned()]
    }
}

/// Tarjan's strongly connected components, iterative (no recursion depth to run out of).
struct Tarjan<'g> {
    graph: &'g Graph,
    index: BTreeMap<&'g str, usize>,
    low: BTreeMap<&'g str, usize>,
    on_stack: BTreeSet<&'g str>,
    stack: Vec<&'g str>,
    components: Vec<Vec<String>>,
}

impl<'g> Tarjan<'g> {
    fn run(graph: &'g Graph) -> Vec<Vec<String>> {
        let mut t = Tarjan {
            graph,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            on_stack: BTreeSet::new(),
            stack: Vec::new(),
            components: Vec::new(),
        };
        for node in graph.nodes() {
            if !t.index.contains_key(node) {
                t.visit(node);
            }
        }
        t.components
    }

    fn visit(&mut self, root: &'g str) {
        // Each frame: the node and its successors not yet looked at.
        let mut frames: Vec<(&'g str, Vec<&'g str>)> = Vec::new();
        self.open(root);
        frames.push((root, self.graph.successors(root).collect()));
        while let Some((node, pending)) = frames.last_mut() {
            let node = *node;
            if let Some(next) = pending.pop() {
                if !self.index.contains_key(next) {
                    self.open(next);
                    frames.push((next, self.graph.successors(next).collect()));
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                let low = self.low[*parent].min(self.low[node]);
                self.low.insert(*parent, low);
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    component.push(member.to_owned());
                    if member == node {
                        break;
                    }
                }
                self.components.push(component);
            }
        }
    }

    fn open(&mut self, node: &'g str) {
        let n = self.index.len();
        self.index.insert(node, n);
        self.low.insert(node, n);
        self.stack.push(node);
        self.on_stack.insert(node);
    }
}

/// One import circle: its files, every edge between them with the names that tie it, and a
/// shortest chain of files around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The files, sorted.
    pub files: Vec<String>,
    /// `(from, to, names)` for every edge inside the circle.
    pub edges: Vec<(String, String, Vec<String>)>,
    /// A shortest cycle through the first file: each file imports the next, the last the first.
    pub chain: Vec<String>,
}

impl Cycle {
    fn names(&self, from: &str, to: &str) -> String {
        self.edges
            .iter()
            .find(|(f, t, _)| f == from && t == to)
            .map(|(_, _, names)| names.join(", "))
            .unwrap_or_default()
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "import circle of {} files:", self.files.len())?;
        let mut chain = String::new();
        for (i, file) in self.chain.iter().enumerate() {
            let next = &self.chain[(i + 1) % self.chain.len()];
            chain.push_str(&format!("\n    {file}\n      -> [{}]", self.names(file, next)));
        }
        writeln!(f, "  chain:{chain}\n    {}", self.chain[0])?;
        writeln!(f, "  every edge inside it:")?;
        for (from, to, names) in &self.edges {
            writeln!(f, "    {from} -> {to}: {}", names.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::new();
        for (from, to) in edges {
            g.add_edge(from, to, &format!("from_{}", to.trim_end_matches(".rs")), &BTreeSet::new());
        }
        g
    }

    #[test]
    fn components_of_two_or_more_files_are_circles_with_a_chain() {
        let g = graph(&[("a.rs", "b.rs"), ("b.rs", "c.rs"), ("c.rs", "a.rs"), ("c.rs", "d.rs"), ("d.rs", "e.rs")]);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].files, ["a.rs", "b.rs", "c.rs"]);
        assert_eq!(cycles[0].chain, ["a.rs", "b.rs", "c.rs"]);
        let text = cycles[0].to_string();
        assert!(text.contains("a.rs\n      -> [from_b]"), "{text}");
        assert!(text.contains("c.rs -> a.rs: from_a"), "{text}");
    }

    #[test]
    fn a_dag_and_self_edges_have_no_circle() {
        let g = graph(&[("a.rs", "b.rs"), ("a.rs", "c.rs"), ("b.rs", "c.rs"), ("c.rs", "c.rs")]);
        assert!(g.cycles().is_empty());
    }

    #[test]
    fn an_edge_is_gated_only_when_every_use_is() {
        let mut g = Graph::new();
        let gated: BTreeSet<String> = ["bundled".to_owned()].into();
        g.add_edge("a.rs", "crate:x", "one", &gated);
        assert_eq!(g.edge("a.rs", "crate:x").map(|e| e.gated_by.clone()), Some(gated.clone()));
        g.add_edge("a.rs", "crate:x", "two", &BTreeSet::new());
        assert!(g.edge("a.rs", "crate:x").is_some_and(|e| e.gated_by.is_empty()));
        assert!(g.cycles().is_empty(), "a crate is no file of a circle");
    }
}
