"""mcplab's own words in the Chinese course: what its code prints, raises and draws comes from the
catalogs, while wire data (a server's error message, a frame) stays as it was sent.

The notebooks' stored outputs are counted by tests/test_zh_outputs.py; these tests hold the pieces
that write those outputs to it, one behaviour each, in both languages.
"""

from __future__ import annotations

import pytest

from mcplab import i18n
from mcplab.client.agent import AgentRun
from mcplab.i18n import Joined, Said
from mcplab.lifecycle.legacy import LegacyLifecycle, UnsupportedVersion
from mcplab.wire import jsonrpc
from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError

NULL_ID = '{"jsonrpc":"2.0","id":null,"method":"tools/list"}'
MCP_FORBIDS = 'expected "id" to be a string or an integer, got null (JSON-RPC tolerates a null id, MCP forbids it)'


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")


def test_decode_and_show_work_explains_in_chinese_and_keeps_the_wire_message(zh):
    shown = repr(jsonrpc.decode_and_show_work(NULL_ID))
    assert "一个 JSON 对象" in shown and '"jsonrpc" 是 "2.0"' in shown and "被拒绝" in shown
    assert shown.splitlines()[-1] == f"⇒ 以 -32600 拒绝：{MCP_FORBIDS}"  # the message a server would send


def test_decode_and_show_work_still_reads_in_english_by_default():
    shown = repr(jsonrpc.decode_and_show_work(b'{"jsonrpc":"2.0","id":1,"result":{}}'))
    assert shown.splitlines()[:2] == ["1. bytes → text        →  valid UTF-8", "2. text → JSON         →  a JSON object"]


def test_the_columns_of_a_chinese_explanation_line_up_by_width(zh):
    lines = repr(jsonrpc.decode_and_show_work(NULL_ID)).splitlines()[:3]
    arrows = {i18n.columns(line[:line.index("→  ")]) for line in lines}
    assert len(arrows) == 1, lines


def test_pad_fills_to_columns_on_screen_as_an_f_string_fills_to_characters():
    for text in ("family", "Accept without SSE", ""):
        assert i18n.pad(text, 19) == f"{text:<19}"
    assert i18n.pad("类别", 15) == "类别" + " " * 11 and i18n.columns(i18n.pad("GET，没有会话", 19)) == 19
    assert i18n.pad("JSON, not JSON-RPC, and longer", 19) == "JSON, not JSON-RPC, and longer"  # never cut
    assert i18n.pad(404, 5) == "404  "


def test_a_said_message_keeps_its_english_for_code_and_prints_in_the_language(zh):
    said = Said("catalogue from the last tools/list: {tools}", tools=Said("{n} tool", "{n} tools", 6))
    assert said == "catalogue from the last tools/list: 6 tools" and said.startswith("catalogue")
    assert str(said) == f"{said}" == "来自上一次 tools/list 的目录：6 个工具"
    calls = Joined(", ", [Said("call {call}", call="a(1)"), Said("call {call}", call="b(2)")])
    assert calls == "call a(1), call b(2)" and str(calls) == "调用 a(1), 调用 b(2)"


def test_a_host_run_prints_its_steps_in_chinese_and_records_them_in_english(zh):
    run = AgentRun("2 plus 3?")
    run.step("distribution", "host", Said("catalogue from the last tools/list: {tools}",
                                          tools=Said("{n} tool", "{n} tools", 1)))
    run.step("model", "model → host", Said("final answer"))
    assert run.steps[1] == ("model", "model → host", "final answer")
    assert repr(run).splitlines() == ["[distribution] host          来自上一次 tools/list 的目录：1 个工具",
                                      "[model       ] model → host  最终回答"]


def test_the_confirmation_form_s_buttons_and_status_speak_chinese_and_answer_with_wire_values(zh):
    pytest.importorskip("ipywidgets")
    from mcplab.notebook.confirm import ConfirmForm

    form = ConfirmForm({"method": "elicitation/create", "params": {
        "message": "Replace notes.md?", "requestedSchema": {"type": "object", "properties": {}}}})
    assert [b.description for b in form.buttons.values()] == ["接受", "拒绝"] and form.status.value == "尚未作答"
    assert form.choose("accept") == {"action": "accept", "content": {}} and form.status.value == "已作答：accept"


@pytest.mark.parametrize("make, chinese", [
    (lambda: LegacyLifecycle("2024-10-07"), "这个客户端不会用 initialize 说协议版本 '2024-10-07'"),
    (lambda: LegacyLifecycle().prepare("tools/list", None), "client 处于 'idle' 状态，不能 'send request'"),
    (lambda: jsonrpc.PendingRequests().resolve(jsonrpc.Response(7, {})), "收到 id 为 7 的响应"),
])
def test_the_client_s_own_errors_explain_in_chinese(zh, make, chinese):
    with pytest.raises((LocalProtocolError, RemoteProtocolError)) as caught:
        make()
    assert str(caught.value).startswith(chinese), str(caught.value)


def test_an_unsupported_answer_is_explained_in_chinese_with_the_versions_as_sent(zh):
    error = UnsupportedVersion("2025-11-25", "2099-01-01")
    assert str(error).startswith("向服务端请求协议版本 2025-11-25，它回答 '2099-01-01'")


def test_a_remote_error_explains_in_chinese_and_quotes_the_server_s_message_as_sent(zh):
    from mcplab.wire.errors import RemoteError

    error = RemoteError(-32601, "Method not found", method="tools/lst")
    assert str(error) == "服务端对 tools/lst 的回答是错误 -32601（Method not found）：Method not found"


@pytest.mark.parametrize("make, chinese", [
    (lambda: __import__("mcplab.client.eras", fromlist=["first_step"]).first_step("new", None),
     "era 必须是 'auto'、'legacy' 或 'modern'，实际收到 'new'"),
    (lambda: __import__("mcplab.client.mrtr", fromlist=["input_required"]).input_required(
        {"resultType": "input_required"}), "input_required 结果必须带有 inputRequests、requestState 或两者都有"),
])
def test_bad_input_and_a_broken_server_answer_are_explained_in_chinese(zh, make, chinese):
    with pytest.raises(Exception) as caught:
        make()
    assert str(caught.value).startswith(chinese), str(caught.value)


def test_a_malformed_result_is_explained_in_chinese_and_quotes_what_came_as_it_came(zh):
    from mcplab.client.results import Tool, ToolResult

    with pytest.raises(RemoteProtocolError) as refused:
        Tool.from_json({"name": "get_weather"})
    assert str(refused.value) == "工具应当是带有 'inputSchema' 的对象，收到的是 {'name': 'get_weather'}"
    with pytest.raises(RemoteProtocolError) as refused:
        ToolResult.from_json({"content": "12 °C"})
    assert str(refused.value) == "tools/call 的结果的 'content' 应当是数组，收到的是 '12 °C'"


def test_the_host_marks_a_failed_tool_for_its_model_in_its_own_language_and_keeps_the_server_s_text(zh):
    from mcplab.client.agent import model_text
    from mcplab.client.results import ToolResult

    failed = ToolResult.from_json({"content": [{"type": "text", "text": "Unknown city 'Atlantis'"}], "isError": True})
    assert model_text(failed) == "错误：Unknown city 'Atlantis'"


def test_the_translators_tool_names_a_problem_in_chinese_and_the_entry_as_it_is(zh):
    from mcplab.i18n import catalogs, literals

    catalog = catalogs.new_catalog()
    catalog.append(catalogs.polib.POEntry(msgctxt="cell-1", msgid='"exit code:"', msgstr="", flags=[literals.FLAG]))
    catalog.append(catalogs.polib.POEntry(msgctxt="cell-1", msgid='f"{n} bytes"', msgstr='"{n} 字节"',
                                          flags=[literals.FLAG]))
    assert catalogs.problems(catalog, "x.po") == [
        "x.po: 'cell-1' '\"exit code:\"'：未翻译",
        "x.po: 'cell-1' 'f\"{n} bytes\"': 英文是 f-string 时译文也必须是，英文不是时译文也不能是"]
