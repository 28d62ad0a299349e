"""Red team, process hygiene: what a server leaves behind after abuse (descriptors, files, logs, paths).

An attack that fails can still hurt: a descriptor leaked per request runs a long-lived server out of
files, a temporary file per refused write litters the student's folder, a traceback per bad line fills
a stderr pipe nobody drains (and a full pipe freezes the server), and one real path in a reply tells
a model where the folder lives. Each row is one abuse followed by one look at the process or the disk;
a reader adds a row as (what, scenario), the scenario taking the served folder and returning nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from conftest import need
from redteam_helpers import have_proc, script
from server_helpers import RawServer, SERVERS, server_argv

pytestmark = pytest.mark.subprocess


@pytest.fixture
def root(tmp_path: Path) -> Path:
    served = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", served)
    (served / "dangling").symlink_to("nowhere")
    (served / "loop").symlink_to("loop")
    (served / "out").symlink_to(tmp_path)
    return served


def _log(server: RawServer) -> str:
    return b"".join(line for line in server.stderr if line).decode(errors="replace")


ABUSE = [  # tool calls that must each fail cleanly: (tool, arguments)
    ("read_file", {"path": "../x"}), ("read_file", {"path": "/etc/passwd"}), ("read_file", {"path": "out/root"}),
    ("read_file", {"path": "dangling"}), ("read_file", {"path": "loop"}), ("read_file", {"path": "src"}),
    ("list_directory", {"path": "notes.md"}), ("list_directory", {"path": "out"}), ("get_file_info", {"path": "loop"}),
    ("search_files", {"pattern": "*" * 300}), ("write_file", {"path": "out/planted", "content": "x"}),
    ("write_file", {"path": "src", "content": "x"}), ("write_file", {"path": "nowhere/deep/x", "content": "x"}),
    ("write_file", {"path": "big.txt", "content": "x" * ((1 << 20) + 1)}),
]


def descriptors_stay_level(root: Path) -> None:
    need(have_proc(), "counting a process's descriptors needs /proc (Linux)")
    with RawServer(server_argv("files", "--root", str(root), "--writable")) as server:
        server.initialize("2025-11-25")
        fds = f"/proc/{server.process.pid}/fd"
        server.result("tools/call", {"name": "list_directory", "arguments": {}})
        before = len(os.listdir(fds))
        for _ in range(30):
            for tool, arguments in ABUSE:
                server.request("tools/call", {"name": tool, "arguments": arguments})
            server.result("tools/call", {"name": "write_file", "arguments": {"path": "ok.txt", "content": "fine"}})
            server.result("tools/call", {"name": "search_files", "arguments": {"pattern": "*"}})
            server.result("resources/list")
        assert len(os.listdir(fds)) <= before, f"{len(os.listdir(fds)) - before} descriptors leaked"


def refused_writes_leave_no_temporary_file(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root), "--writable", "--write-quota", "1")) as server:
        server.initialize("2025-11-25")
        for tool, arguments in ABUSE:
            server.request("tools/call", {"name": tool, "arguments": arguments})
        for number in range(3):  # the second one passes the quota and is refused
            server.request("tools/call", {"name": "write_file",
                                          "arguments": {"path": f"q{number}.txt", "content": "x" * 600_000}})
    leftovers = [p.name for p in root.rglob(".*")]
    assert not leftovers, leftovers
    assert (root / "q0.txt").exists() and not (root / "q1.txt").exists()


def no_reply_or_log_line_shows_the_real_folder(root: Path) -> None:
    real = str(root.parent)
    with RawServer(server_argv("files", "--root", str(root), "--writable")) as server:
        server.initialize("2025-11-25")
        replies = [server.request("tools/call", {"name": tool, "arguments": arguments}) for tool, arguments in ABUSE]
        replies += [server.request("resources/read", {"uri": f"file:///{path}"}) for path in ("loop", "out/x", "dangling")]
        replies += [server.request("resources/list"), server.request("prompts/get", {
            "name": "summarize_file", "arguments": {"path": "loop"}})]
        assert server.close() == 0
    text = json.dumps(replies) + _log(server)
    assert real not in text, text[text.index(real) - 200:text.index(real) + 200]


def garbage_lines_cost_no_traceback(root: Path) -> None:
    junk = [b"{", b"[]", b"null", b'{"jsonrpc": "2.0"}', b"\xff\xfe", b'{"jsonrpc":"2.0","method":7}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}']
    with RawServer(server_argv("files", "--root", str(root))) as server:
        for _ in range(200):
            for line in junk:
                server.send_raw(line + b"\n")
        server.initialize("2025-11-25")
        assert server.result("ping") == {}
        assert server.close() == 0
    log = _log(server)
    assert "Traceback" not in log and len(log) < 20_000, log[-2000:]


def stdout_carries_only_json_rpc_under_abuse(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root), "--writable")) as server:
        server.initialize("2025-11-25")
        for tool, arguments in ABUSE:
            server.send({"jsonrpc": "2.0", "id": tool + json.dumps(arguments)[:50], "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}})
        server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
        seen = []
        while not seen or seen[-1].get("id") != "last":
            seen.append(server.recv())  # recv() parses every line: one that is not JSON fails here
        assert all(message.get("jsonrpc") == "2.0" for message in seen)
        assert server.close() == 0


def the_portable_walk_leaves_nothing_open_either(root: Path) -> None:
    need(have_proc(), "counting a process's descriptors needs /proc (Linux)")
    with RawServer(script("files-portable", "--root", str(root), "--writable")) as server:
        server.initialize("2025-11-25")
        fds = f"/proc/{server.process.pid}/fd"
        server.result("resources/list")
        before = len(os.listdir(fds))
        for _ in range(20):
            for tool, arguments in ABUSE:
                server.request("tools/call", {"name": tool, "arguments": arguments})
            server.result("resources/list")
        assert len(os.listdir(fds)) <= before


HYGIENE: list[tuple[str, Callable[[Path], None]]] = [
    ("descriptors stay level after hundreds of refused and accepted calls", descriptors_stay_level),
    ("refused writes leave no temporary file", refused_writes_leave_no_temporary_file),
    ("no reply or log line shows the real folder", no_reply_or_log_line_shows_the_real_folder),
    ("garbage lines cost no traceback", garbage_lines_cost_no_traceback),
    ("stdout carries only JSON-RPC under abuse", stdout_carries_only_json_rpc_under_abuse),
    ("the portable walk leaves nothing open either", the_portable_walk_leaves_nothing_open_either),
]


@pytest.mark.parametrize("what, scenario", HYGIENE, ids=[row[0] for row in HYGIENE])
def test_abuse_leaves_the_server_and_the_folder_clean(what: str, scenario: Callable[[Path], None], root: Path) -> None:
    scenario(root)
