//! Features (since 1.1): which are in force on a connection (SESSION-012), what the welcome says
//! about them (SESSION-013, and `resume_retention` exactly where `resume_catch_up` is in force,
//! RESUME-018), and that nothing a feature defines reaches a connection where it is not in force
//! (SESSION-015; for `assistant_stream`, whose own rule spells the case out, STREAM-005: a delta,
//! or an open stream item in a state, where the feature is not in force). The set in force is computed by `chatwire_schema::features_in_force` from the
//! hello and the welcome's capabilities, so the monitor and every server follow one rule; that rule
//! keeps `assistant_stream` out where `ui_state_patch` is not in force (STREAM-001), which the
//! monitor names on its own when a welcome breaks it.

use std::collections::HashMap;

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::{features_in_force, Capability, SessionWelcome};
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::ConnModel;

const SESSION_012: ReqId = ReqId::new("SESSION-012");
const SESSION_013: ReqId = ReqId::new("SESSION-013");
const SESSION_015: ReqId = ReqId::new("SESSION-015");
const RESUME_018: ReqId = ReqId::new("RESUME-018");
const STREAM_001: ReqId = ReqId::new("STREAM-001");
const STREAM_005: ReqId = ReqId::new("STREAM-005");

/// The welcome lists exactly the features in force, and `resume_retention` where catch-up is.
pub static FEATURES_AS_NEGOTIATED: CheckDef = CheckDef {
    id: "features-as-negotiated",
    requirements: &[SESSION_012, SESSION_013, RESUME_018, STREAM_001],
    summary: "a 1.1 welcome lists exactly the features in force given the hello and the capabilities (a 1.0 welcome none; assistant_stream only with ui_state_patch), and resume_retention exactly where resume_catch_up is in force",
    level: Level::Must,
};

/// No frame or member a feature defines where that feature is not in force: one finding per
/// defect, under the rule written for the case (STREAM-005 for a delta or an open stream item,
/// SESSION-015 for the rest), as an undefined frame is COMPAT-005's alone.
pub static FEATURE_FRAMES_IN_FORCE_ONLY: CheckDef = CheckDef {
    id: "feature-frames-only-in-force",
    requirements: &[SESSION_015, STREAM_005],
    summary: "no ui_state_patch, resume_retention or other feature-defined frame or member on a connection where its feature is not in force; there no chat.assistant_message_delta and no open stream item in any state (STREAM-005)",
    level: Level::Must,
};

/// The features checks' own state: per connection, the features whose SESSION-015 finding was
/// reported already (once each, until the next welcome).
#[derive(Debug, Default)]
pub(crate) struct Features {
    reported: HashMap<u64, Vec<Capability>>,
}

impl Check for Features {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        match cx.frame {
            ServerFrame::Welcome(w) => {
                welcome(w, c.hello.as_ref().and_then(|h| h.features.as_deref()), out);
                self.reported.remove(&cx.conn);
            }
            // On a 1.0 connection the frame itself is undefined: COMPAT-005 reports it, once. A
            // catch-up is the resume's, judged by the catch-up check.
            ServerFrame::UiStatePatch(_) if c.since_1_1() && !c.awaiting_snapshot => {
                self.require(cx.conn, c, Capability::UiStatePatch, "ui_state_patch", out)
            }
            ServerFrame::AssistantMessageDelta(_) if c.since_1_1() => {
                self.require(cx.conn, c, Capability::AssistantStream, "chat.assistant_message_delta", out)
            }
            ServerFrame::UiStateSnapshot(s) if c.since_1_1() && s.state.open_stream().is_some() => {
                self.require(cx.conn, c, Capability::AssistantStream, "a snapshot holding an open stream item", out)
            }
            ServerFrame::UiStateUpdated(u) if c.since_1_1() && u.state.open_stream().is_some() => {
                self.require(cx.conn, c, Capability::AssistantStream, "an update holding an open stream item", out)
            }
            _ => {}
        }
    }
}

/// A delta on a connection where `assistant_stream` is not in force: the features check charges
/// it (STREAM-005, or COMPAT-005 on 1.0); the checks that follow a stream's text and ids do not
/// take it as a stream's, since that connection holds none.
pub(crate) fn stray_delta(frame: &ServerFrame, c: &ConnModel) -> bool {
    frame.is_stream_delta() && !c.has(&Capability::AssistantStream)
}

impl Features {
    /// SESSION-015 (STREAM-005 for `assistant_stream`): `what` (a frame or member of `feature`)
    /// arrived on `conn`; a finding unless the feature is in force, reported once per feature and
    /// connection.
    fn require(&mut self, conn: u64, c: &ConnModel, feature: Capability, what: &str, out: &mut Out) {
        let rule = if feature == Capability::AssistantStream { STREAM_005 } else { SESSION_015 };
        let reported = self.reported.entry(conn).or_default();
        if c.has(&feature) {
            out.eval(&FEATURE_FRAMES_IN_FORCE_ONLY, rule);
        } else if !reported.contains(&feature) {
            out.fail(
                &FEATURE_FRAMES_IN_FORCE_ONLY,
                rule,
                format!("{what} arrived, but the feature {feature} is not in force on this connection"),
            );
            reported.push(feature);
        }
    }
}

/// Checks a welcome against the hello it answers (`requested`: the hello's `features`): the
/// features in force by SESSION-012, which the model computes by the same rule.
fn welcome(w: &SessionWelcome, requested: Option<&[Capability]>, out: &mut Out) {
    let computed = features_in_force(w.version, requested, &w.capabilities);
    match (&computed, &w.features) {
        // A 1.0 welcome carrying `features` is a member 1.0 does not define: COMPAT-005 reports it.
        (None, Some(_)) => {}
        (None, None) => out.eval(&FEATURES_AS_NEGOTIATED, SESSION_013),
        (Some(_), None) => out.fail(
            &FEATURES_AS_NEGOTIATED,
            SESSION_013,
            format!("the welcome negotiated {} but carries no features", w.version),
        ),
        (Some(_), Some(listed))
            if listed.contains(&Capability::AssistantStream) && !listed.contains(&Capability::UiStatePatch) =>
        {
            out.eval(&FEATURES_AS_NEGOTIATED, SESSION_013);
            out.fail(
                &FEATURES_AS_NEGOTIATED,
                STREAM_001,
                "the welcome lists assistant_stream in force without ui_state_patch: a delta has no state frame of its own, so a whole-state connection could not show it",
            );
        }
        (Some(want), Some(listed)) => {
            out.eval(&FEATURES_AS_NEGOTIATED, SESSION_013);
            if w.capabilities.contains(&Capability::AssistantStream) {
                out.eval(&FEATURES_AS_NEGOTIATED, STREAM_001);
            }
            let mut got = listed.clone();
            got.sort();
            got.dedup();
            // The list is the welcome's own statement (SESSION-013: exactly the features in
            // force); which features are in force (SESSION-012) the frames that follow show, and
            // the rest of the connection is judged by the set SESSION-012 gives.
            if &got == want && got.len() == listed.len() {
                out.eval(&FEATURES_AS_NEGOTIATED, SESSION_012);
                out.eval(&FEATURES_AS_NEGOTIATED, SESSION_013);
            } else {
                let asked = requested.map_or("(no features member: every feature)".to_owned(), names);
                out.fail(
                    &FEATURES_AS_NEGOTIATED,
                    SESSION_013,
                    format!(
                        "the welcome lists features [{}], but the features in force are [{}] (hello asked for {asked}; capabilities [{}])",
                        names(listed),
                        names(want),
                        names(&w.capabilities)
                    ),
                );
            }
        }
    }
    let catch_up = computed.as_ref().is_some_and(|c| c.contains(&Capability::ResumeCatchUp));
    match (catch_up, w.resume_retention) {
        (true, Some(_)) | (false, None) if computed_is_1_1(w) => out.eval(&FEATURES_AS_NEGOTIATED, RESUME_018),
        (true, None) => out.fail(
            &FEATURES_AS_NEGOTIATED,
            RESUME_018,
            "resume_catch_up is in force but the welcome carries no resume_retention",
        ),
        // On a 1.0 connection the member is COMPAT-005's to report.
        (false, Some(_)) if computed_is_1_1(w) => out.fail(
            &FEATURE_FRAMES_IN_FORCE_ONLY,
            SESSION_015,
            "the welcome carries resume_retention, but resume_catch_up is not in force",
        ),
        _ => {}
    }
}

fn computed_is_1_1(w: &SessionWelcome) -> bool {
    w.version >= chatwire_schema::ProtocolVersion { major: 1, minor: 1 }
}

fn names(list: &[Capability]) -> String {
    list.iter().map(Capability::as_str).collect::<Vec<_>>().join(", ")
}
