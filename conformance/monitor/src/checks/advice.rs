//! The should-level checks: what the server chooses itself (not a field the conformance script
//! dictates), reported as warnings.

use std::collections::{HashMap, HashSet};

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::{ReqId, ServerFrame, DEFAULT_MAX_FRAME_BYTES};

use chatwire_schema::requirements::Level;

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const TRANSPORT_013: ReqId = ReqId::new("TRANSPORT-013");
const RUN_005: ReqId = ReqId::new("RUN-005");
const RUN_008: ReqId = ReqId::new("RUN-008");
const ERROR_005: ReqId = ReqId::new("ERROR-005");
const TOOL_009: ReqId = ReqId::new("TOOL-009");
const TOOL_011: ReqId = ReqId::new("TOOL-011");

/// The welcome announces the default frame limit.
pub static FRAME_LIMIT_DEFAULT: CheckDef = CheckDef {
    id: "frame-limit-default",
    requirements: &[TRANSPORT_013],
    summary: "the welcome announces limits.max_frame_bytes 1048576, the default",
    level: Level::Should,
};

/// A run that stops says why.
pub static RUN_COMPLETE_EXPLAINED: CheckDef = CheckDef {
    id: "run-complete-explained",
    requirements: &[RUN_005, RUN_008],
    summary: "run_complete awaiting_input carries reason awaiting_user_input; run_complete failed carries an error",
    level: Level::Should,
};

/// Error messages read as one lowercase sentence.
pub static ERROR_MESSAGE_STYLE: CheckDef = CheckDef {
    id: "error-message-style",
    requirements: &[ERROR_005],
    summary: "an error's message is one sentence starting with a lowercase letter",
    level: Level::Should,
};

/// A tool call's reports stay coherent.
pub static TOOL_REPORTS_COHERENT: CheckDef = CheckDef {
    id: "tool-reports-coherent",
    requirements: &[TOOL_009, TOOL_011],
    summary: "a call's progress fractions never decrease and no stdout or stderr follows its exit_code",
    level: Level::Should,
};

/// Follows each tool call across frames. Tool call ids are unique in a session (ID-002), so one
/// advisor serves every connection.
#[derive(Debug, Default)]
pub(crate) struct Advisor {
    /// The last fraction reported per tool call, per connection: attached tabs read the same
    /// reports each at its own pace, so one tab's later report is no regression of another's.
    fractions: HashMap<(u64, String), f64>,
    /// Tool calls whose output reported an exit code, per connection.
    exited: HashSet<(u64, String)>,
}

impl Check for Advisor {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        self.observe(cx.conn, cx.frame, out);
    }
}

impl Advisor {
    /// Checks `frame` of connection `conn`, given the frames observed on it before.
    fn observe(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        match frame {
            ServerFrame::Welcome(w) => {
                if w.limits.max_frame_bytes != DEFAULT_MAX_FRAME_BYTES {
                    out.fail(
                        &FRAME_LIMIT_DEFAULT,
                        TRANSPORT_013,
                        format!(
                            "limits.max_frame_bytes is {}, not the default {DEFAULT_MAX_FRAME_BYTES}",
                            w.limits.max_frame_bytes
                        ),
                    );
                } else {
                    out.eval(&FRAME_LIMIT_DEFAULT, TRANSPORT_013);
                }
            }
            ServerFrame::RunComplete(rc) => match rc.status {
                RunCompleteStatus::AwaitingInput => {
                    if rc.reason.as_deref() == Some("awaiting_user_input") {
                        out.eval(&RUN_COMPLETE_EXPLAINED, RUN_005);
                    } else {
                        let reason = rc.reason.as_deref().map_or("(none)".to_owned(), |r| format!("{r:?}"));
                        out.fail(
                            &RUN_COMPLETE_EXPLAINED,
                            RUN_005,
                            format!("run_complete awaiting_input carries reason {reason}, not \"awaiting_user_input\""),
                        );
                    }
                }
                RunCompleteStatus::Failed => {
                    if rc.error.as_deref().is_none_or(|e| e.trim().is_empty()) {
                        out.fail(
                            &RUN_COMPLETE_EXPLAINED,
                            RUN_008,
                            "run_complete failed carries no error saying what went wrong",
                        );
                    } else {
                        out.eval(&RUN_COMPLETE_EXPLAINED, RUN_008);
                    }
                }
                _ => {}
            },
            ServerFrame::Error(e) => match message_style_problem(&e.message) {
                Some(why) => out.fail(&ERROR_MESSAGE_STYLE, ERROR_005, format!("error message {:?} {why}", e.message)),
                None => out.eval(&ERROR_MESSAGE_STYLE, ERROR_005),
            },
            ServerFrame::ToolProgress(p) => {
                if let Some(fraction) = p.fraction.map(|f| f.get()) {
                    let call = p.tool_call_id.to_string();
                    if let Some(&before) = self.fractions.get(&(conn, call.clone())) {
                        if fraction < before {
                            out.fail(
                                &TOOL_REPORTS_COHERENT,
                                TOOL_009,
                                format!("progress of {call} went back from {before} to {fraction}"),
                            );
                        } else {
                            out.eval(&TOOL_REPORTS_COHERENT, TOOL_009);
                        }
                    }
                    self.fractions.insert((conn, call), fraction);
                }
            }
            ServerFrame::ToolOutput(o) => {
                let call = o.tool_call_id.to_string();
                if self.exited.contains(&(conn, call.clone())) {
                    if o.stdout.is_some() || o.stderr.is_some() {
                        out.fail(
                            &TOOL_REPORTS_COHERENT,
                            TOOL_011,
                            format!("{call} sent more stdout or stderr after its exit_code"),
                        );
                    } else {
                        out.eval(&TOOL_REPORTS_COHERENT, TOOL_011);
                    }
                }
                if o.exit_code.is_some() {
                    self.exited.insert((conn, call));
                }
            }
            _ => {}
        }
    }
}

/// Why `message` is not one sentence starting with a lowercase letter, if it is not.
fn message_style_problem(message: &str) -> Option<&'static str> {
    let first = message.chars().next()?;
    if first.is_alphabetic() && !first.is_lowercase() {
        return Some("starts with an uppercase letter");
    }
    // A sentence break: a full stop, question or exclamation mark, a space, then a capital.
    let chars: Vec<char> = message.chars().collect();
    let breaks = chars.windows(3).any(|w| matches!(w[0], '.' | '!' | '?') && w[1] == ' ' && w[2].is_uppercase());
    breaks.then_some("holds more than one sentence")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(v: serde_json::Value) -> ServerFrame {
        serde_json::from_value(v).expect("a valid server frame")
    }

    fn advised(a: &mut Advisor, v: serde_json::Value) -> Vec<(&'static str, ReqId, String)> {
        let mut out = Out::default();
        a.observe(0, &frame(v), &mut out);
        out.raws.into_iter().map(|r| (r.check.id, r.requirement, r.message)).collect()
    }

    fn ids(found: Vec<(&'static str, ReqId, String)>) -> Vec<(&'static str, ReqId)> {
        found.into_iter().map(|(c, r, _)| (c, r)).collect()
    }

    #[test]
    fn should_level_advisories_flag_only_what_the_server_chooses() {
        let a = &mut Advisor::default();
        let ts = "2026-01-15T10:00:00Z";
        let welcome = |bytes: u64| {
            serde_json::json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h", "version": "1.0",
                "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": [],
                "limits": {"max_frame_bytes": bytes}})
        };
        assert!(advised(a, welcome(DEFAULT_MAX_FRAME_BYTES)).is_empty());
        assert_eq!(ids(advised(a, welcome(65_536))), vec![("frame-limit-default", TRANSPORT_013)]);

        let rc = |status: &str, extra: serde_json::Value| {
            let mut v = serde_json::json!({"type": "chat.run_complete", "seq": 5, "invocation_id": "inv-1",
                "status": status, "ts": ts});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        assert!(advised(a, rc("awaiting_input", serde_json::json!({"reason": "awaiting_user_input"}))).is_empty());
        assert_eq!(
            ids(advised(a, rc("awaiting_input", serde_json::json!({})))),
            vec![("run-complete-explained", RUN_005)]
        );
        assert!(advised(a, rc("failed", serde_json::json!({"error": "the tool crashed"}))).is_empty());
        assert_eq!(ids(advised(a, rc("failed", serde_json::json!({})))), vec![("run-complete-explained", RUN_008)]);
        assert_eq!(
            ids(advised(a, rc("failed", serde_json::json!({"error": "  "})))),
            vec![("run-complete-explained", RUN_008)]
        );
        assert!(advised(a, rc("completed", serde_json::json!({}))).is_empty());

        let error = |message: &str| serde_json::json!({"type": "error", "code": "invalid_frame", "message": message, "fatal": false});
        for fine in ["send session.hello first", "frame of 9 bytes is over the limit of 8 bytes", "", "42 is odd"] {
            assert!(advised(a, error(fine)).is_empty(), "{fine:?}");
        }
        for (bad, why) in [("Send a hello first", "uppercase"), ("bad frame. Try again", "more than one sentence")] {
            let found = advised(a, error(bad));
            assert_eq!(found.len(), 1, "{bad:?}");
            assert_eq!(found[0].1, ERROR_005);
            assert!(found[0].2.contains(why), "{}", found[0].2);
        }
    }

    #[test]
    fn the_advisor_follows_each_calls_progress_and_output() {
        let ts = "2026-01-15T10:00:00Z";
        let progress = |call: &str, fraction: f64| serde_json::json!({"type": "chat.tool_progress", "seq": 1, "tool_call_id": call, "fraction": fraction, "ts": ts});
        let output = |call: &str, part: serde_json::Value| {
            let mut v = serde_json::json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": call, "ts": ts});
            v.as_object_mut().unwrap().extend(part.as_object().unwrap().clone());
            v
        };
        let a = &mut Advisor::default();
        assert!(advised(a, progress("tc-1", 0.2)).is_empty());
        assert!(advised(a, progress("tc-2", 0.1)).is_empty(), "another call has its own progress");
        assert!(advised(a, progress("tc-1", 0.2)).is_empty(), "equal is not a decrease");
        let back = advised(a, progress("tc-1", 0.1));
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].1, TOOL_009);
        assert!(back[0].2.contains("0.2") && back[0].2.contains("0.1"), "{}", back[0].2);

        assert!(advised(a, output("tc-1", serde_json::json!({"stdout": "a"}))).is_empty());
        assert!(advised(a, output("tc-1", serde_json::json!({"exit_code": 0}))).is_empty());
        assert!(advised(a, output("tc-2", serde_json::json!({"stderr": "b"}))).is_empty());
        let late = advised(a, output("tc-1", serde_json::json!({"stderr": "late"})));
        assert_eq!(late.len(), 1);
        assert_eq!(late[0].1, TOOL_011);
    }
}
