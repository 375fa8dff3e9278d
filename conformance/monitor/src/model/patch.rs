//! The patch oracle (since 1.1): every `ui_state_patch` is applied (RFC 6902, all or nothing, the
//! json-patch crate) to the state of the frame its `base_seq` names, and the result compared with
//! the reducer's fold, the differential oracle extended to patches.
//!
//! - A patch after an event: `base_seq` is the seq of the connection's latest state frame
//!   (STATE-037); its shape keeps to the events since that state (`state_patch::check_shape`,
//!   STATE-039/040); applied, it gives exactly the reducer's state (STATE-038).
//! - A catch-up patch, the frame right after a resume welcome: only where `resume_catch_up` is in
//!   force and `last_seq` named a state frame within the retention (RESUME-018), with `base_seq`
//!   equal to that `last_seq`, applying to the state of that frame (RESUME-017). Its result must be
//!   the session's effective state (RESUME-019): the monitor compares it with the latest state a
//!   connection here held in the resumed connection's view wherever no seq between that state and
//!   the welcome is unknown to it (another attached connection saw every change, or nothing
//!   changed: `known_at_welcome`). Where the client missed events no connection here received,
//!   the driver proves it by comparing with a snapshot (the reconnect sweep, and `resume` with
//!   `compare_with_snapshot`). A windowed connection's catch-up is `super::window`'s (WINDOW-012).
//!
//! Where patches are in force, a patch is due wherever an update would be (STATE-036, judged with
//! the flow of state frames in `crate::checks::flow`), except after a delta: a delta is its own
//! state change, followed by no state frame, and counts as a state frame itself, so the next
//! patch's `base_seq` and a catch-up's `last_seq` may name it (STREAM-002).

use chatwire_schema::requirements::Level;
use chatwire_schema::state_patch::check_shape;
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::ReqId;

use super::held::{CatchUpWindow, Held, SeqKinds, SinceState};
use super::oracle::StateOracle;
use super::shared::SharedState;
use crate::finding::{CheckDef, Out};
use crate::normalize::Normalizer;
use crate::redact::divergence;

const STATE_037: ReqId = ReqId::new("STATE-037");
const STATE_038: ReqId = ReqId::new("STATE-038");
const STATE_039: ReqId = ReqId::new("STATE-039");
const STATE_040: ReqId = ReqId::new("STATE-040");
const RESUME_017: ReqId = ReqId::new("RESUME-017");
const RESUME_018: ReqId = ReqId::new("RESUME-018");
const RESUME_019: ReqId = ReqId::new("RESUME-019");

/// Every patch applies to its base and gives the reducer's state.
pub static PATCH_MATCHES_REDUCER: CheckDef = CheckDef {
    id: "patch-matches-reducer",
    requirements: &[STATE_037, STATE_038, STATE_039, STATE_040],
    summary: "every ui_state_patch names the latest state as its base, guards and touches only what its events name, and applied to that state gives the reducer's fold",
    level: Level::Must,
};

/// A resume gets a catch-up patch only where it may, built from the state of `last_seq`, giving
/// the session's state.
pub static CATCH_UP_RESUME: CheckDef = CheckDef {
    id: "catch-up-resume",
    requirements: &[RESUME_017, RESUME_018, RESUME_019],
    summary: "a catch-up patch comes exactly where resume_catch_up is in force and last_seq named a state frame within the retention (no snapshot there), with base_seq = last_seq, applies to that state and, where the monitor knows the session's state, gives it",
    level: Level::Must,
};

/// A patch after an event. `state_seq` is the seq of the connection's latest state frame, `held`
/// that frame's state, `since` the events since it (`None`: the change came from frames sent to
/// another attached connection that no connection here received, so the patch is taken as given,
/// `ATTACH-004`). Returns the state the client holds after it: the patched state, or where the
/// patch does not apply the reducer's (so one defect is reported once).
pub(crate) fn after_event(
    p: &UiStatePatch,
    state_seq: Option<u64>,
    held: Option<&Held>,
    since: Option<&SinceState>,
    oracle: &mut StateOracle,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> Option<SharedState> {
    match state_seq {
        Some(seq) if seq == p.base_seq => out.eval(&PATCH_MATCHES_REDUCER, STATE_037),
        Some(seq) => out.fail(
            &PATCH_MATCHES_REDUCER,
            STATE_037,
            format!("base_seq {} is not {seq}, the seq of the latest state frame on this connection", p.base_seq),
        ),
        None => {}
    }
    // The base is the state the client holds, whatever base_seq claims.
    let base = held?;
    let Some(since) = since else {
        // The change came from answers sent to another connection that this monitor has not seen
        // (ATTACH-004): the patch is taken as given; the attached views' agreement judges it.
        let patched = base.state.apply(&p.patch);
        if let Err(e) = &patched {
            out.fail(&PATCH_MATCHES_REDUCER, STATE_038, e.clone());
        }
        let (patched, _) = patched.ok()?;
        oracle.snapshot(&patched.to_state());
        return Some(patched);
    };
    if let Some(events) = since.events() {
        match check_shape(&base.state, &events, &p.patch) {
            Ok(()) => {
                out.eval(&PATCH_MATCHES_REDUCER, STATE_039);
                out.eval(&PATCH_MATCHES_REDUCER, STATE_040);
            }
            // A path that does not exist is the application's to report (STATE-038), once.
            Err(e) if e.requirement == STATE_038.as_str() => {}
            Err(e) => {
                let requirement =
                    ReqId::parse(e.requirement).ok().filter(|r| PATCH_MATCHES_REDUCER.requirements.contains(r));
                out.fail(&PATCH_MATCHES_REDUCER, requirement.unwrap_or(STATE_038), e.to_string());
            }
        }
    }
    match base.state.apply(&p.patch) {
        Ok((patched, low)) => {
            match oracle.adopt_shared(&patched, base.seq, low, redactor) {
                Some(diff) => out.fail(
                    &PATCH_MATCHES_REDUCER,
                    STATE_038,
                    format!("the patched state differs from the reducer's fold of the events received (expected = reducer):\n{diff}"),
                ),
                None if oracle.expected().is_some() => out.eval(&PATCH_MATCHES_REDUCER, STATE_038),
                None => {}
            }
            Some(patched)
        }
        Err(e) => {
            out.fail(&PATCH_MATCHES_REDUCER, STATE_038, e);
            oracle.shared_from(base)
        }
    }
}

/// The frame right after a resume welcome is a patch; `held` is the state of the resume's
/// `last_seq`, `known` the session's state at the welcome where the monitor knows it
/// ([`known_at_welcome`]). Returns the state the client holds after it, when the monitor knows it:
/// the patched state, or where it differs from `known`, `known` (the server's state, so the wrong
/// catch-up is charged once, under RESUME-019, and not again by every later patch).
pub(crate) fn catch_up(
    p: &UiStatePatch,
    window: &CatchUpWindow,
    held: Option<&Held>,
    known: Option<&Held>,
    kinds: &SeqKinds,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> Option<SharedState> {
    let last = window.last_seq;
    if !window.in_force {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            "a ui_state_patch in place of the snapshot, but resume_catch_up is not in force on this connection",
        );
    } else if kinds.is_known_non_state(last) {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            format!("a catch-up patch, but the resume's last_seq {last} names a frame that carried no state"),
        );
    } else if let Some(limit) = window.retention.filter(|r| kinds.events_after(last) > *r as usize) {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            format!(
                "a catch-up patch, but at least {} events were committed after last_seq {last} (resume_retention {limit})",
                kinds.events_after(last)
            ),
        );
    } else {
        out.eval(&CATCH_UP_RESUME, RESUME_018);
    }
    if p.base_seq == last {
        out.eval(&CATCH_UP_RESUME, RESUME_017);
    } else {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_017,
            format!("the catch-up patch has base_seq {}, not the resume's last_seq {last}", p.base_seq),
        );
    }
    let base = held?;
    let state = match base.state.apply(&p.patch) {
        Ok((state, _)) => {
            out.eval(&CATCH_UP_RESUME, RESUME_017);
            state
        }
        Err(e) => {
            out.fail(
                &CATCH_UP_RESUME,
                RESUME_017,
                format!("the catch-up patch does not apply to the state of last_seq {last}: {e}"),
            );
            // Charged once: the client goes on from the server's state where the monitor knows it.
            return known.map(|k| k.state.clone());
        }
    };
    let Some(known) = known else { return Some(state) };
    match divergence(&known.state.to_state(), &state.to_state(), redactor) {
        None => {
            out.eval(&CATCH_UP_RESUME, RESUME_019);
            Some(state)
        }
        Some(diff) => {
            out.fail(
                &CATCH_UP_RESUME,
                RESUME_019,
                format!(
                    "the catch-up patch from last_seq {last} gives a state other than the session's, which the state of seq {} shows with nothing changed since (expected = session):\n{diff}",
                    known.seq
                ),
            );
            Some(known.state.clone())
        }
    }
}
