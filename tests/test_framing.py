"""mcplab.wire.jsonrpc.LineFramer: bytes in any chunks → the same messages, errors typed and recoverable."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest, JSONRPCError, ParseError
from mcplab.wire.jsonrpc import LineFramer, Notification, Request, Response

REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/tmp/test.txt"}}}'
REPLY = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"文件内容..."}]}}'.encode()
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def feed_all(framer: LineFramer, chunks) -> list:
    return [item for chunk in chunks for item in framer.feed(chunk)]


def test_a_line_split_inside_a_multibyte_character_still_decodes():
    cut = REPLY.index("文".encode()) + 1
    framer = LineFramer()
    assert framer.feed(REPLY[:cut]) == [] and framer.pending == cut
    assert framer.feed(REPLY[cut:] + b"\n") == [jsonrpc.decode(REPLY)]
    assert framer.pending == 0


def test_a_stream_fed_one_byte_at_a_time_gives_the_same_messages():
    stream = REQUEST + b"\n" + REPLY + b"\n" + INITIALIZED + b"\n"
    assert feed_all(LineFramer(), [bytes([b]) for b in stream]) == [
        jsonrpc.decode(REQUEST), jsonrpc.decode(REPLY), Notification("notifications/initialized")]


def test_several_messages_in_one_chunk_come_out_in_order():
    out = LineFramer().feed(b'{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n')
    assert out == [Request(1, "a"), Request(2, "b")]


def test_crlf_line_endings_and_blank_lines_are_tolerated():
    out = LineFramer().feed(b"\r\n\n   \n" + INITIALIZED + b"\r\n\r\n")
    assert out == [Notification("notifications/initialized")]


def test_an_unfinished_line_waits_for_its_newline():
    framer = LineFramer()
    assert framer.feed(INITIALIZED) == []
    assert framer.pending == len(INITIALIZED)
    assert framer.feed(b"\n") == [Notification("notifications/initialized")]


def test_invalid_utf8_is_a_parse_error_and_the_next_line_still_reads():
    out = LineFramer().feed(b'{"jsonrpc":"2.0","method":"\xff"}\n' + INITIALIZED + b"\n")
    assert isinstance(out[0], ParseError) and out[1] == Notification("notifications/initialized")


def test_a_bad_line_is_reported_with_its_code_and_the_stream_goes_on():
    out = LineFramer().feed(b'{"jsonrpc":"2.0","method":1}\nnot json\n' + INITIALIZED + b"\n")
    assert [type(item) for item in out] == [InvalidRequest, ParseError, Notification]


def test_a_line_over_the_limit_is_reported_once_and_framing_recovers_at_the_next_newline():
    framer = LineFramer(max_line=40)
    assert [e.code for e in framer.feed(b"x" * 50)] == [-32700]
    assert framer.feed(b"still the same long line") == []
    assert framer.pending == 0  # nothing of the long line is kept
    assert framer.feed(b"...end\n" + b'{"jsonrpc":"2.0","id":1,"result":0}\n') == [Response(1, 0)]


def test_an_over_long_line_inside_one_chunk_is_reported_between_its_neighbours():
    framer = LineFramer(max_line=40)
    out = framer.feed(b'{"jsonrpc":"2.0","id":1,"result":0}\n' + b"y" * 50 + b'\n{"jsonrpc":"2.0","id":2,"result":0}\n')
    assert out[0] == Response(1, 0) and isinstance(out[1], ParseError) and out[2] == Response(2, 0)
    assert "at most 40 bytes" in out[1].message


def test_the_default_limit_is_four_mebibytes():
    framer = LineFramer()
    assert framer.max_line == 4 * 1024 * 1024
    big = b'{"jsonrpc":"2.0","id":1,"result":"' + b"a" * (4 * 1024 * 1024) + b'"}'
    assert [type(e) for e in framer.feed(big)] == [ParseError]
    assert framer.feed(b"\n" + INITIALIZED + b"\n") == [Notification("notifications/initialized")]


def test_the_limit_counts_bytes_not_characters():
    line = '{"jsonrpc":"2.0","method":"n","params":["文文文文文文"]}'.encode()  # 18 bytes of 文
    assert isinstance(LineFramer(max_line=len(line) - 1).feed(line + b"\n")[0], ParseError)
    assert LineFramer(max_line=len(line)).feed(line + b"\n") == [Notification("n", ["文文文文文文"])]


def test_lines_hands_back_raw_lines_without_decoding():
    assert LineFramer().lines(b"a\r\nb\nc") == [b"a", b"b"]


def test_frames_pairs_each_message_with_its_raw_line_and_feed_is_the_same_without_them():
    stream = b'{"jsonrpc":"2.0","id":1,"result":0}\r\n' + b"z" * 50 + b"\nnot json\n"
    frames = LineFramer(max_line=40).frames(stream)
    assert [line for line, _ in frames] == [b'{"jsonrpc":"2.0","id":1,"result":0}', b"", b"not json"]
    assert [type(m) for _, m in frames] == [Response, ParseError, ParseError]
    fed = LineFramer(max_line=40).feed(stream)
    assert fed[0] == frames[0][1] and [(type(m), m.message) for m in fed[1:]] == [(type(m), m.message) for _, m in frames[1:]]


def test_the_framer_refuses_a_batch_unless_allowed_and_then_decodes_it_as_a_list():
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]\n'
    assert [e.code for e in LineFramer().feed(batch)] == [-32600]
    assert LineFramer(allow_batch=True).feed(batch) == [[Request(1, "ping"), Notification("n")]]


@pytest.mark.parametrize("mcp, expected", [(True, InvalidRequest), (False, Request)])
def test_the_framer_applies_the_mcp_id_rule_only_when_asked(mcp, expected):
    out = LineFramer(mcp=mcp).feed(b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n')
    assert isinstance(out[0], expected)


# --- properties (4,000 examples; test_jsonrpc.py runs 6,500 more) ---------------------------------

FAST = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
LINES = [REQUEST, REPLY, INITIALIZED, b"", b"\r", b"garbage", b'{"jsonrpc":"2.0","id":null,"method":"x"}',
         b'{"jsonrpc":"2.0","method":"\xe6\x96"}', b"[1,2]", b"z" * 70]


@settings(max_examples=2500, **FAST)
@given(st.lists(st.binary(max_size=40), max_size=8), st.sampled_from([8, 64, 4 * 1024 * 1024]))
def test_the_framer_turns_arbitrary_bytes_into_messages_or_typed_errors_only(chunks, max_line):
    framer = LineFramer(max_line=max_line)
    for item in feed_all(framer, chunks):
        assert isinstance(item, (jsonrpc.Request, jsonrpc.Notification, jsonrpc.Response,
                                 jsonrpc.ErrorResponse, JSONRPCError))
    assert framer.pending <= max_line


def outcome(item):
    # An over-long line is reported as soon as it passes the limit, so its byte count
    # depends on where the chunks end; everything else must match exactly.
    return (type(item), item.code) if isinstance(item, JSONRPCError) else item


@settings(max_examples=1500, **FAST)
@given(st.lists(st.sampled_from(LINES), max_size=6), st.sampled_from([b"\n", b"\r\n"]),
       st.lists(st.integers(0, 600), max_size=6))
def test_where_the_chunks_end_never_changes_what_is_read(lines, newline, cuts):
    stream = b"".join(line + newline for line in lines)
    cuts = sorted({min(c, len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    whole = [outcome(i) for i in LineFramer(max_line=64).feed(stream)]
    assert [outcome(i) for i in feed_all(LineFramer(max_line=64), chunks)] == whole
