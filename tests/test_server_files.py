"""The file server's tools, resources and prompts on a copy of its sample folder (servers/files.py)."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from server_helpers import MemorySession, RawServer, SERVERS, load_server_module, server_argv

files = load_server_module("files")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    copy = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", copy)
    return copy


async def session_for(root: Path, *, writable: bool = False, version: str = "2025-06-18") -> MemorySession:
    session = MemorySession(files.create_server(root, writable))
    await session.initialize(version)
    return session


async def call(session: MemorySession, tool: str, **arguments: object) -> dict:
    return await session.result("tools/call", {"name": tool, "arguments": arguments})


def test_the_samples_are_small_and_complete() -> None:
    samples = SERVERS / "samples"
    names = sorted(p.relative_to(samples).as_posix() for p in samples.rglob("*") if p.is_file())
    assert names == ["README.txt", "data.json", "logo.png", "notes.md", "src/greet.py"]
    assert sum(p.stat().st_size for p in samples.rglob("*") if p.is_file()) < 4096
    assert (samples / "logo.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "MCP notes" in (samples / "notes.md").read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_read_file_returns_text_as_text_and_an_image_as_an_image(root: Path) -> None:
    session = await session_for(root)
    notes = await call(session, "read_file", path="notes.md")
    assert notes["content"][0]["text"] == (root / "notes.md").read_text(encoding="utf-8")
    logo = (await call(session, "read_file", path="logo.png"))["content"][0]
    assert logo["type"] == "image" and logo["mimeType"] == "image/png"
    assert base64.b64decode(logo["data"]) == (root / "logo.png").read_bytes()


@pytest.mark.anyio
async def test_other_binary_comes_back_as_an_embedded_blob(root: Path) -> None:
    (root / "blob.bin").write_bytes(bytes(range(256)))
    block = (await call(await session_for(root), "read_file", path="blob.bin"))["content"][0]
    assert block["type"] == "resource" and block["resource"]["mimeType"] == "application/octet-stream"
    assert base64.b64decode(block["resource"]["blob"]) == bytes(range(256))


@pytest.mark.anyio
async def test_list_search_and_info(root: Path) -> None:
    session = await session_for(root)
    listing = (await call(session, "list_directory"))["content"][0]["text"].splitlines()
    assert listing[0] == "[dir]  src/" and "[file] notes.md (" in "\n".join(listing)
    assert (await call(session, "search_files", pattern="*.md"))["content"][0]["text"] == "notes.md"
    assert (await call(session, "search_files", pattern="greet"))["content"][0]["text"] == "src/greet.py"
    assert "no file matches" in (await call(session, "search_files", pattern="*.exe"))["content"][0]["text"]
    info = json.loads((await call(session, "get_file_info", path="data.json"))["content"][0]["text"])
    assert info["type"] == "file" and info["mimeType"] == "application/json"
    assert info["size"] == (root / "data.json").stat().st_size
    assert (await call(session, "get_file_info", path="nothing.txt"))["isError"] is True


@pytest.mark.anyio
async def test_every_file_is_a_resource_with_its_mime_type(root: Path) -> None:
    session = await session_for(root)
    listed = {r["uri"]: r for r in (await session.result("resources/list"))["resources"]}
    assert set(listed) == {"file:///README.txt", "file:///data.json", "file:///logo.png", "file:///notes.md",
                           "file:///src/greet.py"}
    assert listed["file:///notes.md"]["mimeType"] == "text/markdown"
    notes = (await session.result("resources/read", {"uri": "file:///notes.md"}))["contents"][0]
    assert notes == {"uri": "file:///notes.md", "mimeType": "text/markdown",
                     "text": (root / "notes.md").read_text(encoding="utf-8")}
    logo = (await session.result("resources/read", {"uri": "file:///logo.png"}))["contents"][0]
    assert base64.b64decode(logo["blob"]) == (root / "logo.png").read_bytes()
    templates = (await session.result("resources/templates/list"))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["file:///{+path}"]
    missing = await session.error("resources/read", {"uri": "file:///missing.md"})
    assert missing["code"] == -32002 and missing["data"] == {"uri": "file:///missing.md"}


@pytest.mark.anyio
async def test_prompts_attach_the_file_and_complete_paths(root: Path) -> None:
    session = await session_for(root)
    review = await session.result("prompts/get", {"name": "review_code",
                                                  "arguments": {"path": "src/greet.py", "focus": "bugs"}})
    attached = review["messages"][0]["content"]
    assert attached["type"] == "resource" and attached["resource"]["uri"] == "file:///src/greet.py"
    assert "bugs issues" in review["messages"][1]["content"]["text"]
    summary = await session.result("prompts/get", {"name": "summarize_file", "arguments": {"path": "notes.md"}})
    assert "MCP notes" in summary["messages"][0]["content"]["resource"]["text"]
    completion = await session.result("completion/complete", {"ref": {"type": "ref/prompt", "name": "review_code"},
                                                              "argument": {"name": "path", "value": "src/"}})
    assert completion["completion"]["values"] == ["src/greet.py"]
    assert (await session.error("prompts/get", {"name": "summarize_file", "arguments": {"path": "logo.png"}}))[
        "message"] == "logo.png is not a text file"


@pytest.mark.anyio
async def test_write_file_exists_only_when_writable(root: Path) -> None:
    read_only = await session_for(root)
    assert "write_file" not in [t["name"] for t in (await read_only.result("tools/list"))["tools"]]
    error = await read_only.error("tools/call", {"name": "write_file", "arguments": {"path": "x", "content": "y"}})
    assert "Unknown tool" in error["message"]
    writable = await session_for(root, writable=True)
    tool = next(t for t in (await writable.result("tools/list"))["tools"] if t["name"] == "write_file")
    assert tool["annotations"]["destructiveHint"] is True


@pytest.mark.anyio
async def test_a_write_replaces_the_file_whole_and_tells_subscribers(root: Path) -> None:
    session = await session_for(root, writable=True)
    await session.result("resources/subscribe", {"uri": "file:///notes.md"})
    result = await call(session, "write_file", path="notes.md", content="# new notes\n")
    assert result == {"content": [{"type": "text", "text": "wrote 12 bytes to notes.md"}], "isError": False}
    assert (root / "notes.md").read_text(encoding="utf-8") == "# new notes\n"
    assert session.notifications == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                      "params": {"uri": "file:///notes.md"}}]
    await call(session, "write_file", path="src/new.py", content="print('hi')\n")
    assert "notifications/resources/list_changed" in [n["method"] for n in session.notifications]
    assert not [p for p in root.rglob(".*.tmp")]


@pytest.mark.anyio
async def test_a_crash_during_a_write_leaves_the_old_file_and_no_temp_file(root: Path, monkeypatch) -> None:
    session = await session_for(root, writable=True)
    before = (root / "data.json").read_bytes()

    def crash(src: str, dst: str, **where: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    result = await call(session, "write_file", path="data.json", content="{}")
    assert result["isError"] is True and "No space left" in result["content"][0]["text"]
    assert (root / "data.json").read_bytes() == before
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []


@pytest.mark.anyio
async def test_writes_over_one_mebibyte_are_refused(root: Path) -> None:
    session = await session_for(root, writable=True)
    result = await call(session, "write_file", path="big.txt", content="x" * ((1 << 20) + 1))
    assert result["isError"] is True and "1048577 bytes" in result["content"][0]["text"]
    assert not (root / "big.txt").exists()


@pytest.mark.subprocess
def test_root_and_writable_flags_over_stdio(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root), "--writable"), version="2025-11-25") as server:
        info = server.initialize("2025-11-25")
        assert info["serverInfo"]["title"] == "Files (read-write)"
        server.result("tools/call", {"name": "write_file", "arguments": {"path": "hello.txt", "content": "你好\n"}})
        assert (root / "hello.txt").read_text(encoding="utf-8") == "你好\n"
        text = server.result("tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}})["content"][0]
        assert text["text"] == "你好\n"
        assert server.close() == 0


@pytest.mark.subprocess
def test_a_root_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(server_argv("files", "--root", str(tmp_path / "nope")), capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 2 and "not a folder" in done.stderr


@pytest.mark.subprocess
def test_page_size_pages_the_resource_list_until_next_cursor_is_absent_and_refuses_a_made_up_cursor(root: Path) -> None:
    with RawServer(server_argv("files", "--root", str(root), "--page-size", "2"), version="2025-11-25") as server:
        server.initialize("2025-11-25")
        pages, cursor = [], None
        while True:
            page = server.result("resources/list", {"cursor": cursor} if cursor is not None else {})
            pages.append([resource["name"] for resource in page["resources"]])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == [["README.txt", "data.json"], ["logo.png", "notes.md"], ["src/greet.py"]]
        refused = server.request("resources/list", {"cursor": "page-2"})
        assert refused["error"]["code"] == -32602
        assert server.close() == 0


@pytest.mark.subprocess
@pytest.mark.parametrize("size", ["0", "-1", "two"])
def test_a_page_size_that_is_not_one_or_more_is_refused_with_what_was_expected(size: str) -> None:
    import subprocess

    done = subprocess.run(server_argv("files", f"--page-size={size}"), capture_output=True, text=True, timeout=20)
    assert done.returncode == 2 and "expected a whole number of items, 1 or more" in done.stderr
