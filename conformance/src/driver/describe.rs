//! Words for reports: a step in one line, a transcript detail.

use serde_json::Value;

use crate::pattern;
use crate::scenario::{ResumeAnswer, Step, DEFAULT_CONN};

/// Short detail appended to a transcript line, where it is deterministic and telling.
pub(super) fn transcript_detail(v: &Value) -> String {
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let detail = match v.get("type").and_then(Value::as_str) {
        Some("error") => field("code"),
        Some("chat.run_complete" | "chat.tool_call_complete") => field("status"),
        Some("chat.tool_call_dismiss") => field("initiated_by"),
        Some("session.welcome") => {
            v.get("resumed").and_then(Value::as_bool).map(|r| if r { "resumed" } else { "new" }.into())
        }
        Some("chat.tool_call") => v.get("tool_name").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    detail.map_or_else(String::new, |d| format!(" {d}"))
}

/// One line describing a step, for reports.
pub fn describe(step: &Step) -> String {
    let conn = step.conn().filter(|c| *c != DEFAULT_CONN).map(|c| format!(" [{c}]")).unwrap_or_default();
    let what = match step {
        Step::Connect { hello: false, subprotocol: false, .. } => {
            "open a connection offering no subprotocol, without hello".to_owned()
        }
        Step::Connect { hello: false, .. } => "open a connection without hello".to_owned(),
        Step::Connect { subprotocol: false, .. } => {
            "connect offering no subprotocol: hello, welcome, snapshot".to_owned()
        }
        Step::Connect { .. } => "connect: hello, welcome, snapshot".to_owned(),
        Step::Resume { answer: Some(ResumeAnswer::CatchUp), compare_with_snapshot: true, .. } => {
            "resume the session on a new connection, expect a catch-up, compare it with a snapshot".to_owned()
        }
        Step::Resume { answer: Some(ResumeAnswer::CatchUp), .. } => {
            "resume the session on a new connection, expect a catch-up ui_state_patch".to_owned()
        }
        Step::Resume { answer: Some(ResumeAnswer::Snapshot), .. } => {
            "resume the session on a new connection, expect a ui_state_snapshot".to_owned()
        }
        Step::Resume { .. } => "resume the session on a new connection".to_owned(),
        Step::AttachToBound { prefix, .. } => {
            format!("attach {prefix}-1, {prefix}-2, … until the session holds max_attached_connections")
        }
        Step::SendViolation { violation, .. } => {
            format!("send a frame that breaks RFC 6455 ({})", violation.describe())
        }
        Step::Disconnect { .. } => "close the connection".to_owned(),
        Step::KillReplica { replica, down_ms: None } => format!("kill -9 replica {replica}; it stays down"),
        Step::KillReplica { replica, down_ms: Some(ms) } => {
            format!("kill -9 replica {replica}, keep it down {ms} ms, start it again")
        }
        Step::StartReplica { replica } => format!("start replica {replica} again"),
        Step::PauseReplica { replica } => format!("stop replica {replica} with SIGSTOP"),
        Step::ContinueReplica { replica } => format!("continue replica {replica} with SIGCONT"),
        Step::Restart { graceful: false, down_ms: None } => "kill -9 the backend and start it again".to_owned(),
        Step::Restart { graceful: false, down_ms: Some(ms) } => {
            format!("kill -9 the backend, keep it down {ms} ms, start it again")
        }
        Step::Restart { graceful: true, .. } => {
            "stop the backend with SIGTERM (connections closed with 1001), start it again".to_owned()
        }
        Step::UserMessage { text, .. } => {
            format!("send chat.user_message {}", pattern::truncate(&format!("{text:?}"), 40))
        }
        Step::Respond { outcome, .. } => format!("send chat.tool_call_response {}", pattern::excerpt(outcome, 60)),
        Step::Rewind { before, .. } => format!("send chat.rewind before {before}"),
        Step::Retry { after_item, .. } => format!("send chat.retry after item {after_item}"),
        Step::Cancel { invocation, .. } => format!("send chat.cancel for invocation {invocation}"),
        Step::Send { frame, .. } => format!("send {}", pattern::excerpt(frame, 80)),
        Step::SendText { text, .. } => format!("send text {}", pattern::truncate(&format!("{text:?}"), 60)),
        Step::SendBinary { bytes, .. } => format!("send a binary frame of {bytes} bytes"),
        Step::Ping { payload, .. } => format!("ping {payload:?}, expect the pong carrying it"),
        Step::Expect { frame, .. } => format!("expect {}", pattern::excerpt(frame, 100)),
        Step::ExpectUnordered { frames, .. } => format!("expect {} frames in any order", frames.len()),
        Step::ExpectError { code, .. } => format!("expect error {code}"),
        Step::ExpectClose { code, after_frames, .. } => format!(
            "expect the server to close{}{}",
            code.map(|c| format!(" with {c}")).unwrap_or_default(),
            if *after_frames { ", taking in the frames before it" } else { "" }
        ),
        Step::ExpectSilence { ms, .. } => format!("expect no frame for {ms} ms"),
        Step::PauseReading { ms, .. } => format!("stop reading for {ms} ms"),
        Step::ExpectState { state, items, .. } => format!(
            "expect the UiState {}{}",
            pattern::excerpt(state, 80),
            items.map(|n| format!(" with {n} items")).unwrap_or_default()
        ),
        Step::WaitIdle { .. } => "wait until the run is idle".to_owned(),
        Step::Drain { bytes, .. } => format!("read {bytes} bytes unchecked, to pace a pause"),
        Step::PageThrough { limit, .. } => {
            format!("page back to the first item, {limit} items per chat.history_request")
        }
        Step::Sleep { ms } => format!("sleep {ms} ms"),
        Step::Snapshot { name, .. } => format!("snapshot {name}"),
    };
    let on = step.opens_on().map(|k| format!(" on replica {k}")).unwrap_or_default();
    format!("{what}{conn}{on}")
}
