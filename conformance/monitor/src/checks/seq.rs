//! `seq` (SEQ-001, SEQ-002): present exactly on the frames of a bound session, strictly growing on
//! a connection, and a resumed session's welcome above every seq seen on it before.

use chatwire_schema::requirements::Level;
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const SEQ_001: ReqId = ReqId::new("SEQ-001");
const SEQ_002: ReqId = ReqId::new("SEQ-002");

/// `seq` grows strictly per session, across reconnects and restarts.
pub static SEQ_INCREASING: CheckDef = CheckDef {
    id: "seq-increasing",
    requirements: &[SEQ_001, SEQ_002],
    summary: "seq is present on every session frame and grows strictly per session, across reconnects",
    level: Level::Must,
};

/// The seq check: the model holds each connection's latest seq and each hello's resume floor.
#[derive(Debug, Default)]
pub(crate) struct Seq;

impl Check for Seq {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let bound = c.session.is_some();
        match cx.frame.seq() {
            Some(seq) => match c.last_seq {
                Some(prev) if seq <= prev => {
                    out.fail(&SEQ_INCREASING, SEQ_001, format!("seq {seq} after seq {prev} on this connection"))
                }
                Some(_) => out.eval(&SEQ_INCREASING, SEQ_001),
                None => {}
            },
            None if bound => out.fail(&SEQ_INCREASING, SEQ_002, "an error on a connection bound to a session has no seq"),
            None => {}
        }
        match cx.frame {
            ServerFrame::Error(e) if bound && e.seq.is_some() => out.eval(&SEQ_INCREASING, SEQ_002),
            ServerFrame::Welcome(w) => {
                let Some(floor) = c.hello.as_ref().and_then(|h| h.resume_floor) else { return };
                if w.seq <= floor {
                    out.fail(
                        &SEQ_INCREASING,
                        SEQ_001,
                        format!(
                            "the resumed session's welcome has seq {}, not above {floor} seen before reconnecting",
                            w.seq
                        ),
                    );
                } else {
                    out.eval(&SEQ_INCREASING, SEQ_001);
                }
            }
            _ => {}
        }
    }
}
