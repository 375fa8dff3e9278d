//! COMPAT-005: on a connection that negotiated version `N.m`, the server sends nothing that the
//! schemas of `N.m` do not define. The frame is checked against the types cut down to that version
//! (`FrameValidator::for_version`), after it passed the current schemas: a frame the current
//! schemas refuse is the business of `wire-schema-valid`, so one defect is reported once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use chatwire_schema::{Direction, FrameValidator, ProtocolVersion, ReqId};
use serde_json::Value;

use crate::finding::{CheckDef, Raw};
use chatwire_schema::requirements::Level;

const COMPAT_005: ReqId = ReqId::new("COMPAT-005");

/// Every frame on a connection is defined by the version negotiated on it.
pub static NEGOTIATED_VERSION_ONLY: CheckDef = CheckDef {
    id: "negotiated-version-only",
    requirements: &[COMPAT_005],
    summary: "every server frame is defined by the schemas of the version negotiated on its connection",
    level: Level::Must,
};

/// At most this many versions' validators are kept: a server naming ever new versions in its
/// welcomes gets each checked all the same, compiled afresh, without the cache growing.
const MAX_CACHED_VERSIONS: usize = 8;

/// A version's schemas, compiled; `None` where they are the current schemas themselves (the
/// newest minor), which every frame checked here has passed already.
type Compiled = Option<Arc<FrameValidator>>;

/// The validators of the versions seen so far, compiled once each.
#[derive(Debug, Default)]
pub(crate) struct Versions {
    by_version: HashMap<ProtocolVersion, Compiled>,
}

/// `version`'s validator, compiled once per process: compiling a version's schemas takes longer
/// than a short scenario's whole exchange, and every scenario's monitor needs the same ones.
fn shared(version: ProtocolVersion) -> Compiled {
    static CACHE: OnceLock<Mutex<HashMap<ProtocolVersion, Compiled>>> = OnceLock::new();
    // Held while compiling, so scenarios starting together compile each version once, not once each.
    let mut cache = CACHE.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(v) = cache.get(&version) {
        return v.clone();
    }
    let docs = chatwire_schema::since::schemas_for(version);
    let v =
        (docs != chatwire_schema::schema_gen::all_schemas()).then(|| Arc::new(FrameValidator::for_version(version)));
    if cache.len() < MAX_CACHED_VERSIONS {
        cache.insert(version, v.clone());
    }
    v
}

impl Versions {
    /// Checks `frame`, valid under the current schemas (`FrameValidator::new`), against those
    /// of `version`.
    pub(crate) fn check(&mut self, version: ProtocolVersion, frame: &Value) -> Result<(), Raw> {
        let validator = match self.by_version.get(&version) {
            Some(v) => v.clone(),
            None => {
                let v = shared(version);
                if self.by_version.len() < MAX_CACHED_VERSIONS {
                    self.by_version.insert(version, v.clone());
                }
                v
            }
        };
        let Some(validator) = validator else { return Ok(()) };
        match validator.check(Direction::ServerToClient, frame) {
            Ok(_) => Ok(()),
            Err(e) => {
                let wire = frame.get("type").and_then(Value::as_str).unwrap_or("(no type)");
                Err(Raw::new(
                    &NEGOTIATED_VERSION_ONLY,
                    COMPAT_005,
                    format!("{wire} is not what version {version} defines: {e}"),
                ))
            }
        }
    }
}

/// The version a frame must keep to: a welcome names its own, every later frame the connection's.
pub(crate) fn version_of(frame: &Value, negotiated: Option<ProtocolVersion>) -> Option<ProtocolVersion> {
    if frame.get("type").and_then(Value::as_str) == Some("session.welcome") {
        return frame.get("version").and_then(Value::as_str).and_then(|v| ProtocolVersion::parse(v).ok());
    }
    negotiated
}
