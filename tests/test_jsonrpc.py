"""mcplab.wire.jsonrpc: messages, encode/decode, the JSON-RPC 2.0 spec's own examples, batches,
correlation, and properties over arbitrary input (hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcplab.wire import jsonrpc, versions
from mcplab.wire.errors import (
    InvalidRequest, JSONRPCError, LocalProtocolError, MethodNotFound, ParseError, RemoteProtocolError,
)
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, Response

# The seeds' messages, verbatim.
SEED_REQUEST = ('{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                '"params":{"name":"read_file","arguments":{"path":"/tmp/test.txt"}}}')
SEED_SUCCESS = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"文件内容..."}]}}'
SEED_FAILURE = '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
SEED_INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
SEEDS = [SEED_REQUEST, SEED_SUCCESS, SEED_FAILURE, SEED_INITIALIZED]


# --- the seeds ----------------------------------------------------------------------------------

def test_seed_messages_decode_to_the_four_kinds():
    assert jsonrpc.decode(SEED_REQUEST) == Request(
        1, "tools/call", {"name": "read_file", "arguments": {"path": "/tmp/test.txt"}})
    assert jsonrpc.decode(SEED_SUCCESS) == Response(1, {"content": [{"type": "text", "text": "文件内容..."}]})
    assert jsonrpc.decode(SEED_FAILURE) == ErrorResponse(1, -32601, "Method not found")
    assert jsonrpc.decode(SEED_INITIALIZED) == Notification("notifications/initialized")


@pytest.mark.parametrize("raw", SEEDS)
def test_encoding_a_seed_message_gives_back_the_seed_text(raw):
    assert jsonrpc.encode(jsonrpc.decode(raw)) == raw


def test_encode_keeps_chinese_readable_and_never_writes_a_newline():
    line = jsonrpc.encode(Response(1, {"text": "第一行\n第二行"}))
    assert "第一行" in line and "\n" not in line


def test_encode_falls_back_to_escapes_for_a_lone_surrogate():
    line = jsonrpc.encode(Notification("log", {"text": "\ud800"}))
    assert line.isascii() and jsonrpc.decode(line).params == {"text": "\ud800"}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_encoded_seed_messages_validate_against_the_official_schema(spec_schema, version):
    import jsonschema
    schema = spec_schema(version)
    defs = "definitions" if "definitions" in schema else "$defs"
    validator = jsonschema.validators.validator_for(schema)({**schema, "$ref": f"#/{defs}/JSONRPCMessage"})
    for raw in SEEDS:
        validator.validate(json.loads(jsonrpc.encode(jsonrpc.decode(raw))))


# --- decode: one row per rule -----------------------------------------------------------------

# (text, error class, id the reply echoes, words the reason must contain)
REFUSALS = [
    ('{"jsonrpc":"2.0","method":"foobar, "params":"bar", "baz]', ParseError, None, "parse"),
    ("", ParseError, None, "parse"),
    ("NaN", ParseError, None, "parse"),
    ('{"jsonrpc":"2.0","id":1,"result":1e999}', ParseError, None, "too large"),
    ("[" * 100_000, ParseError, None, "parse"),
    ('{"id":1,"method":"ping"}', InvalidRequest, 1, 'no "jsonrpc"'),
    ('{"jsonrpc":"1.0","id":1,"method":"ping"}', InvalidRequest, 1, '"jsonrpc": "1.0"'),
    ('{"jsonrpc":2.0,"id":"a","method":"ping"}', InvalidRequest, "a", '"jsonrpc": 2.0'),
    ('{"jsonrpc":"2.0","id":7,"method":1}', InvalidRequest, 7, '"method" to be a string'),
    ('{"jsonrpc":"2.0","method":1,"params":"bar"}', InvalidRequest, None, '"method" to be a string'),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', InvalidRequest, None, "string or an integer"),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', InvalidRequest, None, "got a JSON boolean"),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', InvalidRequest, None, "got a JSON array"),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', InvalidRequest, None, "MCP forbids"),
    ('{"jsonrpc":"2.0","id":3,"method":"ping","params":"bar"}', InvalidRequest, 3, '"params"'),
    ('{"jsonrpc":"2.0","method":"ping","params":null}', InvalidRequest, None, '"params"'),
    ('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', InvalidRequest, 1, "never both"),
    ('{"jsonrpc":"2.0","id":1}', InvalidRequest, 1, "none of them"),
    ('{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}', InvalidRequest, 1, "cannot also carry"),
    ('{"jsonrpc":"2.0","result":{}}', InvalidRequest, None, '"id" of the request'),
    ('{"jsonrpc":"2.0","id":null,"result":{}}', InvalidRequest, None, "string or an integer"),
    ('{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', InvalidRequest, 1, "integer \"code\""),
    ('{"jsonrpc":"2.0","id":1,"error":"oops"}', InvalidRequest, 1, "integer \"code\""),
    ("42", InvalidRequest, None, "got a JSON number"),
    ('"tools/list"', InvalidRequest, None, "got a JSON string"),
    ('[{"jsonrpc":"2.0","method":"ping","id":1}]', InvalidRequest, None, "2025-03-26"),
]


@pytest.mark.parametrize("text, error, echoed_id, reason", REFUSALS)
def test_decode_refuses_each_broken_rule_with_its_code_and_reason(text, error, echoed_id, reason):
    with pytest.raises(error) as caught:
        jsonrpc.decode(text)
    assert reason.lower() in caught.value.message.lower()
    reply = jsonrpc.error_response(caught.value)
    assert (reply.id, reply.code) == (echoed_id, error.code)


def test_error_codes_are_the_json_rpc_numbers():
    assert (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST, jsonrpc.METHOD_NOT_FOUND,
            jsonrpc.INVALID_PARAMS, jsonrpc.INTERNAL_ERROR) == (-32700, -32600, -32601, -32602, -32603)


def test_invalid_utf8_bytes_are_a_parse_error_naming_the_byte():
    with pytest.raises(ParseError, match="0xff at offset 1"):
        jsonrpc.decode(b"{\xff}")


@pytest.mark.parametrize("text", [' {"jsonrpc":"2.0","method":"ping"}', '{"jsonrpc":"2.0","method":"ping"} \t',
                                  '\n{"jsonrpc":"2.0","method":"ping"}\n'])
def test_whitespace_around_a_message_is_json_and_decodes_the_same(text):
    assert jsonrpc.decode(text) == Notification("ping")


@pytest.mark.parametrize("text, words", [('{"jsonrpc":"2.0","method":"ping"} {}', "Extra data: line 1 column 35"),
                                         ('1 2', "Extra data: line 1 column 3"), ("", "Expecting value: line 1"),
                                         ("   ", "Expecting value: line 1 column 4"),
                                         ('{"a" 1}', "Expecting ':' delimiter: line 1 column 6")])
def test_a_parse_error_keeps_the_json_decoders_words_and_position(text, words):
    """The decoder's scanner is called directly on the hot path; every error still reads as
    json.loads words it (the same message, the same column)."""
    with pytest.raises(ParseError) as caught:
        jsonrpc.decode(text)
    with pytest.raises(ValueError) as standard:
        json.loads(text)
    assert words in caught.value.message and str(standard.value) in caught.value.message


def test_a_null_request_id_is_refused_under_mcp_and_tolerated_by_plain_json_rpc():
    text = '{"jsonrpc":"2.0","id":null,"method":"ping"}'
    with pytest.raises(InvalidRequest):
        jsonrpc.decode(text)
    assert jsonrpc.decode(text, mcp=False) == Request(None, "ping")


def test_an_error_response_without_id_is_accepted_under_mcp_only():
    # MCP's 2025-11-25 schema makes the error response's id optional; JSON-RPC 2.0 requires it.
    text = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'
    assert jsonrpc.decode(text) == ErrorResponse(None, -32700, "Parse error")
    with pytest.raises(InvalidRequest):
        jsonrpc.decode(text, mcp=False)


def test_an_error_response_may_carry_a_null_id():
    assert jsonrpc.decode('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}') \
        == ErrorResponse(None, -32700, "Parse error")


def test_positional_params_and_extra_members_are_accepted():
    assert jsonrpc.decode('{"jsonrpc":"2.0","id":"x","method":"sum","params":[1,2],"extra":0}') \
        == Request("x", "sum", [1, 2])


# --- the JSON-RPC 2.0 specification's examples (section 7) ------------------------------------

def spec_server(message: jsonrpc.Message) -> jsonrpc.Message | None:
    """The methods the specification's examples call, as a handler for one message."""
    if not isinstance(message, Request):
        return None  # notifications get no reply, whatever they name
    params = message.params
    if message.method == "subtract":
        a, b = (params["minuend"], params["subtrahend"]) if isinstance(params, dict) else params
        return Response(message.id, a - b)
    if message.method == "sum":
        return Response(message.id, sum(params))
    if message.method == "get_data":
        return Response(message.id, ["hello", 5])
    raise MethodNotFound("Method not found")


def serve(text: str) -> object:
    """What a JSON-RPC 2.0 server sends back for ``text``: a reply object, a list, or None."""
    try:
        decoded = jsonrpc.decode(text, allow_batch=True)
    except JSONRPCError as exc:
        return jsonrpc.to_dict(jsonrpc.error_response(exc, null_id=True))  # plain JSON-RPC 2.0: "id": null
    if isinstance(decoded, list):
        replies = jsonrpc.answer_batch(decoded, spec_server)
        return None if replies is None else [jsonrpc.to_dict(r) for r in replies]
    reply = jsonrpc.answer_batch([decoded], spec_server)
    return None if reply is None else jsonrpc.to_dict(reply[0])


def err(code: int, id_: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code}}


SPEC_EXAMPLES = [
    ("positional params", '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
     {"jsonrpc": "2.0", "result": 19, "id": 1}),
    ("positional params, swapped", '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}',
     {"jsonrpc": "2.0", "result": -19, "id": 2}),
    ("named params", '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
     {"jsonrpc": "2.0", "result": 19, "id": 3}),
    ("named params, reordered",
     '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}',
     {"jsonrpc": "2.0", "result": 19, "id": 4}),
    ("notification", '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}', None),
    ("notification without params", '{"jsonrpc": "2.0", "method": "foobar"}', None),
    ("non-existent method", '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', err(-32601, "1")),
    ("invalid JSON", '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', err(-32700, None)),
    ("invalid Request object", '{"jsonrpc": "2.0", "method": 1, "params": "bar"}', err(-32600, None)),
    ("batch, invalid JSON",
     '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"]',
     err(-32700, None)),
    ("empty array", "[]", err(-32600, None)),
    ("invalid batch, not empty", "[1]", [err(-32600, None)]),
    ("invalid batch", "[1,2,3]", [err(-32600, None)] * 3),
    ("batch",
     '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
     ' {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
     ' {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
     ' {"foo": "boo"},'
     ' {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
     ' {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]',
     [{"jsonrpc": "2.0", "result": 7, "id": "1"}, {"jsonrpc": "2.0", "result": 19, "id": "2"},
      err(-32600, None), err(-32601, "5"), {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}]),
    ("batch, all notifications",
     '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
     ' {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]', None),
]


def comparable(reply: object) -> object:
    """Error messages are free text (ours name the broken rule): compare codes and ids."""
    if isinstance(reply, list):
        return [comparable(r) for r in reply]
    if isinstance(reply, dict) and "error" in reply:
        assert isinstance(reply["error"].get("message", ""), str)
        return {**reply, "error": {"code": reply["error"]["code"]}}
    return reply


@pytest.mark.parametrize("name, sent, expected", SPEC_EXAMPLES, ids=[row[0] for row in SPEC_EXAMPLES])
def test_the_json_rpc_specification_examples_get_the_specified_replies(name, sent, expected):
    assert comparable(serve(sent)) == expected


def test_batches_are_refused_unless_asked_for_and_only_2025_03_26_allowed_them():
    with pytest.raises(InvalidRequest, match="batches"):
        jsonrpc.decode('[{"jsonrpc":"2.0","method":"ping","id":1}]')
    assert [v for v in versions.ALL_VERSIONS if versions.allows_batches(v)] == ["2025-03-26"]


def test_a_notification_that_fails_inside_a_batch_still_gets_no_reply():
    batch = jsonrpc.decode('[{"jsonrpc":"2.0","method":"nope"}]', allow_batch=True)

    def fail(message):
        raise MethodNotFound("Method not found")

    assert jsonrpc.answer_batch(batch, fail) is None


def test_a_batch_encodes_as_one_json_array():
    line = jsonrpc.encode([Response("1", 7), ErrorResponse(None, -32600, "Invalid Request", null_id=True)])
    assert json.loads(line) == [{"jsonrpc": "2.0", "id": "1", "result": 7},
                                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}]


# --- decode_and_show_work -----------------------------------------------------------------------

def test_show_work_lists_every_check_for_the_seed_request():
    work = jsonrpc.decode_and_show_work(SEED_REQUEST.encode())
    assert [check for check, _ in work.steps] == ["bytes → text", "text → JSON", '"jsonrpc" is "2.0"',
                                                   'has "method" and "id"']
    assert work.outcome == jsonrpc.decode(SEED_REQUEST)
    assert repr(work).splitlines()[-1].startswith("⇒ Request(id=1")


def test_show_work_ends_with_the_refusal_and_its_code():
    work = jsonrpc.decode_and_show_work('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"read_file"}')
    assert isinstance(work.outcome, InvalidRequest)
    assert repr(work).splitlines()[-1].startswith("⇒ refused with -32600")


def test_show_work_reports_a_parse_error_as_its_last_step():
    work = jsonrpc.decode_and_show_work("{oops")
    assert work.steps[-1][0] == "refused" and work.outcome.code == -32700


# --- correlation --------------------------------------------------------------------------------

def test_ids_are_allocated_one_two_three():
    next_id = jsonrpc.IdAllocator()
    assert [next_id(), next_id(), next_id()] == [1, 2, 3]


def test_pending_requests_match_responses_by_id_alone():
    pending = jsonrpc.PendingRequests()
    pending.add(1, "first")
    pending.add("b", "second")
    assert pending.resolve(Response("b", {})) == "second"
    assert pending.resolve(ErrorResponse(1, -32601, "Method not found")) == "first"
    assert len(pending) == 0


def test_a_duplicate_request_id_is_this_sides_mistake():
    pending = jsonrpc.PendingRequests()
    pending.add(1)
    with pytest.raises(LocalProtocolError, match="already waiting"):
        pending.add(1)


def test_a_response_to_an_unknown_id_is_the_peers_mistake():
    pending = jsonrpc.PendingRequests()
    pending.add(1)
    with pytest.raises(RemoteProtocolError, match="no request with that id is waiting"):
        pending.resolve(Response(2, {}))
    with pytest.raises(RemoteProtocolError, match="could not read one of our messages"):
        pending.resolve(ErrorResponse(None, -32700, "Parse error"))
    assert 1 in pending


# --- properties ---------------------------------------------------------------------------------
# 6,500 examples here and 4,000 in test_framing.py: over 10,000 arbitrary inputs in all.

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(st.characters(exclude_categories=()), max_size=12))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=6)
ids = st.one_of(st.integers(), st.text(max_size=12))
params = st.one_of(st.none(), st.dictionaries(st.text(max_size=8), json_values, max_size=4),
                   st.lists(json_values, max_size=4))
methods = st.text(st.characters(exclude_categories=()), max_size=20)
messages = st.one_of(
    st.builds(Request, ids, methods, params),
    st.builds(Notification, methods, params),
    st.builds(Response, ids, json_values),
    st.builds(ErrorResponse, st.one_of(st.none(), ids), st.integers(), st.text(max_size=20),
              st.one_of(st.none(), json_values)),
)

# Objects shaped almost like messages: every member may be missing, of the right type or not.
anything = st.one_of(scalars, st.floats(), st.lists(scalars, max_size=2),
                     st.dictionaries(st.text(max_size=3), scalars, max_size=2))
message_like = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0, None]),
    "id": st.one_of(ids, st.none(), anything),
    "method": st.one_of(methods, anything),
    "params": st.one_of(params, anything),
    "result": anything,
    "error": st.one_of(st.fixed_dictionaries({"code": st.one_of(st.integers(), anything),
                                              "message": st.one_of(st.text(max_size=8), anything)},
                                             optional={"data": anything}), anything),
})
FAST = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=1500, **FAST)
@given(messages)
def test_decoding_an_encoded_message_gives_the_message_back(message):
    line = jsonrpc.encode(message)
    assert "\n" not in line
    assert jsonrpc.decode(line) == message
    assert jsonrpc.decode(line.encode("utf-8")) == message  # the wire carries bytes


@settings(max_examples=1500, **FAST)
@given(st.one_of(message_like, st.lists(message_like, max_size=3), json_values), st.booleans(), st.booleans())
def test_decode_accepts_only_what_it_can_send_back_and_refuses_the_rest_with_a_typed_error(obj, mcp, batch):
    text = json.dumps(obj, ensure_ascii=False)  # NaN and Infinity included: they must be refused too
    try:
        decoded = jsonrpc.decode(text, mcp=mcp, allow_batch=batch)
    except JSONRPCError as exc:
        assert exc.code in (-32700, -32600) and exc.message
        return
    for message in decoded if isinstance(decoded, list) else [decoded]:
        if isinstance(message, JSONRPCError):
            continue
        assert jsonrpc.decode(jsonrpc.encode(message), mcp=mcp) == message


@settings(max_examples=2000, **FAST)
@given(st.one_of(st.binary(max_size=64),
                 messages.map(lambda m: jsonrpc.encode(m).encode()),
                 # a seed message cut anywhere, with a few arbitrary bytes after the cut
                 st.tuples(st.sampled_from(SEEDS), st.integers(0, 120), st.binary(max_size=3)).map(
                     lambda t: t[0].encode()[: t[1]] + t[2])),
       st.booleans())
def test_decode_raises_nothing_but_typed_errors_on_arbitrary_bytes(data, mcp):
    try:
        jsonrpc.decode(data, mcp=mcp, allow_batch=True)
    except JSONRPCError:
        pass


@settings(max_examples=1500, **FAST)
@given(st.text(st.characters(exclude_categories=()), max_size=64))
def test_decode_raises_nothing_but_typed_errors_on_arbitrary_text(text):
    try:
        jsonrpc.decode_and_show_work(text)
        jsonrpc.decode(text)
    except JSONRPCError:
        pass


# --- the reply to an unreadable request, per revision -----------------------------------------------------

@pytest.mark.parametrize("version, null", [(None, False), ("2026-07-28", False), ("2025-11-25", False),
                                           ("2025-06-18", True), ("2025-03-26", True), ("2024-11-05", True)])
def test_an_unreadable_requests_error_leaves_the_id_out_from_2025_11_25_and_is_null_before(version, null):
    reply = jsonrpc.encode(jsonrpc.error_response(ParseError("not JSON"), null_id=jsonrpc.keeps_null_id(version)))
    assert json.loads(reply) == ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "not JSON"}}
                                 if null else {"jsonrpc": "2.0", "error": {"code": -32700, "message": "not JSON"}})


def test_a_readable_id_is_echoed_whatever_the_revision():
    refused = InvalidRequest("wrong", request_id=7)
    assert jsonrpc.to_dict(jsonrpc.error_response(refused, null_id=True))["id"] == 7


def test_an_error_response_keeps_its_id_form_through_decode_and_encode():
    for text in ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
                 '{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}'):
        assert jsonrpc.encode(jsonrpc.decode(text)) == text
