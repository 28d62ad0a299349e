"""``mcplab inspect`` and ``mcplab call``: tables, results and the wire trace in a terminal."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from client_helpers import command
from mcplab.cli import main
from mcplab.terminal import table
from mcplab.trace import Trace

pytestmark = pytest.mark.subprocess
ROOT = Path(__file__).resolve().parent.parent
WEATHER = shlex.join([sys.executable, str(ROOT / "servers" / "weather.py")])
MINI = shlex.join(command("mini"))


def test_table_aligns_columns_counting_wide_characters_twice():
    assert table([("name", "description"), ("get_weather", "查询天气"), ("x", "ok")]).splitlines() == [
        "  name         description", "  get_weather  查询天气", "  x            ok"]


def test_table_shows_a_servers_controls_as_escapes_and_its_whitespace_as_one_space():
    cell = "a\x1b[2J\tb\r\n c\u202ed\x9b"
    assert table([("name",), (cell,)]).splitlines()[1] == r"  a\x1b[2J b c\u202ed\x9b"


def test_table_cuts_a_long_cell_and_says_how_many_characters_it_left_out():
    assert table([("name", "description"), ("x", "d" * 100), ("y", "e" * 70)], limit=20).splitlines() == [
        "  name  description", "  x     " + "d" * 19 + "…", "  y     " + "e" * 19 + "…",
        "  (cut to 20 columns: 132 characters of 2 cells not shown)"]


def test_table_measures_a_long_cell_only_as_far_as_it_shows(monkeypatch):
    import unicodedata

    from mcplab import terminal

    looked: list[str] = []

    def east_asian_width(ch: str) -> str:
        looked.append(ch)
        return unicodedata.east_asian_width(ch)

    monkeypatch.setattr(terminal, "unicodedata", SimpleNamespace(east_asian_width=east_asian_width))
    shown = table([("description",), ("é" * 4000,)])
    assert shown.splitlines()[1] == "  " + "é" * 59 + "…"
    assert len(looked) <= 4 * 60, f"{len(looked)} width lookups to show 60 columns of a 4,000-character cell"


def test_inspect_shows_capabilities_tables_and_the_trace(capsys, tmp_path):
    saved = tmp_path / "trace.jsonl"
    assert main(["inspect", "--stdio", WEATHER, "--era", "legacy", "--trace-jsonl", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "server        weather 1.0.0" in out and "protocol      2025-11-25" in out
    assert "tools (2)" in out and "get_weather   city, units?" in out
    assert "resource templates (1)" in out and "prompts (1)" in out
    assert "wire trace (11 frames)" in out and '"method":"notifications/initialized"' in out
    trace = Trace.load(saved)
    assert len(trace) == 11 and trace.frames[0].message.method == "initialize"


def test_inspect_can_ask_for_an_older_version(capsys):
    assert main(["inspect", "--stdio", WEATHER, "--version", "2024-11-05", "--no-trace"]) == 0
    out = capsys.readouterr().out
    assert "protocol      2024-11-05" in out and "wire trace" not in out
    assert "version 2024-11-05 is a legacy revision, so no probe" in out  # a legacy version needs no probe


def test_call_prints_the_result_as_json(capsys):
    params = json.dumps({"name": "get_weather", "arguments": {"city": "北京"}}, ensure_ascii=False)
    assert main(["call", "--stdio", WEATHER, "--era", "legacy", "tools/call", params]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.split("\nwire trace")[0])
    assert result["content"][0]["text"].startswith("Beijing: sunny")
    assert '"arguments":{"city":"北京"}' in out


def test_a_tool_error_exits_with_status_one(capsys):
    assert main(["call", "--stdio", MINI, "tools/call", '{"name": "fail"}', "--no-trace"]) == 1
    assert json.loads(capsys.readouterr().out)["isError"] is True


def test_a_crashing_server_reports_the_error_and_still_shows_the_trace(capsys):
    crashing = shlex.join(command("mini", "--exit-on-call", "4"))
    assert main(["call", "--stdio", crashing, "--era", "legacy", "tools/call", '{"name": "echo"}']) == 1
    captured = capsys.readouterr()
    assert "ServerExited" in captured.err and "exited with code 4" in captured.err
    assert "mini server: crashing on purpose" in captured.out  # the stderr line, in the trace


@pytest.mark.parametrize("params, complaint", [("{nope", "not valid JSON"), ("[1, 2]", "JSON object")])
def test_bad_params_are_refused_before_anything_starts(params, complaint):
    with pytest.raises(SystemExit, match=complaint):
        main(["call", "--stdio", MINI, "tools/call", params])


def test_inspect_in_auto_shows_the_probe_and_the_fallback_to_initialize(capsys):
    assert main(["inspect", "--stdio", MINI]) == 0
    out = capsys.readouterr().out
    assert ("era           legacy\n"
            "              era='auto': probe with server/discover first\n"
            "              → server/discover (2026-07-28) got error -32601 (Method not found): not a modern "
            "answer, so the server is legacy; fall back to initialize\n") in out
    trace = out.split("wire trace")[1]
    assert trace.index('"method":"server/discover"') < trace.index('"method":"initialize"')


@pytest.mark.interop
def test_inspect_in_auto_lands_modern_on_the_sdk_server(capsys):
    assert main(["inspect", "--stdio", shlex.join(command("sdk")), "--no-trace"]) == 0
    out = capsys.readouterr().out
    assert "era           modern\n" in out and "got a DiscoverResult listing 2026-07-28" in out
    assert "protocol      2026-07-28" in out and "discovery     may be cached 0 ms, private" in out
    assert "book_table" in out


def test_era_modern_against_a_legacy_server_is_a_clear_error(capsys):
    assert main(["inspect", "--stdio", MINI, "--era", "modern", "--no-trace"]) == 1
    err = capsys.readouterr().err
    assert "EraError" in err and "era='auto'" in err


def test_a_question_is_answered_on_the_terminal_field_by_field(monkeypatch):
    from mcplab.cli import ask_on_terminal

    form = {"message": "Book it?", "requestedSchema": {"type": "object", "properties": {
        "ok": {"type": "boolean"}, "seats": {"type": "integer", "default": 2}, "name": {"type": "string"}}}}
    answers = iter(["y", "", "Ada", ""])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert ask_on_terminal(form) == {"action": "accept", "content": {"ok": True, "seats": 2, "name": "Ada"}}
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert ask_on_terminal(form) == {"action": "decline"}  # nobody at a terminal: decline


def test_a_question_shows_the_servers_text_escaped(monkeypatch, capsys):
    from mcplab.cli import ask_on_terminal

    form = {"message": "Book\x1b[2J it?", "requestedSchema": {"type": "object", "properties": {
        "seats": {"type": "integer", "title": "seats\x1b]0;pwned\x07", "default": "2\u202e"}}}}
    prompts, answers = [], iter(["3", "y"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: prompts.append(prompt) or next(answers))
    assert ask_on_terminal(form) == {"action": "accept", "content": {"seats": 3}}
    assert prompts[0] == r"  seats\x1b]0;pwned\x07 (integer) [2\u202e]: "
    assert r"the server asks: Book\x1b[2J it?" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert ask_on_terminal(form) == {"action": "decline"}
    assert r"mcplab: the server asks 'Book\x1b[2J it?'; there is no terminal" in capsys.readouterr().err


@pytest.mark.http
def test_url_talks_streamable_http_to_the_same_server(capsys):
    server = subprocess.Popen([sys.executable, str(ROOT / "servers" / "weather.py"), "--http", "--port", "0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for _ in range(20):  # the server names its address on stderr once it listens
            found = re.search(r"http://127\.0\.0\.1:\d+/mcp", server.stderr.readline())
            if found:
                url = found.group(0)
                break
        assert url, "the weather server did not say where it listens"
        params = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
        assert main(["call", "--url", url, "--era", "legacy", "tools/call", params]) == 0
        out = capsys.readouterr().out
        assert "Paris: overcast" in out and "POST" in out
    finally:
        server.terminate()
        server.wait(timeout=5)


def test_inspect_marks_the_capabilities_2026_07_28_deprecated(capsys):
    conformance = shlex.join([sys.executable, str(ROOT / "servers" / "conformance.py")])
    assert main(["inspect", "--stdio", conformance, "--era", "legacy", "--no-trace"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("capabilities"))
    assert "logging (deprecated in 2026-07-28)" in line and "tools (listChanged)" in line
