//! `AgentScript::validate` against every rule of `spec/conformance-profile.md#script-validity`,
//! rules 12-14 (sub-agents, since 1.3) included, and the shape of the script's members.

use chatwire_schema::script::{AgentScript, ScriptError, MAX_SAY_CHUNKS};
use serde_json::{json, Value};

fn script(steps: serde_json::Value) -> AgentScript {
    serde_json::from_value(json!({"turns": [{"steps": steps}]})).expect("fits agent-script.json")
}

fn auto(extra: serde_json::Value) -> serde_json::Value {
    let mut call = json!({"tool_name": "t", "interaction_type": "auto_tool", "display": "inline",
        "outcome": {"kind": "result", "value": 1}});
    if let (Some(call), Some(extra)) = (call.as_object_mut(), extra.as_object()) {
        call.extend(extra.clone());
    }
    call
}

fn awaited() -> serde_json::Value {
    json!({"tool_name": "ask", "interaction_type": "ui_tool", "component_type": "Form", "display": "inline",
        "outcome": {"kind": "await_response"}})
}

// Every rule of spec/conformance-profile.md#script-validity, on both sides of its boundary.
#[test]
fn validate_applies_every_rule_of_the_spec_and_nothing_else() {
    let cases: Vec<(serde_json::Value, Result<(), ScriptError>)> = vec![
        // 1. an empty batch
        (json!([{"op": "tool_calls", "calls": []}]), Err(ScriptError::EmptyBatch { turn: 0, step: 0 })),
        // 2. delays of calls, inclusive limits
        (json!([{"op": "tool_calls", "calls": [auto(json!({"run_ms": 60000}))]}]), Ok(())),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({"run_ms": 60001}))]}]),
            Err(ScriptError::DelayTooLong { turn: 0, step: 0, ms: 60001 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "input_request",
                "display": "composer", "outcome": {"kind": "await_response", "expire_after_ms": 600000}}]}]),
            Ok(()),
        ),
        (
            json!([{"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "input_request",
                "display": "composer", "outcome": {"kind": "await_response", "expire_after_ms": 600001}}]}]),
            Err(ScriptError::DelayTooLong { turn: 0, step: 0, ms: 600001 }),
        ),
        // 3. a component for ui_tool and ui_surface, non-empty
        (
            json!([{"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool",
                "display": "inline", "outcome": {"kind": "await_response"}}]}]),
            Err(ScriptError::MissingComponentType { turn: 0, step: 0, call: 0 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({})), auto(json!({"interaction_type": "ui_surface",
                "component_type": ""}))]}]),
            Err(ScriptError::MissingComponentType { turn: 0, step: 0, call: 1 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({"interaction_type": "ui_surface", "component_type": "R"}))]}]),
            Ok(()),
        ),
        // 4. settle_order: a permutation of the self-settling calls
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({})), awaited(), auto(json!({}))], "settle_order": [2, 0]}]),
            Ok(()),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({})), auto(json!({}))], "settle_order": [0, 0]}]),
            Err(ScriptError::BadSettleOrder { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({})), awaited()], "settle_order": [0, 1]}]),
            Err(ScriptError::BadSettleOrder { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({}))], "settle_order": [1]}]),
            Err(ScriptError::BadSettleOrder { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "tool_calls", "calls": [auto(json!({})), auto(json!({}))], "settle_order": [1]}]),
            Err(ScriptError::BadSettleOrder { turn: 0, step: 0 }),
        ),
        (json!([{"op": "tool_calls", "calls": [awaited()], "settle_order": []}]), Ok(())),
        // 5. wait, inclusive limit
        (json!([{"op": "wait", "ms": 60000}]), Ok(())),
        (
            json!([{"op": "say", "markdown": "x"}, {"op": "wait", "ms": 60001}]),
            Err(ScriptError::DelayTooLong { turn: 0, step: 1, ms: 60001 }),
        ),
        // 6. nothing after end
        (
            json!([{"op": "end", "status": "completed"}, {"op": "say", "markdown": "x"}]),
            Err(ScriptError::StepAfterEnd { turn: 0, step: 1 }),
        ),
        // valid without further rules
        (json!([]), Ok(())),
        (json!([{"op": "end", "status": "cancelled", "error": "not only for failed"}]), Ok(())),
        // 7. chunks (since 1.1): non-empty, concatenating to the markdown, at most MAX_SAY_CHUNKS
        (json!([{"op": "say", "markdown": "héllo", "chunks": ["hé", "llo"], "chunk_delay_ms": 60000}]), Ok(())),
        (json!([{"op": "say", "markdown": "", "chunks": []}]), Ok(())),
        (
            json!([{"op": "say", "markdown": "hello", "chunks": ["he", "", "llo"]}]),
            Err(ScriptError::EmptyChunk { turn: 0, step: 0, chunk: 1 }),
        ),
        (
            json!([{"op": "say", "markdown": "hello", "chunks": ["he", "lo"]}]),
            Err(ScriptError::ChunksDiffer { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "say", "markdown": "hello", "chunks": ["llo", "he"]}]),
            Err(ScriptError::ChunksDiffer { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "say", "markdown": "x", "chunk_delay_ms": 60001}]),
            Err(ScriptError::DelayTooLong { turn: 0, step: 0, ms: 60001 }),
        ),
        (json!([{"op": "say", "markdown": "x".repeat(MAX_SAY_CHUNKS), "chunks": vec!["x"; MAX_SAY_CHUNKS]}]), Ok(())),
        (
            json!([{"op": "say", "markdown": "x".repeat(MAX_SAY_CHUNKS + 1), "chunks": vec!["x"; MAX_SAY_CHUNKS + 1]}]),
            Err(ScriptError::TooManyChunks { turn: 0, step: 0, count: MAX_SAY_CHUNKS + 1 }),
        ),
    ];
    for (steps, expected) in cases {
        assert_eq!(script(steps.clone()).validate(), expected, "{steps}");
    }
    assert_eq!(AgentScript { turns: vec![] }.validate(), Ok(()));
}

// Rules 10 and 11 (since 1.3): a reason step's chunks as a say's, none when redacted; one
// currency in the whole script, retries included.
#[test]
fn reason_and_usage_steps_follow_rules_10_and_11() {
    let usd =
        json!({"op": "usage", "input_tokens": 1, "output_tokens": 2, "cost": {"amount": "0.01", "currency": "USD"}});
    let eur =
        json!({"op": "usage", "input_tokens": 1, "output_tokens": 2, "cost": {"amount": "0.01", "currency": "EUR"}});
    let cases: Vec<(serde_json::Value, Result<(), ScriptError>)> = vec![
        (
            json!([{"op": "reason", "text": "hmm", "chunks": ["h", "mm"], "chunk_delay_ms": 60000, "encrypted": "QUJD"}]),
            Ok(()),
        ),
        (json!([{"op": "reason", "text": "secret", "redacted": true, "encrypted": "QUJD"}]), Ok(())),
        (
            json!([{"op": "reason", "text": "hmm", "chunks": ["h", ""]}]),
            Err(ScriptError::EmptyChunk { turn: 0, step: 0, chunk: 1 }),
        ),
        (
            json!([{"op": "reason", "text": "hmm", "chunks": ["m", "hm"]}]),
            Err(ScriptError::ChunksDiffer { turn: 0, step: 0 }),
        ),
        (
            json!([{"op": "reason", "text": "x", "chunk_delay_ms": 60001}]),
            Err(ScriptError::DelayTooLong { turn: 0, step: 0, ms: 60001 }),
        ),
        (
            json!([{"op": "reason", "text": "x".repeat(MAX_SAY_CHUNKS + 1), "chunks": vec!["x"; MAX_SAY_CHUNKS + 1]}]),
            Err(ScriptError::TooManyChunks { turn: 0, step: 0, count: MAX_SAY_CHUNKS + 1 }),
        ),
        (
            json!([{"op": "reason", "text": "ab", "chunks": ["a", "b"], "redacted": true}]),
            Err(ScriptError::ChunksOfRedacted { turn: 0, step: 0 }),
        ),
        (json!([usd, {"op": "usage", "input_tokens": 0, "output_tokens": 0}, usd]), Ok(())),
        (
            json!([usd, {"op": "say", "markdown": "x"}, eur]),
            Err(ScriptError::MixedCurrencies { turn: 0, step: 2, expected: "USD".into(), found: "EUR".into() }),
        ),
    ];
    for (steps, expected) in cases {
        assert_eq!(script(steps.clone()).validate(), expected, "{steps}");
    }
    // The currency is the script's: a retry's cost in another one is located in the retry.
    let mixed: AgentScript =
        serde_json::from_value(json!({"turns": [{"steps": [usd], "retries": [{"steps": [eur]}]}]})).unwrap();
    assert_eq!(
        mixed.validate(),
        Err(ScriptError::InRetry {
            turn: 0,
            retry: 0,
            error: Box::new(ScriptError::MixedCurrencies {
                turn: 0,
                step: 0,
                expected: "USD".into(),
                found: "EUR".into()
            })
        })
    );
    // Their shape is the schema's: an unknown member, a payload outside the alphabet.
    for bad in [
        json!({"turns": [{"steps": [{"op": "reason", "text": "x", "extra": 1}]}]}),
        json!({"turns": [{"steps": [{"op": "reason", "text": "x", "encrypted": "not base64!"}]}]}),
        json!({"turns": [{"steps": [{"op": "usage", "input_tokens": 1}]}]}),
        json!({"turns": [{"steps": [{"op": "usage", "input_tokens": 1, "output_tokens": 1, "extra": 1}]}]}),
    ] {
        assert!(serde_json::from_value::<AgentScript>(bad.clone()).is_err(), "{bad}");
    }
    let round: AgentScript = serde_json::from_value(json!({"turns": [{"steps": [usd]}]})).unwrap();
    assert_eq!(serde_json::to_value(&round).unwrap(), json!({"turns": [{"steps": [usd]}]}));
}

// The steps of a retry follow the rules of a turn's steps, and an error says which retry.
#[test]
fn retries_are_validated_like_turns_and_located() {
    let with_retries = |retries: serde_json::Value| -> AgentScript {
        serde_json::from_value(json!({"turns": [
            {"steps": [{"op": "say", "markdown": "a"}]},
            {"steps": [], "retries": retries}
        ]}))
        .expect("fits agent-script.json")
    };
    assert_eq!(with_retries(json!([{"steps": []}, {"steps": [{"op": "end", "status": "failed"}]}])).validate(), Ok(()));
    assert_eq!(
        with_retries(json!([{"steps": []}, {"steps": [{"op": "end", "status": "failed"}, {"op": "wait", "ms": 1}]}]))
            .validate(),
        Err(ScriptError::InRetry {
            turn: 1,
            retry: 1,
            error: Box::new(ScriptError::StepAfterEnd { turn: 1, step: 1 })
        })
    );
    let chunked = with_retries(json!([{"steps": [{"op": "say", "markdown": "ab", "chunks": ["a", "c"]}]}]));
    let error = chunked.validate().expect_err("the chunks differ");
    assert_eq!(error.to_string(), "turn 1 retry 0: turn 1 step 0: the chunks do not concatenate to the markdown");
    // A retry is written only when there is one: a 1.0 script round-trips unchanged.
    let plain = json!({"turns": [{"steps": [{"op": "say", "markdown": "a"}]}]});
    let parsed: AgentScript = serde_json::from_value(plain.clone()).unwrap();
    assert_eq!(serde_json::to_value(&parsed).unwrap(), plain);
}

fn host(thread: &str, extra: Value, steps: Value) -> Value {
    let mut subagent = json!({"thread": thread, "input": "go", "steps": steps, "end": {"status": "completed"}});
    subagent.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    json!({"tool_name": "research", "interaction_type": "auto_tool", "display": "inline",
        "outcome": {"kind": "result", "value": 1}, "subagent": subagent})
}

fn batch(calls: Value) -> Value {
    json!({"op": "tool_calls", "calls": calls})
}

fn script_of(turns: Value) -> AgentScript {
    serde_json::from_value(json!({"turns": turns})).expect("fits agent-script.json")
}

fn one_turn(steps: Value) -> AgentScript {
    script_of(json!([{"steps": steps}]))
}

fn nested(error: ScriptError) -> ScriptError {
    ScriptError::InSubagent { turn: 0, step: 0, call: 0, error: Box::new(error) }
}

// Rule 12: a host runs by itself (result, error or dismiss) and has no output.
#[test]
fn a_host_settles_by_itself_and_has_no_output() {
    for outcome in
        [json!({"kind": "result", "value": 1}), json!({"kind": "error", "message": "x"}), json!({"kind": "dismiss"})]
    {
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
    let usd = json!({"op": "usage", "input_tokens": 1, "output_tokens": 1, "cost": {"amount": "1", "currency": "USD"}});
    let eur = json!({"op": "usage", "input_tokens": 1, "output_tokens": 1, "cost": {"amount": "1", "currency": "EUR"}});
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
    assert_eq!(script_of(json!([{"steps": [first]}, {"steps": [again]}])).validate(), Ok(()));
    assert_eq!(
        script_of(json!([{"steps": [again]}, {"steps": [first]}])).validate(),
        Err(ScriptError::UnknownThread { turn: 0, step: 0, call: 0, thread: "th-1".into() })
    );
    assert_eq!(
        script_of(json!([{"steps": [first]}, {"steps": [first]}])).validate(),
        Err(ScriptError::ThreadReused { turn: 1, step: 0, call: 0, thread: "th-1".into() })
    );
    // A turn's steps come before its retries; nested steps where they stand.
    assert_eq!(script_of(json!([{"steps": [first], "retries": [{"steps": [again]}]}])).validate(), Ok(()));
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
    let parsed = script_of(json!([turn]));
    assert_eq!(parsed.since(), chatwire_schema::ProtocolVersion { major: 1, minor: 3 });
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
