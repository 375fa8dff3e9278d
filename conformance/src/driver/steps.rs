//! Carrying out one step of a scenario: the dispatch from the scenario format's [`Step`] to the
//! driver's operations in the other files of `driver/`.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::expect::CloseAllowance;
use super::outcome::{unexpected, Next, StepError};
use super::{Driver, Handshake};
use crate::pattern;
use crate::scenario::{Step, DEFAULT_CONN};
use crate::wirelog::WireRecord;

impl Driver<'_> {
    pub(super) async fn run_step(&mut self, step: &Step) -> Result<(), StepError> {
        let conn = step.conn().unwrap_or(DEFAULT_CONN).to_owned();
        self.step_replica = step.opens_on().map(|k| k as usize);
        match step {
            Step::Connect { versions, features, with_script, hello, subprotocol, window, .. } => {
                // The runner's features go with the runner's offer; a step's own offer sends the
                // step's features only (SESSION-014).
                let features = match versions {
                    Some(_) => features.clone(),
                    None => features.clone().or_else(|| self.cfg.features.clone()),
                };
                let own_offer = versions.is_some();
                let versions = versions.clone().unwrap_or_else(|| self.cfg.versions.clone());
                let window = self.window_of(*window);
                let handshake = Handshake {
                    hello: *hello,
                    subprotocol: *subprotocol,
                    with_script: *with_script,
                    own_offer,
                    window,
                };
                self.connect(&conn, handshake, versions, features, None).await
            }
            Step::Resume { last_seq, cursor, answer, compare_with_snapshot, takeover, window, .. } => {
                // A reload holds no state: it names none, and gets the snapshot.
                let last_seq = if self.cfg.reload_resumes && step.is_default_resume() { Some(0) } else { *last_seq };
                let last_seq = &last_seq;
                let cursor = last_seq.map_or(*cursor, |_| None);
                let window = self.window_of(*window);
                self.resume(&conn, *last_seq, cursor, *answer, *takeover, window).await?;
                if *compare_with_snapshot {
                    self.compare_catch_up_with_snapshot(&conn).await?;
                }
                Ok(())
            }
            Step::PageThrough { limit, .. } => self.page_through(&conn, *limit).await,
            Step::PauseReading { ms, scaled, .. } => {
                self.conn_mut(&conn)?;
                let pause =
                    if *scaled { self.cfg.scaled(Duration::from_millis(*ms)) } else { Duration::from_millis(*ms) };
                self.transcript(format!("{conn} || pause reading"));
                self.log(format!("{conn} || not reading for {} ms", pause.as_millis()));
                tokio::time::sleep_until((Instant::now() + pause).min(self.deadline)).await;
                Ok(())
            }
            Step::ExpectState { state, items, .. } => self.expect_state(&conn, state, *items),
            Step::Disconnect { .. } => {
                let deadline = self.step_deadline(None);
                self.conn_mut(&conn)?;
                self.close_conn(&conn, deadline).await;
                self.transcript(format!("{conn} x disconnect"));
                self.log(format!("{conn} x disconnect"));
                Ok(())
            }
            Step::Restart { graceful: false, down_ms } => {
                let names: Vec<String> = self.conns.keys().cloned().collect();
                for name in names {
                    self.drop_conn(&name);
                }
                self.restarted = true;
                let down = Duration::from_millis(down_ms.unwrap_or(0));
                let line = match down_ms {
                    Some(ms) => format!("-- restart (kill -9, down {ms} ms) --"),
                    None => "-- restart (kill -9) --".to_owned(),
                };
                self.transcript(line.clone());
                self.log(line);
                self.endpoint.restart(down).await
            }
            Step::Restart { graceful: true, .. } => self.graceful_restart().await,
            Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. } => self.replica_step(step).await,
            Step::UserMessage { id, text, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("u"),
                };
                self.send_value(&conn, json!({"type": "chat.user_message", "id": id, "text": text}), true).await
            }
            Step::Respond { id, tool_call, outcome, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("r"),
                };
                let frame =
                    json!({"type": "chat.tool_call_response", "id": id, "tool_call_id": tool_call, "outcome": outcome});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Rewind { id, before, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("w"),
                };
                let frame = json!({"type": "chat.rewind", "id": id, "before_invocation_id": before});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Retry { id, after_item, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("y"),
                };
                let frame = json!({"type": "chat.retry", "id": id, "after_item_id": after_item});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Cancel { id, invocation, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("x"),
                };
                let frame = json!({"type": "chat.cancel", "id": id, "invocation_id": invocation});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Send { frame, may_fail, .. } => {
                let frame = self.substitute(&conn, frame)?;
                match self.send_value(&conn, frame, false).await {
                    Err(e) if *may_fail => {
                        self.log(format!("{conn}: the frame could not be sent, as allowed: {}", e.message));
                        Ok(())
                    }
                    sent => sent,
                }
            }
            Step::SendText { text, .. } => {
                // A text holding a JSON object is tracked like any sent frame (its id, a hello's
                // offer) but sent exactly as written, so spellings such as `1e3` reach the server.
                let object = serde_json::from_str::<Value>(text).ok().filter(Value::is_object);
                let deadline = self.step_deadline(None);
                let wire = object.as_ref().and_then(|v| v.get("type")).and_then(Value::as_str).unwrap_or("(no type)");
                self.transcript(match object {
                    Some(_) => format!("{conn} > {wire}"),
                    None => format!("{conn} > text"),
                });
                self.log(format!("{conn} > {}", pattern::truncate(text, 200)));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = object.as_ref().and_then(|v| v.get("id")).and_then(Value::as_str).map(str::to_owned);
                let id = c.id;
                let sent = c.ws.send_text(text.clone(), deadline).await;
                // The log keeps the text as written unless its JSON form is the same text.
                self.wire_record(match &object {
                    Some(v) if serde_json::to_string(v).is_ok_and(|json| json == *text) => {
                        WireRecord::frame(id, true, v)
                    }
                    _ => WireRecord::text(id, true, text),
                });
                self.monitor.client_text(id, text);
                sent.map_err(|e| self.cannot_send(&e))
            }
            Step::SendViolation { violation, .. } => {
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > violation"));
                self.log(format!("{conn} > frame breaking RFC 6455: {}", violation.describe()));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                let sent = c.ws.send_violation(*violation, deadline).await;
                sent.map_err(|e| self.cannot_send(&e))
            }
            Step::SendBinary { bytes, .. } => {
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > binary"));
                self.log(format!("{conn} > binary ({bytes} bytes)"));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                let id = c.id;
                let sent = c.ws.send_binary(vec![0; *bytes], deadline).await;
                self.wire_record(WireRecord::binary(id, true, *bytes));
                sent.map_err(|e| self.cannot_send(&e))
            }
            Step::Ping { payload, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.ping(&conn, payload, deadline).await
            }
            Step::Expect { frame, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.expect_one(&conn, frame, deadline, true).await
            }
            Step::ExpectUnordered { frames, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.expect_unordered(&conn, frames, deadline).await
            }
            Step::ExpectError { code, in_reply_to, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                let reply = match in_reply_to {
                    Some(p) => Value::String(p.clone()),
                    None => match self.conn_mut(&conn)?.last_sent_id.clone() {
                        Some(id) => Value::String(id),
                        None => Value::String(format!("{{{{{}}}}}", pattern::ABSENT)),
                    },
                };
                let pattern =
                    json!({"type": "error", "code": code.as_str(), "fatal": code.is_fatal(), "in_reply_to": reply});
                self.expect_one(&conn, &pattern, deadline, true).await
            }
            Step::ExpectClose { code, timeout_ms, after_frames, max_bytes, drop_allowed_after_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                let allowance = CloseAllowance {
                    after_frames: *after_frames,
                    max_bytes: *max_bytes,
                    drop_allowed_after: drop_allowed_after_ms.map(Duration::from_millis),
                };
                self.expect_close(&conn, *code, allowance, deadline).await
            }
            Step::ExpectSilence { ms, .. } => {
                let deadline = (Instant::now() + Duration::from_millis(*ms)).min(self.deadline);
                match self.next(&conn, deadline).await? {
                    Next::Deadline => Ok(()),
                    Next::Frame(v) => {
                        let excerpt = self.redact(&v);
                        Err(StepError::fail(format!("expected no frame for {ms} ms")).with_frame(Some(excerpt)))
                    }
                    Next::NotJson(raw) => {
                        let excerpt = self.redact_text(&raw);
                        Err(StepError::fail(format!("expected no frame for {ms} ms")).with_frame(Some(excerpt)))
                    }
                    other => Err(unexpected(other, "silence")),
                }
            }
            Step::WaitIdle { quiet_ms, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.wait_idle(&conn, Duration::from_millis(quiet_ms.unwrap_or(200)), deadline).await
            }
            Step::AttachToBound { prefix, .. } => self.attach_to_bound(prefix).await,
            Step::Drain { bytes, quiet_ms, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.drain(&conn, *bytes, quiet_ms.map(Duration::from_millis), deadline).await
            }
            Step::Sleep { ms } => {
                tokio::time::sleep_until((Instant::now() + Duration::from_millis(*ms)).min(self.deadline)).await;
                Ok(())
            }
            Step::Snapshot { name, .. } => self.snapshot(&conn, name),
        }
    }
}
