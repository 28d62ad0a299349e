"""The file server's boundary: every way out of --root is refused with a reason, and nothing outside
is read or changed. Each form is tried through every entry point (tools, resources, prompts), in
memory and over stdio, where the server must still answer ping afterwards."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from server_helpers import MemorySession, RawServer, SERVERS, load_server_module, server_argv

files = load_server_module("files")
SECRET = "TOP SECRET: the server must never show this"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A served folder full of traps, beside an outside folder holding a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    served = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", served)
    (served / "link_out").symlink_to(outside / "secret.txt")
    (served / "link_dir").symlink_to(outside)
    (served / "dev_link").symlink_to("/dev/zero")
    (served / "inner_link").symlink_to(served / "notes.md")  # stays inside: allowed
    os.mkfifo(served / "fifo")
    (served / "big.bin").write_bytes(b"\0" * (2 << 20))
    return served


ESCAPES = [  # (path as a tool argument, a word the refusal must contain)
    ("../outside/secret.txt", "'..'"),
    ("src/../../outside/secret.txt", "'..'"),
    ("src/../notes.md", "'..'"),  # inside, but '..' is refused outright: simpler to audit
    ("/etc/passwd", "absolute"),
    ("\\etc\\passwd", "absolute"),
    ("{outside}/secret.txt", "absolute"),
    ("link_out", "outside"),
    ("link_dir/secret.txt", "outside"),
    ("dev_link", "outside"),
    ("notes.md\0.png", "NUL"),
    ("fifo", "not a regular file"),
    ("big.bin", "2097152 bytes"),
]


def concrete(path: str, root: Path) -> str:
    return path.replace("{outside}", str(root.parent / "outside"))


@pytest.mark.anyio
@pytest.mark.parametrize("path, reason", ESCAPES)
async def test_read_file_refuses_every_way_out(root: Path, path: str, reason: str) -> None:
    session = MemorySession(files.create_server(root))
    await session.initialize()
    result = await session.result("tools/call", {"name": "read_file", "arguments": {"path": concrete(path, root)}})
    assert result["isError"] is True
    assert reason in result["content"][0]["text"]
    assert SECRET not in str(result)


@pytest.mark.anyio
@pytest.mark.parametrize("tool, arguments", [
    ("list_directory", {"path": "link_dir"}),
    ("list_directory", {"path": ".."}),
    ("get_file_info", {"path": "link_out"}),
    ("get_file_info", {"path": "/etc"}),
    ("search_files", {"pattern": "*", "path": "../outside"}),
    ("search_files", {"pattern": "*", "path": "link_dir"}),
    ("write_file", {"path": "link_out", "content": "overwritten"}),
    ("write_file", {"path": "../outside/new.txt", "content": "planted"}),
    ("write_file", {"path": "link_dir/new.txt", "content": "planted"}),
    ("write_file", {"path": "fifo", "content": "blocked?"}),
])
async def test_every_tool_refuses_to_leave_the_root(root: Path, tool: str, arguments: dict) -> None:
    session = MemorySession(files.create_server(root, writable=True))
    await session.initialize()
    result = await session.result("tools/call", {"name": tool, "arguments": arguments})
    assert result["isError"] is True, result
    assert SECRET not in str(result)
    outside = root.parent / "outside"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


@pytest.mark.anyio
async def test_listings_and_searches_never_show_what_lies_outside(root: Path) -> None:
    session = MemorySession(files.create_server(root))
    await session.initialize()
    uris = [r["uri"] for r in (await session.result("resources/list"))["resources"]]
    assert "file:///inner_link" in uris
    assert not [u for u in uris if any(trap in u for trap in ("link_out", "link_dir", "dev_link", "fifo"))]
    found = await session.result("tools/call", {"name": "search_files", "arguments": {"pattern": "*secret*"}})
    assert "no file matches" in found["content"][0]["text"]
    listing = (await session.result("tools/call", {"name": "list_directory", "arguments": {}}))["content"][0]["text"]
    assert "inner_link" in listing and "fifo" in listing
    assert not [trap for trap in ("link_out", "link_dir", "dev_link") if trap in listing]


@pytest.mark.anyio
@pytest.mark.parametrize("uri, reason", [
    ("file:///../outside/secret.txt", "'..'"),
    ("file:///%2e%2e/outside/secret.txt", "'..'"),
    ("file:////etc/passwd", "absolute"),
    ("file:///link_out", "outside"),
    ("file:///link_dir/secret.txt", "outside"),
    ("file:///notes.md%00.txt", "NUL"),
    ("file:///fifo", "not a regular file"),
    ("file:///big.bin", "1 MiB"),
])
async def test_resource_reads_refuse_every_way_out(root: Path, uri: str, reason: str) -> None:
    session = MemorySession(files.create_server(root))
    await session.initialize()
    error = await session.error("resources/read", {"uri": uri})
    assert error["code"] == -32602 and reason in error["message"]
    assert SECRET not in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize("prompt", ["summarize_file", "review_code"])
async def test_prompts_refuse_to_attach_what_lies_outside(root: Path, prompt: str) -> None:
    session = MemorySession(files.create_server(root))
    await session.initialize()
    error = await session.error("prompts/get", {"name": prompt, "arguments": {"path": "link_out"}})
    assert error["code"] == -32602 and "outside" in error["message"]


@pytest.mark.anyio
async def test_a_symlink_that_stays_inside_is_followed(root: Path) -> None:
    session = MemorySession(files.create_server(root))
    await session.initialize()
    result = await session.result("tools/call", {"name": "read_file", "arguments": {"path": "inner_link"}})
    assert result["content"][0]["text"] == (root / "notes.md").read_text(encoding="utf-8")


@pytest.mark.subprocess
def test_over_stdio_each_escape_is_refused_and_the_server_keeps_answering(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root), "--writable"), version="2025-11-25") as server:
        server.initialize("2025-11-25")
        for path, reason in ESCAPES:
            for tool in ("read_file", "write_file") if path != "big.bin" else ("read_file",):
                arguments = {"path": concrete(path, root)} | ({"content": "x"} if tool == "write_file" else {})
                result = server.result("tools/call", {"name": tool, "arguments": arguments})
                assert result["isError"] is True, (tool, path, result)
                if tool == "read_file":
                    assert reason in result["content"][0]["text"]
                assert SECRET not in str(result)
                assert server.result("ping") == {}
        assert server.close() == 0
    assert (root.parent / "outside" / "secret.txt").read_text() == SECRET


NETWORK_WRITES = [  # (what, extra flags, refused?) for files --http --host 0.0.0.0 --writable
    ("no --auth", [], True),
    ("--auth", ["--auth", "http://127.0.0.1:9/"], False),
    ("--writable-by-anyone, said on purpose", ["--writable-by-anyone"], False),
]


@pytest.mark.subprocess
@pytest.mark.parametrize("what, flags, refused", NETWORK_WRITES, ids=[row[0] for row in NETWORK_WRITES])
def test_a_writable_folder_on_a_network_address_needs_auth_or_an_explicit_yes(root: Path, what, flags, refused) -> None:
    import subprocess
    import sys

    argv = [sys.executable, str(SERVERS / "files.py"), "--root", str(root), "--writable", "--http",
            "--host", "0.0.0.0", "--port", "0", *flags]
    # stdin a pipe we close at once: a server that starts serving stops again at its end (the watchdog).
    done = subprocess.run(argv, input="", capture_output=True, text=True, timeout=120)
    if refused:
        assert done.returncode == 2 and "without --auth lets anyone" in done.stderr, done.stderr
        assert "--writable-by-anyone" in done.stderr and "Traceback" not in done.stderr
    else:
        assert "without --auth lets anyone" not in done.stderr and "mcplab: serving files at" in done.stderr, done.stderr
