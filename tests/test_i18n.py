"""The Chinese edition: the language switch, the catalogs kept in step with the English, and the
labs, README, feedback and plots built from them.

The English notebooks and the English in the code are the source. These tests fail when a source
changed and its translation was not reviewed (an entry fuzzy or missing), when a built file differs
from what the catalogs give, when a translation leaves English prose in place, and when a Chinese
plot would draw a missing-glyph box. nbval runs the built notebooks themselves (labs/zh-CN/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mcplab
from mcplab import i18n
from mcplab.i18n import N_, Text, Texts, _, catalogs, documents, messages, ngettext, notebooks, tool
from conftest import ROOT, need

ZH = ROOT / "labs" / "zh-CN"


def built_labs() -> list[Path]:
    """The Chinese notebooks, without the copies JupyterLab keeps in .ipynb_checkpoints/ once a lab was opened."""
    return sorted(path for path in ZH.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts)


GLOSSARY = ZH / "术语表.md"
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture
def zh(monkeypatch):
    """The process speaks Chinese for this test only (the environment variable is the switch)."""
    monkeypatch.setenv(i18n.ENV, "zh")


# --- the switch and the lookup ---------------------------------------------------------------------------

def test_english_is_the_default_and_the_source():
    assert i18n.language() == "en"
    assert _("expected a dict, got {kind}", kind="list") == "expected a dict, got list"


@pytest.mark.parametrize("code", ["zh", "zh-CN", "zh_CN", "ZH-Hans", "cn"])
def test_set_language_takes_the_usual_spellings_of_chinese(monkeypatch, code):
    monkeypatch.delenv(i18n.ENV, raising=False)
    mcplab.set_language(code)
    try:
        assert i18n.language() == "zh" and os.environ[i18n.ENV] == "zh"
    finally:
        os.environ.pop(i18n.ENV, None)


def test_an_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown language 'fr'; expected one of en, zh"):
        i18n.set_language("fr")


def test_a_message_is_looked_up_first_and_filled_after(zh):
    assert _("expected a dict, got {kind}", kind="list") == "需要一个 dict，收到的是 list"
    assert ngettext("{n} frame", "{n} frames", 7) == "7 帧"
    assert _("no such message {x} anywhere", x=1) == "no such message 1 anywhere"  # unknown: the English


def test_texts_and_text_print_in_the_language_but_compare_as_english(zh):
    from mcplab import exercises

    assert set(exercises.SCENARIOS) == {"a", "b", "c", "d", "e"}
    assert CJK.search(exercises.SCENARIOS["a"]) and "model" not in exercises.SCENARIOS["a"]
    choice = exercises.OLD_CHOICES[1]
    assert choice == "the GET /sse stream opened first" and str(choice) == "最先打开的 GET /sse 流"
    assert f"{choice}" == "最先打开的 GET /sse 流" and repr((choice,)) == "('最先打开的 GET /sse 流',)"
    assert Texts({"k": "zzz unknown"})["k"] == "zzz unknown" and Text("zzz") == "zzz" and N_("x") == "x"


def test_import_mcplab_loads_no_translation_machinery():
    code = "import sys, mcplab; print(any(m.startswith('mcplab.i18n') or m == 'gettext' for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_work_in_moves_once_however_often_the_cell_runs(tmp_path, monkeypatch):
    (tmp_path / "labs" / "zh-CN").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "labs" / "zh-CN")
    # setenv first, so that monkeypatch remembers the variable's absence and restores it: work_in sets it
    # behind monkeypatch's back, and a value left over would send every later kernel into tmp_path
    monkeypatch.setenv(i18n.START_ENV, "")
    monkeypatch.delenv(i18n.START_ENV)
    i18n.work_in("..")
    i18n.work_in("..")  # the setup cell run a second time
    assert Path.cwd() == tmp_path / "labs"


# --- feedback, report cards, views, the terminal -----------------------------------------------------------

WRONG_ANSWERS = [  # (check, an answer that fails it)
    ("check_tools_call_request", {"jsonrpc": "2.0", "method": "tools/call"}),
    ("check_find_invalid", ("A", "params")),
    ("check_error_code", {"a": -32700, "b": -32601, "c": -32600, "d": -32603, "e": -32603}),
    ("check_handshake_order", ["B", "D", "A", "C"]),
    ("check_primitive_choice", {"a": "tool", "b": "tool", "c": "prompt", "d": "tool", "e": "resource"}),
    ("check_layers", {"a": "model", "b": "mechanism", "c": "model", "d": "application", "e": "distribution"}),
    ("check_replies", {k: 200 for k in "abcdefgh"}),
    ("check_behind_proxy", {k: "ok" for k in "abcde"}),
    ("check_adapter_counts", (13, 40)),
    ("check_break_even_density", 1.01),
    ("check_desktop_entry", {"command": "python", "args": []}),
    ("check_server_json", {"name": "files"}),
    ("check_refusals", {k: (401, "") for k in "abcdefgh"}),
    ("check_flag_rule", "a" * 400),
    ("check_pin", lambda definition: "the same for every definition"),
    ("check_consent", {k: "run" for k in "abcdef"}),
    ("check_rebinding_request", {"Host": "127.0.0.1:8000", "Origin": "http://attacker.example:8000"}),
    ("check_sandbox", {k: "read" for k in "abcdefghi"}),
    ("check_audience", lambda claims, me: True),
    ("check_recovery", {k: "give up" for k in "abcde"}),
]


@pytest.mark.parametrize("check, answer", WRONG_ANSWERS, ids=[c for c, _a in WRONG_ANSWERS])
def test_feedback_is_chinese_and_judges_exactly_as_in_english(monkeypatch, check, answer):
    from mcplab import exercises

    english = getattr(exercises, check)(answer)
    monkeypatch.setenv(i18n.ENV, "zh")
    chinese = getattr(exercises, check)(answer)
    unanswered = getattr(exercises, check)(...)
    assert not english.ok and not chinese.ok and not unanswered.ok
    assert CJK.search(chinese.message) and CJK.search(chinese.hint) and CJK.search(str(unanswered))
    assert chinese.message != english.message and "提示：" in str(chinese)
    assert not english_sentences(chinese.message + " " + chinese.hint)


def test_a_report_card_reads_in_chinese(zh):
    from mcplab.grade.report import Report, failed, passed, skipped

    card = Report("server x.py", (passed("a", "一"), failed("b", "二", "3", "4", "Lab 09 §2 (tools) and §3 (return "
                                                                                    "values)"),
                                  skipped("c", "三", "why")))
    text = card.text()
    assert text.splitlines()[0] == "成绩单 · server x.py"
    assert "预期" in text and "实际" in text and "参阅" in text and "实验 09 §2（工具）和 §3（返回值）" in text
    assert text.splitlines()[-1] == "未通过：3 项检查中有 1 项失败" and card.exit_code == 1


def test_the_trace_viewer_labels_frames_in_chinese(zh):
    from mcplab.wire import jsonrpc
    from mcplab.notebook import show
    from mcplab.trace import Trace

    trace = Trace()
    trace.record("c2s", "stdio", jsonrpc.encode(jsonrpc.Request(1, "tools/list")))
    trace.record("s2c", "stdio", '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')
    shown = repr(show(trace))
    assert shown.splitlines()[0] == "2 帧：1 个请求、1 个响应"
    assert "tools/list 的结果（id 1） ↩ #1" in shown
    assert ">客户端<" in show(trace)._repr_html_() and ">stderr<" in show(trace)._repr_html_()


def test_mcplab_demo_speaks_chinese_with_lang_zh():
    done = subprocess.run([sys.executable, "-m", "mcplab.cli", "demo", "--lang", "zh", "--step", "1", "--no-color"],
                          capture_output=True, text=True, timeout=60, env=without_language())
    assert done.returncode == 0, done.stderr
    assert "JSON-RPC 2.0：请求、响应、错误、通知" in done.stdout and "每条 MCP 消息都是" in done.stdout
    assert "Every MCP message" not in done.stdout


def test_mcplab_lab_lang_zh_opens_the_chinese_labs_and_passes_the_language_on(monkeypatch, tmp_path):
    from mcplab import cli, launch

    seen = {}
    monkeypatch.setattr(launch, "run", lambda argv, folder, code: seen.update(argv=argv) or 0)
    monkeypatch.delenv(i18n.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the launch's JupyterLab settings folder goes there
    cli.main(["lab", "--lang", "zh", "--no-browser"])
    assert "--LabApp.default_url=/lab/tree/zh-CN/00_start_here.ipynb" in seen["argv"]
    settings = tmp_path / "mcplab" / "jupyterlab" / "zh_CN" / "settings"
    assert f"--LabApp.app_settings_dir={settings}" in seen["argv"]
    assert os.environ.pop(i18n.ENV) == "zh"  # the kernels JupyterLab starts inherit it


def test_make_lab_takes_lab_lang_and_tolerates_lang_zh():
    need(shutil.which("make") is not None, "make is not installed")
    def dry(*args: str) -> str:
        out = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(ROOT), "lab", *args],
                             capture_output=True, text=True, env={**os.environ, "LANG": "C.UTF-8"}).stdout
        return [line for line in out.splitlines() if "mcplab setup --extra lab" in line][-1]

    assert dry("LAB_LANG=zh").endswith("mcplab setup --extra lab --lang zh ")  # setup hands --lang to mcplab lab
    assert dry("LANG=zh").startswith("LANG=C.UTF-8 ") and "--lang zh" in dry("LANG=zh")
    assert "--lang" not in dry()


# --- the catalogs and what is built from them ------------------------------------------------------------

def test_every_english_cell_has_an_id_of_its_own():
    for path in notebooks.sources(ROOT):
        ids = [cell.get("id") for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
        assert all(ids) and len(set(ids)) == len(ids), path.name


def test_a_cell_without_an_id_gets_the_same_one_on_every_run(tmp_path):
    import nbformat

    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# x"), nbformat.v4.new_markdown_cell("y")])
    book.nbformat_minor = 4  # written by a tool that knows no ids
    for cell in book.cells:
        del cell["id"]
    paths = [tmp_path / "a" / "00_x.ipynb", tmp_path / "b" / "00_x.ipynb"]
    for path in paths:
        path.parent.mkdir()
        path.write_text(json.dumps(book), encoding="utf-8")
        assert notebooks.missing_ids(path) == [0, 1]
        assert notebooks.ensure_ids(path) == 2 and notebooks.ensure_ids(path) == 0 and not notebooks.missing_ids(path)
    first, second = ([cell["id"] for cell in notebooks.read(path).cells] for path in paths)
    assert first == second and len(set(first)) == 2


def test_the_package_messages_are_all_written_out_where_they_are_wrapped():
    found = messages.extract(ROOT / "mcplab", ROOT)
    assert found.problems == ()
    assert len(found.units) > 700


def test_every_catalog_is_in_step_with_its_english_source():
    """Fails after an English cell, message or README block changed: run `make translations`."""
    found = tool.check(ROOT, "zh")
    assert found == [], "the Chinese edition is behind its English source:\n" + "\n".join(found[:40])


def test_every_markdown_cell_and_every_message_is_translated_into_chinese():
    """Walks every translated entry: a markdown cell, a feedback string, a README block. A translation
    must be Chinese, not the English left in place (code, identifiers and JSON may stay)."""
    left = []
    for path in sorted((ROOT / "translations" / "zh_CN").rglob("*.po")):
        for entry in catalogs.read(path):
            english = entry.msgid
            chinese = entry.msgstr or entry.msgstr_plural.get(0, "")
            if english_sentences(english) and (not CJK.search(chinese) or english_sentences(chinese)):
                left.append(f"{path.relative_to(ROOT)}: {entry.msgctxt or english[:50]!r}: "
                            f"{english_sentences(chinese)[:1] or 'no Chinese'}")
    assert left == [], f"{len(left)} entries keep English prose:\n" + "\n".join(left[:40])


FENCED = re.compile(r"```.*?```", re.S)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
HEADING_NUMBER = re.compile(r"^#+ (\d+)\.", re.M)


def test_each_cell_s_translation_is_of_that_cell_not_of_another_with_the_same_id():
    """Cell ids repeat across labs (cell-02 is in most of them): a catch-up that pastes a translation into
    the wrong catalog reads as fluent Chinese and passes every other check. A translation keeps its
    cell's numbered headings and most of its inline code (identifiers, flags, URLs stay as they are)."""
    strays = []
    for path in sorted((ROOT / "translations" / "zh_CN" / "labs").rglob("*.po")):
        for entry in catalogs.read(path):
            if not entry.msgstr:
                continue
            spans = set(INLINE_CODE.findall(FENCED.sub("", entry.msgid)))
            kept = spans & set(INLINE_CODE.findall(FENCED.sub("", entry.msgstr)))
            if HEADING_NUMBER.findall(entry.msgid) != HEADING_NUMBER.findall(entry.msgstr) or (
                    len(spans) >= 2 and len(kept) * 2 < len(spans)):
                strays.append(f"{path.relative_to(ROOT)}: {entry.msgctxt}: keeps {len(kept)} of {len(spans)} code spans")
    assert strays == [], "translations that belong to another cell:\n" + "\n".join(strays)


def test_every_markdown_cell_of_the_chinese_labs_is_chinese():
    left = [f"{path.relative_to(ROOT)} cell {cell.get('id')}: {english_sentences(cell.source)[:1]}"
            for path in built_labs() for cell in notebooks.read(path).cells
            if cell.cell_type == "markdown" and english_sentences(cell.source)]
    assert left == [], "\n".join(left)


def test_each_chinese_lab_links_its_original_and_the_glossary_and_every_link_resolves():
    assert GLOSSARY.is_file()
    for path in built_labs():
        book = notebooks.read(path)
        note = next(cell for cell in book.cells if cell.get("id") == notebooks.NOTE_ID)
        setup = next(cell for cell in book.cells if cell.get("id") == notebooks.SETUP_ID)
        assert "术语表.md" in note.source and 'i18n.set_language("zh")' in setup.source
        for cell in book.cells:
            for target in re.findall(r"\]\(([^)\s]+)\)", cell.source if cell.cell_type == "markdown" else ""):
                if not target.startswith(("http://", "https://", "#")):
                    assert (path.parent / target).exists(), f"{path.relative_to(ROOT)}: {target}"
        assert book.metadata["mcplab"]["source"] == path.relative_to(ZH).as_posix()


def test_the_glossary_holds_the_seeds_vocabulary_with_english_and_spec_identifiers():
    text = GLOSSARY.read_text(encoding="utf-8")
    for chinese, english in [("原语", "primitive"), ("能力协商", "capability negotiation"), ("宿主", "Host"),
                             ("客户端", "Client"), ("服务端", "Server"), ("多轮请求", "MRTR"),
                             ("工具", "`tools/call`"), ("资源", "`resources/read`"), ("提示词", "`prompts/get`"),
                             ("握手", "`initialize`"), ("通知", "`JSONRPCNotification`")]:
        row = next((line for line in text.splitlines() if line.startswith(f"| {chinese} |")), "")
        assert english in row, chinese


def test_the_readme_links_the_chinese_edition_and_it_is_built():
    assert "README.zh-CN.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert chinese.startswith("<!-- Built from README.md") and "## 学习路线" in chinese


# --- how a catch-up goes, on a small course of its own -------------------------------------------------

def test_a_catch_up_marks_changed_cells_fuzzy_keeps_moved_ones_and_is_done_once_reviewed(tmp_path):
    import nbformat

    labs = tmp_path / "labs"
    labs.mkdir()
    one = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lab 01 · One", id="t1"),
                                          nbformat.v4.new_markdown_cell("A tool is called.", id="p1"),
                                          nbformat.v4.new_code_cell("1 + 1", id="c1")])
    nbformat.write(one, str(labs / "01_one.ipynb"))
    assert tool.update(tmp_path)  # catalogs written, nothing translated yet
    po = tmp_path / "translations" / "zh_CN" / "labs" / "01_one.po"
    catalog = catalogs.read(po)
    assert [e.msgctxt for e in catalog] == ["t1", "p1"] and not any(e.translated() for e in catalog)
    for entry, text in zip(catalog, ["# 实验 01 · 一", "工具被调用。"]):
        entry.msgstr = text
    catalogs.write(catalog, po)
    tool.build(tmp_path, execute=False)
    assert tool.check(tmp_path) == []

    # The English changes: one cell is edited, one moves to a new notebook, one is new.
    one.cells[1].source = "A tool is called by the model."
    moved = one.cells.pop(0)
    nbformat.write(one, str(labs / "01_one.ipynb"))
    nbformat.write(nbformat.v4.new_notebook(cells=[moved, nbformat.v4.new_markdown_cell("New text.", id="n1")]),
                   str(labs / "02_two.ipynb"))
    tool.update(tmp_path)
    problems = tool.check(tmp_path)
    assert any("01_one.po: 'p1': fuzzy" in line for line in problems)
    assert any("02_two.po: 'n1': not translated" in line for line in problems)
    assert not any("'t1'" in line for line in problems)  # moved with its translation
    edited = next(e for e in catalogs.read(po) if e.msgctxt == "p1")
    assert edited.fuzzy and edited.previous_msgid == "A tool is called." and edited.msgstr == "工具被调用。"
    tool.build(tmp_path, execute=False)
    built = notebooks.read(labs / "zh-CN" / "01_one.ipynb")
    assert "A tool is called by the model." in [c.source for c in built.cells]  # fuzzy: the English shows

    # Reviewed: the translations updated, the flags dropped; then the edition is in step again.
    for path, ctxt, text in [(po, "p1", "工具由模型调用。"), (po.with_name("02_two.po"), "n1", "新的文字。")]:
        catalog = catalogs.read(path)
        entry = next(e for e in catalog if e.msgctxt == ctxt)
        entry.msgstr, entry.flags, entry.previous_msgid = text, [], None
        catalogs.write(catalog, path)
    tool.update(tmp_path)
    tool.build(tmp_path, execute=False)
    assert tool.check(tmp_path) == []
    assert "工具由模型调用。" in [c.source for c in notebooks.read(labs / "zh-CN" / "01_one.ipynb").cells]


def test_a_translation_that_drops_a_field_is_reported():
    catalog = catalogs.new_catalog()
    import polib

    catalog.append(polib.POEntry(msgid="got {count} of {total}", msgstr="收到 {count} 个", flags=["python-brace-format"]))
    assert catalogs.problems(catalog, "x.po") == ["x.po: 'got {count} of {total}': the translation fills ['count'], "
                                                  "the English ['count', 'total']"]


# --- plots: a CJK font, and no glyph missing --------------------------------------------------------------

def test_every_chinese_plot_resolves_a_cjk_font_and_misses_no_glyph(zh):
    matplotlib = pytest.importorskip("matplotlib")
    from mcplab.i18n import fonts

    need(fonts.cjk_font() is not None, "no CJK font for matplotlib (make test installs fonts-wqy-microhei)")
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from mcplab import economics
    from mcplab.economics import plots

    with matplotlib.rc_context(), warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a warning: make it fail
        figures = [plots.plot_graphs(3, 4), plots.plot_costs(4), plots.plot_saving_heatmap(steps=8),
                   plots.plot_break_even(), plots.plot_cumulative(10, 50, 5, revision_years=(3,)),
                   plots._explorer_figure(economics.summarize(3, 4), economics.SEED_COSTS)]
        figures = [chart.to_matplotlib() for chart in figures]
        for figure in figures:
            FigureCanvasAgg(figure).draw()
        text = "".join(t.get_text() for figure in figures for t in figure.findobj(matplotlib.text.Text))
        assert CJK.search(text) and not english_sentences(text)
        assert fonts.missing_glyphs(text) == ""
        used = {Path(path).name for char, path in fonts.resolved(text) if CJK.match(char)}
        assert used and not used & {"DejaVuSans.ttf"}, used


# --- helpers --------------------------------------------------------------------------------------------------

PROSE = re.compile(r"\b[A-Za-z][a-z]+(?:['’][a-z]+)?(?:[ ,;:]+[A-Za-z][a-z]+(?:['’][a-z]+)?){4,}")


def english_sentences(text: str) -> list[str]:
    """Runs of five English words or more, outside code, links, JSON and identifiers: prose left in English."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)             # fenced code
    text = re.sub(r"^(    |\t).*$", " ", text, flags=re.M)          # indented code
    text = re.sub(r"`[^`]*`", " ", text)                            # inline code
    text = re.sub(r"\[[^\]]*\]\([^)]*\)", " ", text)                # links (their text names a spec section)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\{[^{}]*\}", " ", text)                         # JSON and format fields
    text = re.sub(r"^>.*$", " ", text, flags=re.M)                  # quotations (the seeds are quoted)
    text = re.sub(r"\"[^\"]{0,200}\"|“[^”]{0,200}”|'[^']{0,120}'", " ", text)  # quoted (the spec, a question)
    return PROSE.findall(text)


def without_language() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in (i18n.ENV, i18n.START_ENV)}


def test_the_prose_detector_finds_english_and_leaves_code_alone():
    assert english_sentences("This sentence is still in English, sadly.")
    assert not english_sentences("调用 `tools/call` 的结果：{\"jsonrpc\": \"2.0\", \"method\": \"tools/list\"}")
    assert not english_sentences("见 [the official spec](https://modelcontextprotocol.io/specification/) 一节")
