"""The protocol facts shipped in the package agree with the schemas shipped beside them."""

from __future__ import annotations

import re

from chatwire import facts, load_schema


def test_error_codes_are_the_closed_list_of_the_schema() -> None:
    schema = load_schema("error.json")
    assert set(facts.ERROR_CODES) == {branch["const"] for branch in schema["$defs"]["ErrorCode"]["oneOf"]}
    assert facts.FATAL_CLOSE_CODES == {"unsupported_version": 4002, "session_taken_over": 4001, "session_detached": 4003}


def test_limits_versions_and_ids_match_the_schemas() -> None:
    welcome = load_schema("session.welcome.json")
    assert welcome["$defs"]["Limits"]["properties"]["max_frame_bytes"]["maximum"] == facts.MAX_SAFE_INTEGER
    assert facts.MIN_MAX_FRAME_BYTES <= facts.DEFAULT_MAX_FRAME_BYTES
    hello = load_schema("session.hello.json")
    assert all(re.fullmatch(hello["$defs"]["ProtocolVersion"]["pattern"], v) for v in facts.SUPPORTED_VERSIONS)
    assert hello["$defs"]["Id"]["pattern"] == facts.ID_PATTERN
    snapshot = load_schema("ui_state_snapshot.json")
    assert facts.UI_STATE_VERSION in str(snapshot)
    assert facts.CLOSE_CODES["going_away"] == 1001



def test_error_order_follows_the_crates_table() -> None:
    # The table itself is the crate's (copied by scripts/generate.py, drift-checked in CI).
    assert facts.FRAME_CHECKS[:2] == ("binary_frame", "frame_too_large")
    assert set(facts.FRAME_CHECKS) <= set(facts.ERROR_CODES)
    assert all(set(codes) <= set(facts.ERROR_CODES) for codes in facts.OWN_CHECKS.values())
    assert facts.first_failing("chat.user_message", {"run_in_progress", "duplicate_message"}) == "duplicate_message"
    assert facts.first_failing("session.hello", ["resume_cursor_ahead", "resume_rejected"]) == "resume_rejected"
    assert facts.first_failing("chat.user_message", ["run_in_progress", "invalid_frame"]) == "invalid_frame"
    assert facts.first_failing("chat.rewind", ["unknown_invocation"]) is None
