//! The checks of a deployment of several instances ([spec/cluster.md](../../../spec/cluster.md)):
//! one seq names one frame on every connection of a session whichever instance sent it
//! (`CLUSTER-002`), and a run a recovery ended as `interrupted` gets nothing more from the
//! instance that lost it (`CLUSTER-003`).
//!
//! They run only where the runner started several instances (`Monitor::cluster`): on
//! one instance the same facts are `ATTACH-006`'s and the run rules' to report.

use std::collections::{BTreeMap, HashMap};

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::{Id, ReqId, ServerFrame};

use chatwire_schema::requirements::Level;

use super::attach::as_host_output;
use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const CLUSTER_002: ReqId = ReqId::new("CLUSTER-002");
const CLUSTER_003: ReqId = ReqId::new("CLUSTER-003");

/// Seqs remembered per session: a bound on memory; a seq older than this is not compared.
const SEQS_KEPT: usize = 4096;

/// One seq, one frame, across every connection of a session on every instance.
pub static ONE_SEQ_ONE_FRAME: CheckDef = CheckDef {
    id: "cluster-one-seq-one-frame",
    requirements: &[CLUSTER_002],
    summary: "one seq names one frame on every connection of a session, whichever instance sent it",
    level: Level::Must,
};

/// A run is driven by one instance: once a recovery ended it, the instance that lost it is silent.
pub static RUN_DRIVEN_ONCE: CheckDef = CheckDef {
    id: "cluster-run-driven-once",
    requirements: &[CLUSTER_003],
    summary: "no frame of a run after a recovery ended it as interrupted (the instance that lost the run commits nothing more)",
    level: Level::Must,
};

#[derive(Debug, Default)]
struct Ledger {
    /// The frame each seq named, in the form first seen (state frames excepted: their form is
    /// the connection's).
    frames: BTreeMap<u64, ServerFrame>,
    /// Invocations a recovery ended (`run_complete` failed, reason `interrupted`), with that
    /// frame's seq: a later connection may still get what came before it.
    interrupted: HashMap<Id, u64>,
}

/// The cluster checks' own state.
#[derive(Debug, Default)]
pub(crate) struct ClusterWatch {
    enabled: bool,
    sessions: HashMap<String, Ledger>,
}

impl Check for ClusterWatch {
    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if let (Some(session), true) = (cx.session_id(), cx.took.is_some_and(|t| t.recorded)) {
            self.frame(session, cx.frame, out);
        }
    }
}

impl ClusterWatch {
    /// Turns the checks on: the traffic is a deployment's of several instances.
    pub(crate) fn enable(&mut self) {
        self.enabled = true;
    }

    /// Whether `frame`'s seq already named another frame of `session` (what [`Self::frame`] will
    /// charge under `CLUSTER-002`), asked before the frame is judged.
    pub(crate) fn collides(&self, session: &str, frame: &ServerFrame) -> bool {
        if !self.enabled || is_state_frame(frame) {
            return false;
        }
        let first = frame.seq().and_then(|seq| self.sessions.get(session)?.frames.get(&seq));
        first.is_some_and(|first| !same_frame(first, frame))
    }

    /// A frame arrived on a connection of `session`.
    fn frame(&mut self, session: &str, frame: &ServerFrame, out: &mut Out) {
        if !self.enabled {
            return;
        }
        let ledger = self.sessions.entry(session.to_owned()).or_default();
        if let (Some(seq), false) = (frame.seq(), is_state_frame(frame)) {
            match ledger.frames.get(&seq) {
                Some(first) if same_frame(first, frame) => out.eval(&ONE_SEQ_ONE_FRAME, CLUSTER_002),
                Some(first) => out.fail(
                    &ONE_SEQ_ONE_FRAME,
                    CLUSTER_002,
                    format!(
                        "seq {seq} is a {} here and was a {} on a connection of this session before",
                        frame.type_name(),
                        first.type_name()
                    ),
                ),
                None => {
                    ledger.frames.insert(seq, frame.clone());
                    if ledger.frames.len() > SEQS_KEPT {
                        ledger.frames.pop_first();
                    }
                }
            }
        }
        match frame {
            ServerFrame::RetryAccepted(f) => {
                ledger.interrupted.remove(&f.invocation_id);
            }
            // A retry reopens the run with a new slice. A connection that did not send the retry
            // never gets its `chat.retry_accepted` (`ATTACH-005`), and may get the new slice before
            // the requester gets the answer: the slice's start after the recovery's end is the
            // retry's, not the lost instance going on (which carries on mid-slice, never starts one).
            ServerFrame::RunStarted(f) if ledger.interrupted.get(&f.invocation_id).is_some_and(|end| f.seq > *end) => {
                ledger.interrupted.remove(&f.invocation_id);
                out.eval(&RUN_DRIVEN_ONCE, CLUSTER_003);
            }
            ServerFrame::RunComplete(f)
                if f.status == RunCompleteStatus::Failed && f.reason.as_deref() == Some("interrupted") =>
            {
                ledger.interrupted.entry(f.invocation_id.clone()).or_insert(f.seq);
            }
            other => {
                let after_end =
                    |i: &&Id| ledger.interrupted.get(*i).is_some_and(|end| other.seq().is_none_or(|seq| seq > *end));
                if let Some(invocation) = other.invocation_id().filter(after_end) {
                    out.fail(
                        &RUN_DRIVEN_ONCE,
                        CLUSTER_003,
                        format!(
                            "{} of invocation {invocation} after a recovery ended its run as interrupted: \
                             the instance that lost the run went on",
                            other.type_name()
                        ),
                    );
                } else if other.invocation_id().is_some() {
                    out.eval(&RUN_DRIVEN_ONCE, CLUSTER_003);
                }
            }
        }
    }
}

/// State frames take the form of the connection they go to: not compared across connections.
fn is_state_frame(frame: &ServerFrame) -> bool {
    matches!(frame, ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_))
}

/// Whether two frames with one seq are one frame (the same kind, about the same run and call):
/// connections of different versions get different forms of one frame, a sub-agent's text among
/// them ([`as_host_output`]).
fn same_frame(a: &ServerFrame, b: &ServerFrame) -> bool {
    let same = a.type_name() == b.type_name()
        && a.invocation_id() == b.invocation_id()
        && a.tool_call_id() == b.tool_call_id()
        && a.in_reply_to() == b.in_reply_to();
    same || as_host_output(a, b) || as_host_output(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(json: serde_json::Value) -> ServerFrame {
        serde_json::from_value(json).expect("frame")
    }

    fn started(seq: u64, inv: &str) -> ServerFrame {
        frame(
            serde_json::json!({"type": "chat.run_started", "seq": seq, "invocation_id": inv, "ts": "2026-11-26T00:00:00Z"}),
        )
    }

    fn interrupted(seq: u64, inv: &str) -> ServerFrame {
        frame(serde_json::json!({"type": "chat.run_complete", "seq": seq, "invocation_id": inv, "status": "failed",
            "reason": "interrupted", "error": "interrupted", "ts": "2026-11-26T00:00:00Z"}))
    }

    fn failures(out: &Out) -> Vec<&str> {
        out.raws.iter().map(|r| r.requirement.as_str()).collect()
    }

    #[test]
    fn off_outside_a_cluster() {
        let mut w = ClusterWatch::default();
        let mut out = Out::default();
        w.frame("s", &started(5, "inv_a"), &mut out);
        w.frame("s", &started(5, "inv_b"), &mut out);
        assert!(out.raws.is_empty() && out.evaluated.is_empty());
    }

    #[test]
    fn a_sub_agent_text_is_one_frame_with_its_hosts_output_on_an_older_tab() {
        let mut w = ClusterWatch::default();
        w.enable();
        let mut out = Out::default();
        let nested = frame(serde_json::json!({"type": "chat.assistant_message", "seq": 15, "invocation_id": "inv_a",
            "item_id": "am_1", "markdown": "First finding.", "parent_call_id": "call_1", "ts": "2026-11-26T00:00:00Z"}));
        let output = |call: &str| {
            frame(serde_json::json!({"type": "chat.tool_output", "seq": 15, "tool_call_id": call,
                "stdout": "First finding.\n\n", "ts": "2026-11-26T00:00:00Z"}))
        };
        w.frame("s", &nested, &mut out);
        w.frame("s", &output("call_1"), &mut out);
        assert!(out.raws.is_empty(), "the host's output is the older view of the nested text");
        w.frame("s", &output("call_2"), &mut out);
        assert_eq!(failures(&out), ["CLUSTER-002"], "another call's output is another frame");
    }

    #[test]
    fn one_seq_names_one_frame() {
        let mut w = ClusterWatch::default();
        w.enable();
        let mut out = Out::default();
        w.frame("s", &started(5, "inv_a"), &mut out);
        w.frame("s", &started(5, "inv_a"), &mut out);
        assert!(out.raws.is_empty());
        assert!(out.evaluated.iter().any(|(_, r)| *r == CLUSTER_002));
        assert!(!w.collides("s", &started(5, "inv_a")) && !w.collides("s", &started(6, "inv_b")));
        assert!(w.collides("s", &started(5, "inv_b")), "known before the frame is judged");
        w.frame("s", &started(5, "inv_b"), &mut out);
        assert_eq!(failures(&out), ["CLUSTER-002"]);
        assert!(!w.collides("other", &started(5, "inv_b")));
        w.frame("other", &started(5, "inv_b"), &mut out);
        assert_eq!(failures(&out), ["CLUSTER-002"], "another session's seqs are its own");
    }

    #[test]
    fn nothing_of_a_run_after_its_recovery() {
        let mut w = ClusterWatch::default();
        w.enable();
        let mut out = Out::default();
        w.frame("s", &started(3, "inv_a"), &mut out);
        w.frame("s", &interrupted(4, "inv_a"), &mut out);
        assert!(out.raws.is_empty());
        w.frame("s", &started(5, "inv_b"), &mut out);
        assert!(out.raws.is_empty(), "another run is free to go on");
        w.frame("s", &started(3, "inv_a"), &mut out);
        assert!(out.raws.is_empty(), "another connection may get what came before the recovery's end");
        let completed = frame(serde_json::json!({"type": "chat.run_complete", "seq": 6, "invocation_id": "inv_a",
            "status": "completed", "reason": "completed", "ts": "2026-11-26T00:00:00Z"}));
        w.frame("s", &completed, &mut out);
        assert_eq!(failures(&out), ["CLUSTER-003"]);
    }

    #[test]
    fn a_retry_seen_by_a_watcher_first_reopens_the_run() {
        let mut w = ClusterWatch::default();
        w.enable();
        let mut out = Out::default();
        w.frame("s", &interrupted(4, "inv_a"), &mut out);
        // The watcher gets the retried slice before the requester gets `chat.retry_accepted`.
        w.frame("s", &started(6, "inv_a"), &mut out);
        w.frame("s", &interrupted(7, "inv_a"), &mut out);
        assert!(out.raws.is_empty(), "{:?}", failures(&out));
        // A frame of the retried slice's run after its own recovery is the lost instance again.
        let message = frame(serde_json::json!({"type": "chat.assistant_message", "seq": 8, "invocation_id": "inv_a",
            "item_id": "am_1", "markdown": "late", "ts": "2026-11-26T00:00:00Z"}));
        w.frame("s", &message, &mut out);
        assert_eq!(failures(&out), ["CLUSTER-003"]);
    }

    #[test]
    fn a_retry_reopens_an_interrupted_run() {
        let mut w = ClusterWatch::default();
        w.enable();
        let mut out = Out::default();
        w.frame("s", &interrupted(4, "inv_a"), &mut out);
        let retry = frame(serde_json::json!({"type": "chat.retry_accepted", "seq": 5, "in_reply_to": "r1",
            "invocation_id": "inv_a", "after_item_id": "i1", "removed_item_ids": [], "ts": "2026-11-26T00:00:00Z"}));
        w.frame("s", &retry, &mut out);
        w.frame("s", &started(6, "inv_a"), &mut out);
        assert!(out.raws.is_empty(), "{:?}", failures(&out));
    }
}
