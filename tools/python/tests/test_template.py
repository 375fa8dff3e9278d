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



def test_cancel_is_listed_only_on_1_2(server: str) -> None:
    # spec/cancel.md: `cancel` is a 1.2 capability (COMPAT-005: an older welcome lists none of 1.2).
    welcomes = [asyncio.run(_exchange(server, {"type": "session.hello", "id": "h-1", "versions": [v]}))[0] for v in ("1.2", "1.1", "1.0")]
    assert [(w["version"], "cancel" in w["capabilities"]) for w in welcomes] == [("1.2", True), ("1.1", False), ("1.0", False)]
    plain = {"type": "session.hello", "id": "h-2", "versions": ["1.2", "1.1", "1.0"]}
    welcome, _, refused = asyncio.run(_exchange(server, plain, {"type": "chat.cancel", "id": "c-1", "invocation_id": "inv-1"}))
    assert (welcome["version"], refused["code"], refused["in_reply_to"]) == ("1.2", "unknown_invocation", "c-1")


def test_a_1_0_only_template_knows_no_cancel(server_1_0: str) -> None:
    # chat.cancel is a 1.2 type: unknown on a 1.0 connection (ERROR-007).
    plain = {"type": "session.hello", "id": "h-2", "versions": ["1.2", "1.1", "1.0"]}
    welcome, _, unknown = asyncio.run(_exchange(server_1_0, plain, {"type": "chat.cancel", "id": "c-1", "invocation_id": "inv-1"}))
    assert (welcome["version"], "cancel" in welcome["capabilities"], unknown["code"], unknown["in_reply_to"]) == ("1.0", False, "unknown_type", "c-1")
