"""The template backend on what the conformance suite does not (yet) drive: RFC 6455 violations
(TRANSPORT-014, TRANSPORT-015), the refused-resume limit (RESUME-013), and what `--versions 1.0`
changes (a closed 1.0 hello, no 1.1 request).

Each test starts template/server.py on a free loopback port with a fresh database, and stops it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from chatwire.facts import CLOSE_CODES, REFUSED_RESUMES_PER_CONNECTION

TEMPLATE = Path(__file__).resolve().parents[1] / "template" / "server.py"
DEADLINE_S = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(tmp_path: Path, *extra: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TEMPLATE), "--port", str(port), "--db", str(tmp_path / "chat.sqlite3"), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # the server prints its URL once it listens
        assert url == f"ws://127.0.0.1:{port}/ws", proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=DEADLINE_S)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    yield from _start(tmp_path)


@pytest.fixture
def server_1_0(tmp_path: Path) -> Iterator[str]:
    """The template as a 1.0-only backend."""
    yield from _start(tmp_path, "--versions", "1.0")


def _close_code_after_raw_frame(url: str, frame: bytes) -> int:
    """Sends a handshake and then `frame` as raw bytes; returns the close code the server sends."""
    host, port = url.removeprefix("ws://").removesuffix("/ws").split(":")
    with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = sock.recv(4096)
            assert chunk, "the server closed during the handshake"
            response += chunk
        assert response.startswith(b"HTTP/1.1 101")
        sock.sendall(frame)
        data = response.split(b"\r\n\r\n", 1)[1]
        while len(data) < 4:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        assert data[0] == 0x88, f"expected a close frame, got {data[:8]!r}"
        code: int = struct.unpack("!H", data[2:4])[0]
        return code


def _masked(opcode_byte: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([opcode_byte, 0x80 | len(payload)]) + mask + body


def test_transport_014_invalid_utf8_text_closes_with_1007(server: str) -> None:
    assert _close_code_after_raw_frame(server, _masked(0x81, b"\xff\xfe not utf-8")) == CLOSE_CODES["invalid_payload"]


def test_transport_015_a_reserved_bit_closes_with_1002(server: str) -> None:
    assert _close_code_after_raw_frame(server, _masked(0x81 | 0x40, b"{}")) == CLOSE_CODES["protocol_error"]


def test_transport_015_an_unmasked_client_frame_closes_with_1002(server: str) -> None:
    assert _close_code_after_raw_frame(server, bytes([0x81, 2]) + b"{}") == CLOSE_CODES["protocol_error"]


def test_resume_013_the_eighth_refused_resume_closes_with_1008(server: str) -> None:
    async def scenario() -> None:
        async with connect(server) as ws:
            for n in range(1, REFUSED_RESUMES_PER_CONNECTION + 1):
                hello = {
                    "type": "session.hello",
                    "id": f"h-{n}",
                    "versions": ["1.0"],
                    "resume": {"session_id": "s-unknown", "resume_token": "rt-guess", "last_seq": 0},
                }
                await ws.send(json.dumps(hello))
                error = json.loads(await asyncio.wait_for(ws.recv(), DEADLINE_S))
                assert (error["code"], error["in_reply_to"], error["fatal"]) == ("resume_rejected", f"h-{n}", False)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), DEADLINE_S)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_CODES["policy_violation"]

    asyncio.run(scenario())


async def _exchange(url: str, *frames: dict[str, Any]) -> list[dict[str, Any]]:
    """Sends each frame and reads the one or two frames it is answered with (a welcome comes with its snapshot)."""
    answers: list[dict[str, Any]] = []
    async with connect(url) as ws:
        for frame in frames:
            await ws.send(json.dumps(frame))
            answer = json.loads(await asyncio.wait_for(ws.recv(), DEADLINE_S))
            answers.append(answer)
            if answer["type"] == "session.welcome":
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), DEADLINE_S)))
    return answers


def test_a_1_0_only_template_refuses_hello_features_and_knows_no_retry(server_1_0: str) -> None:
    # spec/session.md#features: a 1.0 hello is a closed object (FRAME-003); chat.retry is a 1.1 type (ERROR-007).
    hello = {"type": "session.hello", "id": "h-1", "versions": ["1.1", "1.0"], "features": ["ui_state_patch"]}
    (refused,) = asyncio.run(_exchange(server_1_0, hello))
    assert (refused["code"], refused["in_reply_to"], "seq" in refused) == ("invalid_frame", "h-1", False)
    plain = {"type": "session.hello", "id": "h-2", "versions": ["1.1", "1.0"]}
    retry = {"type": "chat.retry", "id": "r-1", "after_item_id": "x"}
    welcome, snapshot, unknown = asyncio.run(_exchange(server_1_0, plain, retry))
    assert (welcome["version"], "features" in welcome, "retry" in welcome["capabilities"]) == ("1.0", False, False)
    assert snapshot["type"] == "ui_state_snapshot"
    assert (unknown["code"], unknown["seq"]) == ("unknown_type", 3)


def test_features_in_force_ignore_unknown_names_and_need_patches_for_streams(server: str) -> None:
    # SESSION-012, SESSION-016, STREAM-001: the hello's list narrows; assistant_stream alone is not in force.
    asked = {"type": "session.hello", "id": "h-1", "versions": ["1.1"], "features": ["assistant_stream", "telepathy"]}
    everything = {"type": "session.hello", "id": "h-2", "versions": ["1.1", "1.0"]}
    narrowed, _ = asyncio.run(_exchange(server, asked))
    full, _ = asyncio.run(_exchange(server, everything))
    assert (narrowed["features"], "resume_retention" in narrowed) == ([], False)
    assert full["features"] == ["ui_state_patch", "resume_catch_up", "assistant_stream"]
    assert full["resume_retention"] == 1000



def test_cancel_is_listed_only_from_1_2(server: str) -> None:
    # spec/cancel.md: `cancel` is a 1.2 capability (COMPAT-005: an older welcome lists none of 1.2).
    versions = ("1.3", "1.2", "1.1", "1.0")
    welcomes = [asyncio.run(_exchange(server, {"type": "session.hello", "id": "h-1", "versions": [v]}))[0] for v in versions]
    listed = [("1.3", True), ("1.2", True), ("1.1", False), ("1.0", False)]
    assert [(w["version"], "cancel" in w["capabilities"]) for w in welcomes] == listed
    plain = {"type": "session.hello", "id": "h-2", "versions": ["1.2", "1.1", "1.0"]}
    welcome, _, refused = asyncio.run(_exchange(server, plain, {"type": "chat.cancel", "id": "c-1", "invocation_id": "inv-1"}))
    assert (welcome["version"], refused["code"], refused["in_reply_to"]) == ("1.2", "unknown_invocation", "c-1")


def test_a_1_3_welcome_offers_reasoning_and_usage_and_not_subagents(server: str) -> None:
    # spec/reasoning.md, spec/usage.md: features of 1.3; the template does not implement subagents,
    # so no welcome lists it (SCRIPT-029: a scripted host is played without its sub-agent).
    newest = {"type": "session.hello", "id": "h-1", "versions": ["1.3", "1.2", "1.1", "1.0"]}
    welcome, _ = asyncio.run(_exchange(server, newest))
    assert welcome["version"] == "1.3"
    assert welcome["features"][-2:] == ["reasoning", "usage"] and "subagents" not in welcome["features"]
    assert {"reasoning", "usage"} <= set(welcome["capabilities"]) and "subagents" not in welcome["capabilities"]
    narrowed, _ = asyncio.run(_exchange(server, {**newest, "features": ["ui_state_patch", "usage", "subagents"]}))
    assert narrowed["features"] == ["ui_state_patch", "usage"]
    older, _ = asyncio.run(_exchange(server, {**newest, "versions": ["1.2"]}))
    assert older["version"] == "1.2" and not {"reasoning", "usage"} & set(older["features"] + older["capabilities"])


def test_a_1_0_only_template_knows_no_cancel(server_1_0: str) -> None:
    # chat.cancel is a 1.2 type: unknown on a 1.0 connection (ERROR-007).
    plain = {"type": "session.hello", "id": "h-2", "versions": ["1.2", "1.1", "1.0"]}
    welcome, _, unknown = asyncio.run(_exchange(server_1_0, plain, {"type": "chat.cancel", "id": "c-1", "invocation_id": "inv-1"}))
    assert (welcome["version"], "cancel" in welcome["capabilities"], unknown["code"], unknown["in_reply_to"]) == ("1.0", False, "unknown_type", "c-1")


def _raw_open(url: str, recv_buffer: int | None = None) -> tuple[socket.socket, bytes]:
    """A raw WebSocket connection (handshake done) and the bytes read past the handshake."""
    host, port = url.removeprefix("ws://").removesuffix("/ws").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if recv_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer)
    sock.settimeout(DEADLINE_S)
    sock.connect((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    response = b""
    while b"\r\n\r\n" not in response:
        chunk = sock.recv(4096)
        assert chunk, "the server closed during the handshake"
        response += chunk
    assert response.startswith(b"HTTP/1.1 101")
    return sock, response.split(b"\r\n\r\n", 1)[1]


def _masked_frame(opcode_byte: int, payload: bytes) -> bytes:
    """A client frame of any length (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        header = bytes([opcode_byte, 0x80 | n])
    elif n < 1 << 16:
        header = bytes([opcode_byte, 0x80 | 126]) + struct.pack("!H", n)
    else:
        header = bytes([opcode_byte, 0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _server_frame(data: bytes) -> tuple[int, bytes, bytes] | None:
    """The first whole (unmasked) server frame in `data`: opcode, payload, the rest; None if partial."""
    if len(data) < 2:
        return None
    n, at = data[1] & 0x7F, 2
    if n == 126:
        if len(data) < 4:
            return None
        n, at = struct.unpack("!H", data[2:4])[0], 4
    elif n == 127:
        if len(data) < 10:
            return None
        n, at = struct.unpack("!Q", data[2:10])[0], 10
    if len(data) < at + n:
        return None
    return data[0] & 0x0F, data[at : at + n], data[at + n :]


def _say_turn(sock: socket.socket, says: int, chars: int) -> None:
    steps = [{"op": "say", "markdown": f"{k:04} " + "x" * chars} for k in range(says)]
    hello = {"type": "session.hello", "id": "h1", "versions": ["1.2"], "script": {"turns": [{"steps": steps}]}}
    sock.sendall(_masked_frame(0x81, json.dumps(hello).encode()))
    sock.sendall(_masked_frame(0x81, json.dumps({"type": "chat.user_message", "id": "m1", "text": "go"}).encode()))


@pytest.fixture
def quick_pings(tmp_path: Path) -> Iterator[str]:
    """The template pinging a connection silent for 1 s (the default is 30 s)."""
    yield from _start(tmp_path, "--conformance", "--idle-ping-seconds", "1")


def test_transport_019_a_slow_reader_is_kept_while_it_reads_however_late_its_pong(quick_pings: str) -> None:
    """A 300 KB turn read at 40 KB/s (7.5 s) through a 1 s keep-alive: its ping waits behind the
    turn and is answered late; the connection is not cut, and answers the pings that follow."""
    sock, data = _raw_open(quick_pings, recv_buffer=8 * 1024)
    with sock:
        _say_turn(sock, 3, 50_000)
        started = time.monotonic()
        read, pings, done = 0, 0, False
        closes: list[bytes] = []
        while time.monotonic() - started < 30 and not closes and not (done and pings >= 2):
            frame = _server_frame(data)
            if frame is None:
                chunk = sock.recv(1024)
                assert chunk, f"the server ended the connection after {read} bytes"
                data += chunk
                time.sleep(len(chunk) / 40_000)
                continue
            opcode, payload, data = frame
            if opcode == 0x1:
                read += len(payload)
                done = done or b'"chat.run_complete"' in payload
            elif opcode == 0x9:
                pings += 1
                sock.sendall(_masked_frame(0x8A, payload))
            elif opcode == 0x8:
                closes.append(payload)
        took = time.monotonic() - started
        assert not closes, f"closed after {read} bytes in {took:.1f} s: {closes}"
        assert done and read >= 300_000 and took > 2, f"{read} bytes in {took:.1f} s"


def test_transport_020_a_peer_that_answers_no_ping_gets_a_1001_close(quick_pings: str) -> None:
    """A peer that reads nothing after its welcome: a ping after 1 s, the 1001 close after 2 s,
    both in its socket when it looks after 3.5 s."""
    sock, data = _raw_open(quick_pings)
    with sock:
        sock.sendall(_masked_frame(0x81, json.dumps({"type": "session.hello", "id": "h1", "versions": ["1.2"]}).encode()))
        time.sleep(3.5)
        opcodes: list[tuple[int, bytes]] = []
        sock.settimeout(0.5)
        while not opcodes or opcodes[-1][0] != 0x8:
            frame = _server_frame(data)
            if frame is None:
                chunk = sock.recv(4096)
                assert chunk, f"the connection ended without a close frame after {opcodes}"
                data += chunk
                continue
            opcode, payload, data = frame
            opcodes.append((opcode, payload))
        assert [o for o, _ in opcodes] == [0x1, 0x1, 0x9, 0x8], opcodes
        close = opcodes[-1][1]
        assert struct.unpack("!H", close[:2])[0] == CLOSE_CODES["going_away"] and close[2:] == b"peer unresponsive"
