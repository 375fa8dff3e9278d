//! The hello seam: which scripts are played and what a welcome offers.

use chatwire_schema::script::ScriptError;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::ProtocolVersion;

use super::list::{Fault, NoFault};

/// Faults of opening a session and of the welcome; the defaults are the correct server.
pub(crate) trait HelloFaults: Send + Sync + std::fmt::Debug {
    /// Play scripts even outside conformance mode.
    fn accepts_scripts_anywhere(&self) -> bool {
        false
    }

    /// Whether a script that fails validation with `error` is refused (`invalid_script`).
    fn refuses_script(&self, _error: &ScriptError) -> bool {
        true
    }

    /// The capabilities listed in `session.welcome`.
    fn capabilities(&self, caps: Vec<Capability>) -> Vec<Capability> {
        caps
    }

    /// The welcome's `features`, given the features in force (`None` on 1.0).
    fn welcome_features(&self, in_force: Option<Vec<Capability>>) -> Option<Vec<Capability>> {
        in_force
    }

    /// Whether a connection that negotiated `version` gets patches, given whether
    /// `ui_state_patch` is in force on it.
    fn sends_patches(&self, in_force: bool, _version: ProtocolVersion) -> bool {
        in_force
    }
}

impl HelloFaults for NoFault {}

impl HelloFaults for Fault {
    fn accepts_scripts_anywhere(&self) -> bool {
        *self == Fault::ScriptAcceptedOutsideConformance
    }

    fn refuses_script(&self, error: &ScriptError) -> bool {
        !(*self == Fault::ComponentlessUiToolAccepted && matches!(error, ScriptError::MissingComponentType { .. }))
    }

    fn capabilities(&self, mut caps: Vec<Capability>) -> Vec<Capability> {
        match self {
            Fault::ScriptCapabilityMissing => caps.retain(|c| *c != Capability::ConformanceScript),
            Fault::ScriptCapabilityUnconditional if !caps.contains(&Capability::ConformanceScript) => {
                caps.insert(caps.len().min(3), Capability::ConformanceScript)
            }
            _ => {}
        }
        caps
    }

    fn welcome_features(&self, in_force: Option<Vec<Capability>>) -> Option<Vec<Capability>> {
        match in_force {
            None if *self == Fault::V11MemberOnV10Connection => Some(Vec::new()),
            other => other,
        }
    }

    fn sends_patches(&self, in_force: bool, version: ProtocolVersion) -> bool {
        in_force || (*self == Fault::PatchWithoutFeature && version >= ProtocolVersion { major: 1, minor: 1 })
    }
}
