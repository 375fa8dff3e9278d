//! What the monitor reads from the script a session was opened with (`session.hello.script`, a
//! client's own frame): the `say` steps the stream checks judge deltas and messages against
//! (`SCRIPT-019`, `STREAM-003`), and what the script's retries may play (`SCRIPT-020`).
//!
//! The says are indexed once, when the hello is read: a message is looked up by its text, and a
//! delta is judged against the says whose first chunk begins the text streamed so far, so the cost
//! of a frame does not grow with the length of the script.

use std::collections::{BTreeSet, HashMap, HashSet};

use chatwire_schema::script::{AgentScript, ScriptStep};

/// Most `say` steps kept from one script (a script has at most this many in practice; more are
/// ignored, which only makes the checks judge less).
const MAX_SAYS: usize = 4096;

/// Most steps of the script's retries read.
const MAX_RETRY_STEPS: usize = 4096;

/// What the monitor reads from the script a session was opened with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionScript {
    /// Its `say` steps (SCRIPT-019, STREAM-003).
    pub says: ScriptSays,
    /// What its retries play (SCRIPT-020).
    pub retries: RetrySteps,
    /// Its `reason` steps (since 1.3), indexed like says (SCRIPT-027, REASON-007): the text
    /// streamed in place of the markdown.
    pub reasons: ScriptSays,
    /// The `encrypted` payloads of its `reason` steps (REASON-004).
    pub payloads: HashSet<String>,
}

impl SessionScript {
    /// Reads a script.
    pub fn from_script(script: &AgentScript) -> Self {
        let mut payloads = HashSet::new();
        for step in all_steps(script).take(MAX_SAYS) {
            if let ScriptStep::Reason { encrypted: Some(payload), .. } = step {
                payloads.insert(payload.clone());
            }
        }
        SessionScript {
            says: ScriptSays::from_script(script),
            retries: RetrySteps::from_script(script),
            reasons: ScriptSays::reasons_from_script(script),
            payloads,
        }
    }
}

/// Every step of a script: each turn's, then its retries', in script order.
fn all_steps(script: &AgentScript) -> impl Iterator<Item = &ScriptStep> {
    script
        .turns
        .iter()
        .flat_map(|turn| std::iter::once(&turn.steps).chain(turn.retries.iter().map(|r| &r.steps)).flatten())
}

/// The `say` steps of a script: every turn's and every retry's, in script order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptSays {
    /// The chunks of every say that has them.
    chunked: Vec<Vec<String>>,
    /// The markdown of every say without chunks.
    whole: HashSet<String>,
    /// The whole markdown of every say with chunks.
    chunked_whole: HashSet<String>,
    /// The says with chunks by their first chunk, in script order.
    by_first: HashMap<String, Vec<usize>>,
    /// The lengths (in bytes) of those first chunks.
    first_lens: BTreeSet<usize>,
}

impl ScriptSays {
    /// The says of a script.
    pub fn from_script(script: &AgentScript) -> Self {
        Self::read(script, |step| match step {
            ScriptStep::Say { markdown, chunks, .. } => Some((markdown, chunks.as_deref())),
            _ => None,
        })
    }

    /// The `reason` steps of a script (since 1.3), their `text` in place of a say's markdown; a
    /// redacted one as the `""` it is sent as.
    pub fn reasons_from_script(script: &AgentScript) -> Self {
        const REDACTED: &String = &String::new();
        Self::read(script, |step| match step {
            ScriptStep::Reason { redacted: true, .. } => Some((REDACTED, None)),
            ScriptStep::Reason { text, chunks, .. } => Some((text, chunks.as_deref())),
            _ => None,
        })
    }

    /// The steps `pick` reads as (whole text, chunks), at most [`MAX_SAYS`] of them.
    fn read<'s>(
        script: &'s AgentScript,
        pick: impl Fn(&'s ScriptStep) -> Option<(&'s String, Option<&'s [String]>)>,
    ) -> Self {
        let mut says = ScriptSays::default();
        for (text, chunks) in all_steps(script).filter_map(pick).take(MAX_SAYS) {
            match chunks {
                Some(chunks) if !chunks.is_empty() => says.push_chunked(chunks.to_vec()),
                _ => {
                    says.whole.insert(text.clone());
                }
            }
        }
        says
    }

    fn push_chunked(&mut self, chunks: Vec<String>) {
        let index = self.chunked.len();
        self.chunked_whole.insert(chunks.concat());
        self.first_lens.insert(chunks[0].len());
        self.by_first.entry(chunks[0].clone()).or_default().push(index);
        self.chunked.push(chunks);
    }

    /// Whether the script has a say with chunks at all (otherwise nothing here can be judged).
    pub fn streams(&self) -> bool {
        !self.chunked.is_empty()
    }

    /// Whether a say without chunks has exactly this markdown.
    pub fn has_whole(&self, markdown: &str) -> bool {
        self.whole.contains(markdown)
    }

    /// Whether a say with chunks spells exactly this markdown.
    pub fn has_chunked(&self, markdown: &str) -> bool {
        self.chunked_whole.contains(markdown)
    }

    /// Whether a say's first chunk is `chunk`.
    pub fn opens_with(&self, chunk: &str) -> bool {
        self.by_first.contains_key(chunk)
    }

    /// For every say whose first `k` chunks spell `text`, in script order: its chunks and `k`.
    pub fn positions<'a>(&'a self, text: &'a str) -> impl Iterator<Item = (&'a [String], usize)> + 'a {
        self.candidates(text).into_iter().filter_map(move |index| {
            let chunks = &self.chunked[index];
            let mut len = 0;
            for (k, chunk) in chunks.iter().enumerate() {
                if len == text.len() {
                    return Some((chunks.as_slice(), k));
                }
                if !text[len..].starts_with(chunk.as_str()) {
                    return None;
                }
                len += chunk.len();
            }
            (len == text.len()).then_some((chunks.as_slice(), chunks.len()))
        })
    }

    /// The says that may lead to `text`, in script order: every one for an empty text, else those
    /// whose first chunk begins it.
    fn candidates(&self, text: &str) -> Vec<usize> {
        if text.is_empty() {
            return (0..self.chunked.len()).collect();
        }
        let mut found: Vec<usize> = self
            .first_lens
            .iter()
            .take_while(|len| **len <= text.len())
            .filter(|len| text.is_char_boundary(**len))
            .filter_map(|len| self.by_first.get(&text[..*len]))
            .flatten()
            .copied()
            .collect();
        found.sort_unstable();
        found
    }
}

/// What the script's retries may play (SCRIPT-020).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetrySteps {
    /// Whether the script was known at all.
    pub(crate) known: bool,
    /// The markdown of every say of every retry.
    pub(crate) says: Vec<String>,
    /// The tool name of every call of every retry.
    pub(crate) tools: Vec<String>,
}

impl RetrySteps {
    /// The retries' steps of a script.
    pub fn from_script(script: &AgentScript) -> Self {
        let mut steps = RetrySteps { known: true, ..RetrySteps::default() };
        let retries = script.turns.iter().flat_map(|t| &t.retries);
        for step in retries.flat_map(|r| &r.steps).take(MAX_RETRY_STEPS) {
            match step {
                ScriptStep::Say { markdown, .. } => steps.says.push(markdown.clone()),
                ScriptStep::ToolCalls { calls, .. } => steps.tools.extend(calls.iter().map(|c| c.tool_name.clone())),
                _ => {}
            }
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn script(v: serde_json::Value) -> AgentScript {
        serde_json::from_value(v).expect("a valid script")
    }

    #[test]
    fn the_says_of_turns_and_retries_are_read_and_indexed() {
        let s = ScriptSays::from_script(&script(json!({"turns": [
            {"steps": [{"op": "say", "markdown": "Hello, world!", "chunks": ["Hel", "lo, ", "world", "!"]},
                       {"op": "say", "markdown": "Plain."}],
             "retries": [{"steps": [{"op": "say", "markdown": "Again", "chunks": ["Ag", "ain"]}]}]}
        ]})));
        assert!(s.streams());
        assert_eq!(s.chunked.len(), 2);
        assert!(s.has_whole("Plain.") && !s.has_whole("Again"));
        assert!(s.has_chunked("Again") && s.has_chunked("Hello, world!") && !s.has_chunked("Plain."));
        assert!(s.opens_with("Hel") && !s.opens_with("lo, "));
        assert_eq!(s.candidates("Hello"), vec![0]);
        assert_eq!(s.candidates(""), vec![0, 1]);
        assert!(s.candidates("Bye").is_empty());
        assert_eq!(ScriptSays::from_script(&script(json!({"turns": []}))), ScriptSays::default());
    }

    #[test]
    fn the_retry_steps_of_a_script_are_read() {
        let steps = RetrySteps::from_script(&script(json!({"turns": [{"steps": [{"op": "say", "markdown": "first"}],
            "retries": [{"steps": [{"op": "say", "markdown": "again"},
                {"op": "tool_calls", "calls": [{"tool_name": "cheap", "interaction_type": "auto_tool",
                    "display": "inline", "outcome": {"kind": "result", "value": 1}}]}]}]}]})));
        assert_eq!(steps.says, vec!["again".to_owned()]);
        assert_eq!(steps.tools, vec!["cheap".to_owned()]);
        assert!(steps.known);
    }
}
