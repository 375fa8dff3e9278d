//! Errors and closes: `fatal` matches the code (ERROR-002), nothing follows a fatal error and the
//! close code is the one the spec gives for it (TRANSPORT-008), and a non-fatal error leaves the
//! connection open (ERROR-003).

use std::collections::HashMap;

use chatwire_schema::requirements::Level;
use chatwire_schema::transport::CloseCode;
use chatwire_schema::{ErrorCode, ReqId, ServerFrame};

use crate::check::{Check, CloseCx, ServerCx};
use crate::finding::{CheckDef, Out};

const ERROR_002: ReqId = ReqId::new("ERROR-002");
const ERROR_003: ReqId = ReqId::new("ERROR-003");
const TRANSPORT_008: ReqId = ReqId::new("TRANSPORT-008");

/// `fatal` matches the error code; nothing but the right close follows a fatal error.
pub static ERRORS_WELL_FORMED: CheckDef = CheckDef {
    id: "fatal-errors-close",
    requirements: &[ERROR_002, TRANSPORT_008],
    summary: "an error's fatal flag matches its code, no frame follows a fatal error, and the close carries the code's close code",
    level: Level::Must,
};

/// A non-fatal error keeps the connection open.
pub static NONFATAL_KEEPS_OPEN: CheckDef = CheckDef {
    id: "nonfatal-errors-keep-open",
    requirements: &[ERROR_003],
    summary: "after a non-fatal error the server keeps the connection open",
    level: Level::Must,
};

/// Close codes a server may use without any error before them: the server shuts down (1001,
/// TRANSPORT-009, TRANSPORT-011), no hello in time (1008, TRANSPORT-012), a message above the hard
/// cap (1009, TRANSPORT-007), the peer broke the WebSocket protocol (1002, 1007), the peer does not
/// read (4008, TRANSPORT-016).
const CLOSES_WITHOUT_ERROR: &[CloseCode] = &[
    CloseCode::GoingAway,
    CloseCode::PolicyViolation,
    CloseCode::MessageTooBig,
    CloseCode::ProtocolError,
    CloseCode::InvalidPayload,
    CloseCode::SendQueueOverflow,
];

/// The errors each connection got: the fatal one after which nothing but its close may come, and
/// the last non-fatal one (the connection must stay open after it).
#[derive(Debug, Default)]
pub(crate) struct Errors {
    got: HashMap<u64, Got>,
}

#[derive(Debug, Default)]
struct Got {
    fatal: Option<ErrorCode>,
    nonfatal: Option<ErrorCode>,
}

impl Check for Errors {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let got = self.got.entry(cx.conn).or_default();
        if let Some(fatal) = got.fatal {
            frame_after_fatal(fatal, out);
        }
        if let ServerFrame::Error(e) = cx.frame {
            error_frame(e.code, e.fatal, out);
            if e.fatal {
                got.fatal = Some(e.code);
            } else {
                got.nonfatal = Some(e.code);
            }
        }
    }

    fn on_close(&mut self, cx: &CloseCx<'_>, out: &mut Out) {
        let got = self.got.get(&cx.conn).map_or((None, None), |g| (g.fatal, g.nonfatal));
        let (fatal, nonfatal) = got;
        match cx.server_code {
            Some(code) => server_close(code, fatal, nonfatal, out),
            // Closed by the client (or at the end of the run) with the connection still open.
            None if nonfatal.is_some() && fatal.is_none() => kept_open(out),
            None => {}
        }
    }
}

/// Checks an error frame's `fatal` flag.
fn error_frame(code: ErrorCode, fatal: bool, out: &mut Out) {
    if fatal == code.is_fatal() {
        out.eval(&ERRORS_WELL_FORMED, ERROR_002);
    } else {
        out.fail(
            &ERRORS_WELL_FORMED,
            ERROR_002,
            format!("error {code} has fatal={fatal}, the spec says {}", code.is_fatal()),
        );
    }
}

/// A frame arrived after the fatal error `fatal`.
fn frame_after_fatal(fatal: ErrorCode, out: &mut Out) {
    out.fail(&ERRORS_WELL_FORMED, TRANSPORT_008, format!("a frame followed the fatal error {fatal}"));
}

/// The server ended the connection: with `code` from its close frame, or without one (`None`).
/// `fatal` is the fatal error sent before, `nonfatal` the last non-fatal one sent on the connection.
fn server_close(code: Option<u16>, fatal: Option<ErrorCode>, nonfatal: Option<ErrorCode>, out: &mut Out) {
    let shown = code.map_or("no close code".to_owned(), |c| format!("close code {c}"));
    if let Some(fatal) = fatal {
        let want = fatal.close_code().map_or(0, CloseCode::code);
        if code == Some(want) {
            out.eval(&ERRORS_WELL_FORMED, TRANSPORT_008);
        } else {
            out.fail(
                &ERRORS_WELL_FORMED,
                TRANSPORT_008,
                format!("after the fatal error {fatal} the server closed with {shown}, not {want}"),
            );
        }
        return;
    }
    if let Some(error) = nonfatal {
        if code.and_then(CloseCode::from_code).is_some_and(|c| CLOSES_WITHOUT_ERROR.contains(&c)) {
            return;
        }
        out.fail(
            &NONFATAL_KEEPS_OPEN,
            ERROR_003,
            format!("the server ended the connection ({shown}) after the non-fatal error {error}"),
        );
    }
}

/// A connection on which a non-fatal error was sent is still open when it is closed by the client
/// or at the end of the run: the server kept it open.
fn kept_open(out: &mut Out) {
    out.eval(&NONFATAL_KEEPS_OPEN, ERROR_003);
}
