"""The build labs' starter files in Chinese: twins of labs/build/my_server.py and my_client.py in
labs/zh-CN/build/, the same code with translated comments, TODOs and messages, named by the Chinese labs
and shipped wherever the course goes.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from conftest import ROOT
from mcplab import course
from mcplab.i18n.notebooks import STARTERS

CJK = re.compile(r"[\u3400-\u9fff]")
ENGLISH = re.compile(r"\b[A-Za-z][a-z]+(?:[ ,;:]+[A-Za-z][a-z]+){3,}")  # four words of prose in a row


def shape(path) -> str:
    """The code of a file with every docstring and string constant blanked: what must match between twins."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0] = ast.Pass()
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def prose(path) -> list[str]:
    """The comments, docstrings and string constants of a file: what a student reads."""
    source = path.read_text(encoding="utf-8")
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    strings = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return comments + strings


@pytest.mark.parametrize("starter", STARTERS)
def test_each_starter_has_a_chinese_twin_with_the_same_code(starter):
    english, chinese = ROOT / "labs" / starter, ROOT / "labs" / "zh-CN" / starter
    assert chinese.is_file(), f"labs/zh-CN/{starter} is missing"
    assert shape(chinese) == shape(english)


@pytest.mark.parametrize("starter", STARTERS)
def test_the_twin_s_comments_todos_and_messages_are_chinese(starter):
    english = [text for text in prose(ROOT / "labs" / starter) if ENGLISH.search(text)]
    chinese = prose(ROOT / "labs" / "zh-CN" / starter)
    assert english, "the English starter has prose to translate"
    left = [text for text in chinese if ENGLISH.search(re.sub(r"`[^`]*`|\S*[/_.=$()]\S*", " ", text))
            and not CJK.search(text)]
    assert left == []


def test_the_chinese_client_starter_says_its_first_todo_in_chinese():
    done = subprocess.run([sys.executable, str(ROOT / "labs" / "zh-CN" / "build" / "my_client.py"), "--",
                           "python", str(ROOT / "servers" / "weather.py")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "my_client: TODO 1：用三根管道和两个读取线程启动服务端（实验 10 §2）"


@pytest.mark.parametrize("lab, starter", [("09_build_server.ipynb", "build/my_server.py"),
                                          ("10_build_client.ipynb", "build/my_client.py"),
                                          ("12_build_client_two.ipynb", "build/my_client_two.py")])
def test_the_chinese_build_labs_grade_and_name_the_twins(lab, starter):
    cells = json.loads((ROOT / "labs" / "zh-CN" / lab).read_text(encoding="utf-8"))["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    markdown = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert f'"zh-CN/{starter}"' in code and not re.search(rf'(?<![\w/.-]){re.escape(starter)}', code)
    assert f"labs/zh-CN/{starter}" in markdown and f"labs/{starter}" not in markdown


def test_the_course_copy_ships_the_twins(tmp_path):
    report = course.copy_course(tmp_path / "course")
    for starter in STARTERS:
        twin = Path("labs") / "zh-CN" / starter
        assert (report.dest / twin).read_bytes() == (ROOT / twin).read_bytes()
