"""English prose in the Chinese notebooks' outputs: found, located and counted.

Theory of operation
-------------------
A Chinese student reads a lab's markdown and what its cells print. The markdown is checked by
``test_i18n``; this module reads the outputs: stream text, ``text/plain``, ``text/markdown``,
``text/html`` with its tags stripped, an error's name and value, and the labels of the widgets an
output shows (the notebook's stored widget state: descriptions, values, option labels,
placeholders, tooltips, followed through the ``IPY_MODEL_`` references of boxes).

What may stay English, and is taken out before the search:

* **wire data**: every JSON object or array found in the notebook's outputs (the trace viewers show
  every frame in full) is removed, and each of its string values is removed wherever else it is
  printed: a tool result in a ``ToolResult(...)`` repr, an error message a server sent, a
  description read from ``tools/list``, also when a summary line cuts it short with ``…``. A frame
  cut short on a line (``{"jsonrpc":…``) goes too.
* **code**: a token joined to ``_ / . = ( [ @ $ \\`` or a digit, a camelCase name, a field of a
  repr (``name='...'``), an object's repr (``<Client: ...>``) and a Python list of strings are not
  words. The English a cell's own code prints is *not* excused: the builder translates a code
  cell's printed literals (:mod:`mcplab.i18n.literals`), so what ``print("the server is running:")``
  or an f-string's fixed text shows in a Chinese lab is counted like any other output.
* **an allowlist** beside this file (``zh_outputs_allow.json``), each entry a regular expression
  and the reason it may stay (a server's stderr line, Python's own message).

English prose is then a run of three or more words of Latin letters (``don't`` and ``JSON-RPC``
are one word each, a plain number between two words is skipped), two of them with a small letter,
separated by single spaces or a comma, colon or semicolon and a space: two spaces or more are a
table's columns, not a sentence, but a table's head row that names a column in words is prose
(``function name   server   MCP tool``), and so is a button or a label of one English word
(Accept) that is no wire value. An output that holds one run or more
counts once, and is reported with its notebook, the cell's index (0-based, as the file counts
cells) and the runs found, so a translator can go straight to it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ALLOW_FILE = Path(__file__).with_name("zh_outputs_allow.json")

WORD = r"[A-Za-z]+(?:['’-][A-Za-z]+)*"
SEP = r"[,;:]? (?:\d[\d,.]*%? )?"  # a space, after a comma, colon or semicolon, or around a plain number
RUN = re.compile(rf"(?<![\w/.=#@$\\-]){WORD}(?:{SEP}{WORD}){{2,}}(?![\w/=(\[@$\\-]|\.\w)")
HEADER = re.compile(rf"^ *{WORD}(?: {WORD})*(?: {{2,}}{WORD}(?: {WORD})*)+ *$", re.M)  # a table's head row
LOWER = re.compile(rf"(?=[A-Za-z'’-]*[a-z]){WORD}")
LONE = re.compile(r"\s*[A-Za-z]{3,}\s*")  # a button's or a label's one word: Accept
CAMEL = re.compile(r"\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")
REPR_FIELD = re.compile(r"\b\w+=(?:'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")")
FRAME_LINE = re.compile(r"\{\"[^\n]*")
STRING_LIST = re.compile(r"\[(?:'[^'\n]*'(?:, )?)+\]")  # ['Tool execution started', ...]: a list of values
OBJECT_REPR = re.compile(r"<[A-Z]\w*[: ][^<>\n]*>")  # <Client: weather 1.0.0, protocol 2025-11-25>
TAG = re.compile(r"<(?:script|style)\b.*?</(?:script|style)>|<[^>]+>", re.S | re.I)
LABEL_KEYS = ("description", "value", "placeholder", "tooltip", "_options_labels")


@dataclass(frozen=True)
class Finding:
    """One output that shows English prose: where it is and the runs of words found in it."""

    notebook: str
    cell: int
    output: int
    runs: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.notebook} cell {self.cell} output {self.output}: " + " | ".join(self.runs)


# --- reading outputs ---------------------------------------------------------------------------------------

def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def widget_labels(state: dict, model_id: str, seen: set[str] | None = None) -> list[str]:
    """The labels a widget and its children show, from a notebook's stored widget state.

    A button's or a plain label's text comes back marked with a leading ``\\x00`` (see :data:`LONE`):
    one English word there is a sentence (Accept), where among a choice's options it names a value.
    """
    seen = set() if seen is None else seen
    if model_id in seen or model_id not in state:
        return []
    seen.add(model_id)
    labels: list[str] = []
    for key, value in state[model_id].get("state", {}).items():
        if key in LABEL_KEYS:
            lone = state[model_id].get("model_name") in ("ButtonModel", "LabelModel") and key in ("description", "value")
            labels += [("\x00" if lone else "") + v for v in (value if isinstance(value, list) else [value])
                       if isinstance(v, str)]
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                labels += widget_labels(state, child[len("IPY_MODEL_"):], seen)
    return labels


def output_texts(output: dict, widgets: dict | None = None) -> tuple[str, list[str]]:
    """Everything a student reads in one output, as plain text, and apart from it the widgets' labels."""
    kind = output.get("output_type")
    if kind == "stream":
        return _text(output.get("text", "")), []
    if kind == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}", []
    data = output.get("data", {})
    parts = [_text(data[mime]) for mime in ("text/plain", "text/markdown") if mime in data]
    if "text/html" in data:
        parts.append(html.unescape(TAG.sub(" ", _text(data["text/html"]))))
    view = data.get("application/vnd.jupyter.widget-view+json")
    labels = widget_labels(widgets, view.get("model_id", "")) if view and widgets else []
    return "\n".join(parts), [html.unescape(TAG.sub(" ", label)) for label in labels]


def _json_values(text: str) -> Iterator[tuple[int, int, object]]:
    """Each JSON object or array in ``text`` (outermost first), with where it starts and ends."""
    decoder = json.JSONDecoder()
    index = 0
    while True:
        starts = [i for i in (text.find("{", index), text.find("[", index)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        if isinstance(value, (dict, list)) and value:
            yield start, end, value
            index = end
        else:
            index = start + 1


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        if value[:1] in "{[":  # a tool's text that is itself JSON
            for _, _, inner in _json_values(value):
                yield from _strings(inner)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def wire_strings(texts: Iterable[str]) -> set[str]:
    """The string values of every JSON object or array printed in ``texts``: wire data."""
    found: set[str] = set()
    for text in texts:
        for _, _, value in _json_values(text):
            found.update(s for s in _strings(value) if s.strip())
    return found


# --- finding prose ---------------------------------------------------------------------------------------

def _allowlist() -> list[re.Pattern[str]]:
    entries = json.loads(ALLOW_FILE.read_text(encoding="utf-8"))["allowed"]
    return [re.compile(entry["pattern"]) for entry in entries]


def _elided(text: str, wire: list[str]) -> str:
    """Take out a wire string cut short with an ellipsis (a trace's one-line summary of a frame)."""
    def cut(match: re.Match[str]) -> str:
        line = match.group(1)
        for start in range(max(0, len(line) - 200), len(line) - 11):
            if any(string.startswith(line[start:]) for string in wire):
                return line[:start] + " ¶ "
        return match.group(0)

    return re.sub(r"([^\n]*)…", cut, text) if "…" in text else text


def english_runs(text: str, known: Iterable[str] = (), allowed: Iterable[re.Pattern[str]] | None = None,
                 label: bool = False) -> list[str]:
    """The runs of English prose in ``text``, once wire data, code and the allowlist are taken out.

    ``known`` are the strings seen on the wire; a widget's ``label`` of one English word is prose too
    (a button's Accept), unless it is one of them.
    """
    wire = sorted({string for string in known if " " in string.strip()}, key=len, reverse=True)
    if label and LONE.fullmatch(text) and text.strip() not in set(known):  # a button's Accept
        return [text.strip()]
    for pattern in _allowlist() if allowed is None else allowed:
        text = pattern.sub(" ¶ ", text)  # as printed: before anything is cut out
    for start, end, _ in sorted(_json_values(text), reverse=True):
        text = text[:start] + " ¶ " + text[end:]
    for string in wire:  # a lone word removed everywhere would cut real sentences short
        text = text.replace(string, " ¶ ")
    text = _elided(text, wire + [string.replace("\n", " ") for string in wire])  # a summary puts lines on one
    text = OBJECT_REPR.sub(" ¶ ", FRAME_LINE.sub(" ¶ ", REPR_FIELD.sub(" ¶ ", text)))
    text = CAMEL.sub(" ¶ ", STRING_LIST.sub(" ¶ ", text))
    heads = [" ".join(m.group(0).split()) for m in HEADER.finditer(text)  # a column named in words: prose
             if any(" " in column for column in re.split(r" {2,}", m.group(0).strip()))]
    runs = heads + [match.group(0) for match in RUN.finditer(HEADER.sub(" ¶ ", text))]
    return [run for run in runs if len(LOWER.findall(run)) >= 2]  # HOME, LOGNAME, PATH are names


def _widget_state(notebook: dict) -> dict:
    return notebook.get("metadata", {}).get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})


def _runs(output: dict, notebook: dict, known: Iterable[str], allowed: list[re.Pattern[str]]) -> list[str]:
    text, labels = output_texts(output, _widget_state(notebook))
    runs = english_runs(text, known, allowed)
    for label in labels:
        runs += english_runs(label.lstrip("\x00"), known, allowed, label=label.startswith("\x00"))
    return runs


def _wire(notebook: dict, more: Iterable[dict] = ()) -> set[str]:
    outputs = [o for cell in notebook["cells"] for o in cell.get("outputs", [])] + list(more)
    return wire_strings(output_texts(output)[0] for output in outputs)


def notebook_findings(path: Path, root: Path) -> list[Finding]:
    """Every output of the notebook at ``path`` that shows English prose."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    known, allowed = _wire(notebook), _allowlist()
    name = path.relative_to(root).as_posix()
    return [Finding(name, index, number, tuple(runs))
            for index, cell in enumerate(notebook["cells"]) if cell["cell_type"] == "code"
            for number, output in enumerate(cell.get("outputs", []))
            if (runs := _runs(output, notebook, known, allowed))]


@lru_cache(maxsize=4)
def _stored(path: Path, mtime: float) -> tuple[dict, frozenset[str]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return notebook, frozenset(_wire(notebook))


def new_english(fresh_outputs: Iterable[dict], stored_notebook: Path, cell_index: int) -> list[str]:
    """The English runs that freshly made outputs of one cell show and its stored outputs do not.

    The stored notebook's wire data is known; widgets' labels are not in fresh outputs
    (their state lives in the kernel), so the stored check alone reads those.
    """
    notebook, known = _stored(stored_notebook, stored_notebook.stat().st_mtime)
    fresh = [dict(output) for output in fresh_outputs]
    known = set(known) | wire_strings(output_texts(output)[0] for output in fresh)
    allowed, cell = _allowlist(), notebook["cells"][cell_index]
    stored = {run for output in cell.get("outputs", []) for run in _runs(output, notebook, known, allowed)}
    found = [run for output in fresh for run in english_runs(output_texts(output)[0], known, allowed)]
    return [run for run in dict.fromkeys(found) if run not in stored]


def main(argv: list[str]) -> int:
    """``python tests/zh_outputs.py``: every finding, one a line, for a translator; ``--table`` also writes
    the counts into the allowlist file's table (after a rebuild; the test then holds them)."""
    root = Path(__file__).resolve().parent.parent / "labs" / "zh-CN"
    counts = {}
    for path in sorted(p for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts):
        findings = notebook_findings(path, root)
        counts[path.relative_to(root).as_posix()] = len(findings)
        for finding in findings:
            print(finding)
    print(f"{sum(counts.values())} outputs in English")
    if "--table" in argv:
        table = json.loads(ALLOW_FILE.read_text(encoding="utf-8"))
        table["still_allowed"] = counts
        ALLOW_FILE.write_text(json.dumps(table, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
