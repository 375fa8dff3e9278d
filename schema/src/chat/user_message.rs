//! `chat.user_message` — the user sends text, starting a new turn.
//!
//! Spec: `spec/session.md#chatuser_message`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// A message typed by the user. The client-chosen `id` makes it idempotent (`TURN-002`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserMessage {
    /// Client-chosen id; sending the same id again never starts a second turn.
    pub id: Id,
    /// The message text as typed.
    pub text: String,
}
