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


def test_the_event_list_and_answers_name_the_schemas_frames() -> None:
    from chatwire import EVENT_TYPES

    servers = set(facts.SERVER_FRAME_FACTS)
    assert servers == {branch["properties"]["type"]["const"] for branch in load_schema("server-frame.json")["oneOf"]}
    clients = {branch["properties"]["type"]["const"] for branch in load_schema("client-frame.json")["oneOf"]}
    assert set(facts.ANSWERED_BY) == clients == set(facts.CLIENT_FRAME_FACTS)
    assert EVENT_TYPES == frozenset(t for t, f in facts.SERVER_FRAME_FACTS.items() if f.event)
    for client, answers in facts.ANSWERED_BY.items():
        assert answers, client
        assert all(facts.SERVER_FRAME_FACTS[a].answer != "never" for a in answers), client
    assert facts.ANSWERED_BY["chat.tool_call_response"] == ("chat.tool_call_complete", "chat.tool_call_dismiss")


def test_versions_and_members_come_from_the_since_annotations() -> None:
    assert tuple(sorted(facts.VERSION_FACTS, key=facts.version_key, reverse=True)) == facts.SUPPORTED_VERSIONS
    newest = facts.VERSION_FACTS[facts.PROTOCOL_VERSION]
    assert set(newest.server_frames) == set(facts.SERVER_FRAME_FACTS)
    assert "chat.retry" not in facts.VERSION_FACTS["1.0"].client_frames
    assert facts.VERSION_FACTS["1.0"].features == ()
    assert facts.frame_since("chat.cancel") == "1.2"
    assert facts.frame_since("no.such_frame") is None
    assert facts.member_since("session.hello", "window") == "1.2"
    assert facts.member_since("session.hello", "versions") is None
    # The member the older-minor view strips is dated alike on a call and on a call item.
    assert facts.UI_STATE_MEMBERS_SINCE["items[].response_schema"] == facts.member_since("chat.tool_call", "response_schema")


def test_the_reducers_refusals_name_their_rules() -> None:
    assert facts.REDUCE_REFUSALS["DuplicateItemId"] == "STATE-020"
    assert all(rule.startswith("STATE-") for rule in facts.REDUCE_REFUSALS.values())


def test_a_connection_detached_past_the_bound_is_ended_as_its_version_defines() -> None:
    # ATTACH-011: 1.0 and 1.1 define neither session_detached nor 4003 (COMPAT-005).
    from chatwire.attach import detached_code

    ended = {v: (detached_code(v), facts.FATAL_CLOSE_CODES[detached_code(v)]) for v in facts.SUPPORTED_VERSIONS}
    assert ended == {
        "1.0": ("session_taken_over", 4001),
        "1.1": ("session_taken_over", 4001),
        "1.2": ("session_detached", 4003),
        "1.3": ("session_detached", 4003),
    }
