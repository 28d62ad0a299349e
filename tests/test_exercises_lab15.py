"""mcplab.exercises.lab15: every check passes the worked answer, says "not answered" for the
placeholder, and names the slip behind each typical wrong answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcplab import exercises
from mcplab.exercises import lab15
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback

ROOT = Path(__file__).resolve().parent.parent
WEATHER = str(ROOT / "servers" / "weather.py")
ENTRY = {"command": sys.executable, "args": [WEATHER, "--era", "legacy"]}
SERVER_JSON = {"name": "io.github.ada/files", "description": "Files in one folder, read-only unless told.",
               "version": "1.0.0",
               "packages": [{"registryType": "pypi", "identifier": "mcplab", "version": "0.1.0",
                             "transport": {"type": "stdio"},
                             "packageArguments": [{"type": "positional", "value": "serve"},
                                                  {"type": "positional", "value": "files"}]}]}

RIGHT = {
    "check_desktop_entry": ENTRY,
    "check_side_effects": {"a"},
    "check_backends": [(1, 200), (2, 200), (3, 200), (1, 404)],
    "check_server_json": SERVER_JSON,
}


def test_all_lists_exactly_the_check_functions():
    checks = sorted(name for name in vars(lab15) if name.startswith("check_"))
    assert sorted(name for name in lab15.__all__ if name.startswith("check_")) == checks == sorted(RIGHT)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_each_check_is_re_exported_by_the_package(name):
    assert getattr(exercises, name) is getattr(lab15, name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(name):
    feedback = getattr(lab15, name)(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert feedback.message.startswith(NOT_ANSWERED) and not feedback.hint


@pytest.mark.subprocess
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_worked_answer_passes(name):
    feedback = getattr(lab15, name)(RIGHT[name])
    assert feedback, feedback
    assert repr(feedback).startswith("✓")


def package(**change):
    return {**SERVER_JSON, "packages": [{**SERVER_JSON["packages"][0], **change}]}


WRONG = [
    # 1. the desktop entry
    ("check_desktop_entry", {**ENTRY, "cwd": str(ROOT)}, "no working-directory field"),
    ("check_desktop_entry", {**ENTRY, "type": "stdio"}, "command, args and env only"),
    ("check_desktop_entry", {**ENTRY, "command": "python"}, "not an absolute path"),
    ("check_desktop_entry", {**ENTRY, "args": ["../servers/weather.py", "--era", "legacy"]}, "absolute path of servers/weather.py"),
    ("check_desktop_entry", {**ENTRY, "args": [str(ROOT / "servers" / "files.py"), "--era", "legacy"]}, "servers/weather.py"),
    ("check_desktop_entry", {**ENTRY, "args": [WEATHER]}, "--era legacy"),
    ("check_desktop_entry", {**ENTRY, "args": [WEATHER, "--era=legacy"]}, "--era legacy"),
    ("check_desktop_entry", {**ENTRY, "args": f"{WEATHER} --era legacy"}, "a list of strings"),
    ("check_desktop_entry", {**ENTRY, "command": "/usr/bin/false"}, "exited with code 1 before answering"),
    ("check_desktop_entry", [ENTRY], "expected one mcpServers entry, as a dict, got list"),
    # 2. side effects
    ("check_side_effects", {"a", "d"}, "readOnlyHint: true"),
    ("check_side_effects", {"a", "b"}, "a resource is data"),
    ("check_side_effects", {"a", "c"}, "a prompt is a template"),
    ("check_side_effects", {"a", "f"}, "read_file is a tool, yet read-only"),
    ("check_side_effects", set(), "one operation does change"),
    ("check_side_effects", {"z"}, "not among the operations"),
    ("check_side_effects", 1, "a set of letters"),
    # 3. backends
    ("check_backends", [(1, 200), (1, 200), (2, 200), (3, 404)], "keeps no memory"),
    ("check_backends", [(1, 200), (2, 200), (1, 200), (2, 404)], "keeps no memory"),
    ("check_backends", [(1, 200), (2, 200), (3, 200), (1, 200)], "backend 1 never saw it"),
    ("check_backends", [(1, 200), (2, 404), (3, 200), (1, 404)], "each gets 200"),
    ("check_backends", [(1, 200), (2, 200)], "four POSTs"),
    ("check_backends", "1,2,3", "four (backend, status) pairs"),
    # 4. server.json
    ("check_server_json", {**SERVER_JSON, "name": "files"}, "reverse-DNS namespace"),
    ("check_server_json", {**SERVER_JSON, "description": "x" * 101}, "100 characters"),
    ("check_server_json", {**SERVER_JSON, "version": "^1.0.0"}, "is a range"),
    ("check_server_json", {k: v for k, v in SERVER_JSON.items() if k != "version"}, "'version' is required"),
    ("check_server_json", {**SERVER_JSON, "packages": []}, "non-empty 'packages'"),
    ("check_server_json", package(version="latest"), "never 'latest'"),
    ("check_server_json", {**SERVER_JSON, "packages": [{k: v for k, v in SERVER_JSON["packages"][0].items()
                                                        if k != "transport"}]}, "needs 'transport'"),
    ("check_server_json", package(transport={"type": "streamable-http", "url": "http://127.0.0.1:8000/mcp"}), "speaks stdio"),
    ("check_server_json", package(registryType="npm"), "mcplab on PyPI"),
    ("check_server_json", package(packageArguments=[{"type": "positional", "value": "files"}]), "serve, files"),
]


@pytest.mark.subprocess
@pytest.mark.parametrize("name, answer, says", WRONG, ids=[f"{n}: {s}" for n, _, s in WRONG])
def test_each_typical_slip_is_named(name, answer, says):
    feedback = getattr(lab15, name)(answer)
    assert not feedback
    assert says in feedback.message, feedback.message


# --- a slow machine (issue 28): the entry's verdict never comes from a clock --------------------------------

def slow_entry(seconds: float, folder: Path) -> dict:
    """The worked entry, with an env that makes its Python sleep ``seconds`` before it runs the server."""
    (folder / "sitecustomize.py").write_text(f"import time\ntime.sleep({seconds!r})\n", encoding="utf-8")
    return {**ENTRY, "env": {"PYTHONPATH": str(folder)}}


@pytest.mark.subprocess
def test_the_desktop_entry_passes_when_the_server_takes_longer_than_twenty_seconds_to_start(tmp_path):
    feedback = lab15.check_desktop_entry(slow_entry(21, tmp_path))
    assert feedback, feedback
    assert repr(feedback).startswith("✓ started as a host starts it")


@pytest.mark.subprocess
def test_a_desktop_entry_check_that_gives_up_says_the_machine_was_slow_not_the_entry(tmp_path, monkeypatch):
    monkeypatch.setattr(lab15, "START_TIMEOUT", 1, raising=False)
    feedback = lab15.check_desktop_entry(slow_entry(5, tmp_path))
    assert not feedback
    assert feedback.message == ("the weather server did not answer within 1 s on this machine; this says nothing "
                                "about your entry; run the cell again (or close other work)")
    assert feedback.hint == ""


@pytest.mark.subprocess
def test_the_desktop_entry_of_the_bundled_server_where_servers_dir_finds_it_passes(tmp_path, monkeypatch):
    # a wheel install: the course's files under mcplab/_course, not beside the package
    from mcplab import course
    import shutil

    shutil.copytree(ROOT / "servers", tmp_path / "servers")
    monkeypatch.setattr(course, "root", lambda: tmp_path)
    feedback = lab15.check_desktop_entry({**ENTRY, "args": [str(tmp_path / "servers" / "weather.py"), "--era", "legacy"]})
    assert feedback, feedback


def test_in_the_page_a_right_entry_is_checked_up_to_its_start_which_needs_the_local_install(monkeypatch):
    from mcplab import place

    def no_process(*args, **kwargs):
        raise AssertionError("the page can start no process: the check must not try")
    monkeypatch.setattr(place, "IN_BROWSER", True)
    monkeypatch.setattr(lab15.subprocess, "run", no_process)
    feedback = lab15.check_desktop_entry(ENTRY)
    assert not feedback and feedback.hint == ""
    assert feedback.message == ("every field is as a host needs it; the last check, starting it as a host does and "
                                "asking initialize, needs the local install: a browser page can start no process")
    wrong = lab15.check_desktop_entry({**ENTRY, "command": "python"})  # the checks before the start still run
    assert not wrong and "not an absolute path" in wrong.message
