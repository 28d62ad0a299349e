"""Red team, the file sandbox: races, links that dangle or loop, patterns a model writes, writes that never stop.

servers/files.py serves one folder and promises that nothing outside it is read or changed, and that
the folder's real location never appears in a reply. Each attack is a row; each runs against the
server as a process, twice: with the sandbox's directory-descriptor walk (mcplab/server/confine.py,
what Linux and macOS get) and with its portable walk forced (what a platform without ``dir_fd``
gets). An attacker process flips symlinks inside the root as fast as it can while the server works.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from redteam_helpers import have_proc, rss_kib, script
from server_helpers import RawServer, SERVERS, server_argv

pytestmark = pytest.mark.subprocess

SECRET = "OUTSIDE-SECRET: no byte of this may leave the server"
INSIDE = "inside text"
WALKS = ["dir_fd", "portable"]


def files_argv(walk: str, root: Path, *flags: str) -> list[str]:
    if walk == "portable":
        return script("files-portable", "--root", str(root), *flags)
    return server_argv("files", "--root", str(root), *flags)


def test_the_dir_fd_rows_really_take_the_descriptor_walk_where_the_platform_has_one() -> None:
    """The "dir_fd" rows run the server as it starts by itself; on Linux and macOS that must be the walk by
    directory descriptors, or every row would test the portable walk twice (as it once did, when the
    capability check asked about os.replace, which CPython never lists in supports_dir_fd)."""
    from mcplab.server import confine

    if sys.platform.startswith("linux") or sys.platform == "darwin":
        assert confine.DIR_FD_WALK


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """root/ (served) with inner/ and links an attacker flips; outside/ beside it, holding the secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text(SECRET)
    (outside / "only-outside.txt").write_text(SECRET)
    served = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", served)
    (served / "inner").mkdir()
    (served / "inner" / "target.txt").write_text(INSIDE)
    (served / "inner" / "only-inside.txt").write_text(INSIDE)
    (served / "swap").mkdir()
    (served / "swap" / "target.txt").write_text(INSIDE)
    (served / "flip").symlink_to("inner")
    (served / "lastflip").symlink_to("inner/target.txt")
    return served


FLIPPER = r"""
import os, sys, time
kind, link, a, b = sys.argv[1:5]
tmp = link + ".next"
while True:
    if kind == "link":          # a link whose target flips between inside and outside
        for target in (a, b):
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            os.symlink(target, tmp)
            os.replace(tmp, link)
    else:                       # a real folder swapped for a link to the outside, and back
        os.rename(link, a)
        os.symlink(b, link)
        os.unlink(link)
        os.rename(a, link)
"""


class Attacker:
    """A process that flips a link (or swaps a folder for a link) until stopped."""

    def __init__(self, kind: str, link: Path, a: str, b: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", FLIPPER, kind, str(link), a, b])

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def attackers(root: Path) -> list[Attacker]:
    outside = root.parent / "outside"
    return [Attacker("link", root / "flip", "inner", "../outside"),
            Attacker("link", root / "lastflip", "inner/target.txt", str(outside / "target.txt")),
            Attacker("swap", root / "swap", str(root / ".swap-aside"), str(outside))]


READ_RACES = [  # (what, method, params, calls): none may ever show a byte from outside/
    ("read_file through a flipping folder link", "tools/call",
     {"name": "read_file", "arguments": {"path": "flip/target.txt"}}, 200),
    ("read_file of a flipping file link", "tools/call", {"name": "read_file", "arguments": {"path": "lastflip"}}, 200),
    ("read_file through a folder swapped for a link", "tools/call",
     {"name": "read_file", "arguments": {"path": "swap/target.txt"}}, 200),
    ("list_directory of a flipping folder link", "tools/call",
     {"name": "list_directory", "arguments": {"path": "flip"}}, 80),
    ("get_file_info through a swapped folder", "tools/call",
     {"name": "get_file_info", "arguments": {"path": "swap/target.txt"}}, 80),
    ("search_files under a flipping link", "tools/call",
     {"name": "search_files", "arguments": {"pattern": "*", "path": "flip"}}, 80),
    ("resources/read through a flipping link", "resources/read", {"uri": "file:///flip/target.txt"}, 80),
    ("a prompt attaching a flipping file link", "prompts/get",
     {"name": "summarize_file", "arguments": {"path": "lastflip"}}, 80),
]


@pytest.mark.parametrize("walk", WALKS)
def test_no_read_escapes_the_root_while_links_flip(walk: str, root: Path) -> None:
    flippers = attackers(root)
    leaks: dict[str, int] = {}
    try:
        with RawServer(files_argv(walk, root)) as server:
            server.initialize("2025-11-25")
            for what, method, params, calls in READ_RACES:
                for _ in range(calls):
                    reply = json.dumps(server.request(method, params))
                    if "OUTSIDE-SECRET" in reply or "only-outside" in reply or str(root.parent) in reply:
                        leaks[what] = leaks.get(what, 0) + 1
            assert server.result("ping") == {}
    finally:
        for flipper in flippers:
            flipper.stop()
    assert not leaks, f"bytes from outside the root left the server: {leaks}"


WRITES = 400
WRITE_RACES = [  # (what, path written while the attacker flips)
    ("a new file through a flipping folder link", "flip/planted.txt"),
    ("a replacement through a flipping folder link", "flip/target.txt"),
    ("a replacement of a flipping file link", "lastflip"),
    ("a file through a folder swapped for a link", "swap/target.txt"),
]


@pytest.mark.parametrize("walk", WALKS)
def test_no_write_lands_outside_the_root_while_links_flip(walk: str, root: Path) -> None:
    outside = root.parent / "outside"
    flippers = attackers(root)
    try:
        with RawServer(files_argv(walk, root, "--writable")) as server:
            server.initialize("2025-11-25")  # no elicitation: a replacement is not asked about
            for what, path in WRITE_RACES:
                for _ in range(WRITES):
                    server.request("tools/call", {"name": "write_file",
                                                  "arguments": {"path": path, "content": "PLANTED"}})
            assert server.result("ping") == {}
    finally:
        for flipper in flippers:
            flipper.stop()
    assert sorted(p.name for p in outside.iterdir()) == ["only-outside.txt", "target.txt"]
    assert (outside / "target.txt").read_text() == SECRET


def test_a_portable_create_that_lands_outside_is_refused_and_leaves_nothing_there(root: Path) -> None:
    """The race the write test above can hit, made certain: the portable walk reached root/swap, then
    the attacker put a link to outside/ in its place before the temporary file was created. The create
    follows the link (only a path names the folder), the check through the handle sees it outside:
    refused with ELOOP, and the file it made is taken back, so nothing new is left outside."""
    import errno
    import os

    from mcplab.server.dirhandles import PathFolder

    outside = root.parent / "outside"
    folder = PathFolder(os.path.realpath(root), ("swap",))
    shutil.rmtree(root / "swap")
    (root / "swap").symlink_to(outside)  # the swap, after the walk and before the create
    with pytest.raises(OSError) as refused:
        folder.open(".target.txt.0123456789ab.tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert refused.value.errno == errno.ELOOP
    assert sorted(p.name for p in outside.iterdir()) == ["only-outside.txt", "target.txt"]
    assert (outside / "target.txt").read_text() == SECRET


@pytest.mark.parametrize("existing", [True, False], ids=["replacing", "creating"])
@pytest.mark.parametrize("walk", WALKS)
def test_a_folder_swapped_for_a_link_while_the_user_confirms_cannot_redirect_the_write(
        walk: str, existing: bool, root: Path) -> None:
    outside = root.parent / "outside"
    (root / "docs").mkdir()
    (root / "docs" / "target.txt").write_text(INSIDE)
    path = "docs/target.txt"
    with RawServer(files_argv(walk, root, "--writable")) as server:
        server.initialize("2025-11-25", {"elicitation": {}})
        server.send({"jsonrpc": "2.0", "id": "w", "method": "tools/call",
                     "params": {"name": "write_file", "arguments": {"path": path, "content": "PLANTED"}}})
        question = server.recv()
        assert question["method"] == "elicitation/create", question
        # While the "Replace?" form is open, docs/ becomes a link to the outside folder.
        (root / "docs").rename(root / "docs-aside")
        if not existing:
            (outside / "target.txt").unlink()
        (root / "docs").symlink_to(outside)
        server.send({"jsonrpc": "2.0", "id": question["id"],
                     "result": {"action": "accept", "content": {"replace": True}}})
        reply = server.response("w")["result"]
        assert reply["isError"] is True and "outside" in reply["content"][0]["text"], reply
        assert str(root) not in json.dumps(reply)
    assert sorted(p.name for p in outside.iterdir()) == (["only-outside.txt", "target.txt"] if existing
                                                         else ["only-outside.txt"])
    if existing:
        assert (outside / "target.txt").read_text() == SECRET
    assert (root / "docs-aside" / "target.txt").read_text() == INSIDE


# --- links that dangle or loop --------------------------------------------------------------------------

def trap_links(root: Path) -> None:
    (root / "dangling").symlink_to("nowhere.txt")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "selfie").symlink_to("selfie")
    (root / "src" / "up").symlink_to("../..")       # leads out of the root
    (root / "src" / "abs_dangling").symlink_to(root / "gone" / "file.txt")


LISTINGS = [  # (what, method, params): each must answer normally, skipping the traps
    ("list_directory of the root", "tools/call", {"name": "list_directory", "arguments": {}}),
    ("list_directory of a folder with traps", "tools/call", {"name": "list_directory", "arguments": {"path": "src"}}),
    ("search_files for everything", "tools/call", {"name": "search_files", "arguments": {"pattern": "*"}}),
    ("resources/list", "resources/list", None),
    ("completion of a path", "completion/complete", {"ref": {"type": "ref/prompt", "name": "summarize_file"},
                                                     "argument": {"name": "path", "value": ""}}),
    ("completion of a template path", "completion/complete", {"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
                                                              "argument": {"name": "path", "value": "s"}}),
]
DIRECT = [  # (what, tool, path, a word the refusal must contain)
    ("read a dangling link", "read_file", "dangling", "no such file"),
    ("read a link loop", "read_file", "loop_a", "loop"),
    ("read a link to itself", "read_file", "selfie", "loop"),
    ("info on a dangling link", "get_file_info", "dangling", "no such file"),
    ("info on a link loop", "get_file_info", "loop_b", "loop"),
    ("list a link that leads out", "list_directory", "src/up", "outside"),
    ("read an absolute dangling link", "read_file", "src/abs_dangling", "no such file"),
    ("read through a missing folder", "read_file", "gone/file.txt", "no such file"),
]


@pytest.mark.parametrize("walk", WALKS)
def test_dangling_links_and_loops_are_skipped_in_listings_and_refused_by_name_without_a_real_path(
        walk: str, root: Path) -> None:
    trap_links(root)
    real = str(root.parent)
    with RawServer(files_argv(walk, root)) as server:
        server.initialize("2025-11-25")
        for what, method, params in LISTINGS:
            reply = server.request(method, params)
            assert "result" in reply, f"{what}: {reply}"
            assert not reply["result"].get("isError"), f"{what}: {reply}"
            text = json.dumps(reply)
            assert real not in text, f"{what} shows the real path: {text[:500]}"
            assert not [trap for trap in ("dangling", "loop_a", "loop_b", "selfie", "up/", "abs_dangling")
                        if trap in text], f"{what} lists a trap: {text[:800]}"
            assert "notes.md" in text or "greet.py" in text or "values" in text, text[:500]
        for what, tool, path, word in DIRECT:
            reply = server.request("tools/call", {"name": tool, "arguments": {"path": path}})
            assert reply["result"]["isError"] is True, f"{what}: {reply}"
            message = reply["result"]["content"][0]["text"]
            assert word in message, f"{what}: {message}"
            assert real not in message, f"{what} shows the real path: {message}"
        for uri in ("file:///dangling", "file:///loop_a"):
            error = server.request("resources/read", {"uri": uri})["error"]
            assert error["code"] in (-32002, -32602) and real not in json.dumps(error), error
        assert server.result("ping") == {}


# --- glob patterns a model writes -------------------------------------------------------------------------

def test_a_huge_glob_pattern_is_refused_at_once_naming_the_limit(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root))) as server:
        server.initialize("2025-11-25")
        before = rss_kib(server.process.pid) if have_proc() else 0
        for size in (1 << 20, 300, 10_000):
            reply = server.result("tools/call", {"name": "search_files", "arguments": {"pattern": "*a" * (size // 2)}})
            assert reply["isError"] is True, str(reply)[:300]
            assert "256 characters" in reply["content"][0]["text"], reply["content"][0]["text"][:300]
        for _ in range(20):
            server.result("tools/call", {"name": "search_files", "arguments": {"pattern": "[a" * (1 << 19)}})
        if have_proc():  # the 1 MB patterns left nothing behind (main kept ~20 MiB per pattern)
            assert rss_kib(server.process.pid) - before < 16 * 1024
        found = server.result("tools/call", {"name": "search_files", "arguments": {"pattern": "*.md"}})
        assert found["content"][0]["text"] == "notes.md"


@pytest.mark.http
def test_a_slow_search_does_not_hold_up_another_client(tmp_path: Path) -> None:
    import asyncio

    import httpx

    from mcplab.server.streamable_http import launch

    from redteam_helpers import open_session, session_headers

    big = tmp_path / "big"
    for folder in range(40):
        (big / f"d{folder:02d}").mkdir(parents=True)
        for name in range(250):
            (big / f"d{folder:02d}" / f"f{name:03d}.txt").touch()
    pattern = "*a" * 128  # at the limit, and matched against 10,000 names: a slow search
    order: list[str] = []

    async def race(url: str, searcher: str, pinger: str) -> None:
        async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
            async def post(session: str, body: dict, what: str) -> None:
                reply = await client.post(url, headers=session_headers(session), json=body)
                assert reply.status_code == 200, reply.text
                order.append(what)

            search = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "search_files", "arguments": {"pattern": pattern}}}
            searches = [asyncio.create_task(post(searcher, {**search, "id": n}, "search")) for n in range(3)]
            await asyncio.sleep(0.02)  # the searches are under way
            await post(pinger, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, "ping")
            await asyncio.gather(*searches)

    with launch(server_argv("files", "--root", str(big))) as process:
        asyncio.run(race(process.url, open_session(process.url), open_session(process.url)))
    assert order[0] == "ping", order


# --- writes that never stop ---------------------------------------------------------------------------------

def test_writes_stop_at_the_quota_with_a_clear_tool_error(root: Path) -> None:
    mebibyte = "x" * (1 << 20)
    with RawServer(server_argv("files", "--root", str(root), "--writable", "--write-quota", "3")) as server:
        server.initialize("2025-11-25")
        for number in range(3):
            reply = server.result("tools/call", {"name": "write_file",
                                                 "arguments": {"path": f"big{number}.txt", "content": mebibyte}})
            assert reply["isError"] is False, reply["content"][0]["text"]
        reply = server.result("tools/call", {"name": "write_file", "arguments": {"path": "big3.txt", "content": "x"}})
        assert reply["isError"] is True and "quota" in reply["content"][0]["text"], reply
        assert not (root / "big3.txt").exists()
        assert server.result("ping") == {}


def test_the_write_quota_has_a_classroom_default_named_in_help() -> None:
    done = subprocess.run(server_argv("files", "--help"), capture_output=True, text=True, timeout=30)
    assert "--write-quota" in done.stdout and "default 64" in done.stdout, done.stdout
