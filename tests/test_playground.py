"""The playground: forms generated from JSON Schema, and the panel driven against the bundled
weather server, by method and by button (a click's work runs in a task group of its own)."""

from __future__ import annotations

import sys

import anyio
import pytest

from mcplab import notebook
from mcplab.notebook.inspector import _expand
from mcplab.wire.errors import MCPLabError, RequestTimeout

SCHEMA = {
    "type": "object",
    "properties": {
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
        "city": {"type": "string", "description": "City name"},
        "verbose": {"type": "boolean"},
        "ratio": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city"],
}


# --- forms (pure) ---------------------------------------------------------------------------------

def test_the_form_has_one_widget_per_property_required_first_and_starred():
    form = notebook.form_for(SCHEMA)
    assert list(form) == ["city", "units", "days", "verbose", "ratio", "tags"]
    assert [form[name].description for name in ("city", "units")] == ["city*", "units"]
    assert type(form["units"]).__name__ == "Dropdown" and form["units"].options == ("", "metric", "imperial")
    assert form["units"].value == "metric" and form["days"].value == "3"  # defaults filled in
    assert type(form["verbose"]).__name__ == "Checkbox"
    assert "City name" in form["city"].placeholder


def test_arguments_leave_empty_boxes_out_and_parse_numbers_booleans_and_json():
    form = notebook.form_for(SCHEMA)
    assert notebook.arguments_from(form, SCHEMA) == {"units": "metric", "days": 3}
    form["city"].value, form["verbose"].value = "北京", True
    form["ratio"].value, form["tags"].value, form["units"].value = "0.5", '["a", "b"]', ""
    assert notebook.arguments_from(form, SCHEMA) == {"city": "北京", "days": 3, "verbose": True,
                                                     "ratio": 0.5, "tags": ["a", "b"]}


def test_a_value_that_does_not_parse_names_its_argument():
    form = notebook.form_for(SCHEMA)
    form["days"].value = "three"
    with pytest.raises(ValueError, match="days: 'three' is not a valid integer"):
        notebook.arguments_from(form, SCHEMA)


@pytest.mark.parametrize(("template", "values", "uri"), [
    ("weather://city/{name}", {"name": "New York"}, "weather://city/New%20York"),
    ("file:///{+path}", {"path": "src/greet.py"}, "file:///src/greet.py"),
    ("file:///{path}", {"path": "src/greet.py"}, "file:///src%2Fgreet.py"),
])
def test_resource_templates_expand_like_rfc_6570(template, values, uri):
    assert _expand(template, values) == uri


def test_a_new_playground_is_not_connected_and_says_so():
    pg = notebook.playground("weather")
    assert repr(pg) == "Playground (weather over stdio, era legacy): not connected"
    assert pg.send_button.disabled and pg.trace is None
    bundle = pg._repr_mimebundle_()
    assert bundle["text/plain"] == repr(pg) and "application/vnd.jupyter.widget-view+json" in bundle


# --- against the weather server -------------------------------------------------------------------

@pytest.fixture
def anyio_backend():
    return "asyncio"  # ipykernel runs cells and widget callbacks on asyncio


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_the_panel_lists_the_weather_server_and_sends_a_call_from_its_form():
    pg = notebook.playground("weather")
    await pg.connect()
    try:
        assert repr(pg) == ("Playground (weather over stdio, era legacy): connected, 2 tools, 2 resources, "
                            "1 prompt; selected tool get_weather")
        assert list(pg.catalogue["resources"]) == ["weather://cities", "weather://city/{name}"]
        before = len(pg.trace)
        pg.select_tool("get_weather")["city"].value = "Beijing"
        result = await pg.send()
        assert result.text == "Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h"
        assert len(pg.trace) == before + 2
        assert "Beijing: sunny" in pg.result.value and f"{before + 2} frames" in pg.trace_count.value
        pg.select_resource("weather://city/{name}")["name"].value = "Paris"
        assert '"city": "Paris"' in (await pg.send()).text
        pg.select_prompt("weather_report")["city"].value = "Seoul"
        assert "Seoul" in (await pg.send()).messages[1].content.text
    finally:
        await pg.close()
    assert repr(pg).endswith("not connected") and pg.send_button.disabled


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_clicking_send_runs_the_call_in_a_task_group_that_ends_with_it():
    pg = notebook.playground("weather")
    await pg.connect()
    try:
        pg.select_tool("get_forecast")["city"].value = "Tokyo"
        before = len(pg.trace)
        pg.send_button.click()
        first = pg.task
        assert pg.busy and pg.send_button.disabled and not first.done()
        pg.send_button.click()  # ignored while the first one runs
        assert pg.task is first
        with anyio.fail_after(10):
            await first.wait()
        assert len(pg.trace) == before + 2 and not pg.send_button.disabled and not pg.busy
        assert pg.last_result.structured["city"] == "Tokyo"
    finally:
        await pg.close()


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_click_whose_work_fails_shows_the_failure_and_frees_the_buttons():
    pg = notebook.playground("weather")
    await pg.connect()
    try:
        pg.select_tool("get_weather")["city"].value = "Paris"
        await pg.client.aclose()  # the server is gone under the panel: the click's call must fail
        pg.send_button.click()
        with anyio.fail_after(10):
            await pg.task.wait()
        assert not pg.busy and not pg.connect_button.disabled
        assert "LocalProtocolError: client in state &#x27;closed&#x27; cannot &#x27;send request&#x27;" in pg.result.value
    finally:
        await pg.close()


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_tool_error_and_a_bad_selection_are_reported_not_hidden():
    pg = notebook.playground("weather")
    await pg.connect()
    try:
        pg.select_tool("get_weather")["city"].value = "Atlantis"
        result = await pg.send()
        assert result.is_error and "Unknown city" in pg.result.value
        with pytest.raises(ValueError, match="no tool 'nope'; this server has: get_weather, get_forecast"):
            pg.select_tool("nope")
    finally:
        await pg.close()


@pytest.mark.anyio
@pytest.mark.subprocess
@pytest.mark.http
async def test_a_bundled_server_over_http_is_launched_on_a_free_port_and_stopped_at_close():
    pg = notebook.playground("weather", transport="http")
    await pg.connect()
    try:
        process = pg._server.process
        assert pg.trace.frames[0].channel == "http"
        pg.select_tool("get_weather")["city"].value = "Cairo"
        assert (await pg.send()).text.startswith("Cairo: sunny")
    finally:
        await pg.close()
    assert process.poll() is not None


@pytest.mark.anyio
@pytest.mark.parametrize(("options", "expected"), [
    ({"era": "modern"}, "era='modern' is not available"),
    ({"server": "http://127.0.0.1:9/mcp"}, "connection failed"),
])
async def test_what_cannot_connect_is_said_in_the_status_line(options, expected):
    pg = notebook.playground(**options)
    try:
        await pg.connect()
    except (ValueError, MCPLabError):
        pass
    else:  # the modern era has arrived since this test was written: then it must work
        await pg.close()
        return
    assert expected in pg.status.value.replace("&#x27;", "'")
    assert pg.client is None and pg._server is None


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_the_status_line_lists_the_servers_capabilities_and_marks_the_deprecated_ones():
    import sys

    from client_helpers import ROOT

    pg = notebook.playground([sys.executable, str(ROOT / "servers" / "conformance.py")])
    await pg.connect()
    try:
        status = pg.status.value
    finally:
        await pg.close()
    assert "logging (deprecated in 2026-07-28)" in status and "tools (listChanged)" in status


# --- a hostile server's sizes ---------------------------------------------------------------------

def test_an_error_message_is_cut_in_the_result_box_and_says_how_much():
    from mcplab.notebook.inspector import MAX_RESULT
    from mcplab.wire.errors import RemoteError

    error = RemoteError(-32603, "e" * 1_000_000, method="tools/call")  # what a server's 1 MB message becomes
    pg = notebook.playground("weather")
    pg._error(error)
    assert f"… ({len(str(error)) - MAX_RESULT} more characters)" in pg.result.value
    assert len(pg.result.value) < MAX_RESULT + 500, f"the result box holds {len(pg.result.value)} characters"


BIG = 3_900_000  # characters the hostile server adds to its tool's description and to the call's result


def loud_server() -> list[str]:
    from redteam_helpers import script

    return script("loud", '""', str(BIG))  # tool "shout(city)": a 3.9 MB description, a 3.9 MB result


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_huge_description_is_cut_in_the_about_line_which_says_how_much():
    from mcplab.notebook.inspector import MAX_ABOUT

    pg = notebook.playground(loud_server())
    await pg.connect()
    try:
        about, description = pg.about.value, pg.catalogue["tools"]["shout"].description
    finally:
        await pg.close()
    assert len(description) == len("description") + BIG  # the catalogue keeps it whole
    assert about.startswith("<b>shout</b> description" + "d" * (MAX_ABOUT - len("description")))
    assert about.endswith(f"… ({len(description) - MAX_ABOUT} more characters)") and len(about) < MAX_ABOUT + 100


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_huge_result_is_cut_in_the_result_box_and_stays_whole_in_the_trace():
    import json

    from mcplab.notebook.inspector import MAX_RESULT

    pg = notebook.playground(loud_server())
    await pg.connect()
    try:
        pg.select_tool("shout")["city"].value = "Paris"
        result = await pg.send()
        box, answer = pg.result.value, json.loads(pg.trace.frames[-1].raw)
    finally:
        await pg.close()
    assert result.text == "result" + "r" * BIG and pg.last_result is result
    assert answer["result"]["content"][0]["text"] == result.text  # the trace holds the whole answer
    shown = json.dumps(result.raw, indent=2, ensure_ascii=False)
    assert f"… ({len(repr(result)) - MAX_RESULT} more characters)" in box  # the typed result, cut
    assert f"… ({len(shown) - MAX_RESULT} more characters)" in box         # and its JSON, cut
    assert len(box) < 2 * MAX_RESULT + 1000, f"the result box holds {len(box)} characters"


@pytest.mark.anyio
@pytest.mark.subprocess
@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_server_that_does_not_answer_in_time_is_said_to_be_slow_not_wrong(era):
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # reads everything, answers nothing
    pg = notebook.playground(silent, era=era, timeout=1)
    with pytest.raises(RequestTimeout):
        await pg.connect()
    assert ("connection failed: the server did not answer within 1 s on this machine; this says nothing about the "
            "spec or the server; click Connect again (or close other work, or pass timeout=N)</span>"
            in pg.status.value), pg.status.value
    assert pg.client is None
