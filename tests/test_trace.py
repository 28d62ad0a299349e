"""mcplab.trace and mcplab.trace.views: recording, JSONL, and the text and HTML views."""

from __future__ import annotations

import re
from dataclasses import replace

from mcplab.wire import jsonrpc
from mcplab.trace import views as trace_views
from mcplab.wire.errors import InvalidRequest, JSONRPCError
from mcplab.trace import Trace

INITIALIZE = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              '"capabilities":{},"clientInfo":{"name":"my-agent","version":"0.1.0"}}}')
INITIALIZE_RESULT = ('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18",'
                     '"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"weather","version":"1.2.0"}}}')
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL = ('{"jsonrpc":"2.0","id":3,"method":"tools/call",'
        '"params":{"name":"get_weather","arguments":{"city":"Beijing"}}}')
CALL_RESULT = ('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Beijing 晴，12 摄氏度"}],'
               '"isError":false}}')
UNKNOWN = '{"jsonrpc":"2.0","id":4,"method":"tools/lst"}'
NOT_FOUND = '{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}'


def record(trace: Trace, direction: str, raw: str, channel: str = "stdio", http=None) -> None:
    try:
        message = jsonrpc.decode(raw)
    except JSONRPCError as exc:
        message = exc
    trace.record(direction, channel, raw, message if channel != "stderr" else None, http)


def session() -> Trace:
    trace = Trace()
    for direction, raw in [("c2s", INITIALIZE), ("s2c", INITIALIZE_RESULT), ("c2s", INITIALIZED),
                           ("c2s", CALL), ("s2c", CALL_RESULT), ("c2s", UNKNOWN), ("s2c", NOT_FOUND),
                           ("c2s", '{"jsonrpc":"2.0","method":"foobar, "params"')]:
        record(trace, direction, raw)
    record(trace, "s2c", "weather: ready <on stdio>\n", channel="stderr")
    return trace


# --- recording and JSONL ------------------------------------------------------------------------

def test_frames_are_numbered_in_arrival_order_and_bytes_become_text():
    trace = Trace()
    trace.record("c2s", "stdio", INITIALIZED.encode())
    trace.record("s2c", "stderr", b"bad \xff byte")
    assert [f.seq for f in trace] == [1, 2]
    assert trace.frames[1].raw == "bad \ufffd byte"


def test_jsonl_round_trip_keeps_every_frame_and_its_view():
    trace = session()
    again = Trace.from_jsonl(trace.to_jsonl())
    assert [(f.seq, f.direction, f.channel, f.raw) for f in again] == \
        [(f.seq, f.direction, f.channel, f.raw) for f in trace]
    assert again.text() == trace.text()
    assert again._repr_html_() == trace._repr_html_()


def test_jsonl_round_trip_keeps_refusals_and_frames_without_a_message_as_they_were():
    trace = Trace()
    record(trace, "c2s", '{"jsonrpc":"2.0","id":null,"method":"ping"}')  # refused under MCP only
    trace.record("s2c", "http", "", http={"method": None, "status": 202, "headers": {}})
    first, second = Trace.from_jsonl(trace.to_jsonl()).frames
    assert isinstance(first.message, InvalidRequest) and first.message.message == trace.frames[0].message.message
    assert second.message is None


def test_messages_skips_refused_frames_and_stderr():
    assert [type(m).__name__ for m in session().messages()] == [
        "Request", "Response", "Notification", "Request", "Response", "Request", "ErrorResponse"]


# --- text ---------------------------------------------------------------------------------------

def test_text_is_one_line_per_frame_with_seq_arrow_channel_and_raw():
    lines = session().text().splitlines()
    assert len(lines) == 9
    assert lines[2] == '  3 → stdio   {"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert lines[8].startswith("  9 ← stderr  weather: ready")
    assert str(session()) == session().text()


def test_text_cuts_long_frames_and_folds_newlines():
    trace = Trace()
    trace.record("c2s", "stdio", "x" * 300)
    trace.record("s2c", "http", "event: message\ndata: {}\n\n", http={"method": None, "status": 200, "headers": {}})
    first, second = trace.text(width=40).splitlines()
    assert first.endswith(" " + "x" * 39 + "…")  # 40 characters in all
    assert second == "  2 ← http 200  event: message ⏎ data: {}"


def test_an_empty_trace_says_so():
    assert Trace().text() == "(empty trace)"
    assert repr(Trace()) == "<Trace: 0 frames>"


def test_repr_is_short_and_counts_each_kind():
    assert repr(session()) == ("<Trace: 9 frames: 3 requests, 1 notification, 2 responses, 1 error response, "
                               "1 refused frame, 1 stderr line>")


# --- HTML ---------------------------------------------------------------------------------------

def test_views_are_the_same_on_every_run_and_show_no_times():
    first, second = session(), session()
    second.frames = [replace(f, t=1234.5678) for f in second.frames]
    assert first._repr_html_() == second._repr_html_() and first.text() == second.text()
    assert "1234" not in second._repr_html_() + second.text() + repr(second)


def test_html_is_self_contained_and_small():
    page = session()._repr_html_()
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert len(page.encode()) < 10_000  # nine frames, a few KB


def test_html_escapes_everything_from_the_wire():
    trace = Trace()
    record(trace, "c2s", '{"jsonrpc":"2.0","id":"<b>","method":"<script>alert(1)</script>"}')
    record(trace, "s2c", "<img src=x onerror=alert(1)>", channel="stderr")
    page = trace._repr_html_()
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page


def test_html_pairs_each_response_with_its_request_by_id_and_colour():
    views = trace_views.describe(session().frames)
    by_seq = {v.frame.seq: v for v in views}
    assert (by_seq[2].answers, by_seq[5].answers, by_seq[7].answers) == (1, 4, 6)
    assert by_seq[2].pair == by_seq[1].pair != by_seq[4].pair == by_seq[5].pair
    page = session()._repr_html_()
    assert "result of initialize (id 1) ↩ #1" in page and "↩ #6" in page


def test_requests_from_the_server_pair_with_the_clients_responses():
    trace = Trace()
    record(trace, "c2s", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}')
    record(trace, "s2c", '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}')
    record(trace, "c2s", '{"jsonrpc":"2.0","id":1,"result":{}}')
    record(trace, "s2c", '{"jsonrpc":"2.0","id":1,"result":{}}')
    assert [v.answers for v in trace_views.describe(trace.frames)] == [None, None, 2, 1]


def test_html_styles_notifications_errors_refusals_and_stderr_differently():
    views = {v.kind: v for v in trace_views.describe(session().frames)}
    assert set(views) == {"request", "response", "notification", "error", "refused", "stderr"}
    page = session()._repr_html_()
    rows = re.findall(r"<tr[^>]*>.*?</tr>", page, re.S)[1:]
    assert "dotted" in rows[2] and "(no id)" in rows[2]                   # notification
    assert trace_views.ERROR_TINT in rows[6] and "-32601" in rows[6]     # error response
    assert trace_views.REFUSED_TINT in rows[7] and "-32700" in rows[7]   # refused frame
    assert "weather: ready" in rows[8] and "<details" not in rows[8]      # stderr lane
    assert all("<details" in row and "<pre" in row for row in rows[:8])


def test_html_states_every_style_the_page_would_otherwise_impose():
    # JupyterLab gives an output's tables equal fixed columns, right-aligned cells and striped rows, and
    # breaks a <pre> anywhere; a <style> element would be dropped from an untrusted output. Inline it is.
    page = session()._repr_html_()
    assert page.startswith('<table class="mcplab-trace-view"') and "<style" not in page
    assert "table-layout:fixed" in page and f"width:{trace_views.LANES_WIDTH}" in page
    assert all("background:none" in row for row in re.findall(r"<tr[^>]*>", page))
    assert all("text-align:" in cell for cell in re.findall(r'<td [^>]*>', page))
    pres = re.findall(r'<pre style="([^"]*)"', page)
    assert pres and all("white-space:pre;" in s and "word-break:normal" in s and "overflow-x:auto" in s for s in pres)


def test_raw_json_is_pretty_printed_in_the_expandable_block():
    page = session()._repr_html_()
    assert '\n  "jsonrpc": "2.0",' in page


def test_http_frames_show_method_status_and_headers():
    trace = Trace()
    record(trace, "c2s", CALL, "http", {"method": "POST", "status": None,
                                        "headers": {"MCP-Protocol-Version": "2025-06-18"}})
    record(trace, "s2c", CALL_RESULT, "http", {"method": None, "status": 200,
                                               "headers": {"content-type": "application/json"}})
    page = trace._repr_html_()
    assert "· http POST" in page and "· http 200" in page
    assert "MCP-Protocol-Version: 2025-06-18" in page and "content-type: application/json" in page


def test_a_frame_recorded_without_its_message_is_still_described():
    trace = Trace()
    trace.record("c2s", "stdio", INITIALIZED)
    trace.record("s2c", "http", "", http={"method": None, "status": 202, "headers": {}})
    assert [(v.kind, v.label) for v in trace_views.describe(trace.frames)] == [
        ("notification", "notifications/initialized (no id)"), ("raw", "(empty body)")]


def test_an_empty_trace_renders_a_note():
    assert "empty trace" in Trace()._repr_html_()


def test_a_note_is_kept_apart_from_the_wire_and_survives_jsonl():
    trace = Trace()
    trace.note("era: probe with server/discover first")
    trace.record("c2s", "stdio", '{"jsonrpc":"2.0","id":1,"method":"server/discover"}',
                 jsonrpc.decode('{"jsonrpc":"2.0","id":1,"method":"server/discover"}'))
    assert trace.messages() == [jsonrpc.Request(1, "server/discover")]
    assert "1 note" in repr(trace)
    assert str(trace).splitlines()[0].startswith("  1 · note")
    assert "✎ era: probe with server/discover first" in trace._repr_html_()
    again = Trace.from_jsonl(trace.to_jsonl())
    assert (again.frames[0].channel, again.frames[0].message) == ("note", None)
