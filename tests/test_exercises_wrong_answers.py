"""Every exercise check against its table of plausible wrong answers (tests/exercise_answers.py).

No wrong answer passes; each is refused with a sentence and a hint, never a traceback; whatever a
student hands a check by mistake (None, a coroutine they forgot to await, an async function, a
function that raises) is one more refusal. The solution passes, here and in labs/solutions/, and
a placeholder is "not answered yet" with no hint: a hint comes only after a wrong attempt, so no
stored output of a lab (English or Chinese) shows one, or an answer.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

import exercise_answers as answers
from conftest import ROOT
from mcplab import exercises, i18n
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback

CHECKS = sorted(name for name in dir(exercises) if name.startswith("check_"))
ROWS = [(name, label, answer) for name, rows in answers.WRONG.items() for label, answer in rows]
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
CALL = re.compile(r"exercises\.(check_\w+)\(")


@pytest.fixture(scope="module")
def live():
    return answers.live_answers()


def resolve(answer, live):
    return live[answer.name] if isinstance(answer, answers.Live) else answer


def judged(name: str, answer) -> Feedback:
    """The check's feedback, with any warning it caused (a coroutine never awaited) made a failure."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        feedback = getattr(exercises, name)(answer)
        del answer  # a coroutine the check did not close warns when it goes
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    return feedback


def assert_refused(feedback, what: str) -> None:
    assert isinstance(feedback, Feedback), f"{what}: returned {type(feedback).__name__}"
    assert not feedback.ok, f"{what}: ACCEPTED: {feedback!r}"
    shown = repr(feedback)
    assert isinstance(feedback.message, str) and feedback.message.strip(), what
    assert not feedback.message.startswith(i18n._(NOT_ANSWERED)), f"{what}: a wrong attempt is not 'not answered'"
    assert isinstance(feedback.hint, str) and feedback.hint.strip(), f"{what}: no hint after a wrong attempt"
    assert "Traceback" not in shown and not ADDRESS.search(shown), f"{what}: {shown}"
    assert shown.startswith("✗") and len(feedback.message) < 1500, f"{what}: {shown[:300]}"


# --- the tables ------------------------------------------------------------------------------------------

def test_every_check_has_its_right_answer_and_a_table_of_wrong_ones():
    assert set(answers.RIGHT) == set(CHECKS) == set(answers.WRONG)
    assert not {name: len(rows) for name, rows in answers.WRONG.items() if len(rows) < 8}


@pytest.mark.parametrize("name", CHECKS)
def test_the_solution_passes(name, live):
    feedback = judged(name, resolve(answers.RIGHT[name], live))
    assert feedback.ok and repr(feedback).startswith("✓"), repr(feedback)


@pytest.mark.parametrize("name, label, answer", ROWS, ids=[f"{name}-{label}" for name, label, _ in ROWS])
def test_no_wrong_answer_passes_and_each_gets_a_sentence_and_a_hint(name, label, answer, live):
    assert_refused(judged(name, resolve(answer, live)), f"{name}: {label}")


HOSTILE_IDS = [label for label, _ in answers.HOSTILE] + ["a coroutine"]


@pytest.mark.parametrize("name", CHECKS)
@pytest.mark.parametrize("label", HOSTILE_IDS)
def test_anything_handed_by_mistake_is_refused_with_a_sentence_naming_what_came(name, label):
    if label == "a coroutine":  # the call a student forgot to await
        feedback = judged(name, answers._coroutine_function())
    else:
        feedback = judged(name, dict(answers.HOSTILE)[label])
    assert_refused(feedback, f"{name}: {label}")
    came = {"None": "None", "an object": "object", "a coroutine": "coroutine", "an async function": "async"}
    if label in came:
        assert came[label] in feedback.message, feedback.message


def test_an_unawaited_call_is_told_to_await():
    feedback = judged("check_forecast", answers._coroutine_function())
    assert "await" in feedback.message


# --- placeholders and hints ------------------------------------------------------------------------------

def _placeholders(name: str) -> list:
    right = answers.RIGHT[name]
    forms = [...]
    if isinstance(right, dict):
        forms.append(dict.fromkeys(right, ...))
    if isinstance(right, (list, tuple)) and not isinstance(right, (bytes, str)):
        forms.append(type(right)([...] * len(right)))
    if callable(right) and not isinstance(right, type):
        def stub(body):
            ...
        forms.append(stub)
    return forms


@pytest.mark.parametrize("name", CHECKS)
def test_a_placeholder_is_not_answered_yet_and_shows_no_hint(name):
    for placeholder in _placeholders(name):
        feedback = judged(name, placeholder)
        assert not feedback and feedback.message.startswith(NOT_ANSWERED), (placeholder, feedback)
        assert not feedback.hint and "hint" not in repr(feedback), repr(feedback)


def _outputs(path: Path) -> list[tuple[int, str]]:
    found = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain") or ""
            found.append((index, "".join(text)))
    return found


def _said(live, code: str) -> tuple[set[str], set[str]]:
    """(every hint, every message of a right answer) the checks give in the language ``code``."""
    hints, right = set(), set()
    for name, label, answer in ROWS:
        if name == "check_desktop_entry" and "not there" not in label:
            continue  # the same hint each time; spare the processes
        hints.add(getattr(exercises, name)(resolve(answer, live)).hint)
    for name in CHECKS:
        right.add(getattr(exercises, name)(resolve(answers.RIGHT[name], live)).message)
    return {hint for hint in hints if hint}, right


LABS = sorted((ROOT / "labs").glob("*.ipynb")) + sorted((ROOT / "labs" / "zh-CN").glob("*.ipynb"))


def test_no_stored_output_of_a_lab_shows_a_hint_or_an_answer(live, monkeypatch):
    said = {}
    for code in ("en", "zh"):
        monkeypatch.setenv(i18n.ENV, code)
        said[code] = _said(live, code)
    monkeypatch.delenv(i18n.ENV)
    assert len(said["en"][0]) > 40 and said["en"][0] != said["zh"][0]
    leaks = []
    for path in LABS:
        code = "zh" if "zh-CN" in path.parts else "en"
        hints, right = said[code]
        marker = "提示：" if code == "zh" else "hint: "
        for index, text in _outputs(path):
            leaks += [f"{path.name} cell {index}: a hint: {hint[:60]}" for hint in hints if hint in text]
            leaks += [f"{path.name} cell {index}: an answer: {message[:60]}" for message in right if message in text]
            if marker in text:
                leaks.append(f"{path.name} cell {index}: {text[:80]!r}")
    assert not leaks, "\n".join(leaks)
    assert any(path.parent.name == "zh-CN" for path in LABS)


def test_every_check_passes_in_the_solutions_notebooks():
    seen = set()
    for path in sorted((ROOT / "labs" / "solutions").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            called = CALL.findall("".join(cell.get("source", "")))
            if cell["cell_type"] != "code" or not called:
                continue
            shown = "".join("".join(o.get("text") or o.get("data", {}).get("text/plain") or "")
                            for o in cell.get("outputs", []))
            assert "✓" in shown and "✗" not in shown, f"{path.name}: {called}: {shown[:200]}"
            seen.update(called)
    assert seen == set(CHECKS)
