"""Lab 12's form exercise: its table is what JSON Schema says, the check names the first wrong case by its
rule, and the lab's solved client judges every answer of the table the same way."""

from __future__ import annotations

import importlib.util
import sys

import jsonschema

from mcplab import exercises
from mcplab.exercises.lab12_forms import _EXPECTED

from conftest import ROOT

RIGHT = dict(_EXPECTED)


def test_the_exercise_s_form_is_the_one_the_booking_desk_asks():
    from mcplab.grade import desk

    assert exercises.FORM == desk.FORM


def test_the_table_is_what_json_schema_says_of_each_answer():
    validator = jsonschema.Draft202012Validator(exercises.FORM)
    assert {key: "fits" if validator.is_valid(answer) else "does not fit"
            for key, answer in exercises.FORM_ANSWERS.items()} == RIGHT


def test_the_right_answer_passes_and_a_wrong_case_is_named_with_its_rule():
    assert exercises.check_form_answers(RIGHT)
    wrong = exercises.check_form_answers({**RIGHT, "e": "fits"})
    assert not wrong and wrong.message.startswith("e: does not fit, not 'fits': true is a boolean")
    assert not exercises.check_form_answers({key: ... for key in RIGHT})
    assert "Not answered yet" in str(exercises.check_form_answers({key: ... for key in RIGHT}))


def test_the_solved_client_judges_each_answer_of_the_table_as_json_schema_does(monkeypatch):
    folder = ROOT / "labs" / "solutions" / "build"
    monkeypatch.syspath_prepend(str(folder))
    spec = importlib.util.spec_from_file_location("my_client_two", folder / "my_client_two.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delitem(sys.modules, "my_client", raising=False)
    assert {key: "fits" if not module.fits(exercises.FORM, answer) else "does not fit"
            for key, answer in exercises.FORM_ANSWERS.items()} == RIGHT
