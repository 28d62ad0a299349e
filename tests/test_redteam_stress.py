"""Red team, all at once: a flood, a symlink race and huge patterns against one server, for STRESS_SECONDS.

One writable file server over Streamable HTTP (a process, as a class would run it) takes, at the same
time: a session flooding it with notifications (half of them malformed), a session reading and
writing through a link another process flips between a folder inside the root and one outside, and
a session sending search patterns of 1 MB and of the largest allowed size. Meanwhile a fourth
client pings it. The server must answer every ping, no byte from outside the root may appear in any
reply (nor any file appear outside), and its peak memory must stay under :data:`CEILING_MIB`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from conftest import need
from mcplab.server.streamable_http import launch

from redteam_helpers import RawHTTP, have_proc, open_session, peak_rss_kib, session_headers
from server_helpers import SERVERS, server_argv

pytestmark = [pytest.mark.subprocess, pytest.mark.http]

STRESS_SECONDS = 15.0  # how long the attacks run together
CEILING_MIB = 128      # the server's peak resident memory under all of it (idle: about 40 MiB)
SECRET = "OUTSIDE-SECRET"

FLIPPER = r"""
import os, sys
link, tmp = sys.argv[1], sys.argv[1] + ".next"
while True:
    for target in ("inner", "../outside"):
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(target, tmp)
        os.replace(tmp, link)
"""

NOTIFICATIONS = [
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 424242}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}, "progress": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    {"jsonrpc": "2.0", "method": "notifications/" + "x" * 2000},
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text(SECRET)
    served = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", served)
    (served / "inner").mkdir()
    (served / "inner" / "target.txt").write_text("inside")
    (served / "flip").symlink_to("inner")
    return served


def test_a_flood_a_symlink_race_and_huge_patterns_at_once_leave_the_server_answering_inside_its_bounds(
        root: Path) -> None:
    need(have_proc(), "reading the server's peak memory needs /proc (Linux)")
    outside = root.parent / "outside"
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(root / "flip")])
    stop = threading.Event()
    leaks: list[str] = []
    problems: list[str] = []
    counts = {"notifications": 0, "races": 0, "patterns": 0, "pings": 0}

    def guarded(attack):
        def run() -> None:
            try:
                attack()
            except Exception as exc:  # an attacker that breaks is reported, not ignored
                problems.append(f"{attack.__name__}: {type(exc).__name__}: {exc}")
        return threading.Thread(target=run, name=attack.__name__)

    with launch(server_argv("files", "--root", str(root), "--writable")) as server:
        url = server.url
        sessions = {name: open_session(url) for name in ("flood", "race", "patterns", "ping")}

        def flood() -> None:
            headers = [(k, v) for k, v in session_headers(sessions["flood"]).items()
                       if k not in ("Accept", "Content-Type")]
            with RawHTTP(url) as wire:
                while not stop.is_set():
                    for note in NOTIFICATIONS:
                        wire.post(json.dumps(note).encode(), headers)
                        status, _, _ = wire.response()
                        if status != 202:
                            raise AssertionError(f"a notification got {status}")
                        counts["notifications"] += 1

        def race() -> None:
            calls = [("read_file", {"path": "flip/target.txt"}), ("list_directory", {"path": "flip"}),
                     ("write_file", {"path": "flip/planted.txt", "content": "PLANTED"})]
            with httpx.Client(timeout=30, trust_env=False) as client:
                while not stop.is_set():
                    for number, (tool, arguments) in enumerate(calls):
                        reply = client.post(url, headers=session_headers(sessions["race"]), json={
                            "jsonrpc": "2.0", "id": number, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}})
                        if SECRET in reply.text or str(outside) in reply.text:
                            leaks.append(reply.text[:300])
                        counts["races"] += 1

        def patterns() -> None:
            with httpx.Client(timeout=30, trust_env=False) as client:
                while not stop.is_set():  # each pattern new: a cache of compiled patterns would grow with each
                    number = counts["patterns"]
                    for pattern in (f"{number}" + "*a" * (1 << 19), f"{number % 10}" + "*?" * 127):
                        reply = client.post(url, headers=session_headers(sessions["patterns"]), json={
                            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "search_files", "arguments": {"pattern": pattern}}})
                        if reply.status_code != 200:
                            raise AssertionError(f"a search got {reply.status_code}")
                        counts["patterns"] += 1

        def ping() -> None:
            with httpx.Client(timeout=10, trust_env=False) as client:
                while not stop.is_set():
                    reply = client.post(url, headers=session_headers(sessions["ping"]),
                                        json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                    if reply.status_code != 200 or reply.json().get("result") != {}:
                        raise AssertionError(f"ping got {reply.status_code}: {reply.text[:200]}")
                    counts["pings"] += 1
                    time.sleep(0.05)

        attackers = [guarded(attack) for attack in (flood, race, patterns, ping)]
        try:
            for attacker in attackers:
                attacker.start()
            stop.wait(STRESS_SECONDS)
        finally:
            stop.set()
            for attacker in attackers:
                attacker.join(60)
            flipper.kill()
            flipper.wait()
        peak = peak_rss_kib(server.process.pid)
        assert server.process.poll() is None, "the server died"
    assert not problems, problems
    assert all(counts.values()), counts  # every attack really ran, and the pinger was answered
    assert not leaks, leaks[:3]
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (outside / "target.txt").read_text() == SECRET
    assert peak < CEILING_MIB * 1024, f"the server peaked at {peak} KiB ({counts})"
