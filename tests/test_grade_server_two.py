"""The part-two server grader (mcplab.grade.server_two, `mcplab grade server-two`): the lab's solution gets a
full card in both eras over stdio and over real Streamable HTTP on 127.0.0.1; each broken variant of it (a
small edit of its source, made here) fails exactly one line, the one its mistake breaks, with its own words;
the starter fails the brief's lines."""

from __future__ import annotations

import shutil

import pytest

from mcplab import cli, i18n
from mcplab.grade import FAIL, PASS, SKIP
from mcplab.grade.server_two_checks import server_two

from conftest import ROOT

SOLUTION = ROOT / "labs" / "solutions" / "build" / "my_server_two.py"
LAB09 = ROOT / "labs" / "solutions" / "build" / "my_server.py"
STARTER = ROOT / "labs" / "build" / "my_server_two.py"
CHECKS = ["stdio", "http", "progress", "cancel", "pages", "bad-cursor", "ask"]
EVERY_RUN = "legacy over stdio, modern over stdio, legacy over HTTP, modern over HTTP"

pytestmark = [pytest.mark.subprocess, pytest.mark.http]

RUN = '\nif __name__ == "__main__":\n    run(server)\n'
# the line a variant breaks, the edit of the solution (old → new, or a list of them), words of its line
BROKEN = [
    ("stdio", (RUN, '\nif __name__ == "__main__":\n    if "--http" not in __import__("sys").argv:\n'
                    '        raise SystemExit("this server speaks HTTP only")\n    run(server)\n'),
     "this server speaks HTTP only"),
    ("http", (RUN, '\nif __name__ == "__main__":\n    if "--http" in __import__("sys").argv:\n'
                   '        raise SystemExit("this server speaks stdio only")\n    run(server)\n'),
     "this server speaks stdio only"),
    ("progress", ('        await ctx.report_progress(step, total=steps, message=f"step {step} of {steps}")',
                  '        ctx._post("notifications/progress", {"progressToken": ctx.progress_token, "progress": 1})'),
     "progress went [1, 1, 1, 1]"),
    ("cancel", ("        await anyio.sleep(STEP_SECONDS)",
                "        with anyio.CancelScope(shield=True):\n            await anyio.sleep(STEP_SECONDS)"),
     "the cancelled job kept working"),
    ("pages", ('json.dumps({"list": what, "from": end})', 'json.dumps({"list": what, "from": end - 1})'),
     "came on more than one page"),
    ("pages", [('base64.urlsafe_b64encode(json.dumps({"list": what, "from": end}).encode()).decode()', "str(end)"),
               ("place = json.loads(base64.urlsafe_b64decode(str(cursor).encode()))",
                'place = {"list": what, "from": int(str(cursor))}')],
     "nextCursor '10' is not an opaque string"),
    ("bad-cursor", ('            raise InvalidParams(f"expected a cursor from an earlier {what} page\'s nextCursor, '
                    'got {cursor!r}")', "            start = 0"), "a page of 10 items"),
    ("ask", ("signed off by {answer['content']['name']}\"", "signed off by someone\""),
     "is not in the result"),
    ("ask", ('ctx.state.setdefault("receipt", secrets.token_hex(4))', "secrets.token_hex(4)"),
     "modern over stdio, modern over HTTP: the input_required result had no requestState"),
]


def variant(tmp_path, edits) -> str:
    """The solution with ``edits`` made, beside Lab 09's solution it imports; its path."""
    source = SOLUTION.read_text(encoding="utf-8")
    for old, new in edits if isinstance(edits, list) else [edits]:
        assert source.count(old) == 1, f"the solution changed: {old!r} is not in it once"
        source = source.replace(old, new)
    shutil.copy(LAB09, tmp_path / "my_server.py")
    path = tmp_path / "my_server_two.py"
    path.write_text(source, encoding="utf-8")
    return str(path)


def test_the_solution_gets_a_full_card_in_both_eras_over_both_transports():
    report = server_two(SOLUTION)
    assert [line.check for line in report.lines] == CHECKS
    assert [line.status for line in report.lines] == [PASS] * len(CHECKS), report.text()
    assert report.ok and not report.late
    for line in report.lines[2:]:
        assert line.note == EVERY_RUN  # each behaviour was seen in all four runs, not just one


@pytest.mark.parametrize("check, edits, words", BROKEN, ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN)])
def test_each_broken_variant_fails_its_own_line_only(tmp_path, check, edits, words):
    report = server_two(variant(tmp_path, edits))
    failing = [line.check for line in report.lines if line.status == FAIL]
    assert failing == [check], report.text()
    assert words in report.line(check).got, report.text()
    assert not report.late, report.text()


def test_a_crunch_without_progress_leaves_the_cancel_line_unjudged_not_failed_and_not_late(tmp_path):
    report = server_two(variant(tmp_path, ('        await ctx.report_progress(step, total=steps, message=f"step {step} '
                                           'of {steps}")', "        pass")), transports=("stdio",))
    assert [line.check for line in report.lines if line.status == FAIL] == ["progress"], report.text()
    cancel = report.line("cancel")
    assert cancel.status == SKIP and not cancel.late and "fewer than two progress notifications" in cancel.note


def test_the_starter_fails_every_line_of_the_brief_and_opens_in_both_transports():
    report = server_two(STARTER)
    statuses = {line.check: line.status for line in report.lines}
    assert statuses == {"stdio": PASS, "http": PASS, **{check: FAIL for check in CHECKS[2:]}}, report.text()
    assert "no tool crunch" in report.line("progress").got
    assert "a page of 0 items" not in report.text()


def test_era_and_transport_narrow_the_runs_and_the_command_exits_1_on_a_failing_line(tmp_path, capsys):
    report = server_two(SOLUTION, eras=("modern",), transports=("http",))
    assert report.line("stdio").status == SKIP and report.line("http").status == PASS
    assert report.line("ask").note == "modern over HTTP"
    broken = variant(tmp_path, BROKEN[6][1])
    assert cli.main(["grade", "server-two", broken, "--era", "legacy", "--transport", "stdio"]) == 1
    out = capsys.readouterr().out
    assert "legacy over stdio: a page of 10 items" in out and "modern" not in out.split("\n", 1)[1]


def test_the_card_reads_in_chinese_line_for_line(tmp_path, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")
    text = server_two(variant(tmp_path, BROKEN[6][1]), eras=("legacy",), transports=("stdio",)).text()
    assert text.splitlines()[0].startswith("成绩单 · 服务端（第二部分）")
    assert "✗ 服务端从未发出过的游标得到 -32602" in text and "旧版·stdio: 一页 10 项" in text
    assert "实验 11 §4" in text and text.splitlines()[-1] == "未通过：7 项检查中有 1 项失败"


@pytest.mark.parametrize("eras, transports, words", [
    (("future",), ("stdio",), "expected eras among legacy, modern, got future"),
    (("legacy",), ("pigeon",), "expected transports among stdio, http, got pigeon"),
    ((), ("http",), "expected eras among legacy, modern, got none"),
])
def test_an_unknown_era_or_transport_is_refused_naming_what_is_known(eras, transports, words):
    with pytest.raises(ValueError, match=words):
        server_two(SOLUTION, eras=eras, transports=transports)
