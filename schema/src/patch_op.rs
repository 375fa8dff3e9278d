//! One operation of a JSON Patch (RFC 6902): the payload of a `ui_state_patch` frame, a list of
//! them. How the patch of an event is built lives in [`crate::state_patch`]; the op itself is a leaf
//! that the frame, the reducer and the patch builder all name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One operation of a JSON Patch (RFC 6902). `path` and `from` are JSON Pointers (RFC 6901).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum PatchOp {
    /// Adds `value` at `path`: inserts into an array (`-` appends), sets an object member.
    Add {
        /// Where.
        path: String,
        /// What.
        value: Value,
    },
    /// Removes the value at `path`.
    Remove {
        /// Where.
        path: String,
    },
    /// Replaces the value at `path`, which must exist.
    Replace {
        /// Where.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Moves the value at `from` to `path`.
    Move {
        /// Where from.
        from: String,
        /// Where to.
        path: String,
    },
    /// Copies the value at `from` to `path`.
    Copy {
        /// Where from.
        from: String,
        /// Where to.
        path: String,
    },
    /// Fails the whole patch unless the value at `path` equals `value`.
    Test {
        /// Where.
        path: String,
        /// The value expected there.
        value: Value,
    },
}

impl PatchOp {
    /// The op's `path`.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Remove { path }
            | PatchOp::Replace { path, .. }
            | PatchOp::Move { path, .. }
            | PatchOp::Copy { path, .. }
            | PatchOp::Test { path, .. } => path,
        }
    }

    /// The op's wire name (`"add"`, `"test"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            PatchOp::Add { .. } => "add",
            PatchOp::Remove { .. } => "remove",
            PatchOp::Replace { .. } => "replace",
            PatchOp::Move { .. } => "move",
            PatchOp::Copy { .. } => "copy",
            PatchOp::Test { .. } => "test",
        }
    }

    /// The same op at another `path` (`from` is kept).
    pub fn with_path(&self, path: String) -> PatchOp {
        let mut op = self.clone();
        match &mut op {
            PatchOp::Add { path: p, .. }
            | PatchOp::Remove { path: p }
            | PatchOp::Replace { path: p, .. }
            | PatchOp::Move { path: p, .. }
            | PatchOp::Copy { path: p, .. }
            | PatchOp::Test { path: p, .. } => *p = path,
        }
        op
    }
}
