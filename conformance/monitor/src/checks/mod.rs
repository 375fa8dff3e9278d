//! Every always-on check of typed frames, a module each, and the registry: one line per check,
//! naming its module, its type and the definitions it judges, in report order. The monitor runs
//! the checks in that order; the definitions judged by the monitor itself (the frame reader and
//! the model, the differential oracle) stand between them under `monitor`.
//!
//! Adding a check: a module of its own that implements `Check` (`crate::check`), and its line here.

use crate::check::Check;
use crate::finding::CheckDef;
use crate::model::{oracle, patch, window};
use crate::{frame, version};

/// Declares the check modules and builds [`ALWAYS_ON`] and the checks' instances from one list.
macro_rules! registry {
    (@list [$($defs:tt)*] [$($made:tt)*] [$($mods:ident)*]) => {
        $(pub mod $mods;)*

        /// Every always-on check, in report order.
        pub static ALWAYS_ON: &[&CheckDef] = &[$($defs)*];

        /// A fresh instance of every check of typed frames, in the order the monitor runs them.
        pub(crate) fn registered() -> Vec<Box<dyn Check>> {
            vec![$($made)*]
        }
    };
    (@list [$($defs:tt)*] [$($made:tt)*] [$($mods:ident)*] monitor: [$($def:path),* $(,)?], $($rest:tt)*) => {
        registry!(@list [$($defs)* $(&$def,)*] [$($made)*] [$($mods)*] $($rest)*);
    };
    (@list [$($defs:tt)*] [$($made:tt)*] [$($mods:ident)*] $module:ident::$check:ident: [$($def:path),* $(,)?], $($rest:tt)*) => {
        registry!(
            @list [$($defs)* $(&$def,)*] [$($made)* Box::new($module::$check::default()),] [$($mods)* $module] $($rest)*
        );
    };
    ($($entries:tt)*) => {
        registry!(@list [] [] [] $($entries)*);
    };
}

/// What a cancel closes inside sub-agents: judged by `cancel::CancelWatch`, which owns the state.
pub mod cancel_nested;

registry! {
    monitor: [frame::WIRE_SCHEMA_VALID, frame::TEXT_FRAMES_ONLY, frame::TS_FORMAT, version::NEGOTIATED_VERSION_ONLY],
    features::Features: [features::FEATURES_AS_NEGOTIATED, features::FEATURE_FRAMES_IN_FORCE_ONLY],
    seq::Seq: [seq::SEQ_INCREASING],
    handshake::Handshake: [handshake::WELCOME_THEN_SNAPSHOT],
    flow::Flow: [flow::UPDATE_AFTER_EVENT, flow::PATCH_IN_PLACE_OF_UPDATE],
    monitor: [oracle::STATE_MATCHES_REDUCER, patch::PATCH_MATCHES_REDUCER, patch::CATCH_UP_RESUME],
    stream::Stream: [stream::SAY_CHUNKS_AS_SCRIPTED, stream::STREAM_CONTINUES_AFTER_RESUME],
    retry::Retry: [retry::RETRY_ANSWERED, retry::RETRY_KEEPS_CALLS, retry::RETRY_REMOVED_CALL_UNKNOWN, retry::RETRY_PLAYS_RETRY_STEPS, retry::RETRY_KEEPS_TRANSCRIPTS],
    cancel::CancelWatch: [cancel::CANCEL_ANSWERED, cancel::CANCEL_CLOSES_RUN, cancel::CANCELLED_RUN_STAYS_CLOSED, cancel::RESPONSE_SCHEMA_ENFORCED, cancel_nested::CANCEL_CLOSES_SUBAGENTS_FIRST, cancel_nested::CANCELLED_SUBAGENTS_STAY_CLOSED],
    attach::AttachWatch: [attach::EVENTS_REACH_EVERY_TAB, attach::ANSWERS_TO_REQUESTER, attach::ATTACHED_VIEWS_AGREE, attach::ATTACH_LIMIT_ANNOUNCED],
    cluster::ClusterWatch: [cluster::ONE_SEQ_ONE_FRAME, cluster::RUN_DRIVEN_ONCE],
    monitor: [window::WINDOW_SNAPSHOT, window::WINDOW_VIEW, window::HISTORY_PAGES, oracle::EVENTS_ACCEPTED],
    reasoning::Reasoning: [reasoning::REASONING_ONLY_IN_FORCE, reasoning::REASONING_DELTAS_ONLY_STREAMED],
    reasoning_stream::ReasoningStream: [reasoning_stream::REASON_STEPS_AS_SCRIPTED, reasoning_stream::REASONING_CONTINUES_AFTER_RESUME],
    usage::Usage: [usage::USAGE_ONLY_IN_FORCE, usage::ONE_CURRENCY],
    subagents::Subagents: [subagents::SUBAGENTS_ONLY_IN_FORCE],
    ids::Ids: [ids::IDS_CONSISTENT],
    batch::Batch: [batch::BATCH_ORDER],
    settled::Settled: [settled::SETTLED_STAYS_SETTLED],
    pending::PendingWatch: [pending::PENDING_SURVIVES_DISCONNECT],
    reopen::Reopen: [reopen::RUN_STARTED_BEFORE_SETTLEMENT],
    errors::Errors: [errors::ERRORS_WELL_FORMED, errors::NONFATAL_KEEPS_OPEN],
    advice::Advisor: [advice::FRAME_LIMIT_DEFAULT, advice::RUN_COMPLETE_EXPLAINED, advice::ERROR_MESSAGE_STYLE, advice::TOOL_REPORTS_COHERENT],
}

/// The always-on checks that only connections which negotiated 1.1 or later exercise in full
/// (features, patches, catch-up): against a server that speaks only 1.0 they evaluate little or
/// nothing, which coverage accounting has to know.
pub static SINCE_1_1: &[&CheckDef] = &[
    &features::FEATURES_AS_NEGOTIATED,
    &features::FEATURE_FRAMES_IN_FORCE_ONLY,
    &flow::PATCH_IN_PLACE_OF_UPDATE,
    &patch::PATCH_MATCHES_REDUCER,
    &patch::CATCH_UP_RESUME,
    &stream::SAY_CHUNKS_AS_SCRIPTED,
    &stream::STREAM_CONTINUES_AFTER_RESUME,
    &retry::RETRY_ANSWERED,
    &retry::RETRY_KEEPS_CALLS,
    &retry::RETRY_REMOVED_CALL_UNKNOWN,
    &retry::RETRY_PLAYS_RETRY_STEPS,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every definition is listed once, the frame reader's first and the advice last, and every
    /// check is one instance of its own type (no count to update when a check is added).
    #[test]
    fn the_registry_lists_every_check_once_in_report_order() {
        let mut ids: Vec<&str> = ALWAYS_ON.iter().map(|d| d.id).collect();
        assert_eq!(ids.first(), Some(&"wire-schema-valid"));
        assert_eq!(ids.last(), Some(&"tool-reports-coherent"));
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ALWAYS_ON.len(), "a definition listed twice");
        let checks = registered();
        let mut types: Vec<std::any::TypeId> = checks.iter().map(|c| c.as_any().type_id()).collect();
        types.sort_unstable();
        types.dedup();
        assert_eq!(types.len(), checks.len(), "a check registered twice");
        assert!(SINCE_1_1.iter().all(|d| ALWAYS_ON.contains(d)));
    }
}
