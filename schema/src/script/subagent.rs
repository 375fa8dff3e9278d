//! The `subagent` member of a scripted tool call (since 1.3, feature `subagents`): the sub-agent
//! run the call hosts, and validity rules 12–14 (`spec/conformance-profile.md#sub-agents`,
//! `SCRIPT-029`, `SCRIPT-030`).

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{validate_steps, ScriptError, ScriptStep, ScriptToolCall};
use crate::subagent::MAX_SUBAGENT_DEPTH;
use crate::Id;

/// The sub-agent run a scripted call hosts (since 1.3, `SCRIPT-029`): played after the call's
/// `chat.tool_call` and progress as `chat.subagent_started`, the nested steps, then
/// `chat.subagent_complete`; the call's `outcome` settles it afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSubagent {
    /// The sub-agent's `thread_id`.
    pub thread: Id,
    /// Continue `thread` from its latest call (`SUBAGENT-004`) instead of starting it.
    #[serde(default, rename = "continue", skip_serializing_if = "crate::serde_util::is_false")]
    pub continues: bool,
    /// The `name` of `chat.subagent_started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The `input` of `chat.subagent_started`.
    pub input: String,
    /// The sub-agent's steps, each played as at top level with the host as `parent_call_id`:
    /// `say`, `reason`, `tool_calls`, `wait`, `usage`; never `end` (`EndInSubagent`).
    #[serde(default)]
    pub steps: Vec<ScriptStep>,
    /// How the run ends: its `chat.subagent_complete`.
    pub end: ScriptSubagentEnd,
}

/// How a scripted sub-agent run ends: the members of its `chat.subagent_complete`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSubagentEnd {
    /// The run's status.
    pub status: ScriptSubagentStatus,
    /// The sub-agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The run ended by calling its `return` tool; only with `completed` (`ReturnedNotCompleted`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub returned: bool,
}

/// How a scripted sub-agent run ends (a cancel, not the script, ends one `cancelled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScriptSubagentStatus {
    /// `chat.subagent_complete` with status `completed`.
    Completed,
    /// `chat.subagent_complete` with status `failed`.
    Failed,
}

/// Where a call sits, for its errors: turn, step and call index.
#[derive(Clone, Copy)]
pub(super) struct CallAt {
    pub turn: usize,
    pub step: usize,
    pub call: usize,
}

/// What validation carries from one step to the next across the whole script, in its reading
/// order (turns in order, a turn's steps before its retries, nested steps where they stand).
#[derive(Default)]
pub(super) struct Walk {
    /// The script's one currency (rule 11), once a cost named it.
    pub currency: Option<String>,
    /// The threads hosted so far (rule 14).
    pub threads: HashSet<Id>,
    /// The depth of the steps being read: 0 for a turn's, d for a depth-d sub-agent's.
    pub depth: usize,
}

/// Rules 12–14 for a call that carries `subagent`, then its nested steps by rules 1–11 (an error
/// among them located by [`ScriptError::InSubagent`]).
pub(super) fn validate_host(
    at: CallAt,
    call: &ScriptToolCall,
    subagent: &ScriptSubagent,
    walk: &mut Walk,
) -> Result<(), ScriptError> {
    let CallAt { turn, step, call: index } = at;
    if call.outcome.awaits_response() || call.output.is_some() {
        return Err(ScriptError::NotSubagentHost { turn, step, call: index });
    }
    if walk.depth + 1 > MAX_SUBAGENT_DEPTH {
        return Err(ScriptError::SubagentTooDeep { turn, step, call: index });
    }
    let known = walk.threads.contains(&subagent.thread);
    match (subagent.continues, known) {
        (true, false) => {
            return Err(ScriptError::UnknownThread { turn, step, call: index, thread: subagent.thread.to_string() })
        }
        (false, true) => {
            return Err(ScriptError::ThreadReused { turn, step, call: index, thread: subagent.thread.to_string() })
        }
        _ => {}
    }
    if subagent.end.returned && subagent.end.status != ScriptSubagentStatus::Completed {
        return Err(ScriptError::ReturnedNotCompleted { turn, step, call: index });
    }
    walk.threads.insert(subagent.thread.clone());
    if let Some(end) = subagent.steps.iter().position(|s| matches!(s, ScriptStep::End { .. })) {
        let error = Box::new(ScriptError::EndInSubagent { turn, step: end });
        return Err(ScriptError::InSubagent { turn, step, call: index, error });
    }
    walk.depth += 1;
    let nested = validate_steps(turn, &subagent.steps, walk);
    walk.depth -= 1;
    nested.map_err(|error| ScriptError::InSubagent { turn, step, call: index, error: Box::new(error) })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::script::{AgentScript, ScriptError};

    fn host(thread: &str, extra: Value, steps: Value) -> Value {
        let mut subagent = json!({"thread": thread, "input": "go", "steps": steps, "end": {"status": "completed"}});
        subagent.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"tool_name": "research", "interaction_type": "auto_tool", "display": "inline",
            "outcome": {"kind": "result", "value": 1}, "subagent": subagent})
    }

    fn batch(calls: Value) -> Value {
        json!({"op": "tool_calls", "calls": calls})
    }

    fn script(turns: Value) -> AgentScript {
        serde_json::from_value(json!({"turns": turns})).expect("fits agent-script.json")
    }

    fn one_turn(steps: Value) -> AgentScript {
        script(json!([{"steps": steps}]))
    }

    fn nested(error: ScriptError) -> ScriptError {
        ScriptError::InSubagent { turn: 0, step: 0, call: 0, error: Box::new(error) }
    }

    // Rule 12: a host runs by itself (result, error or dismiss) and has no output.
    #[test]
    fn a_host_settles_by_itself_and_has_no_output() {
        for outcome in [
            json!({"kind": "result", "value": 1}),
            json!({"kind": "error", "message": "x"}),
            json!({"kind": "dismiss"}),
        ] {
            let mut call = host("th-1", json!({}), json!([]));
            call["outcome"] = outcome;
            assert_eq!(one_turn(json!([batch(json!([call]))])).validate(), Ok(()));
        }
        let mut awaited = host("th-1", json!({}), json!([]));
        awaited["outcome"] = json!({"kind": "await_response"});
        assert_eq!(
            one_turn(json!([batch(json!([{"tool_name": "x", "interaction_type": "auto_tool", "display": "inline",
                "outcome": {"kind": "result", "value": 1}}, awaited]))]))
            .validate(),
            Err(ScriptError::NotSubagentHost { turn: 0, step: 0, call: 1 })
        );
        let mut with_output = host("th-1", json!({}), json!([]));
        with_output["output"] = json!({"stdout": "x"});
        assert_eq!(
            one_turn(json!([batch(json!([with_output]))])).validate(),
            Err(ScriptError::NotSubagentHost { turn: 0, step: 0, call: 0 })
        );
    }

    // Rule 13: no end among the nested steps, rules 1-11 inside, at most MAX_SUBAGENT_DEPTH levels.
    #[test]
    fn nested_steps_follow_the_rules_of_a_turn_down_to_the_depth_bound() {
        let ended = host("th-1", json!({}), json!([{"op": "end", "status": "completed"}]));
        assert_eq!(
            one_turn(json!([batch(json!([ended]))])).validate(),
            Err(nested(ScriptError::EndInSubagent { turn: 0, step: 0 }))
        );
        let chunks = host("th-1", json!({}), json!([{"op": "say", "markdown": "ab", "chunks": ["a", "c"]}]));
        assert_eq!(
            one_turn(json!([batch(json!([chunks]))])).validate(),
            Err(nested(ScriptError::ChunksDiffer { turn: 0, step: 0 }))
        );
        let empty = host("th-1", json!({}), json!([{"op": "say", "markdown": "a"}, batch(json!([]))]));
        assert_eq!(
            one_turn(json!([batch(json!([empty]))])).validate(),
            Err(nested(ScriptError::EmptyBatch { turn: 0, step: 1 }))
        );
        // Four levels run; a fifth is too deep, reported where it stands.
        let deep = |levels: usize| {
            let mut steps = json!([{"op": "say", "markdown": "leaf"}]);
            for level in (0..levels).rev() {
                steps = json!([batch(json!([host(&format!("th-{level}"), json!({}), steps)]))]);
            }
            one_turn(steps)
        };
        assert_eq!(deep(4).validate(), Ok(()));
        let mut expected = ScriptError::SubagentTooDeep { turn: 0, step: 0, call: 0 };
        for _ in 0..4 {
            expected = nested(expected);
        }
        assert_eq!(deep(5).validate(), Err(expected));
        // One currency across levels (rule 11).
        let usd =
            json!({"op": "usage", "input_tokens": 1, "output_tokens": 1, "cost": {"amount": "1", "currency": "USD"}});
        let eur =
            json!({"op": "usage", "input_tokens": 1, "output_tokens": 1, "cost": {"amount": "1", "currency": "EUR"}});
        assert_eq!(
            one_turn(json!([usd, batch(json!([host("th-1", json!({}), json!([eur]))]))])).validate(),
            Err(ScriptError::InSubagent {
                turn: 0,
                step: 1,
                call: 0,
                error: Box::new(ScriptError::MixedCurrencies {
                    turn: 0,
                    step: 0,
                    expected: "USD".into(),
                    found: "EUR".into()
                })
            })
        );
    }

    // Rule 14: continue names an earlier thread, a new thread is new, returned only when completed.
    #[test]
    fn threads_continue_only_what_came_before_in_reading_order() {
        let first = batch(json!([host("th-1", json!({}), json!([]))]));
        let again = batch(json!([host("th-1", json!({"continue": true}), json!([]))]));
        assert_eq!(script(json!([{"steps": [first]}, {"steps": [again]}])).validate(), Ok(()));
        assert_eq!(
            script(json!([{"steps": [again]}, {"steps": [first]}])).validate(),
            Err(ScriptError::UnknownThread { turn: 0, step: 0, call: 0, thread: "th-1".into() })
        );
        assert_eq!(
            script(json!([{"steps": [first]}, {"steps": [first]}])).validate(),
            Err(ScriptError::ThreadReused { turn: 1, step: 0, call: 0, thread: "th-1".into() })
        );
        // A turn's steps come before its retries; nested steps where they stand.
        assert_eq!(script(json!([{"steps": [first], "retries": [{"steps": [again]}]}])).validate(), Ok(()));
        let inner = batch(json!([host("th-2", json!({}), json!([]))]));
        let outer = batch(json!([host("th-1", json!({}), json!([inner]))]));
        let back = batch(json!([host("th-2", json!({"continue": true}), json!([]))]));
        assert_eq!(one_turn(json!([outer, back])).validate(), Ok(()));
        let returned = |status: &str| {
            let mut call = host("th-1", json!({}), json!([]));
            call["subagent"]["end"] = json!({"status": status, "response": "r", "returned": true});
            one_turn(json!([batch(json!([call]))]))
        };
        assert_eq!(returned("completed").validate(), Ok(()));
        assert_eq!(returned("failed").validate(), Err(ScriptError::ReturnedNotCompleted { turn: 0, step: 0, call: 0 }));
    }

    // The member's shape is the schema's, and it needs 1.3.
    #[test]
    fn the_member_round_trips_and_needs_1_3() {
        let turn = json!({"steps": [batch(json!([host("th-1", json!({"continue": false, "name": "n"}), json!([]))]))]});
        let parsed = script(json!([turn]));
        assert_eq!(parsed.since(), crate::ProtocolVersion { major: 1, minor: 3 });
        let written = serde_json::to_value(&parsed).unwrap();
        assert_eq!(written["turns"][0]["steps"][0]["calls"][0]["subagent"]["name"], "n");
        assert!(written["turns"][0]["steps"][0]["calls"][0]["subagent"].get("continue").is_none());
        for bad in [
            json!({"thread": "th-1", "input": "x", "end": {"status": "cancelled"}}),
            json!({"thread": "th-1", "input": "x", "end": {"status": "completed"}, "extra": 1}),
            json!({"thread": "", "input": "x", "end": {"status": "completed"}}),
            json!({"thread": "th-1", "end": {"status": "completed"}}),
        ] {
            let mut call = host("th-1", json!({}), json!([]));
            call["subagent"] = bad.clone();
            let whole = json!({"turns": [{"steps": [batch(json!([call]))]}]});
            assert!(serde_json::from_value::<AgentScript>(whole).is_err(), "{bad}");
        }
    }
}
