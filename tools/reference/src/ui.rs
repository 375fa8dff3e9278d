//! The reference chat page (`serve --ui`) and the demo agent (`serve --demo`).
//!
//! The page is three static files embedded in the binary: `ui/index.html`, `ui/style.css` and
//! `ui/app.js`, the last one bundled from `tools/npm/ui/page.ts` and the `@chatwire/protocol`
//! package (`npm run page` in tools/npm writes it; CI checks the committed copy is what the sources
//! build). They are served over plain HTTP GET on the WebSocket's own loopback port: a connection
//! whose request line names any path but `/ws` is answered here, everything else goes on to the
//! WebSocket handshake untouched (the request is only peeked at, never consumed, on that path).
//!
//! The demo agent plays `ui/demo-script.json`, an `AgentScript` that shows every feature the page
//! renders; turn `n` of a session is `turns[n % len]`, so the demo never runs out.

use std::time::Duration;

use chatwire_schema::script::{AgentScript, ScriptTurn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::agent::Agent;

/// A static file of the page.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 3] = [
    Asset { path: "/", content_type: "text/html; charset=utf-8", body: include_str!("../ui/index.html") },
    Asset { path: "/style.css", content_type: "text/css; charset=utf-8", body: include_str!("../ui/style.css") },
    Asset { path: "/app.js", content_type: "text/javascript; charset=utf-8", body: include_str!("../ui/app.js") },
];

/// The demo script, checked when the demo agent is built.
const DEMO_SCRIPT: &str = include_str!("../ui/demo-script.json");

/// Longest request line or head read from a page request; longer ones are refused.
const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// Pause between two peeks at a request line that has not fully arrived.
const PEEK_PAUSE: Duration = Duration::from_millis(5);

/// Only the page's own files, and the WebSocket of the same origin: the bundle validates frames
/// with precompiled code, so nothing needs `unsafe-eval` or inline script.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Where a new connection goes.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    /// To the WebSocket handshake (`/ws`, or anything that is not a request line we understand).
    WebSocket,
    /// To the page server.
    Page,
    /// The peer left or was too slow before sending a request line.
    Gone,
}

/// Which way a request line goes: any path but `/ws` (queries ignored) is the page's.
fn route_of(request_line: &[u8]) -> Route {
    let Ok(line) = std::str::from_utf8(request_line) else { return Route::WebSocket };
    let mut parts = line.split(' ');
    let (Some(_method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Route::WebSocket;
    };
    if !version.starts_with("HTTP/") {
        return Route::WebSocket;
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    if path == "/ws" {
        Route::WebSocket
    } else {
        Route::Page
    }
}

/// Peeks at the request line without consuming it, within `deadline`.
async fn peek_route(tcp: &TcpStream, deadline: Duration) -> Route {
    let until = Instant::now() + deadline;
    let mut buf = vec![0u8; MAX_REQUEST_HEAD];
    let mut seen = 0;
    loop {
        let n = match tokio::time::timeout_at(until, tcp.peek(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return Route::Gone,
            Ok(Ok(n)) => n,
        };
        if let Some(end) = buf[..n].windows(2).position(|w| w == b"\r\n") {
            return route_of(&buf[..end]);
        }
        if n == buf.len() {
            return Route::WebSocket; // no request line we understand: the handshake refuses it
        }
        if n == seen {
            // Nothing new since the last peek (peek returns at once while data is buffered).
            if Instant::now() >= until {
                return Route::Gone;
            }
            tokio::time::sleep(PEEK_PAUSE).await;
        }
        seen = n;
    }
}

/// Reads a request head (through the blank line) within `deadline`; `None` when the peer left,
/// was too slow, or sent more than [`MAX_REQUEST_HEAD`] bytes.
async fn read_head(tcp: &mut TcpStream, deadline: Duration) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        loop {
            let n = tcp.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            head.extend_from_slice(&chunk[..n]);
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Some(());
            }
            if head.len() > MAX_REQUEST_HEAD {
                return None;
            }
        }
    };
    tokio::time::timeout(deadline, read).await.ok()??;
    String::from_utf8(head).ok()
}

/// The response to one request head: status line, content type and body.
fn respond(head: &str) -> (&'static str, &'static str, &'static str) {
    let mut parts = head.lines().next().unwrap_or("").split(' ');
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("");
    let path = target.split(['?', '#']).next().unwrap_or(target);
    if method != "GET" && method != "HEAD" {
        return ("405 Method Not Allowed", "text/plain; charset=utf-8", "only GET and HEAD are served\n");
    }
    match ASSETS.iter().find(|a| a.path == path) {
        Some(asset) => ("200 OK", asset.content_type, asset.body),
        None => {
            ("404 Not Found", "text/plain; charset=utf-8", "not found: the chat page is at /, the WebSocket at /ws\n")
        }
    }
}

/// Serves the page when the connection's request line names it, and returns `true` then (the
/// connection is finished); returns `false` for a WebSocket request, which was left unread.
pub(crate) async fn serve_if_page(tcp: &mut TcpStream, deadline: Duration) -> bool {
    match peek_route(tcp, deadline).await {
        Route::WebSocket => return false,
        Route::Gone => return true,
        Route::Page => {}
    }
    let Some(head) = read_head(tcp, deadline).await else { return true };
    let (status, content_type, body) = respond(&head);
    let head_only = head.starts_with("HEAD ");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nContent-Security-Policy: {CONTENT_SECURITY_POLICY}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n{}",
        body.len(),
        if head_only { "" } else { body },
    );
    let write = async {
        tcp.write_all(response.as_bytes()).await?;
        tcp.shutdown().await
    };
    let _ = tokio::time::timeout(deadline, write).await;
    true
}

/// Why the bundled demo script cannot be played (a build defect, caught by the unit tests).
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// It does not parse as an `AgentScript`.
    #[error("the demo script is not an agent script: {0}")]
    Parse(#[from] serde_json::Error),
    /// It breaks a rule of script validity.
    #[error("the demo script is invalid: {0}")]
    Invalid(#[from] chatwire_schema::script::ScriptError),
    /// It has no turns.
    #[error("the demo script has no turns")]
    Empty,
}

/// The agent of `serve --demo`: plays the bundled demo script, turn after turn, round and round.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoAgent {
    script: AgentScript,
}

impl DemoAgent {
    /// The demo agent with the script embedded in the binary.
    pub fn bundled() -> Result<DemoAgent, DemoError> {
        let script: AgentScript = serde_json::from_str(DEMO_SCRIPT)?;
        script.validate()?;
        if script.turns.is_empty() {
            return Err(DemoError::Empty);
        }
        Ok(DemoAgent { script })
    }
}

impl Agent for DemoAgent {
    fn plan_turn(&self, turn_index: u64, _user_text: &str) -> Option<ScriptTurn> {
        let len = u64::try_from(self.script.turns.len()).ok()?;
        let index = usize::try_from(turn_index.checked_rem(len)?).ok()?;
        self.script.turns.get(index).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatwire_schema::script::ScriptStep;

    #[test]
    fn only_the_websocket_path_goes_to_the_handshake() {
        assert_eq!(route_of(b"GET /ws HTTP/1.1"), Route::WebSocket);
        assert_eq!(route_of(b"GET /ws?x=1 HTTP/1.1"), Route::WebSocket);
        assert_eq!(route_of(b"GET / HTTP/1.1"), Route::Page);
        assert_eq!(route_of(b"GET /app.js HTTP/1.1"), Route::Page);
        assert_eq!(route_of(b"GET /wsx HTTP/1.1"), Route::Page);
        assert_eq!(route_of(b"garbage"), Route::WebSocket);
        assert_eq!(route_of(b"GET / SPDY/3"), Route::WebSocket);
        assert_eq!(route_of(&[0xff, 0xfe]), Route::WebSocket);
    }

    #[test]
    fn the_assets_are_served_and_nothing_else() {
        for asset in &ASSETS {
            let (status, content_type, body) = respond(&format!("GET {} HTTP/1.1\r\n\r\n", asset.path));
            assert_eq!((status, content_type), ("200 OK", asset.content_type));
            assert!(!body.is_empty());
        }
        assert_eq!(respond("GET /?resume=1 HTTP/1.1\r\n\r\n").0, "200 OK");
        assert_eq!(respond("GET /../Cargo.toml HTTP/1.1\r\n\r\n").0, "404 Not Found");
        assert_eq!(respond("POST / HTTP/1.1\r\n\r\n").0, "405 Method Not Allowed");
        assert_eq!(respond("").0, "405 Method Not Allowed");
    }

    #[test]
    fn the_page_loads_only_its_own_files() {
        let (_, _, html) = respond("GET / HTTP/1.1\r\n\r\n");
        assert!(html.contains(r#"src="/app.js""#) && html.contains(r#"href="/style.css""#));
        assert!(!html.contains("<script>"), "inline script would need 'unsafe-inline'");
    }

    #[test]
    fn the_demo_script_is_valid_and_shows_every_feature() {
        let agent = DemoAgent::bundled().expect("the bundled demo script plays");
        let calls: Vec<_> = agent
            .script
            .turns
            .iter()
            .flat_map(|t| &t.steps)
            .filter_map(|s| match s {
                ScriptStep::ToolCalls { calls, .. } => Some(calls.iter()),
                _ => None,
            })
            .flatten()
            .collect();
        let json = serde_json::to_value(&calls).expect("calls serialize");
        let has = |key: &str, value: &str| json.as_array().is_some_and(|a| a.iter().any(|c| c[key] == value));
        for (key, value) in [
            ("interaction_type", "ui_tool"),
            ("interaction_type", "ui_surface"),
            ("interaction_type", "auto_tool"),
            ("interaction_type", "input_request"),
            ("display", "inline"),
            ("display", "artifact"),
            ("display", "composer"),
            ("display", "view"),
        ] {
            assert!(has(key, value), "no demo call with {key} {value}");
        }
        let outputs = json.as_array().map(|a| a.iter().filter(|c| c.get("output").is_some()).count()).unwrap_or(0);
        assert!(outputs > 0, "no demo call shows tool output");
        assert!(json.to_string().contains("stderr") && json.to_string().contains("approvals"));
        // 1.2: the page renders a form from a call's response_schema (TOOL-026).
        assert!(
            json.as_array().is_some_and(|a| a.iter().any(|c| c.get("response_schema").is_some())),
            "no demo form has a response_schema"
        );
    }

    #[test]
    fn the_demo_goes_round() {
        let agent = DemoAgent::bundled().expect("the bundled demo script plays");
        let n = agent.script.turns.len() as u64;
        assert_eq!(agent.plan_turn(0, ""), agent.plan_turn(n, ""));
        assert!(agent.plan_turn(u64::MAX, "").is_some());
    }
}
