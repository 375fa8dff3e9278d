//! A turn's plan as a session holds it while the turn runs (and as a scripted agent keeps its
//! turns): the script's steps, with each streamed `say`'s chunks held as boundaries in its
//! markdown.
//!
//! A `say` may stream up to `MAX_SAY_CHUNKS` chunks whose concatenation is its markdown
//! (`SCRIPT-019`); as one `String` each, 1,000 chunks of a few bytes cost ~56 KB (the string, its
//! allocation, the allocator's overhead) beside the 5 KB of text they split. Held as end offsets
//! into the markdown they cost 4 bytes each. The plan reads, stores and compares as the
//! [`ScriptTurn`] it was made from.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use chatwire_schema::script::{ScriptRetry, ScriptStep, ScriptTurn};

/// A turn's steps as the run driver plays them, each streamed `say`'s chunks held as offsets into
/// its markdown; its retries' steps likewise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnPlan {
    steps: Steps,
    retries: Vec<Steps>,
}

/// Steps of a turn or of a retry.
#[derive(Clone, Debug, Default, PartialEq)]
struct Steps {
    /// The steps; a `say` listed in `chunk_ends` has its `chunks` taken out (`None`).
    steps: Vec<ScriptStep>,
    /// For each `say` whose chunks are held as offsets: its index in `steps` and where each of
    /// its chunks ends in its markdown, in byte offsets. Sorted by index.
    chunk_ends: Vec<(usize, Box<[u32]>)>,
}

/// One step of a plan: the step, and for a `say`, the chunks it streams.
#[derive(Clone, Copy, Debug)]
pub struct PlanStep<'a> {
    /// The step. A `say`'s `chunks` may have been taken out: read them from [`PlanStep::chunks`].
    pub op: &'a ScriptStep,
    /// The chunks of a `say` (empty for every other step, and for a `say` without chunks).
    pub chunks: Chunks<'a>,
}

/// The chunks of a `say`, in order, read where the plan holds them.
#[derive(Clone, Copy, Debug)]
pub struct Chunks<'a>(ChunksRepr<'a>);

#[derive(Clone, Copy, Debug)]
enum ChunksRepr<'a> {
    /// Slices of `text` ending at each offset.
    Ends { text: &'a str, ends: &'a [u32] },
    /// Strings of their own.
    Owned(&'a [String]),
}

impl<'a> Chunks<'a> {
    /// Chunks held as strings of their own.
    pub fn of(chunks: &'a [String]) -> Self {
        Chunks(ChunksRepr::Owned(chunks))
    }

    /// How many chunks there are.
    pub fn len(&self) -> usize {
        match self.0 {
            ChunksRepr::Ends { ends, .. } => ends.len(),
            ChunksRepr::Owned(chunks) => chunks.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chunk at `index`.
    pub fn get(&self, index: usize) -> Option<&'a str> {
        match self.0 {
            ChunksRepr::Ends { text, ends } => {
                let end = *ends.get(index)? as usize;
                let start = index.checked_sub(1).map_or(0, |before| ends[before] as usize);
                text.get(start..end)
            }
            ChunksRepr::Owned(chunks) => chunks.get(index).map(String::as_str),
        }
    }
}

impl TurnPlan {
    /// The step at `index`, with its chunks.
    pub fn step(&self, index: usize) -> Option<PlanStep<'_>> {
        self.steps.step(index)
    }

    /// The steps of the `retry`-th retry (`ScriptTurn::retries`), as a turn of their own.
    pub fn retry(&self, retry: usize) -> Option<ScriptTurn> {
        self.retries.get(retry).map(|r| ScriptTurn::new(r.to_steps()))
    }

    /// The turn this plan was made from.
    pub fn to_turn(&self) -> ScriptTurn {
        ScriptTurn {
            steps: self.steps.to_steps(),
            retries: self.retries.iter().map(|r| ScriptRetry { steps: r.to_steps() }).collect(),
        }
    }
}

impl From<ScriptTurn> for TurnPlan {
    fn from(turn: ScriptTurn) -> Self {
        TurnPlan {
            steps: Steps::new(turn.steps),
            retries: turn.retries.into_iter().map(|r| Steps::new(r.steps)).collect(),
        }
    }
}

impl Serialize for TurnPlan {
    /// As the [`ScriptTurn`] it was made from (what the store keeps of a turn's plan).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_turn().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for TurnPlan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ScriptTurn::deserialize(deserializer).map(TurnPlan::from)
    }
}

impl Steps {
    fn new(mut steps: Vec<ScriptStep>) -> Self {
        let mut chunk_ends = Vec::new();
        for (index, step) in steps.iter_mut().enumerate() {
            let ScriptStep::Say { markdown, chunks, .. } = step else { continue };
            let Some(ends) = chunks.as_deref().and_then(|c| ends_in(markdown, c)) else { continue };
            *chunks = None;
            chunk_ends.push((index, ends));
        }
        Steps { steps, chunk_ends }
    }

    fn step(&self, index: usize) -> Option<PlanStep<'_>> {
        let op = self.steps.get(index)?;
        let chunks = match op {
            ScriptStep::Say { markdown, chunks, .. } => match self.chunk_ends.binary_search_by_key(&index, |(i, _)| *i)
            {
                Ok(at) => Chunks(ChunksRepr::Ends { text: markdown, ends: &self.chunk_ends[at].1 }),
                Err(_) => Chunks::of(chunks.as_deref().unwrap_or_default()),
            },
            _ => Chunks::of(&[]),
        };
        Some(PlanStep { op, chunks })
    }

    fn to_steps(&self) -> Vec<ScriptStep> {
        let mut steps = self.steps.clone();
        for (index, ends) in &self.chunk_ends {
            if let Some(ScriptStep::Say { markdown, chunks, .. }) = steps.get_mut(*index) {
                let held = Chunks(ChunksRepr::Ends { text: markdown, ends });
                *chunks = Some((0..held.len()).filter_map(|i| held.get(i)).map(str::to_owned).collect());
            }
        }
        steps
    }
}

/// Where each chunk ends in `markdown`, when the chunks are not empty, concatenate to exactly
/// `markdown` (as a valid script's do, `SCRIPT-019`; an agent's own plan may not) and every offset
/// fits 32 bits; `None` keeps them as they are.
fn ends_in(markdown: &str, chunks: &[String]) -> Option<Box<[u32]>> {
    if chunks.is_empty() {
        return None;
    }
    let mut ends = Vec::with_capacity(chunks.len());
    let mut at = 0usize;
    for chunk in chunks {
        let end = at.checked_add(chunk.len())?;
        if markdown.get(at..end)? != chunk.as_str() {
            return None;
        }
        ends.push(u32::try_from(end).ok()?);
        at = end;
    }
    (at == markdown.len()).then(|| ends.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn say(markdown: &str, chunks: Option<&[&str]>) -> ScriptStep {
        ScriptStep::Say {
            markdown: markdown.into(),
            chunks: chunks.map(|c| c.iter().map(|s| (*s).to_owned()).collect()),
            chunk_delay_ms: Some(5),
        }
    }

    fn chunks_of(plan: &TurnPlan, index: usize) -> Vec<&str> {
        let chunks = plan.step(index).unwrap().chunks;
        (0..chunks.len()).map(|i| chunks.get(i).unwrap()).collect()
    }

    #[test]
    fn a_streamed_say_plays_its_chunks_from_offsets_and_round_trips_as_its_turn() {
        let turn = ScriptTurn {
            steps: vec![
                say("héllo", Some(&["hé", "l", "lo"])),
                ScriptStep::Wait { ms: 3 },
                say("plain", None),
                say("", Some(&[])),
                // An agent's own plan whose chunks are not its markdown: kept as they are.
                say("abc", Some(&["x", "y"])),
            ],
            retries: vec![ScriptRetry { steps: vec![say("ab", Some(&["a", "b"]))] }],
        };
        let plan = TurnPlan::from(turn.clone());
        assert_eq!(plan.steps.chunk_ends.len(), 1, "only the say whose chunks are its markdown is folded");
        assert_eq!(chunks_of(&plan, 0), ["hé", "l", "lo"]);
        assert!(matches!(plan.step(0).unwrap().op, ScriptStep::Say { chunks: None, .. }));
        assert!(plan.step(1).unwrap().chunks.is_empty());
        assert!(plan.step(2).unwrap().chunks.is_empty());
        assert!(plan.step(3).unwrap().chunks.is_empty());
        assert_eq!(chunks_of(&plan, 4), ["x", "y"]);
        assert!(plan.step(5).is_none());
        assert_eq!(plan.step(0).unwrap().chunks.get(3), None);
        assert_eq!(plan.to_turn(), turn);
        assert_eq!(plan.retry(0), Some(ScriptTurn::new(turn.retries[0].steps.clone())));
        assert_eq!(plan.retry(1), None);
        // Stored and read back as the turn it was made from.
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(json, serde_json::to_string(&turn).unwrap());
        assert_eq!(serde_json::from_str::<TurnPlan>(&json).unwrap(), plan);
    }

    #[test]
    fn chunks_that_are_not_the_markdown_are_not_folded() {
        let owned = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(ends_in("abc", &owned(&["a", "bc"])).as_deref(), Some(&[1u32, 3][..]));
        assert_eq!(ends_in("abc", &owned(&["a", "b"])), None, "short of the markdown");
        assert_eq!(ends_in("abc", &owned(&["a", "bcd"])), None, "past it");
        assert_eq!(ends_in("abc", &owned(&["b", "ac"])), None, "out of order");
        assert_eq!(ends_in("", &[]), None);
    }
}
