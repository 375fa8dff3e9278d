//! What the session core decides a state change is, as a value: its units (events, batches,
//! answers), the request it accepts, where the agent's cursor and plan go, which deadlines and
//! committed responses it adds or ends. The commit pipeline (`pipeline/`) carries it out.

use std::sync::Arc;

use chatwire_schema::{ClientFrame, Id, ServerFrame};
use serde::{Deserialize, Serialize};

use crate::agent::Cursor;
use crate::plan::TurnPlan;

/// One step of a change: an event (followed by one state frame), or a batch of tool calls (one
/// state frame after the whole batch).
#[allow(clippy::large_enum_variant)] // short-lived: built and consumed within one commit
pub(crate) enum Unit {
    Event(ServerFrame),
    Batch(Vec<ServerFrame>),
    /// A frame that answers the change's request and changes no state (`chat.cancel_accepted`):
    /// it takes a seq and goes to the requester only; no state frame follows it.
    Answer(ServerFrame),
}

impl Unit {
    /// The unit's frames.
    pub fn frames(&self) -> &[ServerFrame] {
        match self {
            Unit::Event(f) | Unit::Answer(f) => std::slice::from_ref(f),
            Unit::Batch(v) => v,
        }
    }

    /// The unit's events: its frames, but an answer's, which changes no state.
    pub fn events(&self) -> &[ServerFrame] {
        match self {
            Unit::Event(f) => std::slice::from_ref(f),
            Unit::Batch(v) => v,
            Unit::Answer(_) => &[],
        }
    }
}

/// Everything one state change does, committed atomically.
#[derive(Default)]
pub(crate) struct Change {
    pub units: Vec<Unit>,
    /// The request the change accepts, logged with it.
    pub requests: Vec<ClientFrame>,
    pub cursor: Option<Cursor>,
    pub plan: Option<Option<Arc<TurnPlan>>>,
    pub add_timers: Vec<(Id, i64)>,
    pub remove_timers: Vec<Id>,
    pub add_pending: Vec<(Id, String)>,
    pub remove_pending: Vec<Id>,
}

/// A change as other replicas replay it: its units, in order, and whether it took the session
/// over from every connection attached elsewhere (`ATTACH-002`).
#[derive(Serialize, Deserialize, Debug, Default)]
pub(crate) struct ChangeRecord {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<UnitRecord>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub takeover: bool,
}

/// One unit of a change ([`Unit`]), its frames as committed (seqs are stamped on replay).
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub(crate) enum UnitRecord {
    Event { frame: ServerFrame },
    Batch { frames: Vec<ServerFrame> },
    Answer { frame: ServerFrame },
}

impl ChangeRecord {
    /// The record of `units`.
    pub fn of(units: &[Unit]) -> ChangeRecord {
        let units = units
            .iter()
            .map(|u| match u {
                Unit::Event(f) => UnitRecord::Event { frame: f.clone() },
                Unit::Batch(v) => UnitRecord::Batch { frames: v.clone() },
                Unit::Answer(f) => UnitRecord::Answer { frame: f.clone() },
            })
            .collect();
        ChangeRecord { units, takeover: false }
    }

    /// The units to replay.
    pub fn into_units(self) -> Vec<Unit> {
        self.units
            .into_iter()
            .map(|u| match u {
                UnitRecord::Event { frame } => Unit::Event(frame),
                UnitRecord::Batch { frames } => Unit::Batch(frames),
                UnitRecord::Answer { frame } => Unit::Answer(frame),
            })
            .collect()
    }
}
