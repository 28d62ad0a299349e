"""The keeper (mcplab.grade.keeper.Tree): a command started for a grader reports its own exit status, its
own start failure, and its pipes' end, on the keeper's route (Linux) and on the portable one alike.
What it ends is the hostile table's business (tests/test_redteam_grader.py)."""

from __future__ import annotations

import selectors
import subprocess
import sys

import pytest

from mcplab.grade import keeper
from mcplab.grade.keeper import Tree

pytestmark = pytest.mark.subprocess

ROUTES = [True, False] if keeper.KEEPER else [False]


@pytest.fixture(params=ROUTES, ids=lambda kept: "keeper" if kept else "group")
def route(request, monkeypatch):
    monkeypatch.setattr(keeper, "KEEPER", request.param)
    return request.param


def started(code: str) -> Tree:
    return Tree([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("code, status", [("raise SystemExit(3)", 3), ("pass", 0),
                                          ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -9)])
def test_the_status_is_the_commands_own_not_the_keepers(route, code: str, status: int) -> None:
    tree = started(code)
    assert tree.wait(60) == status and tree.poll() == status
    tree.end()
    assert tree.returncode == status


def test_a_command_that_cannot_start_is_refused_as_popen_would(route, tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        Tree([str(tmp_path / "no-such-program")], stdin=None, stdout=None, stderr=None)


def test_the_pipes_end_when_the_command_exits_the_keeper_holds_none_of_them(route) -> None:
    tree = started("import sys; print(sys.stdin.read().upper())")
    tree.stdin.write(b"hello\n")
    tree.stdin.close()
    selector = selectors.DefaultSelector()
    selector.register(tree.stdout, selectors.EVENT_READ)
    out = b""
    while selector.select(60):  # each wake-up brings bytes or the end; a held pipe would leave us here
        chunk = tree.stdout.read(4096)
        if not chunk:
            break
        out += chunk
    assert out == b"HELLO\n\n"
    assert tree.wait(60) == 0
    tree.end()


def test_a_command_still_running_has_no_status_and_terminate_ends_it(route) -> None:
    tree = started("import sys; sys.stdin.read()")
    assert tree.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        tree.wait(0.0)
    tree.terminate()
    assert tree.wait(60) == -15
    tree.end()
