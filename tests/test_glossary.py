"""The Chinese edition speaks one vocabulary: the glossary's rules, enforced over every catalog and notebook.

The student's glossary page (labs/zh-CN/术语表.md) is the one source. Its last table, 统一用词, has a
row per rule: the word to use, the English it translates, the variants not to use (each in backticks)
and the contexts in which a variant means something else and is right (主机 for a machine, 单元测试
for a unit test). These tests read that table and look for every variant in every translation in
translations/zh_CN/ (the package's messages, each lab's catalog, the README's) and in the Chinese
notebooks (their markdown cells and stored outputs), so a variant that drifts in fails the suite
with the file, the entry and the word to use.

Only lines with Chinese in them are searched (an English word is a variant only inside a Chinese
sentence; a JSON frame or an HTTP header line stays as it is) and code spans are left out
(identifiers and wire strings are verbatim by rule).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import polib
import pytest

from mcplab.i18n import notebooks
from conftest import ROOT

ZH = ROOT / "labs" / "zh-CN"
PAGE = ZH / "术语表.md"
CATALOGS = ROOT / "translations" / "zh_CN"
SECTION = "## 统一用词"
CJK = re.compile(r"[\u3400-\u9fff]")
CODE = re.compile(r"`[^`\n]*`")
WORD = re.compile(r"[A-Za-z0-9_]")


@dataclass(frozen=True)
class Rule:
    use: str             # the glossary's word
    english: str         # what it translates
    variant: str         # the word not to use
    allowed: tuple[str, ...]  # contexts, each containing the variant, where it means something else


def rules(page: str) -> list[Rule]:
    """The rules of the page's 统一用词 table, one per variant; a malformed row is refused by name."""
    if SECTION not in page:
        raise ValueError(f"the glossary has no {SECTION!r} section")
    table = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 4 or cells[0] in ("用", "") or set(cells[0]) <= {"-"}:
            continue
        variants = re.findall(r"`([^`]+)`", cells[2])
        allowed = tuple(re.findall(r"`([^`]+)`", cells[3]))
        if not variants:
            raise ValueError(f"the row for {cells[0]} names no variant in backticks: {line!r}")
        stray = [context for context in allowed if not any(variant in context for variant in variants)]
        if stray:
            raise ValueError(f"the row for {cells[0]} allows {stray}, which do not contain {' or '.join(variants)}")
        for variant in variants:
            found.append(Rule(cells[0], cells[1], variant, tuple(c for c in allowed if variant in c)))
    return found


def slips(text: str, rule: Rule) -> list[str]:
    """Each line of ``text`` (outside code spans, with Chinese in it) that uses ``rule.variant`` where it is not allowed."""
    found = []
    for line in CODE.sub(" ", text).splitlines():
        if not CJK.search(line):
            continue
        start = line.find(rule.variant)
        while start >= 0:
            end = start + len(rule.variant)
            latin = rule.variant.isascii()
            bounded = not latin or not (start and WORD.match(line[start - 1]) or end < len(line) and WORD.match(line[end]))
            excused = any(line[start - context.index(rule.variant):].startswith(context) for context in rule.allowed
                          if start >= context.index(rule.variant))
            if bounded and not excused:
                found.append(line.strip()[:120])
                break
            start = line.find(rule.variant, end)
    return found


def texts_of_catalogs() -> list[tuple[str, str, str]]:
    """(file, entry, translation) for every translated entry of every Chinese catalog."""
    out = []
    for path in sorted(CATALOGS.rglob("*.po")):
        for entry in polib.pofile(str(path)):
            text = entry.msgstr or "\n".join(entry.msgstr_plural.values())
            if text and not entry.obsolete:
                name = entry.msgctxt or entry.msgid[:60]
                out.append((path.relative_to(ROOT).as_posix(), name, text))
    return out


def texts_of_notebooks() -> list[tuple[str, str, str]]:
    """(file, cell, text) for every markdown cell and every stored output of the Chinese notebooks."""
    out = []
    for path in sorted(p for p in ZH.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts):
        for index, cell in enumerate(notebooks.read(path).cells):
            where = f"cell {index} ({cell.get('id')})"
            if cell.cell_type == "markdown":
                out.append((path.relative_to(ROOT).as_posix(), where, cell.source))
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                for text in (output.get("text"), data.get("text/plain"), data.get("text/markdown"),
                             html.unescape(re.sub(r"<[^>]+>", " ", data.get("text/html", "")))):
                    if text:
                        out.append((path.relative_to(ROOT).as_posix(), f"{where} output", text))
    return out


def problems(texts: list[tuple[str, str, str]], table: list[Rule]) -> list[str]:
    return [f"{file}, {entry}: {rule.variant!r} for {rule.english}; use {rule.use!r}: {line}"
            for file, entry, text in texts for rule in table for line in slips(text, rule)]


@pytest.fixture(scope="module")
def table() -> list[Rule]:
    return rules(PAGE.read_text(encoding="utf-8"))


# --- the rules themselves --------------------------------------------------------------------------------

def test_the_glossary_page_holds_the_rules_the_course_depends_on(table):
    held = {(rule.use, rule.variant) for rule in table}
    for pair in [("宿主", "主机"), ("宿主", "Host"), ("追踪", "跟踪"), ("单元格", "单元"),
                 ("协议版本", "客户端的版本"), ("加签密封", "封装")]:
        assert pair in held, pair


def test_every_word_a_rule_asks_for_is_explained_in_the_glossary_s_tables(table):
    page = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[0]
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| ")}
    missing = sorted({rule.use for rule in table} - rows)
    assert missing == [], f"rules ask for words the glossary's tables do not explain: {missing}"


def test_each_rule_catches_its_variant_and_names_the_word_to_use(table):
    for rule in table:
        wrong = [("example.po", "entry", f"这一句写了{rule.variant}，应当失败。")]
        found = problems(wrong, [rule])
        assert len(found) == 1 and f"use {rule.use!r}" in found[0] and "example.po, entry" in found[0], rule


def test_each_allowed_context_passes_and_nothing_else_is_excused(table):
    for rule in table:
        for context in rule.allowed:
            assert problems([("example.po", "entry", f"这一句写了{context}，是对的。")], [rule]) == [], context
            # the same context with the variant used again elsewhere in the line is still caught
            again = f"这一句写了{context}，又写了{rule.variant}。"
            assert problems([("example.po", "entry", again)], [rule]), (rule.variant, context)


def test_code_spans_english_lines_and_longer_words_are_not_variants():
    host = Rule("宿主", "Host", "Host", ())
    assert slips("调用 `mcplab.Host` 的结果", host) == []
    assert slips("Host: 127.0.0.1:8000", host) == []            # a header line, no Chinese in it
    assert slips("由 HostConfig 生成的配置", host) == []           # another identifier
    assert slips("交给 Host 的传输", host)


@pytest.mark.parametrize("row, reason", [
    ("| 宿主 | Host | 主机 | | 没有反引号 |", "names no variant"),
    ("| 宿主 | Host | `主机` | `计算机` | 例外里没有这个词 |", "do not contain"),
])
def test_a_malformed_rule_is_refused_with_its_own_sentence(row, reason):
    page = f"{SECTION}\n\n| 用 | English | 不用 | 可以出现的场合 | 为什么 |\n|---|---|---|---|---|\n{row}\n"
    with pytest.raises(ValueError, match=reason):
        rules(page)


def test_a_glossary_without_the_section_is_refused():
    with pytest.raises(ValueError, match="统一用词"):
        rules("# 术语表\n")


# --- the course obeys them -----------------------------------------------------------------------------

def test_every_chinese_catalog_uses_the_glossary_s_words(table):
    found = problems(texts_of_catalogs(), table)
    assert found == [], "\n".join(found)


def test_every_chinese_notebook_uses_the_glossary_s_words(table):
    found = problems(texts_of_notebooks(), table)
    assert found == [], "\n".join(found)
