//! The plan of one soak session, drawn from a seed: a random script within the conformance profile
//! (`spec/conformance-profile.md`) and what the client does around each of its turns (answers,
//! cuts, resumes, takeovers, retries, rewinds, cancels, pauses, restarts).
//!
//! A plan is a pure function of its seed and [`PlanOptions`]: the same seed gives the same plan on
//! every machine (only the wire timing varies). The session runner carries a step out only when
//! the state it holds makes a correct server accept it, so a plan never asks for a refusal it does
//! not expect.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// A small deterministic generator (SplitMix64): no dependency, the same stream everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }

    /// True with `percent` % probability.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The seed of session `index` of slot `slot` in a soak run seeded with `seed`.
pub fn session_seed(seed: u64, slot: usize, index: u64) -> u64 {
    let mut r = Rng::new(seed ^ ((slot as u64) << 48) ^ index.wrapping_mul(0x2545_F491_4F6C_DD1D));
    r.next_u64()
}

/// What the backend allows the plan to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// The runner starts the backend, so it can kill it with SIGKILL and start it again.
    pub restarts: bool,
}

/// The seq a resume names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cursor {
    /// The seq of the latest state frame held: a catch-up is owed where `resume_catch_up` is in
    /// force (RESUME-017).
    State,
    /// `last_seq` 0: a reload holding no state, answered by a snapshot (RESUME-018).
    Zero,
    /// The highest seq received, as a 1.0 client sends it.
    Highest,
}

/// Something done while a turn's run goes on, once `at_frame` server frames of the turn arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct During {
    /// Server frames of the turn on the main connection before it is done (at least 2: the
    /// message's answer has arrived).
    pub at_frame: u32,
    /// What is done.
    pub action: Interrupt,
}

/// An interruption of a running turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// Drop the connection without a close (a cut), then resume.
    Cut(Cursor),
    /// Close the connection (1000), then resume.
    Reconnect(Cursor),
    /// Stop reading the main connection for this many milliseconds (a slow reader).
    Pause(u64),
    /// `chat.cancel` of the turn's invocation (answered, or refused `run_not_active` if the run
    /// ended first).
    Cancel,
    /// A new connection resumes without `multi_attach`, taking the session over.
    Takeover,
    /// Kill the backend with SIGKILL, start it again, resume.
    Restart(Cursor),
    /// A second tab attaches (`multi_attach`) and reads along.
    Attach,
}

/// Something done once a turn is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum After {
    /// `chat.retry` after an item of the latest turn (the `k`-th of its items, modulo their
    /// number: 0 is the user message, so the whole answer is retried).
    Retry(u32),
    /// `chat.rewind` before the `back`-th latest turn (0: the latest).
    Rewind(u32),
    /// Close or cut, then resume.
    Resume {
        /// Cut (no close frame) rather than close.
        cut: bool,
        /// Which seq the resume names.
        cursor: Cursor,
    },
    /// Take the session over from a new connection.
    Takeover,
    /// Kill the backend and resume.
    Restart(Cursor),
}

/// How the client answers an awaited call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `submit` with this value.
    Submit(Value),
    /// `dismiss`.
    Dismiss,
    /// No answer: the next user message supersedes it (TURN-004).
    Leave,
}

/// What the client does around one user message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnPlan {
    /// An interruption while the run goes on.
    pub during: Option<During>,
    /// What follows the turn.
    pub after: Vec<After>,
}

/// One session: its script, and the client's part.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionPlan {
    /// The seed the plan was drawn from.
    pub seed: u64,
    /// The `AgentScript` of the session's hello.
    pub script: Value,
    /// One entry per user message.
    pub turns: Vec<TurnPlan>,
    /// The answer to each awaited call, by the `key` of its payload.
    pub answers: BTreeMap<String, Answer>,
}

impl SessionPlan {
    /// Draws the plan of `seed`.
    pub fn generate(seed: u64, options: PlanOptions) -> SessionPlan {
        let mut rng = Rng::new(seed);
        let mut answers = BTreeMap::new();
        let n_turns = rng.range(2, 5) as usize;
        let mut turns_json = Vec::new();
        for t in 0..n_turns {
            let steps = steps_of(&mut rng, &format!("t{t}"), &mut answers);
            let mut turn = json!({ "steps": steps });
            if rng.chance(40) {
                let retries: Vec<Value> = (0..rng.range(1, 2))
                    .map(|k| json!({ "steps": steps_of(&mut rng, &format!("t{t}r{k}"), &mut answers) }))
                    .collect();
                turn["retries"] = Value::Array(retries);
            }
            turns_json.push(turn);
        }
        // Now and then one message more than the script has turns: `script_exhausted` (SCRIPT-005).
        let messages = n_turns + usize::from(rng.chance(15));
        let turns = (0..messages).map(|_| turn_plan(&mut rng, options)).collect();
        SessionPlan { seed, script: json!({ "turns": turns_json }), turns, answers }
    }
}

fn turn_plan(rng: &mut Rng, options: PlanOptions) -> TurnPlan {
    let cursor = |rng: &mut Rng| match rng.below(5) {
        0 | 1 => Cursor::State,
        2 | 3 => Cursor::Zero,
        _ => Cursor::Highest,
    };
    let during = rng.chance(55).then(|| {
        let at_frame = rng.range(2, 14) as u32;
        let action = match rng.below(if options.restarts { 8 } else { 7 }) {
            0 => Interrupt::Cut(cursor(rng)),
            1 => Interrupt::Reconnect(cursor(rng)),
            2 => Interrupt::Pause(rng.range(20, 250)),
            3 => Interrupt::Cancel,
            4 => Interrupt::Takeover,
            5 => Interrupt::Attach,
            6 => Interrupt::Cut(cursor(rng)),
            _ => Interrupt::Restart(cursor(rng)),
        };
        During { at_frame, action }
    });
    let mut after = Vec::new();
    for _ in 0..rng.below(3) {
        after.push(match rng.below(if options.restarts { 6 } else { 5 }) {
            0 => After::Retry(rng.below(6) as u32),
            1 => After::Rewind(rng.below(2) as u32),
            2 => After::Resume { cut: rng.chance(50), cursor: cursor(rng) },
            3 => After::Takeover,
            4 => After::Retry(0),
            _ => After::Restart(cursor(rng)),
        });
    }
    // A rewind of the latest turn is rarer than the rest: it undoes what the soak just built.
    if after.contains(&After::Rewind(0)) && rng.chance(50) {
        after.retain(|a| *a != After::Rewind(0));
    }
    TurnPlan { during, after }
}

const WORDS: &[&str] = &["Checking", "the build", "now.", "All", "tests", "pass", "and", "the key", "rotates", "fine."];

fn markdown(rng: &mut Rng) -> String {
    let n = rng.range(1, 8) as usize;
    (0..n).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

/// A turn's (or a retry's) steps, ended by an `end` step or not.
fn steps_of(rng: &mut Rng, key: &str, answers: &mut BTreeMap<String, Answer>) -> Vec<Value> {
    let mut steps = Vec::new();
    for s in 0..rng.range(1, 4) {
        match rng.below(5) {
            0 | 1 => steps.push(say(rng)),
            2 | 3 => steps.push(batch(rng, &format!("{key}s{s}"), answers)),
            _ => steps.push(json!({"op": "wait", "ms": rng.range(0, 30)})),
        }
    }
    match rng.below(10) {
        0..=5 => steps.push(json!({"op": "end", "status": "completed"})),
        6 | 7 => steps.push(json!({"op": "end", "status": "failed", "error": "simulated failure"})),
        _ => {}
    }
    steps
}

fn say(rng: &mut Rng) -> Value {
    let text = markdown(rng);
    if !rng.chance(60) {
        return json!({"op": "say", "markdown": text});
    }
    // Chunks that concatenate to the markdown, none empty (rule 7).
    let chars: Vec<char> = text.chars().collect();
    let mut cuts: Vec<usize> =
        (0..rng.range(1, 5)).map(|_| rng.range(1, chars.len().max(2) as u64 - 1) as usize).collect();
    cuts.push(chars.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut chunks = Vec::new();
    let mut from = 0;
    for cut in cuts {
        if cut > from && cut <= chars.len() {
            chunks.push(chars[from..cut].iter().collect::<String>());
            from = cut;
        }
    }
    json!({"op": "say", "markdown": text, "chunks": chunks, "chunk_delay_ms": rng.range(0, 15)})
}

fn batch(rng: &mut Rng, key: &str, answers: &mut BTreeMap<String, Answer>) -> Value {
    let n = rng.range(1, 3) as usize;
    let mut calls = Vec::new();
    let mut settling = Vec::new();
    for i in 0..n {
        let key = format!("{key}c{i}");
        let mut call = json!({
            "tool_name": "tool",
            "interaction_type": "auto_tool",
            "display": "inline",
            "payload": {"key": key},
            "run_ms": rng.range(0, 20),
        });
        match rng.below(6) {
            0 | 1 => {
                call["outcome"] = json!({"kind": "result", "value": {"n": rng.below(100)}, "summary": "done"});
            }
            2 => call["outcome"] = json!({"kind": "error", "message": "exit status 2"}),
            3 => call["outcome"] = json!({"kind": "dismiss", "reason": "not needed"}),
            _ => {
                call["interaction_type"] = json!(if rng.chance(70) { "ui_tool" } else { "ui_surface" });
                call["component_type"] = json!("ConfirmDialog");
                call["tool_name"] = json!("confirm");
                call["outcome"] = json!({"kind": "await_response", "expire_after_ms": 600_000, "summary": "confirmed"});
                answers.insert(
                    key,
                    match rng.below(10) {
                        0..=5 => Answer::Submit(json!({"ok": rng.below(10)})),
                        6..=8 => Answer::Dismiss,
                        _ => Answer::Leave,
                    },
                );
            }
        }
        if call["outcome"]["kind"] != "await_response" {
            settling.push(i);
            if rng.chance(40) {
                let progress: Vec<Value> = (0..rng.range(1, 2))
                    .map(|p| json!({"message": "working", "fraction": 0.3 * (p + 1) as f64}))
                    .collect();
                call["progress"] = Value::Array(progress);
            }
        }
        if rng.chance(35) {
            let mut output = json!({"command": "make"});
            if rng.chance(30) {
                output["approvals"] = json!(["approve"]);
            }
            output["stdout"] = json!(if rng.chance(20) { "" } else { "ok\n" });
            if rng.chance(50) {
                output["exit_code"] = json!(rng.below(3));
            }
            call["output"] = output;
        }
        calls.push(call);
    }
    let mut step = json!({"op": "tool_calls", "calls": calls});
    if rng.chance(50) && settling.len() > 1 {
        // A random permutation of the self-settling calls (rule 4).
        for i in (1..settling.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            settling.swap(i, j);
        }
        step["settle_order"] = json!(settling);
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_plan_and_its_script_is_valid() {
        let options = PlanOptions { restarts: true };
        for seed in 0..200u64 {
            let a = SessionPlan::generate(seed, options);
            let b = SessionPlan::generate(seed, options);
            assert_eq!(a, b, "seed {seed}");
            assert_eq!(a.seed, seed);
            let script: chatwire_schema::script::AgentScript =
                serde_json::from_value(a.script.clone()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            script.validate().unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
            let no_restart = SessionPlan::generate(seed, PlanOptions { restarts: false });
            assert!(no_restart.turns.iter().all(|t| {
                !matches!(t.during, Some(During { action: Interrupt::Restart(_), .. }))
                    && !t.after.iter().any(|a| matches!(a, After::Restart(_)))
            }));
        }
        assert_ne!(SessionPlan::generate(1, options), SessionPlan::generate(2, options));
        assert_eq!(session_seed(7, 3, 11), session_seed(7, 3, 11));
        assert_ne!(session_seed(7, 3, 11), session_seed(7, 3, 12));
    }
}
