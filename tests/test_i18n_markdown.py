"""The Chinese edition as a reader sees it rendered: no bold left as literal asterisks, and every pointer to
a lab or a solution staying inside the Chinese edition.

CommonMark closes ``**`` only where the delimiter is right-flanking: after a punctuation mark such as the
full-width "）" it must be followed by a space or punctuation, so ``**协议（MCP）**是`` shows its asterisks
(JupyterLab's renderer and GitHub's follow the same rule). markdown-it-py is a faithful CommonMark
implementation (the test extra pins it), so whatever it leaves as ``**`` or ``__`` a student sees.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conftest import ROOT

ZH = ROOT / "labs" / "zh-CN"
RENDERER = MarkdownIt("commonmark").enable("table")
CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.S)
LITERAL = re.compile(r"\*\*|__")
# A reference to a notebook: a link's target, or a path in inline code.
NOTEBOOK_REFERENCE = re.compile(r"\]\(([^)\s]+\.ipynb)\)|`([^`\s]+\.ipynb)`")
# Where a Chinese notebook names its English original on purpose: the opening note of every built
# notebook ("这是 [X](../X) 的简体中文版"), and a path given as "英文原版：`...`".
ORIGINAL = re.compile(r"^> 这是 \[[^\]]*\]\([^)]*\) 的简体中文版.*$|英文原版：`[^`]*`", re.M)


def chinese_notebooks() -> list[Path]:
    return sorted(path for path in ZH.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts)


def markdown_cells(notebook: Path) -> list[tuple[int, str]]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(cell["source"])) for i, cell in enumerate(cells) if cell["cell_type"] == "markdown"]


def literal_delimiters(markdown: str) -> list[str]:
    """What a CommonMark renderer leaves as ``**`` or ``__`` outside code, each with its surroundings."""
    html = CODE.sub(" ", RENDERER.render(markdown))
    return [html[max(0, m.start() - 30):m.end() + 30] for m in LITERAL.finditer(html)]


def outside_the_edition(notebook: Path, markdown: str) -> list[str]:
    """The notebooks a cell points at that are not Chinese notebooks of this edition (or do not exist)."""
    wrong = []
    for match in NOTEBOOK_REFERENCE.finditer(ORIGINAL.sub(" ", markdown)):
        target = match.group(1) or match.group(2)
        base = ROOT if target.startswith("labs/") else notebook.parent
        path = (base / target).resolve()
        if not (path.is_file() and path.is_relative_to(ZH.resolve())):
            wrong.append(target)
    return wrong


def test_the_renderer_catches_the_cjk_bold_that_commonmark_leaves_open():
    assert literal_delimiters("**模型上下文协议（MCP）**是一个开放标准")
    assert literal_delimiters("| a |\n|---|\n| 官方 **MCP Registry（注册表）**开放预览 |")
    assert not literal_delimiters("**模型上下文协议**（MCP）是一个开放标准")
    assert not literal_delimiters("用 `**kwargs` 和 `__init__`\n\n```\n**x**（y）z\n```")


def test_the_link_check_catches_a_pointer_to_the_english_edition():
    lab = ZH / "06_stateless.ipynb"
    assert outside_the_edition(lab, "参考答案在 `labs/solutions/06_stateless_solutions.ipynb`。") == [
        "labs/solutions/06_stateless_solutions.ipynb"]
    assert outside_the_edition(lab, "见 [实验 05](../05_streamable_http.ipynb)") == ["../05_streamable_http.ipynb"]
    assert outside_the_edition(lab, "见 `solutions/06_stateless_solutions.ipynb` 与 [实验 07](07_scaling.ipynb)") == []
    assert outside_the_edition(lab, "英文原版：`labs/solutions/06_stateless_solutions.ipynb`") == []


@pytest.mark.parametrize("notebook", chinese_notebooks(), ids=lambda path: path.relative_to(ZH).as_posix())
def test_every_chinese_markdown_cell_renders_its_bold_with_no_literal_asterisks(notebook):
    left = {i: found for i, text in markdown_cells(notebook) if (found := literal_delimiters(text))}
    assert left == {}


def test_the_chinese_readme_renders_its_bold_with_no_literal_asterisks():
    assert literal_delimiters((ROOT / "README.zh-CN.md").read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("notebook", chinese_notebooks(), ids=lambda path: path.relative_to(ZH).as_posix())
def test_every_pointer_to_a_lab_or_a_solution_stays_inside_the_chinese_edition(notebook):
    wrong = {i: found for i, text in markdown_cells(notebook) if (found := outside_the_edition(notebook, text))}
    assert wrong == {}
