//! Plugging a model into the reference backend.
//!
//! Run: `cargo run -p chatwire-reference --example custom_agent`, then connect a Chatwire client
//! to the printed URL. Every session opened without a script is answered by `ModelAgent`.
//!
//! A real deployment replaces `ask_model` with a call to its model. The agent's job is only to
//! *plan* a turn as script steps (`say`, `tool_calls`, `wait`, `end`); the server's run driver
//! commits and sends each step, handles tool-call responses, expiry, rewind and resume, and
//! after a crash continues the turn from the committed plan.

use std::sync::Arc;

use chatwire_reference::{Agent, DbLocation, ServeConfig, Server};
use chatwire_schema::script::{ScriptStep, ScriptTurn};

/// Stand-in for a model: turns the user's text into an answer.
fn ask_model(user_text: &str) -> String {
    let words = user_text.split_whitespace().count();
    format!("I read {words} word(s). A model would answer here.")
}

/// An agent that asks a model for each turn's answer.
#[derive(Debug)]
struct ModelAgent;

impl Agent for ModelAgent {
    fn plan_turn(&self, _turn_index: u64, user_text: &str) -> Option<ScriptTurn> {
        let answer = ask_model(user_text);
        // Streamed word by word to clients where `assistant_stream` is in force, as a model's
        // tokens would be; other clients get the whole answer at the end.
        let chunks: Vec<String> = answer.split_inclusive(' ').map(str::to_owned).collect();
        let say = ScriptStep::Say { markdown: answer, chunks: Some(chunks), chunk_delay_ms: Some(30) };
        Some(ScriptTurn { steps: vec![say], retries: Vec::new() })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = ServeConfig {
        // Normal mode: scripts are refused and every session is answered by the agent below.
        conformance: false,
        agent: Arc::new(ModelAgent),
        ..ServeConfig::new("127.0.0.1:0".parse()?, DbLocation::Memory)
    };
    let server = Server::bind(config).await?;
    println!("{}", server.url());
    server
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
