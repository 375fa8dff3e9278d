//! Features (since 1.1): which are in force on a connection (SESSION-012), what the welcome says
//! about them (SESSION-013, and `resume_retention` exactly where `resume_catch_up` is in force,
//! RESUME-018), and that nothing a feature defines reaches a connection where it is not in force
//! (SESSION-015). The set in force is computed by `chatwire_schema::features_in_force` from the
//! hello and the welcome's capabilities, so the monitor and every server follow one rule; that rule
//! keeps `assistant_stream` out where `ui_state_patch` is not in force (STREAM-001), which the
//! monitor names on its own when a welcome breaks it.

use chatwire_schema::session::welcome::{features_in_force, Capability, SessionWelcome};
use chatwire_schema::ReqId;

use super::check::CheckDef;
use super::Out;
use chatwire_schema::requirements::Level;

const SESSION_012: ReqId = ReqId::new("SESSION-012");
const SESSION_013: ReqId = ReqId::new("SESSION-013");
const SESSION_015: ReqId = ReqId::new("SESSION-015");
const RESUME_018: ReqId = ReqId::new("RESUME-018");
const STREAM_001: ReqId = ReqId::new("STREAM-001");

/// The welcome lists exactly the features in force, and `resume_retention` where catch-up is.
pub static FEATURES_AS_NEGOTIATED: CheckDef = CheckDef {
    id: "features-as-negotiated",
    requirements: &[SESSION_012, SESSION_013, RESUME_018, STREAM_001],
    summary: "a 1.1 welcome lists exactly the features in force given the hello and the capabilities (a 1.0 welcome none; assistant_stream only with ui_state_patch), and resume_retention exactly where resume_catch_up is in force",
    level: Level::Must,
};

/// No frame or member a feature defines where that feature is not in force.
pub static FEATURE_FRAMES_IN_FORCE_ONLY: CheckDef = CheckDef {
    id: "feature-frames-only-in-force",
    requirements: &[SESSION_015],
    summary: "no ui_state_patch, resume_retention or other feature-defined frame or member on a connection where its feature is not in force",
    level: Level::Must,
};

/// The features in force on one connection, as the rule computes them from the hello and welcome.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InForce {
    features: Vec<Capability>,
    /// Features whose SESSION-015 finding was already reported on this connection (once each).
    reported: Vec<Capability>,
}

impl InForce {
    /// Whether `feature` is in force.
    pub fn has(&self, feature: &Capability) -> bool {
        self.features.contains(feature)
    }

    /// Whether any feature is in force (a 1.1 connection that asked for some).
    pub fn any(&self) -> bool {
        !self.features.is_empty()
    }

    /// The features in force, sorted.
    pub fn list(&self) -> &[Capability] {
        &self.features
    }

    /// SESSION-015: `what` (a frame or member of `feature`) arrived; a finding unless the feature is
    /// in force, reported once per feature and connection.
    pub(super) fn require(&mut self, feature: Capability, what: &str, out: &mut Out) {
        if self.has(&feature) {
            out.eval(&FEATURE_FRAMES_IN_FORCE_ONLY, SESSION_015);
        } else if !self.reported.contains(&feature) {
            out.fail(
                &FEATURE_FRAMES_IN_FORCE_ONLY,
                SESSION_015,
                format!("{what} arrived, but the feature {feature} is not in force on this connection"),
            );
            self.reported.push(feature);
        }
    }
}

/// Checks a welcome against the hello it answers (`requested`: the hello's `features`) and returns
/// the features in force by SESSION-012, which the rest of the connection is checked against.
pub(super) fn welcome(w: &SessionWelcome, requested: Option<&[Capability]>, out: &mut Out) -> InForce {
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
            if &got == want && got.len() == listed.len() {
                out.eval(&FEATURES_AS_NEGOTIATED, SESSION_012);
            } else {
                let asked = requested.map_or("(no features member: every feature)".to_owned(), names);
                out.fail(
                    &FEATURES_AS_NEGOTIATED,
                    SESSION_012,
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
    let in_force = InForce { features: computed.unwrap_or_default(), reported: Vec::new() };
    let catch_up = in_force.has(&Capability::ResumeCatchUp);
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
    in_force
}

fn computed_is_1_1(w: &SessionWelcome) -> bool {
    w.version >= chatwire_schema::ProtocolVersion { major: 1, minor: 1 }
}

fn names(list: &[Capability]) -> String {
    list.iter().map(Capability::as_str).collect::<Vec<_>>().join(", ")
}
