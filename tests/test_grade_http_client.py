"""The HTTP client grader (mcplab.grade.http_client, `mcplab grade http-client`): the lab's solution gets a
full card in both eras over real HTTP on 127.0.0.1; each broken variant of it (a small edit of its source,
made here) fails exactly one line, the one its mistake breaks, with its own sentence; the starter fails."""

from __future__ import annotations

import pytest

from mcplab import cli, i18n
from mcplab.grade import FAIL, PASS, SKIP
from mcplab.grade.http_client_runs import http_client

from conftest import ROOT

SOLUTION = ROOT / "labs" / "solutions" / "build" / "my_http_client.py"
STARTER = ROOT / "labs" / "build" / "my_http_client.py"
CHECKS = ["exit", "accept", "content-type", "json-answer", "sse-answer", "initialized", "session", "protocol-version",
          "discover", "meta", "mcp-method", "mcp-name", "ends"]
LEGACY_ONLY, MODERN_ONLY = {"initialized", "session"}, {"discover", "meta", "mcp-method", "mcp-name"}

pytestmark = [pytest.mark.subprocess, pytest.mark.http]

# the line a variant breaks, the eras it is graded in, the edit of the solution (old → new, or a list of them),
# words of its line
BROKEN = [
    ("exit", ("legacy", "modern"), ("    return 0\n\n\nif __name__", "    return 3\n\n\nif __name__"),
     "exit status 3 in the legacy run"),
    ("accept", ("legacy", "modern"), ('ACCEPT = "application/json, text/event-stream"', 'ACCEPT = "application/json"'),
     "Accept: application/json"),
    ("content-type", ("legacy", "modern"),
     ('headers = {"Content-Type": "application/json", "Accept": ACCEPT}',
      'headers = {"Content-Type": "text/plain", "Accept": ACCEPT}'), "with Content-Type: text/plain"),
    ("sse-answer", ("legacy", "modern"), ('if kind == "text/event-stream":', "if False:"),
     "was answered in the legacy-sse run"),
    ("initialized", ("legacy",),
     ('sent = self.notify("notifications/initialized")\n'
      '        return line + f"\\nnotifications/initialized → {sent.status_code}"', "return line"),
     "it was never sent"),
    ("session", ("legacy",),
     ('                headers["Mcp-Session-Id"] = self.session_id\n', "                pass\n"),
     "notifications/initialized without it"),
    ("protocol-version", ("legacy",),
     ('            headers["MCP-Protocol-Version"] = self.version\n            if self.session_id',
      "            if self.session_id"), "in the legacy run with MCP-Protocol-Version: (none)"),
    ("discover", ("modern",),
     ('result, response = self.request("server/discover")',
      'response = self.request("tools/list")[1]; result = {"supportedVersions": [MODERN_VERSION]}'),
     "its first request was tools/list"),
    ("meta", ("modern",), ('params = {**(params or {}), "_meta": {', 'params = {**(params or {}), "_unused": {'),
     "server/discover: no _meta"),
    ("mcp-method", ("modern",), ('headers["Mcp-Method"] = message["method"]', 'headers["Mcp-Method"] = "tools/call"'),
     "server/discover with Mcp-Method: tools/call"),
    ("mcp-name", ("modern",),
     ('headers["Mcp-Name"] = header_value(message["params"][source])', 'headers["Mcp-Name"] = "weather"'),
     "tools/call with Mcp-Name: weather"),
    ("ends", ("legacy",), ('if self.era == "legacy" and self.session_id is not None:', "if False:"),
     "the legacy session was never deleted"),
    ("ends", ("modern",), [('if self.era == "legacy" and self.session_id is not None:', "if True:"),
                           ('headers={"Mcp-Session-Id": self.session_id,', 'headers={"Mcp-Session-Id": "none",')],
     "an HTTP DELETE in the modern run"),
]


def statuses(report) -> dict[str, str]:
    return {line.check: line.status for line in report.lines}


def expected_checks(eras) -> list[str]:
    return [c for c in CHECKS if not (c in LEGACY_ONLY and "legacy" not in eras)
            and not (c in MODERN_ONLY and "modern" not in eras)]


def test_the_solution_gets_a_full_card_in_both_eras_over_real_http():
    report = http_client(SOLUTION)
    assert [line.check for line in report.lines] == CHECKS
    assert statuses(report) == {check: PASS for check in CHECKS}, report.text()
    assert report.exit_code == 0
    assert report.text().splitlines()[-1] == "PASS: no line failed (13 checks)"


@pytest.mark.parametrize("check, eras, edit, words", BROKEN, ids=[f"{row[0]}-{'-'.join(row[1])}" for row in BROKEN])
def test_a_broken_variant_of_the_solution_fails_its_own_line_and_only_that(tmp_path, check, eras, edit, words):
    source = SOLUTION.read_text(encoding="utf-8")
    for old, new in [edit] if isinstance(edit[0], str) else edit:
        assert source.count(old) == 1, f"the edit for {check} no longer matches the solution once: {old!r}"
        source = source.replace(old, new)
    variant = tmp_path / "my_http_client.py"
    variant.write_text(source, encoding="utf-8")
    report = http_client(variant, eras=eras)
    assert [line.check for line in report.lines] == expected_checks(eras)
    assert {line.check for line in report.failed} == {check}, report.text()
    assert words in report.line(check).text(), report.text()
    assert report.exit_code == 1


def test_a_client_that_cannot_read_a_json_answer_fails_the_json_line_not_the_stream_line(tmp_path):
    source = SOLUTION.read_text(encoding="utf-8")
    variant = tmp_path / "my_http_client.py"
    variant.write_text(source.replace('if kind == "application/json":', "if False:"), encoding="utf-8")
    report = http_client(variant, eras=("modern",))
    # It stops at its first answer, so the lines about a whole session fail with it; the stream's does not.
    assert report.line("json-answer").status == FAIL
    assert "no tools/call was answered in the modern run" in report.line("json-answer").text(), report.text()
    assert report.line("sse-answer").status == PASS, report.text()


def test_the_starter_fails_and_says_where_to_start():
    report = http_client(STARTER, eras=("legacy",))
    assert report.exit_code == 1
    assert report.line("exit").status == FAIL
    assert "TODO" in report.line("exit").text(), report.text()
    # it sent nothing, so nothing else is judged: skipped, never passed
    assert {line.status for line in report.lines if line.check != "exit"} == {SKIP}, report.text()


def test_the_card_reads_in_chinese_line_for_line(tmp_path, monkeypatch):
    source = SOLUTION.read_text(encoding="utf-8")
    variant = tmp_path / "my_http_client.py"
    variant.write_text(source.replace('headers["Mcp-Name"] = header_value(message["params"][source])',
                                      'headers["Mcp-Name"] = "weather"'), encoding="utf-8")
    monkeypatch.setenv(i18n.ENV, "zh")
    text = http_client(variant, eras=("modern",)).text()
    assert text.splitlines()[0].startswith("成绩单 · http-client")
    assert "✗ 把工具名复制到 tools/call 的 Mcp-Name 头中" in text
    assert "tools/call 带的是 Mcp-Name: weather" in text and "实验 10，§10.3（HTTP 上的 2026-07-28）" in text
    assert text.splitlines()[-1] == "未通过：11 项检查中有 1 项失败"


def test_grade_http_client_on_the_command_line_exits_0_for_the_solution(capsys):
    assert cli.main(["grade", "http-client", str(SOLUTION), "--era", "modern"]) == 0
    out = capsys.readouterr().out
    assert "Report card · http-client" in out and "PASS: no line failed (11 checks)" in out


@pytest.mark.parametrize("text", ["get_weather", "file:///a%20b.txt", " padded ", "天气", "=?base64?x?=", "a\tb"])
def test_the_solution_writes_a_header_value_as_the_package_does(text):
    import importlib.util

    from mcplab.wire.headers import encode_value

    spec = importlib.util.spec_from_file_location("my_http_client", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.header_value(text) == encode_value(text)


def test_an_unknown_era_is_refused_naming_the_eras():
    with pytest.raises(ValueError, match="expected eras among legacy, modern, got future"):
        http_client(SOLUTION, eras=("future",))
