"""The labs' plumbing in mcplab.notebook: ports masked, a message shown whole, a request and its answer
found in a real trace, a sealed requestState opened, raw POSTs to a real server (each refusal by its
status and code), and the confirmation form driven through its buttons."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT
from mcplab import Client, lifecycle, notebook
from mcplab.client.mrtr import retry_params
from mcplab.server.streamable_http import launch
from mcplab.transports.stdio import stdio
from mcplab.wire import jsonrpc

WEATHER = [sys.executable, str(ROOT / "servers" / "weather.py")]
FIXTURES = [sys.executable, str(ROOT / "servers" / "conformance.py")]
MODERN = "2026-07-28"
META = lifecycle.stamp(None, MODERN, {})["_meta"]


def test_masked_hides_every_loopback_port_and_nothing_else():
    text = "serving at http://127.0.0.1:50123/mcp and 127.0.0.1:8 (not 10.0.0.1:80)"
    assert notebook.masked(text) == "serving at http://127.0.0.1:PORT/mcp and 127.0.0.1:PORT (not 10.0.0.1:80)"


def test_pretty_shows_a_dict_and_a_decoded_message_whole_with_chinese_as_it_is():
    message = jsonrpc.Response(1, {"content": [{"type": "text", "text": "晴"}], "_meta": {"k": {"deep": True}}})
    text = notebook.pretty(message)
    assert json.loads(text) == jsonrpc.to_dict(message) and "晴" in text and "…" not in text
    assert notebook.pretty({"a": 1}) == '{\n "a": 1\n}'


@pytest.mark.subprocess
@pytest.mark.anyio
async def test_first_exchange_finds_the_request_and_the_response_with_its_id_in_a_real_trace():
    async with Client(stdio(WEATHER), era="modern") as client:
        await client.call_tool("get_weather", {"city": "Cairo"})
        await client.call_tool("get_weather", {"city": "Tokyo"})
    request, reply = notebook.first_exchange(client.trace, "tools/call")
    assert request.params["arguments"] == {"city": "Cairo"} and reply.id == request.id
    assert "Cairo" in reply.result["content"][0]["text"]
    assert request.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    with pytest.raises(LookupError, match="expected a prompts/get request"):
        notebook.first_exchange(client.trace, "prompts/get")


@pytest.mark.subprocess
@pytest.mark.anyio
async def test_request_state_text_opens_a_real_sealed_state_with_its_expiry_masked():
    wizard = {"name": "test_input_required_result_multi_round", "arguments": {}}
    async with Client(stdio([*FIXTURES, "--era", "modern"]), era="modern",
                      elicitation=lambda params: {"action": "accept", "content": {}}) as client:
        first = await client.request("tools/call", wizard, rounds=False)
        second = await client.request("tools/call", retry_params(
            wizard, {"step1": {"action": "accept", "content": {"name": "Ada"}}}, first["requestState"]), rounds=False)
    text = notebook.request_state_text(second["requestState"])
    head, payload = text.splitlines()
    assert head.startswith(f"requestState: {len(second['requestState'])} characters = ")
    opened = json.loads(payload.removeprefix("payload: "))
    assert opened["exp"] == "<now + 15 minutes>" and opened["answers"]["step1"]["content"] == {"name": "Ada"}


@pytest.mark.parametrize("state, says", [("no-dot-here", "of the form <payload>.<mac>"),
                                         ("!!!.abc", "base64url JSON")])
def test_request_state_text_refuses_what_is_not_a_sealed_state_by_name(state, says):
    with pytest.raises(ValueError, match=says):
        notebook.request_state_text(state)


@pytest.fixture(scope="module")
def weather_url():
    with launch(WEATHER) as server:
        yield server.url


@pytest.mark.subprocess
def test_post_sends_exactly_the_body_and_headers_given_and_shows_the_refusal_by_status_and_code(weather_url):
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "get_forecast", "arguments": {"city": "Paris"}, "_meta": META}}
    forged = notebook.post(weather_url, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                         "Mcp-Name": "get_weather", "Mcp-Param-City": "Paris"}, body, title="forged")
    assert forged.status == 400 and forged.said()["code"] == -32020
    text = str(forged)
    assert text.startswith("forged\n  → MCP-Protocol-Version: 2026-07-28  Mcp-Method: tools/call  Mcp-Name: get_weather")
    assert json.dumps(body, ensure_ascii=False) in text, "the body is shown whole"
    honest = notebook.post(weather_url, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                         "Mcp-Name": "get_forecast", "Mcp-Param-City": "Paris"}, body)
    assert honest.status == 200 and honest.message.result["structuredContent"]["city"] == "Paris"


@pytest.mark.subprocess
def test_post_discover_asks_for_the_version_in_body_and_header_and_the_server_answers_32022(weather_url):
    future = notebook.post_discover(weather_url, "2027-01-01", 1)
    assert future.status == 400 and future.message.code == -32022
    assert future.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2027-01-01"
    assert future.headers == {"MCP-Protocol-Version": "2027-01-01", "Mcp-Method": "server/discover"}
    assert MODERN in future.message.data["supported"]
    now = notebook.post_discover(weather_url, MODERN, 2)
    assert now.status == 200 and now.message.result["supportedVersions"][0] == MODERN


CONFIRM = {"method": "elicitation/create", "params": {
    "message": "Replace notes.md?", "requestedSchema": {
        "type": "object", "required": ["replace"],
        "properties": {"replace": {"type": "boolean", "default": False}, "why": {"type": "string"}}}}}


def test_the_confirm_form_stores_what_its_buttons_say_and_its_stored_text_is_stable():
    form = notebook.ConfirmForm(CONFIRM)
    assert form.answer is None
    assert form._repr_mimebundle_()["text/plain"] == "ConfirmForm: Replace notes.md? [replace, why]"
    form.fields["replace"].value = True
    form.buttons["accept"].click()
    assert form.answer == {"action": "accept", "content": {"replace": True}} and form.status.value == "answered: accept"
    form.buttons["decline"].click()
    assert form.answer == {"action": "decline"}
    with pytest.raises(ValueError, match="expected one of"):
        form.choose("maybe")


def test_always_confirm_accepts_with_every_boolean_ticked_and_refuses_what_is_no_elicitation():
    assert notebook.always_confirm(CONFIRM) == {"action": "accept", "content": {"replace": True}}
    for bad in ({"method": "elicitation/create"}, {"params": {"message": "x"}}, "replace?"):
        with pytest.raises(ValueError, match="requestedSchema"):
            notebook.always_confirm(bad)
        with pytest.raises(ValueError, match="requestedSchema"):
            notebook.ConfirmForm(bad)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_post_the_server_does_not_answer_in_time_says_the_machine_was_slow(monkeypatch):
    import socket

    from mcplab.notebook import raw_post

    # A socket that listens and never answers: the connection is queued, the reply never comes.
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        monkeypatch.setattr(raw_post, "TIMEOUT_S", 1.0)
        url = f"http://127.0.0.1:{mute.getsockname()[1]}/mcp"
        with pytest.raises(TimeoutError) as raised:
            raw_post.post(url, {}, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert str(raised.value) == (f"{url} did not answer the POST within 1 s on this machine; this says nothing "
                                 "about the spec or the server; run the cell again (or close other work)")


def test_masker_hides_the_labs_folder_this_machines_paths_ports_lengths_and_random_values(tmp_path):
    shown = notebook.masker(tmp_path)
    text = (f"{tmp_path}/notes/secret.txt via {sys.executable} at http://127.0.0.1:43123/mcp\n"
            "Content-Length: 217\nLocation: http://attacker.example:5010/cb?state=Zq3v0x9LmN2b&code=x\n"
            '{"client_id": "f3b2c1d0e9a8b7c6", "scope": "notes:read"}')
    assert shown(text) == ("<work>/notes/secret.txt via <python> at http://127.0.0.1:PORT/mcp\n"
                           "Content-Length: …\nLocation: http://attacker.example:PORT/cb?state=‹random›&code=x\n"
                           '{"client_id": "‹random›", "scope": "notes:read"}')


def test_masker_prints_json_indented_with_the_same_masks(tmp_path):
    shown = notebook.masker(tmp_path)
    block = {"command": sys.executable, "args": [str(tmp_path / "notes")], "env": {"CITY": "北京"}}
    assert json.loads(shown(block)) == {"command": "<python>", "args": ["<work>/notes"], "env": {"CITY": "北京"}}
    assert shown(block).startswith('{\n  "command"'), "two spaces a level, as a host's config file"
    assert notebook.masker()("short=abc state=abc") == "short=abc state=abc", "a value under 8 characters is a word"


def test_source_prints_a_function_or_the_statement_that_makes_a_modules_name():
    sys.path.insert(0, str(ROOT / "labs" / "build"))
    try:
        import bookshelf
    finally:
        sys.path.remove(str(ROOT / "labs" / "build"))
    assert notebook.source(bookshelf, "server").startswith('server = Server("bookshelf", "0.1.0"')
    assert notebook.source(bookshelf, "server").endswith('"shelf://books lists them all.")')
    assert notebook.source(bookshelf.add_book).startswith("@server.tool")
    with pytest.raises(LookupError, match="'nowhere' in bookshelf"):
        notebook.source(bookshelf, "nowhere")
