#!/usr/bin/env python3
"""A Chatwire backend template: asyncio + websockets + SQLite, built on the `chatwire` package.

    python server.py --port 8080 --db chat.sqlite3 [--conformance] [--versions 1.3,1.2,1.1,1.0]

It speaks protocol 1.3 (reasoning and usage; not subagents), 1.2, 1.1 and 1.0 and passes the whole conformance suite (`chatwire-conformance run
--exec ...`, see the README's "Testing your backend"); `--versions 1.0` makes it a 1.0-only
backend. This file is the transport; negotiation.py decides what each connection speaks,
sessions.py answers the client, turns.py plays the agent, core.py commits and sends, store.py
persists. Replace `Turns.plan` in turns.py with your model.

The websockets traps this file avoids, each marked where it is handled:
  * max_size: websockets refuses messages over 1 MiB by default by closing with 1009, so the
    suite's over-limit frame never reaches the code that must answer `frame_too_large`
    (TRANSPORT-006). The cap is raised to 16 x max_frame_bytes (TRANSPORT-007) and the limit
    is checked here.
  * subprotocols: websockets' `subprotocols=["chatwire.v1"]` refuses a handshake that offers no
    subprotocol with HTTP 400; TRANSPORT-004 requires accepting it, so `select_subprotocol` decides.
  * pings: websockets' keepalive closes with 1011 when a pong is late; it is off, and an idle
    connection gets our own ping (TRANSPORT-011). A ping waits behind every byte the client is
    owed, so a slow reader answers it late: the connection is closed, with 1001 and nothing
    queued before it, only when it answered no ping *and* took no byte for a whole period
    (TRANSPORT-019, TRANSPORT-020; the kernel's count of bytes the peer acknowledged). Pongs to
    the client's pings are automatic (TRANSPORT-010).
  * commit before send: frames go to a bounded per-connection outbox only after the store has
    committed them (sessions.Hub.emit), so a crash never shows a client an event the database lost.
  * send queue: `ws.send` only waits while the client does not read, so without a bound of our own
    every frame for a stalled client piles up in memory. The outbox counts its bytes; a frame that
    would pass SEND_QUEUE_MAX_BYTES is not queued and the connection is closed with 4008
    (TRANSPORT-016). The session stays as after a dropped connection: the client resumes and gets
    the state from the store (TRANSPORT-017).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence
from typing import Any, Final

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from chatwire import FrameError, parse_json, validate_client_frame
from chatwire.facts import (
    CLOSE_CODES,
    DEFAULT_MAX_FRAME_BYTES,
    FATAL_CLOSE_CODES,
    HARD_CAP_FACTOR,
    ID_PATTERN,
    MIN_MAX_FRAME_BYTES,
    REFUSED_RESUMES_PER_CONNECTION,
    SEND_QUEUE_MAX_BYTES,
    SUBPROTOCOL,
)
from core import Refusal, Session
from fanout import dumps
from negotiation import TEMPLATE_VERSIONS, Negotiated, response_schema_error, undefined_hello_members
from sessions import Hub
from store import Store

HELLO_DEADLINE_S: Final = 30.0  # TRANSPORT-012
IDLE_PING_S: Final = 30.0  # TRANSPORT-011
WRITE_TIMEOUT_S: Final = 10.0
CLOSE_HANDSHAKE_S: Final = 5.0  # TRANSPORT-016: after this a 4008 close drops the TCP connection
UNRESPONSIVE_CLOSE_S: Final = 2.0  # TRANSPORT-020: for the 1001 close, then as long for its reply
# struct tcp_info (linux/tcp.h): tcpi_bytes_acked, a u64 at byte 120 (Linux 4.1 and later).
_TCPI_BYTES_ACKED: Final = struct.Struct("=Q")
_TCPI_BYTES_ACKED_AT: Final = 120
# Flow control: a turn waits while more than PACE_BYTES are unsent, unless the client took nothing
# for STALLED_S, which is a client that stopped reading (it is left to the send-queue bound).
PACE_BYTES: Final = SEND_QUEUE_MAX_BYTES // 4
STALLED_S: Final = 1.0
OUTBOX_CAPACITY: Final = 4096
_ID: Final = re.compile(ID_PATTERN)


def select_subprotocol(_ws: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
    """Selects chatwire.v1 when offered (TRANSPORT-003) and accepts a handshake that offers
    nothing (TRANSPORT-004). websockets' own `subprotocols=[...]` answers HTTP 400 to the latter."""
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in offered else None


class Connection:
    """One WebSocket connection: a bounded outbox drained by a writer task, and the reader."""

    def __init__(self, ws: ServerConnection, hub: Hub, idle_ping_s: float = IDLE_PING_S) -> None:
        self.ws = ws
        self.hub = hub
        self.idle_ping_s = idle_ping_s
        self.session: Session | None = None
        # Until a hello is accepted: the newest version spoken, which decides which types exist (ERROR-007).
        self.negotiated = Negotiated(hub.versions[0], None)
        self.closing = False
        self.last_heard = time.monotonic()
        self.refused_resumes = 0
        self.outbox: asyncio.Queue[str | tuple[int, str]] = asyncio.Queue(OUTBOX_CAPACITY)
        # Bytes of the frames in the outbox and the one being written: what the client has not taken.
        self.unsent_bytes = 0
        self.taken = asyncio.Event()  # set by the writer each time the client takes a frame
        self.last_taken = time.monotonic()  # when it last took one, or its queue last filled
        self.sent_bytes = 0  # every byte handed to the socket, for peer_taken where TCP_INFO is missing

    def peer_taken(self) -> int:
        """Bytes the peer has taken so far (TRANSPORT-019): what its side acknowledged, which grows
        only as it reads once its receive buffer is full; where the kernel does not say (not Linux),
        the bytes handed to the socket."""
        sock = self.ws.transport.get_extra_info("socket")
        tcp_info = getattr(socket, "TCP_INFO", None)
        if sock is not None and tcp_info is not None:
            try:
                info = sock.getsockopt(socket.IPPROTO_TCP, tcp_info, 256)
            except OSError:
                info = b""
            end = _TCPI_BYTES_ACKED_AT + _TCPI_BYTES_ACKED.size
            if len(info) >= end:
                acked: int = _TCPI_BYTES_ACKED.unpack_from(info, _TCPI_BYTES_ACKED_AT)[0]
                return acked
        return self.sent_bytes

    # Peer protocol (sessions.Peer)
    def send_text(self, text: str) -> None:
        if self.closing:
            return  # TRANSPORT-008: nothing after a fatal error
        size = len(text.encode("utf-8"))
        # TRANSPORT-016: a single frame over the bound still goes out on an empty queue.
        if (self.unsent_bytes and self.unsent_bytes + size > SEND_QUEUE_MAX_BYTES) or self.outbox.full():
            self.overflow()
            return
        if not self.unsent_bytes:
            self.last_taken = time.monotonic()
        self.unsent_bytes += size
        self.outbox.put_nowait(text)

    async def paced(self) -> None:
        await asyncio.sleep(0)
        while self.unsent_bytes > PACE_BYTES and not self.closing:
            waited = time.monotonic() - self.last_taken
            if waited >= STALLED_S:
                return  # stalled: the send-queue bound decides (TRANSPORT-016)
            self.taken.clear()
            try:
                await asyncio.wait_for(self.taken.wait(), STALLED_S - waited)
            except asyncio.TimeoutError:
                return

    def overflow(self) -> None:
        """The client does not take its frames: drop the unsent ones and close with 4008. Nothing is
        lost, the store holds every committed event and a resume rebuilds the state (TRANSPORT-017)."""
        self.end_early(CLOSE_CODES["send_queue_overflow"], "send queue overflow")

    def end_early(self, code: int, reason: str) -> None:
        """Drops every frame still queued and queues the close in their place: after the frame in
        flight, nothing but the close goes out (TRANSPORT-016, TRANSPORT-020)."""
        self.closing = True
        while not self.outbox.empty():
            self.outbox.get_nowait()
        self.unsent_bytes = 0
        self.outbox.put_nowait((code, reason))

    def close(self, code: int, reason: str) -> None:
        if self.closing:
            return
        self.closing = True
        try:
            self.outbox.put_nowait((code, reason))
        except asyncio.QueueFull:
            self.ws.transport.abort()

    async def writer(self) -> None:
        """Drains the outbox. A frame's write has no deadline of its own: a client that stops reading
        is bounded by its send queue (closed with 4008 once the frame in flight has left,
        TRANSPORT-016; a tab that stopped must not be dropped before its close, ATTACH-010) and by
        the keepalive, which drops a connection that answers no ping.
        The frames of one commit are queued together and written together, without a turn of the
        event loop between them: a client that closes right after one of them still gets the rest
        (its state frame) before the close is read."""
        try:
            while True:
                batch = [await self.outbox.get()]
                while isinstance(batch[-1], str) and not self.outbox.empty():
                    batch.append(self.outbox.get_nowait())
                texts = [item for item in batch if isinstance(item, str)]
                if texts:
                    await self._send_all(texts)
                if isinstance(batch[-1], tuple):
                    await asyncio.wait_for(self.ws.close(batch[-1][0], batch[-1][1]), CLOSE_HANDSHAKE_S)
                    return
        except (asyncio.TimeoutError, ConnectionClosed):
            self.closing = True
            self.ws.transport.abort()

    async def _send_all(self, texts: list[str]) -> None:
        for text in texts:
            await self.ws.send(text)
            self.sent_bytes += len(text.encode("utf-8"))
            if not self.closing:
                self.unsent_bytes -= len(text.encode("utf-8"))
            self.last_taken = time.monotonic()
            self.taken.set()

    async def keepalive(self) -> None:
        """Pings a connection idle for `idle_ping_s` (TRANSPORT-011). Its pong may come late: the
        ping waits behind everything the client is owed. A period in which the client took bytes
        is a period it was reading, so the wait goes on (TRANSPORT-019); a period with no pong and
        no byte taken closes it with 1001, nothing queued going out before the close
        (TRANSPORT-020)."""
        while True:
            await asyncio.sleep(self.idle_ping_s)
            if time.monotonic() - self.last_heard < self.idle_ping_s:
                continue
            try:
                pong = await self.ws.ping()
            except ConnectionClosed:
                return
            mark = self.peer_taken() + 2  # the ping frame's own two bytes are not the peer's progress
            while True:
                try:
                    await asyncio.wait_for(asyncio.shield(pong), self.idle_ping_s)
                    break
                except asyncio.TimeoutError:
                    taken = self.peer_taken()
                    if taken > mark:
                        mark = taken
                        continue
                except ConnectionClosed:
                    return
                self.end_early(CLOSE_CODES["going_away"], "peer unresponsive")
                # A peer that reads nothing may not take the close either: its own short deadline,
                # then as long for the reply, then the TCP connection goes.
                await asyncio.sleep(2 * UNRESPONSIVE_CLOSE_S)
                self.ws.transport.abort()
                return

    async def reader(self) -> None:
        while not self.closing:
            try:
                if self.session is None:
                    message = await asyncio.wait_for(self.ws.recv(), HELLO_DEADLINE_S)
                else:
                    message = await self.ws.recv()
            except asyncio.TimeoutError:
                self.close(CLOSE_CODES["policy_violation"], "no session.hello within 30 seconds")
                return
            except ConnectionClosed:
                return
            self.last_heard = time.monotonic()
            if isinstance(message, bytes):
                await self.refuse(Refusal("binary_frame", "binary frames are not supported; send text"), None)
            else:
                await self.on_text(message)

    async def refuse(self, refusal: Refusal, in_reply_to: str | None) -> None:
        if self.session is not None:
            async with self.session.lock:
                if self.session.attachment(self) is not None:
                    self.hub.send_session_error(self.session, self, refusal, in_reply_to)
            return
        # Before a session is bound an error has no seq (SEQ-002).
        self.send_text(dumps(self.hub.error_frame(refusal.code, refusal.message, in_reply_to, None)))
        if refusal.code in FATAL_CLOSE_CODES:  # TRANSPORT-008
            self.close(FATAL_CLOSE_CODES[refusal.code], refusal.code.replace("_", " "))
        elif refusal.code == "resume_rejected":
            # RESUME-013: eight refusals on one connection are someone guessing tokens.
            self.refused_resumes += 1
            if self.refused_resumes >= REFUSED_RESUMES_PER_CONNECTION:
                self.close(CLOSE_CODES["policy_violation"], "too many refused resumes")

    async def on_text(self, text: str) -> None:
        # Precedence (spec/errors.md): size, JSON, type, schema, session, then the frame's own checks.
        size = len(text.encode("utf-8"))
        if size > self.hub.max_frame_bytes:
            message = f"frame of {size} bytes is over the limit of {self.hub.max_frame_bytes} bytes"
            return await self.refuse(Refusal("frame_too_large", message), None)
        try:
            frame: Any = parse_json(text)
        except FrameError as e:
            return await self.refuse(Refusal("malformed_frame", str(e)), None)
        if not isinstance(frame, dict):
            return await self.refuse(Refusal("malformed_frame", "a frame must be a json object"), None)
        frame_id = frame.get("id")
        in_reply_to = frame_id if isinstance(frame_id, str) and _ID.fullmatch(frame_id) else None  # ERROR-004
        frame_type = frame.get("type")
        if isinstance(frame_type, str) and not self.negotiated.knows_client_type(frame_type):
            # A type newer than the negotiated version is unknown here (ERROR-007), before its schema.
            return await self.refuse(Refusal("unknown_type", f"unknown frame type {frame_type!r}"), in_reply_to)
        try:
            kind = validate_client_frame(frame)
        except FrameError as e:
            return await self.refuse(Refusal(e.error_code, str(e)), in_reply_to)
        if kind == "session.hello":
            undefined = undefined_hello_members(self.hub.versions, frame)
            if undefined:
                return await self.refuse(Refusal("invalid_frame", f"session.hello has members this server's versions do not define: {undefined}"), in_reply_to)
            bad_schema = response_schema_error(frame)
            if bad_schema is not None:  # SCRIPT-026: the depth JSON Schema cannot bound
                return await self.refuse(Refusal("invalid_frame", f"session.hello breaks its schema: {bad_schema}"), in_reply_to)
            if self.session is not None:
                return await self.refuse(Refusal("already_open", "this connection already has a session"), in_reply_to)
            offered = self.negotiated
            try:
                self.session = await self.hub.hello(self, frame)
            except Refusal as refusal:
                self.negotiated = offered  # a refused hello negotiated nothing
                await self.refuse(refusal, in_reply_to)
            return
        if self.session is None:
            return await self.refuse(Refusal("hello_required", "send session.hello first"), in_reply_to)
        await self.hub.handle(self.session, self, frame)


async def main() -> int:
    parser = argparse.ArgumentParser(description="Chatwire backend template (asyncio + websockets + SQLite)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    parser.add_argument("--db", required=True, help="SQLite file; sessions survive restarts on the same file")
    parser.add_argument("--conformance", action="store_true", help="play session.hello.script instead of the model")
    parser.add_argument("--max-frame-bytes", type=int, default=DEFAULT_MAX_FRAME_BYTES)  # TRANSPORT-013
    parser.add_argument(
        "--idle-ping-seconds", type=float, default=IDLE_PING_S, help="ping a connection silent this long (default: 30)"
    )
    parser.add_argument(
        "--versions",
        default=",".join(TEMPLATE_VERSIONS),
        help=f"protocol versions to speak, comma-separated (default: {','.join(TEMPLATE_VERSIONS)}); 1.0 makes a 1.0-only backend",
    )
    args = parser.parse_args()
    if args.max_frame_bytes < MIN_MAX_FRAME_BYTES:
        parser.error(f"--max-frame-bytes must be at least {MIN_MAX_FRAME_BYTES} (TRANSPORT-005)")
    asked = [v.strip() for v in args.versions.split(",") if v.strip()]
    unknown = [v for v in asked if v not in TEMPLATE_VERSIONS]
    if not asked or unknown:
        parser.error(f"--versions takes some of {', '.join(TEMPLATE_VERSIONS)}; not {', '.join(unknown) or 'nothing'}")
    versions = tuple(v for v in TEMPLATE_VERSIONS if v in asked)  # newest first (SESSION-003)

    hub = Hub(Store(args.db), conformance=args.conformance, max_frame_bytes=args.max_frame_bytes, versions=versions)
    await hub.recover()

    async def handler(ws: ServerConnection) -> None:
        conn = Connection(ws, hub, args.idle_ping_seconds)
        tasks = [asyncio.create_task(conn.writer()), asyncio.create_task(conn.keepalive())]
        try:
            await conn.reader()
            # Let the writer flush a final close (fatal errors, 1008) before the handler returns.
            if conn.closing:
                await asyncio.wait([tasks[0]], timeout=WRITE_TIMEOUT_S)
        finally:
            for task in tasks:
                task.cancel()
            if conn.session is not None:
                hub.detach(conn.session, conn)

    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with serve(
        handler,
        args.host,
        args.port,
        select_subprotocol=select_subprotocol,  # the subprotocol trap, see the module doc
        max_size=args.max_frame_bytes * HARD_CAP_FACTOR,  # the max_size trap, see the module doc
        ping_interval=None,  # the keepalive trap, see the module doc
        max_queue=64,
        compression=None,
    ) as server:
        print(f"ws://{args.host}:{args.port}/ws", flush=True)
        await stop.wait()
        # TRANSPORT-009: an orderly shutdown closes every connection with 1001.
        server.close(close_connections=True)
        await asyncio.wait_for(server.wait_closed(), 5)
    hub.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
