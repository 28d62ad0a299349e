"""The part-two client grader (mcplab.grade.client_two, `mcplab grade client-two`): Lab 12's solution gets
a full card in both eras against the booking desk over real pipes; each broken variant of it (a small
edit of its source, made here) fails exactly one line, the one its mistake breaks, with its own sentence;
the starter fails and says where to start."""

from __future__ import annotations

import shutil

import pytest

from mcplab import cli, i18n
from mcplab.grade import FAIL, PASS, SKIP
from mcplab.grade.client_two_runs import client_two

from conftest import ROOT

SOLUTIONS = ROOT / "labs" / "solutions" / "build"
SOLUTION = SOLUTIONS / "my_client_two.py"
STARTER = ROOT / "labs" / "build" / "my_client_two.py"
CHECKS = ["runs", "pages", "ping", "undeclared", "accept", "schema", "discover", "meta", "retry", "request-state"]
LEGACY_ONLY, MODERN_ONLY = {"ping", "undeclared"}, {"discover", "meta", "retry", "request-state"}

pytestmark = [pytest.mark.subprocess]

# the line a variant breaks, the eras it is graded in, the edit of the solution (old → new), words of its line
BROKEN = [
    ("runs", ("legacy", "modern"), ("    return 0\n\n\nif __name__", "    return 3\n\n\nif __name__"),
     "exit status 3 (the legacy run)"),
    ("pages", ("legacy", "modern"), ("            if cursor is None:\n", "            if cursor is None or pages:\n"),
     "it stopped after page 1, whose nextCursor it never sent back (the legacy run)"),
    ("ping", ("legacy",), ('if method == "ping":', 'if method == "pong":'), '"code": -32601'),
    ("ping", ("legacy",), ("                    self.send(self.respond(reply))", "                    pass"),
     "no response to the ping (id 1) (the legacy run)"),
    ("undeclared", ("legacy",),
     ('"error": {"code": METHOD_NOT_FOUND, "message": f"this client does not offer {method}"}}',
      '"result": {"roots": []}}'), '"result": {"roots": []}'),
    ("accept", ("legacy", "modern"), ('return {"action": "accept", "content": self.answer}',
                                      'return {"action": "decline"}'), '{"action": "decline"} (the legacy run)'),
    ("accept", ("legacy", "modern"), ('CAPABILITIES = {"elicitation": {"form": {}}}', "CAPABILITIES = {}"),
     "the server never asked: the client did not declare the elicitation capability (the legacy run)"),
    ("schema", ("legacy", "modern"), ("        if problem:\n            print(", "        if False:\n            print("),
     '"action": "accept", "content": {"name": "Ada", "seats": "two"}}, for a form that asks for an integer'),
    ("discover", ("modern",), ('result = self.request("server/discover")',
                               'result = {"supportedVersions": [MODERN_VERSION]}'),
     "its first request was tools/list"),
    ("meta", ("modern",), ('        if self.era == "modern":\n            params = self.stamp(params)',
                           '        if self.era == "modern" and method != "tools/list":\n'
                           '            params = self.stamp(params)'), "tools/list: no _meta"),
    ("retry", ("modern",), ('            params = {"name": name, "arguments": arguments, "inputResponses": answers}\n',
                            '            params = {"name": name, "arguments": arguments, "inputResponses": answers}\n'
                            '            self.ids = iter([next(self.ids) - 1])\n'), "the retry reused id 5"),
    ("request-state", ("modern",), ('params["requestState"] = result["requestState"]', "pass"),
     "the retry carried no requestState"),
    ("request-state", ("modern",), ('params["requestState"] = result["requestState"]',
                                    'params["requestState"] = result["requestState"][::-1]'), "instead of"),
]


def expected_checks(eras) -> list[str]:
    return [c for c in CHECKS if not (c in LEGACY_ONLY and "legacy" not in eras)
            and not (c in MODERN_ONLY and "modern" not in eras)]


def variant(tmp_path, old: str, new: str):
    """The solution with one edit, beside the part one it imports."""
    source = SOLUTION.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the edit no longer matches the solution once: {old!r}"
    shutil.copy(SOLUTIONS / "my_client.py", tmp_path / "my_client.py")
    path = tmp_path / "my_client_two.py"
    path.write_text(source.replace(old, new), encoding="utf-8")
    return path


def test_the_solution_gets_a_full_card_in_both_eras():
    report = client_two(SOLUTION)
    assert [line.check for line in report.lines] == CHECKS
    assert {line.check: line.status for line in report.lines} == {check: PASS for check in CHECKS}, report.text()
    assert report.exit_code == 0
    assert report.text().splitlines()[-1] == "PASS: no line failed (10 checks)"


@pytest.mark.parametrize("check, eras, edit, words", BROKEN, ids=[f"{row[0]}-{i}" for i, row in enumerate(BROKEN)])
def test_a_broken_variant_of_the_solution_fails_its_own_line_and_only_that(tmp_path, check, eras, edit, words):
    report = client_two(variant(tmp_path, *edit), eras=eras)
    assert [line.check for line in report.lines] == expected_checks(eras)
    assert {line.check for line in report.failed} == {check}, report.text()
    assert words in report.line(check).text(), report.text()
    assert report.exit_code == 1


def test_a_refused_request_skips_the_lines_it_spoiled_and_points_at_the_cause(tmp_path):
    report = client_two(variant(tmp_path, '        if self.era == "modern":\n            params = self.stamp(params)',
                                '        if self.era == "modern" and method != "tools/list":\n'
                                '            params = self.stamp(params)'), eras=("modern",))
    pages = report.line("pages")
    assert pages.status == SKIP
    assert "the server refused tools/list with error -32602: see the meta line" in pages.text(), report.text()


def test_a_request_of_the_server_s_left_unanswered_skips_the_lines_after_it_and_points_at_its_own(tmp_path):
    report = client_two(variant(tmp_path, "                    self.send(self.respond(reply))",
                                "                    pass"), eras=("legacy",))
    for check in ("runs", "undeclared", "accept", "schema"):
        assert report.line(check).status == SKIP, report.text()
        assert "the server was still waiting for the client's response to ping: see the ping line" \
            in report.line(check).text(), report.text()


def test_the_starter_fails_and_says_where_to_start():
    report = client_two(STARTER, eras=("legacy",))
    assert report.exit_code == 1
    assert report.line("runs").status == FAIL
    assert "TODO" in report.line("runs").text(), report.text()


def test_the_card_reads_in_chinese(tmp_path, monkeypatch):
    path = variant(tmp_path, 'params["requestState"] = result["requestState"]', "pass")
    monkeypatch.setenv(i18n.ENV, "zh")
    text = client_two(path, eras=("modern",)).text()
    assert text.splitlines()[0].startswith("成绩单 · client-two")
    assert text.splitlines()[-1] == "未通过：8 项检查中有 1 项失败"
    assert "实验 12" in text


def test_grade_client_two_on_the_command_line_exits_0_for_the_solution(capsys):
    assert cli.main(["grade", "client-two", str(SOLUTION), "--era", "legacy"]) == 0
    out = capsys.readouterr().out
    assert "Report card · client-two" in out and "PASS: no line failed (6 checks)" in out


def test_an_unknown_era_is_refused_naming_the_eras():
    with pytest.raises(ValueError, match="expected eras among legacy, modern, got future"):
        client_two(SOLUTION, eras=("future",))
