"""The words a Chinese lab's code cells print and the comments they hold: translated, the code untouched.

``mcplab.i18n.literals`` decides which string literals of a code cell are prose (what ``print``
shows, a widget's text, the labels a cell lists in its metadata) and which comments are read; the
builder replaces those and nothing else. These tests hold the rule to a table, a bad translation to
its own sentence, and every built Chinese code cell to its English one: it compiles, and once the
prose is set aside its syntax tree is the English one, every identifier, key, method name, JSON
field and wire string included.
"""

from __future__ import annotations

import ast

import pytest

from mcplab.i18n import catalogs, literals, notebooks
from conftest import ROOT

PROSE = [
    ("a print argument", 'print("the server is running:", ok)', ['"the server is running:"']),
    ("an f-string's fixed text", 'print(f"asked for {asked} → agreed to {v}")', ['f"asked for {asked} → agreed to {v}"']),
    ("both branches of a conditional", 'print("yes, it did" if ok else "no, it did not")', ['"yes, it did"', '"no, it did not"']),
    ("an operand of + and of or", 'print("found " + x, y or "nothing at all")', ['"found "', '"nothing at all"']),
    ("the receiver of .format", 'print("{n} frames".format(n=3))', ['"{n} frames"']),
    ("a widget's label", 'b = widgets.Button(description="Send it")', ['"Send it"']),
    ("a comment", 'x = 1  # the first line\n# a whole line', ['# the first line', '# a whole line']),
]

DATA = [
    ("a method name sent", 'await client.request("tools/list", {})'),
    ("a key", 'print(reply["error"]["message"])'),
    ("a literal deeper in a print", 'print(lb.block("upstream mcp_servers"))'),
    ("a tool's description (wire data)", 'server.tool(f, name="pong", description="Answers pong.")'),
    ("a user's prompt to a model", 'print(await host.run("What is 2 plus 3?", model))'),
    ("a JSON frame", 'print(jsonrpc.decode(\'{"jsonrpc": "2.0", "method": "ping"}\'))'),
    ("a literal without a word", 'print("→", x, "·", y)'),
    ("identifiers only", 'print("tools/call →", x, "isError:", y, "LocalProtocolError:", exc)'),
    ("a tool's directive", 'x = f()  # type: ignore[attr-defined]'),
    ("a cell that does not parse", 'print("an unfinished thought"'),
]


@pytest.mark.parametrize("case, source, expected", PROSE, ids=[case for case, _, _ in PROSE])
def test_printed_literals_widget_labels_and_comments_are_prose(case, source, expected):
    assert [literal.text for literal in literals.prose(source)] == expected


@pytest.mark.parametrize("case, source", DATA, ids=[case for case, _ in DATA])
def test_keys_method_names_wire_strings_and_data_for_others_are_not(case, source):
    assert literals.prose(source) == []


def test_a_cell_lists_the_labels_it_prints_through_a_variable_and_a_stale_list_is_an_error():
    source = 'for name, extra in [("foreign Origin", {"Origin": "http://evil.example"})]:\n    print(f"{name:<15} →")'
    assert [literal.text for literal in literals.prose(source)] == []
    assert [literal.text for literal in literals.prose(source, ['"foreign Origin"'])] == ['"foreign Origin"']
    with pytest.raises(ValueError, match=r"lists \['\"rebound Host\"'\] to translate, but it holds no such literal"):
        literals.prose(source, ['"rebound Host"'])


def test_a_magic_line_is_left_alone_and_the_positions_stay_the_source_s():
    source = '%%machine nginx\nprint("the part that balances")  # the config'
    built = literals.replace(source, {'"the part that balances"': '"负责均衡的部分"', "# the config": "# 配置"})
    assert built == '%%machine nginx\nprint("负责均衡的部分")  # 配置'


def test_replace_changes_only_the_prose_and_keeps_every_other_byte():
    source = 'print("exit code:", reply["exit code:"], f"{n} bytes, the last one a newline")'
    built = literals.replace(source, {'"exit code:"': '"退出码："', 'f"{n} bytes, the last one a newline"': 'f"{n} 字节，最后一个是换行符"'})
    assert built == 'print("退出码：", reply["exit code:"], f"{n} 字节，最后一个是换行符")'


BAD = [
    ("a quote left open", 'f"asked for {asked}"', 'f"请求 {asked}', "is not one string literal"),
    ("code smuggled in", '"exit code:"', '"退出码：" + secret', "is not one string literal"),
    ("a placeholder dropped", 'f"asked for {asked} → agreed to {v}"', 'f"请求 {asked}"', "keep every placeholder in braces"),
    ("a placeholder changed", 'f"{case}: asks for {asked}"', 'f"{case}：请求 {asked!r}"', "keep every placeholder in braces"),
    ("an f-string made plain", 'f"{n} frames"', '"{n} 帧"', "an f-string exactly when"),
    ("a comment broken in two", "# the first line", "# 第一行\nx = 1", "must be one comment"),
    ("a comment made code", "# the first line", "x = 1", "must be one comment"),
]


@pytest.mark.parametrize("case, english, translated, why", BAD, ids=[case for case, *_ in BAD])
def test_a_translation_that_would_break_the_code_is_refused_with_its_own_sentence(case, english, translated, why):
    assert why in literals.problem(english, translated)
    catalog = catalogs.new_catalog()
    catalog.append(catalogs.polib.POEntry(msgctxt="cell-1", msgid=english, msgstr=translated, flags=[literals.FLAG]))
    (found,) = catalogs.problems(catalog, "x.po")
    assert why in found
    assert literals.replace(f"x = 1\nprint({english})" if not english.startswith("#") else english,
                            {english: translated}).count(translated) == 0


def test_a_padded_text_in_a_placeholder_may_be_reworded_and_resized():
    english = "f\"{'family':15} {'for example':25} in this course\""
    assert literals.problem(english, "f\"{'类别':13} {'例如':23} 本课程里的\"") is None
    assert literals.problem(english, "f\"{'类别':13} {family:23} 本课程里的\"") is not None


def test_a_changed_literal_inherits_the_translation_of_the_most_similar_one_of_its_cell_as_fuzzy():
    old = catalogs.new_catalog()
    for english, chinese in [('"the server is running:"', '"服务端在运行："'), ('"exit code:"', '"退出码："')]:
        old.append(catalogs.polib.POEntry(msgctxt="cell-3", msgid=english, msgstr=chinese, flags=[literals.FLAG]))
    units = [catalogs.Unit("cell-3", '"the server is still running:"', flags=(literals.FLAG,)),
             catalogs.Unit("cell-3", '"exit code:"', flags=(literals.FLAG,))]
    memory = catalogs.Memory()
    memory.learn(old)  # as `mcplab i18n update` does: every catalog of the language is remembered
    merged = {entry.msgid: entry for entry in catalogs.merge(units, old, memory)}
    changed = merged['"the server is still running:"']
    assert changed.fuzzy and changed.msgstr == '"服务端在运行："'
    assert not merged['"exit code:"'].fuzzy and merged['"exit code:"'].msgstr == '"退出码："'


def _tree(source: str) -> ast.AST:
    lines = ["" if line.lstrip().startswith(literals.MAGIC) else line for line in source.split("\n")]
    return compile("\n".join(lines), "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _differences(english: ast.AST, built: ast.AST, source: str, prose: set[str], where: str,
                 twins: list[tuple[str, str]]) -> list[str]:
    """Where ``built`` differs from ``english`` outside the prose literals (positions aside, and a starter
    file's path, which a lab of labs/ names by its twin in the edition's folder: see notebooks.STARTERS)."""
    if literals._is_string(english) and ast.get_source_segment(source, english) in prose:
        return [] if type(english) is type(built) else [f"{where}: a prose literal changed kind"]
    if type(english) is not type(built):
        return [f"{where}: {type(english).__name__} became {type(built).__name__}"]
    found = []
    for name in english._fields:
        left, right = getattr(english, name), getattr(built, name)
        if isinstance(left, list) and isinstance(right, list):
            if len(left) != len(right):
                found.append(f"{where}.{name}: {len(left)} items became {len(right)}")
                continue
            pairs = zip(left, right)
        else:
            pairs = [(left, right)]
        for a, b in pairs:
            if isinstance(a, ast.AST) and isinstance(b, ast.AST):
                found += _differences(a, b, source, prose, f"{where}.{name}", twins)
            elif a != b and not any(isinstance(a, str) and a.replace(starter, twin) == b for starter, twin in twins):
                found.append(f"{where}.{name}: {a!r} became {b!r}")
    return found


def test_every_built_chinese_code_cell_compiles_and_is_its_english_cell_outside_the_prose():
    changed = 0
    problems = []
    for path in notebooks.sources(ROOT):
        catalog = catalogs.read(notebooks.catalog_path(ROOT, path, "zh"))
        english = {cell["id"]: cell for cell in notebooks.read(path).cells if cell.cell_type == "code"}
        for cell in notebooks.build(ROOT, path, catalog, "zh").cells:
            if cell.get("id") not in english:
                continue
            source = english[cell["id"]].source
            prose = {literal.text for literal in literals.prose(source, notebooks._listed(english[cell["id"]]))}
            changed += cell.source != source
            where = f"{path.name} {cell['id']}"
            problems += _differences(_tree(source), _tree(cell.source), source, prose, where,
                                     notebooks._twins(ROOT, path, "zh"))
    assert problems == []
    assert changed > 100  # the rule found the labs' printed sentences and comments, and they were replaced


def test_a_new_lab_s_printed_sentences_become_entries_and_its_chinese_cell_prints_them_once_translated(tmp_path):
    import nbformat

    from mcplab.i18n import tool

    labs = tmp_path / "labs"
    labs.mkdir()
    code = 'ok = True  # the check\nprint("the server is running:", ok, "tools/list")'
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lab 01 · One", id="t1"),
                                                   nbformat.v4.new_code_cell(code, id="c1")]),
                   str(labs / "01_one.ipynb"))
    tool.update(tmp_path)
    po = tmp_path / "translations" / "zh_CN" / "labs" / "01_one.po"
    catalog = catalogs.read(po)
    assert [(e.msgctxt, e.msgid, literals.FLAG in e.flags) for e in catalog] == [
        ("t1", "# Lab 01 · One", False), ("c1", "# the check", True), ("c1", '"the server is running:"', True)]
    tool.build(tmp_path, execute=False)
    assert any("01_one.po: 'c1'" in line and "not translated" in line for line in tool.check(tmp_path))
    assert notebooks.read(labs / "zh-CN" / "01_one.ipynb").cells[-1].source == code  # untranslated: the English

    for entry, text in zip(catalog, ["# 实验 01 · 一", "# 检查", '"服务端在运行："']):
        entry.msgstr = text
    catalogs.write(catalog, po)
    tool.build(tmp_path, execute=False)
    assert tool.check(tmp_path) == []
    assert notebooks.read(labs / "zh-CN" / "01_one.ipynb").cells[-1].source == (
        'ok = True  # 检查\nprint("服务端在运行：", ok, "tools/list")')
