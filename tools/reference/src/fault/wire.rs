//! The wire seam: the upgrade, the connection's limits, how a frame is parsed and how a refused
//! one is answered.

use std::time::Duration;

use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_response::ResponseOutcome;
use chatwire_schema::{ClientFrame, ErrorCode, ServerFrame};

use super::list::{Fault, NoFault};
use crate::protocol::Refusal;
use crate::util::rfc3339_now;

/// What the connection does with a refused frame.
#[derive(Debug)]
pub(crate) enum RefusalAction {
    /// Send the typed `error` (the correct behaviour).
    Answer,
    /// Send nothing.
    Ignore,
    /// Drop the connection without an answer.
    Drop,
    /// Send this frame (its seq stamped) instead of the error.
    Instead(Box<ServerFrame>),
}

/// Faults of the transport and of parsing; the defaults are the correct server.
pub(crate) trait WireFaults: Send + Sync + std::fmt::Debug {
    /// Refuse an upgrade that offers no subprotocol.
    fn requires_subprotocol(&self) -> bool {
        false
    }

    /// Close open connections with 1001 on an orderly shutdown.
    fn closes_on_shutdown(&self) -> bool {
        true
    }

    /// The bound on a connection's unsent bytes (`TRANSPORT-016`), `None` for none.
    fn send_queue_bound(&self, bound: usize) -> Option<usize> {
        Some(bound)
    }

    /// How long one write to the socket may block before the connection is dropped, given the
    /// configured one and the liveness deadline (two idle periods, `TRANSPORT-011`).
    fn write_timeout(&self, write: Duration, _liveness: Duration) -> Duration {
        write
    }

    /// A refusal for a frame the frame validator accepts (`None`: the frame is accepted).
    fn refuses_valid_frame(&self, _frame: &serde_json::Value) -> Option<Refusal> {
        None
    }

    /// Whether numbers beyond ±(2^53 − 1) inside opaque values are refused (`INT-002`).
    fn bounds_opaque_numbers(&self) -> bool {
        true
    }

    /// How a refused `request` (when it parsed) is answered.
    fn on_refusal(&self, _refusal: &Refusal, _request: Option<&ClientFrame>) -> RefusalAction {
        RefusalAction::Answer
    }
}

impl WireFaults for NoFault {}

impl WireFaults for Fault {
    fn requires_subprotocol(&self) -> bool {
        *self == Fault::SubprotocolRequired
    }

    fn closes_on_shutdown(&self) -> bool {
        *self != Fault::ShutdownWithoutClose
    }

    fn send_queue_bound(&self, bound: usize) -> Option<usize> {
        (!matches!(self, Fault::UnboundedSendQueue | Fault::ErrataOf10Unmet)).then_some(bound)
    }

    // A server without a queue bound has no write deadline either: the short one would drop the
    // paused reader before anyone sees the queue grow, and whether it does would depend on how
    // fast the machine is. Only the liveness deadline ends the connection.
    fn write_timeout(&self, write: Duration, liveness: Duration) -> Duration {
        match self {
            Fault::UnboundedSendQueue | Fault::ErrataOf10Unmet => write.max(liveness),
            _ => write,
        }
    }

    fn refuses_valid_frame(&self, frame: &serde_json::Value) -> Option<Refusal> {
        let refused = match self {
            Fault::IntegerSpellingsRefused => has_integer_spelled_as_float(frame),
            Fault::NullSubmitRefused => {
                frame.get("type").and_then(serde_json::Value::as_str) == Some("chat.tool_call_response")
                    && frame.pointer("/outcome/action").and_then(serde_json::Value::as_str) == Some("submit")
                    && frame.pointer("/outcome/value").is_some_and(serde_json::Value::is_null)
            }
            _ => false,
        };
        refused.then(|| Refusal::new(ErrorCode::InvalidFrame, "frame breaks its schema: a value is missing or invalid"))
    }

    fn bounds_opaque_numbers(&self) -> bool {
        !matches!(self, Fault::OpaqueNumbersUnbounded | Fault::ErrataOf10Unmet)
    }

    fn on_refusal(&self, refusal: &Refusal, request: Option<&ClientFrame>) -> RefusalAction {
        match (self, refusal.code, request) {
            (Fault::DropConnectionOnError, _, _) => RefusalAction::Drop,
            (Fault::UnknownTypeIgnored, ErrorCode::UnknownType, _) => RefusalAction::Ignore,
            (Fault::DuplicateResponseExecuted, ErrorCode::ToolCallSettled, Some(ClientFrame::ToolCallResponse(r))) => {
                let result = match &r.outcome {
                    ResponseOutcome::Submit { value } => Some(value.clone()),
                    ResponseOutcome::Dismiss { .. } => None,
                };
                RefusalAction::Instead(Box::new(ServerFrame::ToolCallComplete(ToolCallComplete {
                    seq: 0,
                    tool_call_id: r.tool_call_id.clone(),
                    status: CompletionStatus::Completed,
                    result,
                    error: None,
                    summary: None,
                    in_reply_to: Some(r.id.clone()),
                    ts: rfc3339_now(),
                })))
            }
            _ => RefusalAction::Answer,
        }
    }
}

/// Fault `integer-spellings-refused`: whether an integer field of a client frame (a resume's
/// `last_seq`, a script's delays, indices and exit codes) is written with a fraction or exponent.
/// Opaque values (`payload`, `value`) hold any number and are not looked at.
fn has_integer_spelled_as_float(frame: &serde_json::Value) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Number(n) => n.is_f64(),
            serde_json::Value::Array(items) => items.iter().any(walk),
            serde_json::Value::Object(members) => {
                members.iter().any(|(key, member)| key != "payload" && key != "value" && walk(member))
            }
            _ => false,
        }
    }
    frame.pointer("/resume/last_seq").is_some_and(serde_json::Value::is_f64) || frame.get("script").is_some_and(walk)
}
