//! The 1.3 additions to the shared reducer-trace corpus (`shared_corpora.rs`): the events the
//! reasoning and usage traces draw besides the others, how they draw a `chat.reasoning` and a
//! run's usage, and a written trace of the usage refusals.

use chatwire_schema::{Direction, FrameValidator, UiState};
use serde_json::{json, Map, Value};

use super::{optional, step, TraceGen};

/// What the 1.3 traces add to [`super::RUNNING_EVENTS`] and [`super::IDLE_EVENTS`].
pub(super) const RUNNING_EVENTS_13: &[&str] = &[
    "chat.reasoning_delta",
    "chat.reasoning_delta",
    "chat.reasoning_delta",
    "chat.reasoning",
    "chat.reasoning",
    "chat.run_complete",
    "chat.run_complete",
    "chat.run_complete",
];
pub(super) const IDLE_EVENTS_13: &[&str] = &["chat.reasoning"];

impl TraceGen<'_> {
    /// A `chat.reasoning` (since 1.3): mostly the end of the open reasoning stream with its text,
    /// sometimes redacted, with other text, or redacted with text; else a whole item.
    pub(super) fn reasoning(&mut self, state: &UiState, f: &mut Map<String, Value>, seq: u64) {
        f.insert("invocation_id".into(), json!(self.invocation(state)));
        let open = state.open_reasoning().filter(|_| self.rng.chance(75));
        let (item, text) = match open {
            Some(open) => {
                let text = if self.rng.chance(85) { open.text.clone() } else { format!("{}?", open.text) };
                (open.id.to_string(), text)
            }
            None if self.rng.chance(85) => (self.fresh("rs"), format!("a whole thought {seq}")),
            None => (self.some_id(state, |i| Some(i.id().to_string()), "rs"), format!("thought {seq}")),
        };
        let redacted = self.rng.chance(20);
        // Redacted means no text (STATE-062); sometimes the frame breaks that.
        let text = if redacted && self.rng.chance(75) { String::new() } else { text };
        f.insert("item_id".into(), json!(item));
        f.insert("text".into(), json!(text));
        if redacted {
            f.insert("redacted".into(), json!(true));
        } else {
            optional(&mut self.rng, f, "redacted", json!(false));
        }
        optional(&mut self.rng, f, "encrypted", json!(format!("RW5j-{seq}_cnlwdGVk==")));
    }

    /// A run slice's usage (since 1.3): mostly in dollars, sometimes in euros (STATE-059), rarely
    /// near 2^53 - 1 (STATE-063).
    pub(super) fn usage(&mut self) -> Value {
        let input = if self.rng.chance(10) { 9_007_199_254_740_000 } else { self.rng.below(2000) as u64 };
        let mut usage = Map::new();
        usage.insert("input_tokens".into(), json!(input));
        usage.insert("output_tokens".into(), json!(self.rng.below(500)));
        let reasoning = self.rng.below(300);
        optional(&mut self.rng, &mut usage, "reasoning_tokens", json!(reasoning));
        if self.rng.chance(50) {
            let cached = self.rng.below(1000);
            optional(&mut self.rng, &mut usage, "cached_input_tokens", json!(cached));
        }
        if self.rng.chance(70) {
            let amount = *self.rng.pick(&["0.01", "0.0123", "1", "0.5", "12.001", "0"]);
            let currency = if self.rng.chance(20) { "EUR" } else { "USD" };
            optional(&mut self.rng, &mut usage, "cost", json!({"amount": amount, "currency": currency}));
        }
        Value::Object(usage)
    }
}

/// A written trace of usage sums (since 1.3): two turns in one currency, a second currency and a
/// sum past 2^53 - 1 refused (`STATE-059`, `STATE-063`), a run's end refused while reasoning
/// streams (`STATE-060`), and a rewind that keeps the total (`STATE-057`). The random traces
/// meet those refusals too rarely to be sure of them.
pub(super) fn usage_trace(validator: &FrameValidator) -> Value {
    let usage = |input: u64, cost: Option<(&str, &str)>| {
        let mut u = json!({"input_tokens": input, "output_tokens": 40, "reasoning_tokens": 8});
        if let Some((amount, currency)) = cost {
            u["cost"] = json!({"amount": amount, "currency": currency});
        }
        u
    };
    let end = |inv: &str, usage: Value| json!({"type": "chat.run_complete", "invocation_id": inv, "status": "completed", "usage": usage});
    let frames = [
        json!({"type": "chat.user_message_accepted", "in_reply_to": "m-u1", "invocation_id": "inv-u1", "item_id": "um-u1", "text": "cheapest fare?"}),
        json!({"type": "chat.run_started", "invocation_id": "inv-u1"}),
        json!({"type": "chat.reasoning_delta", "invocation_id": "inv-u1", "item_id": "rs-u1", "text": "weigh the fares"}),
        end("inv-u1", usage(1200, Some(("0.0123", "USD")))),
        json!({"type": "chat.reasoning", "invocation_id": "inv-u1", "item_id": "rs-u1", "text": "weigh the fares", "encrypted": "RW5jcnlwdGVk"}),
        end("inv-u1", usage(1200, Some(("0.0123", "USD")))),
        json!({"type": "chat.user_message_accepted", "in_reply_to": "m-u2", "invocation_id": "inv-u2", "item_id": "um-u2", "text": "and back?"}),
        json!({"type": "chat.run_started", "invocation_id": "inv-u2"}),
        end("inv-u2", usage(10, Some(("0.01", "EUR")))),
        end("inv-u2", usage(9_007_199_254_740_000, None)),
        end("inv-u2", usage(10, Some(("0.01", "USD")))),
        json!({"type": "chat.rewind_complete", "in_reply_to": "rw-u1", "before_invocation_id": "inv-u2", "removed_invocation_ids": ["inv-u2"]}),
    ];
    let mut state = UiState::default();
    let initial = serde_json::to_value(&state).expect("a state serializes");
    let steps: Vec<Value> = frames
        .into_iter()
        .enumerate()
        .map(|(n, mut frame)| {
            frame["seq"] = json!(3 + n);
            frame["ts"] = json!(format!("2026-11-22T11:00:{n:02}Z"));
            assert!(validator.check(Direction::ServerToClient, &frame).is_ok(), "schema-invalid: {frame}");
            step(&mut state, frame)
        })
        .collect();
    json!({
        "name": "usage-refusals",
        "initial": initial,
        "steps": steps,
        "final": serde_json::to_value(&state).expect("a state serializes"),
        "ends_with_pending_call": false,
    })
}
