//! A retry for the tests: the script of a costly tool whose run fails, and the frame.

use serde_json::{json, Value};

use super::Client;

/// One turn whose costly auto tool (with an output item) completes before the run fails; its
/// retries say "recovered", then "again"; a third retry has no steps.
pub fn costly_script() -> Value {
    json!({"turns": [{
        "steps": [
            {"op": "tool_calls", "calls": [{"tool_name": "costly", "interaction_type": "auto_tool", "display": "inline",
                "output": {"command": "select *", "stdout": "42 rows"},
                "outcome": {"kind": "result", "value": {"rows": 42}}}]},
            {"op": "end", "status": "failed", "error": "the model api is down"}
        ],
        "retries": [
            {"steps": [{"op": "say", "markdown": "recovered"}]},
            {"steps": [{"op": "say", "markdown": "again"}]}
        ]
    }]})
}

pub async fn send_retry(c: &mut Client, id: &str, after: &str) {
    c.send(json!({"type": "chat.retry", "id": id, "after_item_id": after})).await;
}
