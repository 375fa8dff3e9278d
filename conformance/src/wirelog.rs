//! The wire log: Chatwire traffic as JSON Lines, one record per line, written by
//! `run --wire-log DIR` and read by `check-log` (schema: `schema/json/wire-log-record.json`).
//!
//! ```text
//! {"conn": 0, "from": "client", "at_ms": 3, "frame": {"type": "session.hello", ...}}
//! {"conn": 0, "from": "server", "at_ms": 5, "frame": {"type": "session.welcome", ...}}
//! {"conn": 0, "from": "server", "text": "{not json"}
//! {"conn": 0, "from": "server", "binary": 12}
//! {"conn": 0, "from": "server", "event": "close", "code": 1000}
//! ```
//!
//! `conn` numbers a connection (never reused in a log); `frame` is the frame as sent; `text` a text
//! frame that is not JSON (or too deep to be held as JSON); `binary` the size of a binary frame; a
//! close without `code` is a connection that ended without a close frame. `at_ms` (optional) is
//! milliseconds since the start of the log; `replica` (optional) the replica of a clustered backend
//! the connection is on.

use std::io::{BufRead, BufWriter, Read, Write};
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::monitor::Monitor;

/// Which peer sent a record (`from` in the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// The client (the UI, or the runner).
    Client,
    /// The server (the backend).
    Server,
}

/// The one event a record can carry besides frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// The sender closed the connection (or it ended, without `code`).
    Close,
}

/// One line of a wire log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Chatwire wire log record",
    description = "One line of a JSON Lines wire log, read by `chatwire-conformance check-log`: exactly one of frame, text, binary or event."
)]
pub struct WireRecord {
    /// The connection, numbered by the recorder; never reused in one log.
    pub conn: u64,
    /// Which peer sent it.
    pub from: Peer,
    /// Milliseconds since the start of the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// A text frame holding JSON, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Value>,
    /// A text frame as sent, when it is not JSON, is nested too deep to be held as JSON, or would
    /// not be written back the same (`1e3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A binary frame of this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<usize>,
    /// `close`: the sender closed the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Event>,
    /// With `event: close`, the close code; absent when the connection ended without a close frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1000, max = 4999))]
    pub code: Option<u16>,
    /// The replica (0-based) of a clustered backend the connection is on (`run --replicas N`,
    /// N > 1); absent for a single backend. `check-log` does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

fn side(client: bool) -> Peer {
    if client {
        Peer::Client
    } else {
        Peer::Server
    }
}

impl WireRecord {
    fn empty(conn: u64, client: bool) -> Self {
        WireRecord {
            conn,
            from: side(client),
            at_ms: None,
            frame: None,
            text: None,
            binary: None,
            event: None,
            code: None,
            replica: None,
        }
    }

    /// A JSON frame.
    pub fn frame(conn: u64, client: bool, frame: &Value) -> Self {
        WireRecord { frame: Some(frame.clone()), ..Self::empty(conn, client) }
    }

    /// A text frame that is not JSON.
    pub fn text(conn: u64, client: bool, text: &str) -> Self {
        WireRecord { text: Some(text.to_owned()), ..Self::empty(conn, client) }
    }

    /// A binary frame.
    pub fn binary(conn: u64, client: bool, bytes: usize) -> Self {
        WireRecord { binary: Some(bytes), ..Self::empty(conn, client) }
    }

    /// A close (`code: None`: ended without a close frame).
    pub fn close(conn: u64, client: bool, code: Option<u16>) -> Self {
        WireRecord { event: Some(Event::Close), code, ..Self::empty(conn, client) }
    }

    /// The record stamped with `at_ms`.
    pub fn at(self, at_ms: u64) -> Self {
        WireRecord { at_ms: Some(at_ms), ..self }
    }

    /// The record noting the replica its connection is on (`None`: a single backend).
    pub fn on_replica(self, replica: Option<u32>) -> Self {
        WireRecord { replica, ..self }
    }
}

/// Why a wire log line cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a record.
    #[error("line {line}: {message}")]
    Line {
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Longest line `check-log` reads: a frame well above any server's frame limit, but not unbounded.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Parses one line of a wire log.
pub fn parse_line(line: usize, text: &str) -> Result<WireRecord, LogError> {
    let bad = |message: String| LogError::Line { line, message };
    let record: WireRecord = serde_json::from_str(text).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            bad("the record is nested too deeply to read; record such a frame as \"text\"".into())
        } else {
            bad(format!("not a wire log record: {e}"))
        }
    })?;
    let parts = [record.frame.is_some(), record.text.is_some(), record.binary.is_some(), record.event.is_some()];
    if parts.iter().filter(|p| **p).count() != 1 {
        return Err(bad("a record holds exactly one of frame, text, binary or event".into()));
    }
    if record.code.is_some() && record.event.is_none() {
        return Err(bad("code belongs to a close event".into()));
    }
    Ok(record)
}

/// Feeds one record to the monitor.
pub fn feed(monitor: &mut Monitor, seen: &mut std::collections::HashSet<u64>, record: &WireRecord) {
    if seen.insert(record.conn) {
        monitor.open(record.conn);
    }
    match (record.from, &record.frame, &record.text, record.binary, record.event) {
        (Peer::Client, Some(frame), _, _, _) => monitor.client_frame(record.conn, frame),
        (Peer::Client, _, Some(text), _, _) => monitor.client_text(record.conn, text),
        (Peer::Client, _, _, _, Some(Event::Close)) => monitor.client_close(record.conn),
        (Peer::Server, Some(frame), _, _, _) => {
            monitor.server_text(record.conn, &frame.to_string());
        }
        (Peer::Server, _, Some(text), _, _) => {
            monitor.server_text(record.conn, text);
        }
        (Peer::Server, _, _, Some(bytes), _) => monitor.server_binary(record.conn, bytes),
        (Peer::Server, _, _, _, Some(Event::Close)) => monitor.server_close(record.conn, record.code),
        _ => {}
    }
}

/// Reads a wire log from `path` and feeds every record to `monitor`, line by line (a log of any
/// length in bounded memory).
pub fn check_file(path: &Path, monitor: &mut Monitor) -> Result<usize, LogError> {
    let io = |source| LogError::Io { path: path.display().to_string(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut seen = std::collections::HashSet::new();
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        buf.clear();
        let n = (&mut reader).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        line += 1;
        if buf.len() > MAX_LINE_BYTES {
            return Err(LogError::Line { line, message: format!("longer than {MAX_LINE_BYTES} bytes") });
        }
        let text = std::str::from_utf8(&buf)
            .map_err(|_| LogError::Line { line, message: "not UTF-8".into() })?
            .trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let record = parse_line(line, text)?;
        feed(monitor, &mut seen, &record);
    }
    Ok(line)
}

/// Writes a wire log; the first write error is kept and reported by [`WireLog::finish`].
#[derive(Debug)]
pub struct WireLog {
    out: Result<BufWriter<std::fs::File>, std::io::Error>,
}

impl WireLog {
    /// Creates (or truncates) the log at `path`.
    pub fn create(path: &Path) -> Self {
        WireLog { out: std::fs::File::create(path).map(BufWriter::new) }
    }

    /// Appends one record.
    pub fn write(&mut self, record: &WireRecord) {
        if let Ok(w) = self.out.as_mut() {
            let line = serde_json::to_string(record).unwrap_or_default();
            if let Err(e) = writeln!(w, "{line}") {
                self.out = Err(e);
            }
        }
    }

    /// Flushes; the first error, if any.
    pub fn finish(self) -> Result<(), std::io::Error> {
        self.out?.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_lines_say_why() {
        let r = WireRecord::frame(3, true, &serde_json::json!({"type": "chat.user_message"})).at(12);
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(line, r#"{"conn":3,"from":"client","at_ms":12,"frame":{"type":"chat.user_message"}}"#);
        assert_eq!(parse_line(1, &line).unwrap(), r);
        let close = serde_json::to_string(&WireRecord::close(1, false, Some(4002))).unwrap();
        assert_eq!(close, r#"{"conn":1,"from":"server","event":"close","code":4002}"#);
        for (bad, says) in [
            (r#"{"conn":1,"from":"server"}"#, "exactly one"),
            (r#"{"conn":1,"from":"server","frame":{},"text":"x"}"#, "exactly one"),
            (r#"{"conn":1,"from":"both","frame":{}}"#, "not a wire log record"),
            (r#"{"conn":1,"from":"server","frame":{},"code":1000}"#, "close event"),
            (r#"{"conn":-1,"from":"server","frame":{}}"#, "not a wire log record"),
        ] {
            let e = parse_line(7, bad).unwrap_err().to_string();
            assert!(e.starts_with("line 7: ") && e.contains(says), "{bad}: {e}");
        }
    }
}
