"""SQLite persistence of the template backend: one row per session and its log.

Every change of a session is one transaction (`Store.commit`), and the backend commits before it
sends (RESUME-011): the frames a client saw are always in the database. WAL with
`synchronous=NORMAL` survives a crash of the process (SIGKILL), which is what the conformance
runner's restart scenarios do; use `synchronous=FULL` if power loss matters to you.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    agent TEXT NOT NULL,       -- {"kind": "script", "script": ...} or {"kind": "echo"}
    state TEXT NOT NULL,       -- the effective UiState
    next_seq INTEGER NOT NULL, -- the seq the next frame gets (SEQ-001)
    turns INTEGER NOT NULL,    -- user messages accepted so far, rewound ones included (SCRIPT-004)
    cursor TEXT                -- the turn in progress and its next decision (SCRIPT-014), or NULL
);
CREATE TABLE IF NOT EXISTS accepted_messages (
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (session_id, message_id)
);
-- Every request and event, including those a rewind removed from the effective state (REWIND-005).
CREATE TABLE IF NOT EXISTS log (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    seq INTEGER,
    kind TEXT NOT NULL,
    frame TEXT NOT NULL
);
-- The seqs of the frames that carried a state (snapshots, updates, patches, deltas): the only
-- valid bases of a catch-up (RESUME-017, RESUME-018). `streams`: whether every connection the frame
-- went to saw streams, so that a frame sent while a stream was open is a base for a streaming
-- resume (STREAM-006): a delta, and the snapshot or catch-up a streaming connection got when it
-- resumed mid-stream.
CREATE TABLE IF NOT EXISTS state_frames (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    streams INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, seq)
);
-- Deadlines of pending calls, in wall-clock milliseconds, so they survive a restart (TOOL-019).
CREATE TABLE IF NOT EXISTS timers (
    session_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    deadline_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, tool_call_id)
);
"""

_KEEP: Any = object()


@dataclass
class SessionRow:
    """A session as stored."""

    id: str
    token_hash: str
    agent: JsonObject
    state: JsonObject
    next_seq: int
    turns: int
    cursor: JsonObject | None
    accepted: set[str]


@dataclass
class Commit:
    """One transaction's worth of change to a session."""

    next_seq: int
    state: JsonObject | None = None
    turns: int | None = None
    cursor: Any = _KEEP  # a dict, None (no turn in progress) or _KEEP
    events: list[JsonObject] = field(default_factory=list)
    requests: list[JsonObject] = field(default_factory=list)
    accepted_message: str | None = None
    add_timers: dict[str, int] = field(default_factory=dict)
    remove_timers: list[str] = field(default_factory=list)
    state_seqs: list[int] = field(default_factory=list)
    #: Those of `state_seqs` that went only to connections that see streams (STREAM-006).
    streamed_state_seqs: list[int] = field(default_factory=list)


@dataclass
class CatchUpLog:
    """What the log holds for a catch-up from `last_seq` (`Store.catch_up_log`)."""

    #: The events committed up to `last_seq`: they fold to the state of that frame.
    before: list[JsonObject]
    #: The events committed after it.
    after: list[JsonObject]
    #: Whether every connection the frame of `last_seq` went to saw streams (STREAM-006).
    streamed: bool


class Store:
    """The database of one backend instance."""

    def __init__(self, path: str) -> None:
        # isolation_level=None: transactions are opened explicitly with BEGIN IMMEDIATE.
        self._db = sqlite3.connect(path, isolation_level=None, timeout=5.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        columns = {str(row[1]) for row in self._db.execute("PRAGMA table_info(state_frames)")}
        if "streams" not in columns:  # a database of an older template: its frames say no (a snapshot)
            self._db.execute("ALTER TABLE state_frames ADD COLUMN streams INTEGER NOT NULL DEFAULT 0")

    def close(self) -> None:
        self._db.close()

    def create_session(self, row: SessionRow, snapshot_seq: int) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT INTO sessions (id, token_hash, agent, state, next_seq, turns, cursor) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (row.id, row.token_hash, json.dumps(row.agent), json.dumps(row.state), row.next_seq, row.turns),
            )
            self._db.execute("INSERT INTO state_frames (session_id, seq) VALUES (?, ?)", (row.id, snapshot_seq))

    def load_session(self, session_id: str) -> SessionRow | None:
        found = self._db.execute(
            "SELECT token_hash, agent, state, next_seq, turns, cursor FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if found is None:
            return None
        token_hash, agent, state, next_seq, turns, cursor = found
        accepted = {m for (m,) in self._db.execute("SELECT message_id FROM accepted_messages WHERE session_id = ?", (session_id,))}
        return SessionRow(
            id=session_id,
            token_hash=str(token_hash),
            agent=json.loads(agent),
            state=json.loads(state),
            next_seq=int(next_seq),
            turns=int(turns),
            cursor=json.loads(cursor) if cursor is not None else None,
            accepted=accepted,
        )

    def deadlines(self, session_id: str) -> dict[str, int]:
        """The deadline of each pending call of the session, in wall-clock milliseconds."""
        rows = self._db.execute("SELECT tool_call_id, deadline_ms FROM timers WHERE session_id = ?", (session_id,))
        return {str(call): int(deadline) for call, deadline in rows}

    def sessions_with_unfinished_work(self) -> list[str]:
        """Sessions whose run was in progress or that have deadlines: a restart must pick them up."""
        rows = self._db.execute(
            "SELECT id FROM sessions WHERE json_extract(state, '$.run.status') = 'running' "
            "UNION SELECT DISTINCT session_id FROM timers"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def catch_up_log(self, session_id: str, last_seq: int, retention: int) -> CatchUpLog | None:
        """The events up to `last_seq` and those after it, or None when `last_seq` carried no
        state or more than `retention` events came after it (RESUME-018)."""
        db = self._db
        frame = db.execute("SELECT streams FROM state_frames WHERE session_id = ? AND seq = ?", (session_id, last_seq)).fetchone()
        if frame is None:
            return None
        (missed,) = db.execute("SELECT COUNT(*) FROM log WHERE session_id = ? AND kind = 'event' AND seq > ?", (session_id, last_seq)).fetchone()
        if int(missed) > retention:
            return None
        rows = db.execute("SELECT seq, frame FROM log WHERE session_id = ? AND kind = 'event' ORDER BY seq", (session_id,))
        before: list[JsonObject] = []
        after: list[JsonObject] = []
        for seq, frame in rows:
            (before if int(seq) <= last_seq else after).append(json.loads(frame))
        return CatchUpLog(before=before, after=after, streamed=bool(frame[0]))

    def turn_and_retries(self, session_id: str, invocation_id: str) -> tuple[int, int]:
        """For the turn of `invocation_id`: which accepted message opened it (SCRIPT-004) and how
        many retries of it were accepted (SCRIPT-020), counted over the log, across restarts."""
        rows = self._db.execute(
            "SELECT json_extract(frame, '$.type'), json_extract(frame, '$.invocation_id') FROM log WHERE session_id = ? "
            "AND kind = 'event' AND json_extract(frame, '$.type') IN ('chat.user_message_accepted', 'chat.retry_accepted') ORDER BY n",
            (session_id,),
        )
        accepted = 0
        turn = retries = -1
        for frame_type, invocation in rows:
            if frame_type == "chat.user_message_accepted":
                if invocation == invocation_id:
                    turn, retries = accepted, 0
                accepted += 1
            elif invocation == invocation_id:
                retries += 1
        return turn, retries

    def commit(self, session_id: str, change: Commit) -> None:
        with self._transaction():
            db = self._db
            db.execute("UPDATE sessions SET next_seq = ? WHERE id = ?", (change.next_seq, session_id))
            if change.state is not None:
                db.execute("UPDATE sessions SET state = ? WHERE id = ?", (json.dumps(change.state), session_id))
            if change.turns is not None:
                db.execute("UPDATE sessions SET turns = ? WHERE id = ?", (change.turns, session_id))
            if change.cursor is not _KEEP:
                cursor = json.dumps(change.cursor) if change.cursor is not None else None
                db.execute("UPDATE sessions SET cursor = ? WHERE id = ?", (cursor, session_id))
            if change.accepted_message is not None:
                db.execute("INSERT INTO accepted_messages VALUES (?, ?)", (session_id, change.accepted_message))
            for request in change.requests:
                db.execute("INSERT INTO log (session_id, seq, kind, frame) VALUES (?, NULL, 'request', ?)", (session_id, json.dumps(request)))
            for event in change.events:
                db.execute(
                    "INSERT INTO log (session_id, seq, kind, frame) VALUES (?, ?, 'event', ?)",
                    (session_id, event["seq"], json.dumps(event)),
                )
            for call, deadline in change.add_timers.items():
                db.execute("INSERT OR REPLACE INTO timers VALUES (?, ?, ?)", (session_id, call, deadline))
            for seq in change.state_seqs:
                db.execute(
                    "INSERT OR IGNORE INTO state_frames (session_id, seq, streams) VALUES (?, ?, ?)",
                    (session_id, seq, seq in change.streamed_state_seqs),
                )
            for call in change.remove_timers:
                db.execute("DELETE FROM timers WHERE session_id = ? AND tool_call_id = ?", (session_id, call))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


KEEP_CURSOR: Any = _KEEP
