//! An exhaustive dispatch of client frames: one handler method per frame type, no fallback.
//!
//! Spec: `spec/overview.md#frames`. A server that matches on [`ClientFrame`] itself needs a
//! wildcard arm (the union is `#[non_exhaustive]`), and a frame added to the union then compiles
//! and is refused at run time. [`ClientFrame::dispatch`] matches inside this crate, where the
//! match is exhaustive, and calls a [`ClientFrameHandler`] method that has no default: a new client
//! frame is a new required method, so every handler fails to compile until it handles the frame.
//!
//! ```
//! use chatwire_schema::chat::{cancel::Cancel, history_request::HistoryRequest, retry::Retry};
//! use chatwire_schema::chat::{rewind::Rewind, tool_call_response::ToolCallResponse, user_message::UserMessage};
//! use chatwire_schema::dispatch::ClientFrameHandler;
//! use chatwire_schema::session::hello::SessionHello;
//! use chatwire_schema::ClientFrame;
//!
//! /// Counts the user messages a connection sent; every other frame is "not counted".
//! #[derive(Default)]
//! struct Counter { user_messages: usize }
//!
//! // Implemented for `&mut Counter`: `dispatch` takes the handler by value, so a handler can be a
//! // borrow (as here) or own what its methods hand on (a future, a decision).
//! impl ClientFrameHandler for &mut Counter {
//!     type Output = bool;
//!     fn hello(self, _: SessionHello) -> bool { false }
//!     fn user_message(self, _: UserMessage) -> bool { self.user_messages += 1; true }
//!     fn tool_call_response(self, _: ToolCallResponse) -> bool { false }
//!     fn rewind(self, _: Rewind) -> bool { false }
//!     fn retry(self, _: Retry) -> bool { false }
//!     fn cancel(self, _: Cancel) -> bool { false }
//!     fn history_request(self, _: HistoryRequest) -> bool { false }
//! }
//!
//! let frame: ClientFrame =
//!     serde_json::from_str(r#"{"type": "chat.user_message", "id": "m-1", "text": "hi"}"#).unwrap();
//! let mut counter = Counter::default();
//! assert!(frame.dispatch(&mut counter));
//! assert_eq!(counter.user_messages, 1);
//! ```
//!
//! A handler that leaves a frame out does not compile:
//!
//! ```compile_fail,E0046
//! use chatwire_schema::chat::{cancel::Cancel, retry::Retry, rewind::Rewind};
//! use chatwire_schema::chat::{tool_call_response::ToolCallResponse, user_message::UserMessage};
//! use chatwire_schema::dispatch::ClientFrameHandler;
//! use chatwire_schema::session::hello::SessionHello;
//!
//! struct Server;
//!
//! impl ClientFrameHandler for &mut Server {
//!     type Output = ();
//!     fn hello(self, _: SessionHello) {}
//!     fn user_message(self, _: UserMessage) {}
//!     fn tool_call_response(self, _: ToolCallResponse) {}
//!     fn rewind(self, _: Rewind) {}
//!     fn retry(self, _: Retry) {}
//!     fn cancel(self, _: Cancel) {}
//!     // `history_request` forgotten (a frame added since the handler was written):
//!     // E0046, not all trait items implemented.
//! }
//! ```

use crate::chat::cancel::Cancel;
use crate::chat::history_request::HistoryRequest;
use crate::chat::retry::Retry;
use crate::chat::rewind::Rewind;
use crate::chat::tool_call_response::ToolCallResponse;
use crate::chat::user_message::UserMessage;
use crate::frame::ClientFrame;
use crate::session::hello::SessionHello;

/// One method per client frame type, none with a default. [`ClientFrame::dispatch`] calls the
/// method of the frame's type with the frame, and returns what it returns.
///
/// The methods take the handler by value: implement the trait for `&mut YourHandler` to keep the
/// handler across frames, or for a value that owns what the methods hand on (borrows moved into a
/// future, a session core's decision).
pub trait ClientFrameHandler: Sized {
    /// What handling a frame returns.
    type Output;
    /// `session.hello` (`spec/session.md#sessionhello`).
    fn hello(self, frame: SessionHello) -> Self::Output;
    /// `chat.user_message` (`spec/session.md#chatuser_message`).
    fn user_message(self, frame: UserMessage) -> Self::Output;
    /// `chat.tool_call_response` (`spec/tool-calls.md`).
    fn tool_call_response(self, frame: ToolCallResponse) -> Self::Output;
    /// `chat.rewind` (`spec/rewind.md`).
    fn rewind(self, frame: Rewind) -> Self::Output;
    /// `chat.retry`, since 1.1 (`spec/retry.md`).
    fn retry(self, frame: Retry) -> Self::Output;
    /// `chat.cancel`, since 1.2 (`spec/cancel.md`).
    fn cancel(self, frame: Cancel) -> Self::Output;
    /// `chat.history_request`, since 1.2 (`spec/window.md`).
    fn history_request(self, frame: HistoryRequest) -> Self::Output;
}

impl ClientFrame {
    /// Hands the frame to the `handler` method of its type. Exhaustive: a client frame type added
    /// to the union is a compile error here until [`ClientFrameHandler`] has its method, and then
    /// in every handler until it implements it.
    pub fn dispatch<H: ClientFrameHandler>(self, handler: H) -> H::Output {
        match self {
            ClientFrame::Hello(f) => handler.hello(f),
            ClientFrame::UserMessage(f) => handler.user_message(f),
            ClientFrame::ToolCallResponse(f) => handler.tool_call_response(f),
            ClientFrame::Rewind(f) => handler.rewind(f),
            ClientFrame::Retry(f) => handler.retry(f),
            ClientFrame::Cancel(f) => handler.cancel(f),
            ClientFrame::HistoryRequest(f) => handler.history_request(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Names the method each frame reached.
    struct Which;

    impl ClientFrameHandler for Which {
        type Output = &'static str;
        fn hello(self, _: SessionHello) -> &'static str {
            "session.hello"
        }
        fn user_message(self, _: UserMessage) -> &'static str {
            "chat.user_message"
        }
        fn tool_call_response(self, _: ToolCallResponse) -> &'static str {
            "chat.tool_call_response"
        }
        fn rewind(self, _: Rewind) -> &'static str {
            "chat.rewind"
        }
        fn retry(self, _: Retry) -> &'static str {
            "chat.retry"
        }
        fn cancel(self, _: Cancel) -> &'static str {
            "chat.cancel"
        }
        fn history_request(self, _: HistoryRequest) -> &'static str {
            "chat.history_request"
        }
    }

    #[test]
    fn every_client_frame_reaches_the_method_of_its_type() {
        let frames = [
            json!({"type": "session.hello", "id": "h-1", "versions": ["1.2"]}),
            json!({"type": "chat.user_message", "id": "m-1", "text": "hi"}),
            json!({"type": "chat.tool_call_response", "id": "r-1", "tool_call_id": "tc-1",
                   "outcome": {"action": "submit", "value": 1}}),
            json!({"type": "chat.rewind", "id": "rw-1", "before_invocation_id": "inv-1"}),
            json!({"type": "chat.retry", "id": "rt-1", "after_item_id": "item-1"}),
            json!({"type": "chat.cancel", "id": "c-1", "invocation_id": "inv-1"}),
            json!({"type": "chat.history_request", "id": "hr-1", "before": "item-1", "limit": 10}),
        ];
        let mut reached = Vec::new();
        for value in frames {
            let frame: ClientFrame = serde_json::from_value(value).expect("a valid client frame");
            let wire = frame.type_name();
            let method = frame.dispatch(Which);
            assert_eq!(method, wire, "a {wire} reached the {method} method");
            reached.push(method);
        }
        assert_eq!(reached, ClientFrame::TYPES, "every client frame type is dispatched");
    }
}
