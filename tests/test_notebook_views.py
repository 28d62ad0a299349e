"""The notebook trace viewer: schema badges (the official schemas are the oracle), the text
view nbval stores, and the diff of two traces."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT, need, need_all_schemas
from mcplab.wire import jsonrpc
from mcplab import notebook
from mcplab.trace import Trace

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "mcplab", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def record(trace: Trace, direction: str, message: dict, channel: str = "stdio", http: dict | None = None) -> None:
    raw = json.dumps(message, ensure_ascii=False)
    trace.record(direction, channel, raw, jsonrpc.decode(raw, mcp=False), http)


def legacy_session(version: str = "2025-06-18", call_result: dict | None = None) -> Trace:
    trace = Trace()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "mcplab", "version": "0.1.0"}}})
    record(trace, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "weather", "version": "1.0.0"}}})
    record(trace, "c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "get_weather", "arguments": {"city": "Beijing"}}})
    record(trace, "s2c", {"jsonrpc": "2.0", "id": 2, "result": call_result or {
        "content": [{"type": "text", "text": "Beijing: sunny (晴), 12 °C"}], "isError": False}})
    trace.record("s2c", "stderr", "weather: ready")
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "nope"}})
    record(trace, "s2c", {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown prompt"}})
    return trace


def modern_session() -> Trace:
    trace = Trace()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_weather", "arguments": {"city": "Beijing"}, "_meta": META}})
    record(trace, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {
        "resultType": "complete", "content": [{"type": "text", "text": "Beijing: sunny (晴), 12 °C"}]}})
    return trace


@pytest.fixture
def with_schemas(monkeypatch):
    """The folder of official schemas the suite found (../shared or the cache), for the viewer too."""
    folder = need_all_schemas()
    monkeypatch.setenv(notebook.SPEC_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def without_schemas(monkeypatch, tmp_path):
    monkeypatch.setenv(notebook.SPEC_DIR_ENV, str(tmp_path / "nowhere"))


def statuses(view: notebook.TraceView) -> dict[int, str]:
    return {seq: check.status for seq, check in view.checks.items()}


# --- badges ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_a_correct_legacy_session_validates_frame_by_frame_against_its_negotiated_revision(with_schemas, version):
    view = notebook.show(legacy_session(version))
    assert statuses(view) == {1: "valid", 2: "valid", 3: "valid", 4: "valid", 5: "valid", 7: "valid", 8: "valid"}
    assert {check.version for check in view.checks.values()} == {version}
    assert [view.checks[seq].definition for seq in (1, 3, 4, 5)] == [
        "InitializeRequest", "InitializedNotification", "CallToolRequest", "CallToolResult"]
    assert view.checks[8].definition in ("JSONRPCError", "JSONRPCErrorResponse")  # draft-07 and 2020-12 names


def test_a_result_missing_a_required_member_gets_a_cross_that_names_it(with_schemas):
    view = notebook.show(legacy_session(call_result={"isError": False}))
    assert view.invalid == [(5, "'content' is a required property (at result)")]
    assert "✗ 2025-06-18" in view._repr_html_()


def test_the_modern_revision_is_read_from_meta_and_a_response_follows_its_request(with_schemas):
    view = notebook.show(modern_session())
    assert [(c.version, c.definition, c.status) for c in view.checks.values()] == [
        (MODERN, "CallToolRequest", "valid"), (MODERN, "CallToolResultResponse", "valid")]


def test_a_modern_result_without_result_type_is_invalid_in_2026_but_fine_in_2025(with_schemas):
    trace = modern_session()
    trace.frames[1] = Trace.from_jsonl(json.dumps({**trace.frames[1].to_json(), "raw": json.dumps(
        {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})})).frames[0]
    assert statuses(notebook.show(trace))[2] == "invalid"
    assert statuses(notebook.show(trace, version="2025-11-25")) == {1: "valid", 2: "valid"}


def test_a_method_the_revision_does_not_define_is_flagged(with_schemas):
    trace = Trace()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
    assert statuses(notebook.show(trace)) == {1: "valid"}
    check = notebook.show(trace, version="2025-06-18").checks[1]
    assert (check.status, check.detail) == ("invalid", "this revision defines no request 'server/discover'")


def test_the_http_protocol_version_header_names_the_revision_when_nothing_else_does(with_schemas):
    trace = Trace()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, channel="http",
           http={"method": "POST", "status": None, "headers": {"mcp-protocol-version": "2025-03-26"}})
    assert notebook.show(trace).checks[1].version == "2025-03-26"


def test_without_a_version_nothing_is_checked_and_the_badge_says_why(with_schemas):
    trace = Trace()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    check = notebook.show(trace).checks[1]
    assert check.status == "unchecked" and "show(trace, version=...)" in check.detail


def test_stderr_lines_get_no_badge_and_refused_frames_get_a_cross(with_schemas):
    trace = legacy_session()
    trace.record("s2c", "stdio", "not json", jsonrpc.ParseError("not JSON", raw="not json"))
    view = notebook.show(trace)
    assert 6 not in view.checks
    assert view.checks[9].status == "invalid"


def test_badge_notes_are_escaped_like_all_wire_text(with_schemas):
    trace = legacy_session()
    record(trace, "c2s", {"jsonrpc": "2.0", "id": 4, "method": "<script>alert(1)</script>"})
    html = notebook.show(trace)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_official_examples_all_get_a_tick(with_schemas):
    """Every 2026-07-28 example of a whole message validates through our choice of definition, and
    fails once its "jsonrpc" member is gone.

    (Server-to-client requests are examples of objects inside a result in this revision, not
    messages of their own: they carry no "jsonrpc" and are left out.) The examples sit beside the
    schemas in the specification repository; only ../shared/mcp-spec keeps a copy of them."""
    examples = with_schemas / MODERN / "examples"
    need(examples.is_dir(), "the official schema examples are only in ../shared/mcp-spec, not in the cache")
    root = json.loads((with_schemas / MODERN / "schema.json").read_text(encoding="utf-8"))
    checked, wrong = [], []
    for folder in sorted(p.name for p in examples.iterdir()
                         if p.name.endswith(("Request", "Notification", "ResultResponse"))):
        for path in sorted((examples / folder).glob("*.json")):
            example = json.loads(path.read_text(encoding="utf-8"))
            if "jsonrpc" not in example:
                continue
            trace = Trace()
            if folder.endswith("ResultResponse"):  # pair it with a request for its method
                method = root["$defs"][folder.removesuffix("ResultResponse") + "Request"]["properties"]["method"]["const"]
                record(trace, "c2s", {"jsonrpc": "2.0", "id": example["id"], "method": method})
            record(trace, "s2c" if folder.endswith("ResultResponse") else "c2s", example)
            check = notebook.show(trace, version=MODERN).checks[len(trace)]
            if (check.status, check.definition) != ("valid", folder):
                wrong.append((folder, path.name, check.status, check.definition, check.detail))
            broken = {key: value for key, value in example.items() if key != "jsonrpc"}
            trace.frames[-1] = Trace.from_jsonl(json.dumps({**trace.frames[-1].to_json(),
                                                            "raw": json.dumps(broken)})).frames[0]
            if notebook.show(trace, version=MODERN).checks[len(trace)].status != "invalid":
                wrong.append((folder, path.name, "passed without jsonrpc"))
            checked.append(path.name)
    assert len(checked) >= 25 and wrong == [], wrong  # 29 whole messages at the pinned commit


# --- what notebooks store -------------------------------------------------------------------------

def test_the_text_view_lists_every_frame_and_is_the_same_with_or_without_schemas(with_schemas, monkeypatch,
                                                                                   tmp_path):
    trace = legacy_session()
    assert notebook.show(trace).schemas_found
    with_them = repr(notebook.show(trace))
    monkeypatch.setenv(notebook.SPEC_DIR_ENV, str(tmp_path))
    assert repr(notebook.show(trace)) == with_them
    assert with_them.splitlines() == [
        "8 frames: 3 requests, 1 notification, 2 responses, 1 error response, 1 stderr line",
        "  1 → initialize (id 1)",
        "  2 ← result of initialize (id 1) ↩ #1",
        "  3 → notifications/initialized (no id)",
        "  4 → tools/call get_weather (id 2)",
        "  5 ← result of tools/call (id 2) ↩ #4",
        "  6 stderr: weather: ready",
        "  7 → prompts/get nope (id 3)",
        "  8 ← error for prompts/get: -32602 Unknown prompt (id 3) ↩ #7"]


def test_without_schemas_the_viewer_says_badges_are_off(without_schemas):
    view = notebook.show(legacy_session())
    assert view.checks == {} and not view.schemas_found
    html = view._repr_html_()
    assert "schemas not available: badges off" in html and "✓" not in html


def test_the_html_is_the_sequence_diagram_with_a_badge_per_frame_and_no_machine_path(with_schemas):
    html = notebook.show(legacy_session())._repr_html_()
    assert html.count("✓ 2025-06-18") == 7
    assert "<script" not in html and "http" not in html.replace("http-equiv", "")
    assert str(with_schemas) not in html and "/shared/" not in html and "/.cache/" not in html


def test_the_html_opens_with_the_count_of_frames_the_text_view_opens_with(without_schemas):
    # Hints say "read the first line of the trace, which counts the frames": it must be there in the HTML too.
    view = notebook.show(legacy_session())
    first = repr(view).splitlines()[0]
    assert first.startswith("8 frames: ") and view._repr_html_().startswith(f'<div style="font:12px sans-serif;'
                                                                            f'color:#333">{first}</div>')
    assert first not in view.diagram_html()  # the playground shows its own count above the diagram


def test_nbval_compares_the_same_html_with_and_without_schemas(with_schemas, monkeypatch, tmp_path):
    """nbval compares text/html too, after its sanitizer: what the badges add must vanish there."""
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((ROOT / "labs" / "nbval-sanitize.cfg").read_text(encoding="utf-8"))

    def compared(html: str) -> str:
        for regex, replace in patterns:
            html = re.sub(regex, replace, html)
        return html

    with_them = notebook.show(legacy_session())._repr_html_()
    monkeypatch.setenv(notebook.SPEC_DIR_ENV, str(tmp_path))
    without = notebook.show(legacy_session())._repr_html_()
    assert with_them != without
    assert compared(with_them) == compared(without), (
        "labs/nbval-sanitize.cfg needs a section that drops badges:\n"
        "[schema badges: shown only where the official schemas are beside the checkout]\n"
        "regex: (?s)<!--badge-->.*?<!--/badge-->()\nreplace: \\1")


def test_show_takes_a_trace_a_client_or_a_list_of_frames(without_schemas):
    trace = legacy_session()

    class HasTrace:
        pass

    holder = HasTrace()
    holder.trace = trace  # what a Client looks like to show()
    assert repr(notebook.show(holder)) == repr(notebook.show(trace)) == repr(notebook.show(trace.frames))


def test_importing_the_module_loads_neither_jsonschema_nor_ipywidgets():
    code = "import sys, mcplab.notebook; print(sorted(m for m in ('jsonschema', 'ipywidgets') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


# --- diff -----------------------------------------------------------------------------------------

def test_diff_lines_up_shared_steps_and_lists_the_members_that_changed(without_schemas):
    legacy, modern = legacy_session(), modern_session()
    result = notebook.diff(legacy, modern)
    kinds = [(step.kind, step.a and step.a.frame.seq, step.b and step.b.frame.seq) for step in result.steps]
    assert kinds == [("a", 1, None), ("a", 2, None), ("a", 3, None), ("differs", 4, 1), ("differs", 5, 2),
                     ("a", 6, None), ("a", 7, None), ("a", 8, None)]
    call, reply = result.steps[3], result.steps[4]
    assert call.changes == ("+ params._meta",)  # ids differ (2 and 1) and do not count
    assert reply.changes == ("- result.isError", "+ result.resultType")
    assert result.summary() == ("legacy: 8 frames, modern: 2 frames; 2 steps in both (2 differ), "
                                "0 replaced, 6 only in legacy, 0 only in modern")


def test_diff_puts_different_messages_going_the_same_way_on_one_row(without_schemas):
    a, b = Trace(), Trace()
    record(a, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    record(b, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
    b.record("s2c", "stderr", "log line")
    assert [step.kind for step in notebook.diff(a, b).steps] == ["replaced", "b"]


def test_identical_traces_diff_as_all_same_and_values_that_change_are_shown(without_schemas):
    same = notebook.diff(legacy_session(), legacy_session(), labels=("left", "right"))
    assert {step.kind for step in same.steps} == {"same"}
    other = legacy_session(call_result={"content": [{"type": "text", "text": "Beijing: rain"}], "isError": False})
    changed = notebook.diff(legacy_session(), other).steps[4]
    assert changed.changes == ('~ result.content[0].text: "Beijing: sunny (晴), 12 °C" → "Beijing: rain"',)


def test_diff_text_is_deterministic_and_its_html_has_both_labels(with_schemas):
    first = notebook.diff(legacy_session(), modern_session())
    assert repr(first) == repr(notebook.diff(legacy_session(), modern_session()))
    text = repr(first).splitlines()
    assert text[1].split() == ["legacy", "│", "modern"]
    assert text[5] == "  ~ → tools/call get_weather (id 2)" + " " * 18 + "│ → tools/call get_weather (id 1)"
    assert text[6] == "      + params._meta"
    html = first._repr_html_()
    assert ">legacy</th>" in html and ">modern</th>" in html
    assert "✓ 2026-07-28" in html and "✓ 2025-06-18" in html  # each side checked against its own revision


def test_a_folded_diff_keeps_the_steps_that_differ_counts_the_equal_runs_and_shows_no_frame(without_schemas):
    other = legacy_session(call_result={"content": [{"type": "text", "text": "Beijing: rain"}], "isError": False})
    full = notebook.diff(legacy_session(), other, labels=("left", "right"))
    folded = full.folded()
    assert folded.steps == full.steps and not full.fold  # the same diff, only shown shorter
    text = repr(folded).splitlines()
    assert text[:2] == repr(full).splitlines()[:2]
    kinds = [step.kind for step in full.steps]
    first_change = kinds.index("differs")
    assert text[2] == f"  = {first_change} steps the same on both sides"
    assert text[3].startswith("  ~ ← result of tools/call (id 2)")
    assert text[4] == '      ~ result.content[0].text: "Beijing: sunny (晴), 12 °C" → "Beijing: rain"'
    assert text[5] == f"  = {len(kinds) - first_change - 1} steps the same on both sides"
    assert text[-1].startswith(f"folded: {kinds.count('same')} equal steps counted")
    html = folded._repr_html_()
    assert "<pre" not in html and "<details" not in html and "<pre" in full._repr_html_()
    assert len(html) < len(full._repr_html_()) / 2
    assert "Beijing: rain" in html and html.count("steps the same on both sides") == 2
