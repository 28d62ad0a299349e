"""The Chinese labs print Chinese: English prose in their stored outputs is counted, per notebook.

The counter is ``tests/zh_outputs.py`` (what counts as prose, what stays English and why); the
allowlist and the counts still allowed per notebook are ``tests/zh_outputs_allow.json``. A notebook
must show exactly as many English outputs as its line allows: more is a regression, fewer means
the line must come down (it only goes down, to 0). A failure lists each output (notebook, cell
index, output index, the English found) so a translator can go straight to it; ``python
tests/zh_outputs.py`` lists them all, and with ``--table`` writes the counts after a rebuild.

The same check runs on fresh outputs: when nbval executes a Chinese lab (``tests/conftest.py``), a
cell whose new outputs show English its stored outputs do not fails there.
"""

from __future__ import annotations

import json
import re

import pytest

import zh_outputs
from conftest import ROOT

ZH = ROOT / "labs" / "zh-CN"
TABLE = json.loads(zh_outputs.ALLOW_FILE.read_text(encoding="utf-8"))


def chinese_notebooks() -> list[str]:
    return sorted(path.relative_to(ZH).as_posix() for path in ZH.rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in path.parts)


# --- the counter itself: a table of texts, each with what it must find ------------------------------------

FOUND = [
    ("a sentence of the client's", "LocalProtocolError: this client does not speak protocol version '2024-10-07'",
     ["this client does not speak protocol version"]),
    ("prose after Chinese", "回落到 initialize. This client was asked for era='modern'", ["This client was asked for"]),
    ("words around a plain number", "12 adapters vs 7 implementations", ["adapters vs 7 implementations"]),
    ("a table's head row", "function name   server   MCP tool\nget_weather     weather  get_weather",
     ["function name server MCP tool"]),
    ("a server's string not seen on the wire", "tool error: Unknown city 'Atlantis'. Known cities: Beijing",
     ["tool error: Unknown city", "Known cities: Beijing"]),
]

LEFT_ALONE = [
    ("a JSON frame", '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method is not here at all"}}'),
    ("a frame cut short", '  8 ← stdio   {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"It is a long…'),
    ("identifiers and versions", "tools/list get_weather notifications/initialized 2025-11-25 listChanged"),
    ("a repr's fields", "ToolResult(text='Tokyo: light rain and some wind', is_error=False)"),
    ("an object's repr", "<Client: weather 1.0.0, protocol 2025-11-25>"),
    ("two words", "exit code: 0"),
    ("names in capitals", "HOME, LOGNAME, PATH, SHELL"),
    ("Chinese", "7 帧：3 个请求、1 个通知、3 个响应"),
    ("a table's columns of one word", "name     server   tool"),
]


@pytest.mark.parametrize("case, text, runs", FOUND, ids=[case for case, _, _ in FOUND])
def test_the_counter_finds_english_prose_outside_code_and_wire_data(case, text, runs):
    assert zh_outputs.english_runs(text, allowed=[]) == runs


@pytest.mark.parametrize("case, text", LEFT_ALONE, ids=[case for case, _ in LEFT_ALONE])
def test_the_counter_leaves_wire_data_identifiers_and_reprs_alone(case, text):
    assert zh_outputs.english_runs(text, allowed=[]) == []


def test_a_string_seen_on_the_wire_or_in_the_cell_s_code_is_not_prose_elsewhere():
    printed = "tool error: Unknown city 'Atlantis'. Known cities: Beijing"
    assert zh_outputs.english_runs(printed, known={"Unknown city 'Atlantis'. Known cities: Beijing"}, allowed=[]) == []
    assert zh_outputs.english_runs(printed, known={"tool error:"}, allowed=[]) == ["Known cities: Beijing"]
    frames = ['{"result": {"content": [{"type": "text", "text": "Unknown city \'Atlantis\'. Known cities: Beijing"}]}}']
    assert "Unknown city 'Atlantis'. Known cities: Beijing" in zh_outputs.wire_strings(frames)


def test_the_english_a_cell_s_own_code_prints_is_counted_as_prose(tmp_path):
    lab = tmp_path / "01_x.ipynb"
    cell = {"cell_type": "code", "metadata": {}, "execution_count": 1,
            "source": 'for case, asked in CASES.items():\n    print(f"{case}: asks for {asked}; the server says {why}")',
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "a: asks for 2025-11-25; the server says 不支持\n"}]}
    lab.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    (finding,) = zh_outputs.notebook_findings(lab, tmp_path)
    assert finding.runs == ("a: asks for", "the server says")
    cell["source"] = 'for case, asked in CASES.items():\n    print(f"{case}：请求 {asked}；服务端说 {why}")'
    cell["outputs"][0]["text"] = "a：请求 2025-11-25；服务端说 不支持\n"
    lab.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    assert zh_outputs.notebook_findings(lab, tmp_path) == []


def test_an_allowlist_entry_matches_the_output_as_printed():
    printed = "ping，会话已结束 → 404 unknown or ended session: send initialize again to start a new one"
    entry = re.compile(r"unknown or ended session: send initialize again to start a new one")
    assert zh_outputs.english_runs(printed, allowed=[entry]) == []
    assert zh_outputs.english_runs(printed, allowed=[]) != []


def test_a_printed_python_function_is_code_and_the_prose_after_it_is_read():
    entry = next(re.compile(e["pattern"]) for e in TABLE["allowed"] if e["pattern"].startswith("(?ms)^(?:@"))
    printed = ('@server.tool\ndef add(a: int, b: int) -> int:\n    """Add two numbers, as the model reads it."""\n\n'
               '    return a + b  # the sum goes back as text\n\nand this sentence is still read as prose\n')
    assert zh_outputs.english_runs(printed, allowed=[entry]) == ["and this sentence is still read as prose"]


def test_a_wire_string_cut_short_in_a_summary_line_is_still_wire_data():
    wire = {"no method 'server/discover'; this server answers: initialize, ping, tools/list"}
    line = "  3 ← server/discover 的错误：-32601 no method 'server/discover'; this server answers: initialize, ping, to…"
    assert zh_outputs.english_runs(line, known=wire, allowed=[]) == []
    assert zh_outputs.english_runs("  3 ← the server has no such method at all…", known=wire, allowed=[]) != []


def test_a_button_of_one_english_word_is_prose_and_an_option_naming_a_value_is_not():
    state = {"box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_yes", "IPY_MODEL_pick"]}},
             "yes": {"model_name": "ButtonModel", "state": {"description": "Accept"}},
             "pick": {"model_name": "RadioButtonsModel", "state": {"_options_labels": ["complete", "input_required"]}}}
    output = {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "box"}}}
    notebook = {"cells": [{"cell_type": "code", "source": "", "outputs": [output]}],
                "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": state}}}}
    assert zh_outputs._runs(output, notebook, set(), []) == ["Accept"]
    state["yes"]["state"]["description"] = "接受"
    assert zh_outputs._runs(output, notebook, set(), []) == []


def test_a_finding_names_its_notebook_cell_output_and_text(tmp_path):
    lab = tmp_path / "01_x.ipynb"
    cell = {"cell_type": "code", "source": "print(x)", "metadata": {}, "execution_count": 1,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "已连接\nthe server is not answering\n"}]}
    lab.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "# x", "metadata": {}}, cell],
                               "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    (finding,) = zh_outputs.notebook_findings(lab, tmp_path)
    assert str(finding) == "01_x.ipynb cell 1 output 0: the server is not answering"


# --- the allowlist and the table ----------------------------------------------------------------------------

def test_every_allowlist_entry_gives_its_reason_and_compiles():
    for entry in TABLE["allowed"]:
        assert set(entry) == {"pattern", "reason"} and len(entry["reason"].split()) >= 4, entry
        re.compile(entry["pattern"])


def test_every_allowlist_entry_is_still_needed_by_some_chinese_output():
    texts = []
    for name in chinese_notebooks():
        notebook = json.loads((ZH / name).read_text(encoding="utf-8"))
        texts += [zh_outputs.output_texts(output)[0] for cell in notebook["cells"] for output in cell.get("outputs", [])]
    unused = [entry["pattern"] for entry in TABLE["allowed"]
              if not any(re.search(entry["pattern"], text) for text in texts)]
    assert not unused, f"allowlist entries no Chinese output needs any more: {unused}"


def test_the_table_names_exactly_the_chinese_notebooks():
    assert sorted(TABLE["still_allowed"]) == chinese_notebooks()


@pytest.mark.parametrize("name", chinese_notebooks())
def test_a_chinese_notebook_shows_no_more_english_outputs_than_its_table_allows(name):
    findings = zh_outputs.notebook_findings(ZH / name, ZH)
    allowed = TABLE["still_allowed"][name]
    listing = "\n".join(f"  {finding}" for finding in findings)
    assert len(findings) <= allowed, f"{name}: {len(findings)} outputs in English, {allowed} allowed:\n{listing}"
    assert len(findings) == allowed, (f"{name}: {len(findings)} outputs in English now, fewer than the {allowed} "
                                      f"allowed: lower its line in {zh_outputs.ALLOW_FILE.name} to {len(findings)}")


def test_a_fresh_output_may_show_only_the_english_its_stored_cell_shows(tmp_path):
    lab = tmp_path / "01_x.ipynb"
    stored = {"output_type": "stream", "name": "stdout", "text": "已连接，a JSON object\n"}
    lab.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x", "metadata": {}, "execution_count": 1,
                                          "outputs": [stored]}], "metadata": {}}), encoding="utf-8")
    same = [dict(stored)]
    worse = [{"output_type": "stream", "name": "stdout", "text": "已连接，a JSON object\nno answer from the server\n"}]
    assert zh_outputs.new_english(same, lab, 0) == []
    assert zh_outputs.new_english(worse, lab, 0) == ["no answer from the server"]
