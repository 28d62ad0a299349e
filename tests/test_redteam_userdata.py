"""Red team, the user's own files: the course copy (``mcplab lab``) and a host's config (``mcplab config``).

Both commands write into folders the user owns, on a machine other people share. A course folder
in the copy may have become a link to somewhere else; a copy may have been killed half way; a
config file holds servers the user wrote by hand, keys written twice, bytes that are not UTF-8
JSON; two writers may run at once. Each row is one attack and one look at the world afterwards:
the command's exit status and sentence, and what it left on the disk (nothing outside the copy,
the user's entries and files exactly as they were). Every row runs the real command as a process.
A reader adds a row as (what, scenario), the scenario taking a fresh folder and returning nothing.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from mcplab import course

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 120  # seconds for one command on a loaded machine; a run that needs it has hung, and says so


def mcplab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-m", "mcplab.cli", *args], capture_output=True, text=True,
                              input=stdin, timeout=DEADLINE, cwd=ROOT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"mcplab {' '.join(args)} did not end within {DEADLINE} s (the deadline fired)") from None


def course_files() -> dict[str, bytes]:
    """What a complete copy holds: every file of the checkout's course, as ``copy_course`` walks it."""
    return {relative: path.read_bytes() for relative, path in course._course_files(ROOT)}


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every name under ``folder``: a file's bytes, a link's target (links are not followed)."""
    found: dict[str, bytes | str] = {}
    for directory, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(directory, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
    return found


def outside_of(tmp_path: Path) -> Path:
    """A folder beside the copy that the copy must never write into, with a file of its own."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.txt").write_text("the owner's own file\n")
    return outside


# --- the course copy ------------------------------------------------------------------------------------

def a_course_folder_replaced_by_a_link_out_of_the_copy(tmp_path: Path) -> None:
    outside = outside_of(tmp_path)
    dest = tmp_path / "copy"
    (dest / "labs").mkdir(parents=True)
    (dest / "labs" / "build").symlink_to(outside)
    (dest / "servers").symlink_to(outside)
    before = tree(outside)
    done = mcplab("lab", "--copy-only", "--dir", str(dest))
    assert tree(outside) == before, f"the copy wrote outside its folder: {sorted(set(tree(outside)) - set(before))}"
    assert (dest / "servers").is_symlink() and (dest / "labs" / "build").is_symlink()
    assert done.returncode == 0, done.stderr
    assert f"servers → {outside}" in done.stderr and f"labs/build → {outside}" in done.stderr, done.stderr
    assert (dest / "labs" / "00_start_here.ipynb").read_bytes() == (ROOT / "labs" / "00_start_here.ipynb").read_bytes()


def a_course_file_replaced_by_a_link(tmp_path: Path) -> None:
    outside = outside_of(tmp_path)
    dest = tmp_path / "copy"
    (dest / "labs").mkdir(parents=True)
    link = dest / "labs" / "00_start_here.ipynb"
    link.symlink_to(outside / "planted.ipynb")  # dangling: the user's link to a file not made yet
    before = tree(outside)
    done = mcplab("lab", "--copy-only", "--dir", str(dest))
    assert tree(outside) == before
    assert link.is_symlink() and os.readlink(link) == str(outside / "planted.ipynb"), "the user's link was replaced"
    assert done.returncode == 0 and f"labs/00_start_here.ipynb → {outside / 'planted.ipynb'}" in done.stderr, done.stderr


FLIPPER = r"""
import os, sys, time
folder, outside = sys.argv[1:3]
turn = 0
while True:  # a course folder becomes a link out of the copy, the link goes, the copier makes the folder again
    turn += 1
    try:
        if os.path.islink(folder):
            time.sleep(0.002)  # the link stays a moment: a copy that follows links meets it often
            os.unlink(folder)
        elif os.path.isdir(folder):
            os.rename(folder, f"{folder}.aside-{turn}")
            os.symlink(outside, folder)
    except OSError:
        pass
"""


def a_folder_that_becomes_a_link_while_the_copy_runs(tmp_path: Path) -> None:
    outside = outside_of(tmp_path)
    dest = tmp_path / "copy"
    (dest / "servers").mkdir(parents=True)
    before = tree(outside)
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(dest / "servers"), str(outside)])
    try:
        for _ in range(100):
            try:
                course.copy_course(dest)
            except OSError:
                pass  # a folder that vanished under the copy may end one run; what matters is where bytes went
    finally:
        flipper.kill()
        flipper.wait()
    assert tree(outside) == before, f"the copy wrote outside its folder: {sorted(set(tree(outside)) - set(before))}"


KILLER = r"""
import os, signal, sys
from mcplab.cli import main
at, dest = int(sys.argv[1]), sys.argv[2]
calls, rename = [0], os.replace
def replace(*args, **kwargs):  # the copy dies for good just before its at-th rename: SIGKILL, nothing runs after
    calls[0] += 1
    if calls[0] == at:
        os.kill(os.getpid(), signal.SIGKILL)
    return rename(*args, **kwargs)
os.replace = replace
sys.exit(main(["lab", "--copy-only", "--dir", dest]))
"""


def copies_killed_half_way_are_completed_by_a_rerun(tmp_path: Path) -> None:
    expected = course_files()
    for at in (1, 2, 10, len(expected) // 2, len(expected), len(expected) + 1):  # the last: the manifest's
        dest = tmp_path / f"killed-at-{at}"
        killed = subprocess.run([sys.executable, "-c", KILLER, str(at), str(dest)], capture_output=True,
                                timeout=DEADLINE, cwd=ROOT)
        assert killed.returncode == -signal.SIGKILL, f"the copy was not killed at rename {at}: {killed.stderr[-800:]}"
        done = mcplab("lab", "--copy-only", "--dir", str(dest))
        assert done.returncode == 0, done.stderr
        leftovers = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.part"))
        assert not leftovers, f"killed at rename {at}, a rerun left {leftovers}"
        assert {k: v for k, v in tree(dest).items() if k in expected} == expected, f"killed at rename {at}"
        assert set(json.loads((dest / course.MANIFEST).read_text())["files"]) == set(expected)


# --- a host's configuration --------------------------------------------------------------------------------

USERS = {"mcpServers": {"weather": {"command": "/opt/tools/my-weather", "args": ["--city", "Oslo"]},
                        "notes": {"command": "npx", "args": ["-y", "notes-server"]}}}


def config_file(tmp_path: Path, content: bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "host" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(mode)
    return path


def refused_in_one_sentence(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcplab config: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def the_users_own_entry_of_the_same_name(tmp_path: Path) -> None:
    original = json.dumps(USERS, indent=2).encode()
    path = config_file(tmp_path, original)
    refused = mcplab("config", "generic", "weather", "--write", str(path))
    refused_in_one_sentence(refused, "'weather'", "/opt/tools/my-weather", "--replace")
    assert path.read_bytes() == original
    asked = mcplab("config", "generic", "weather", "--write", str(path), "--replace")
    assert asked.returncode == 0, asked.stderr
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["weather"]["command"] == sys.executable and servers["notes"] == USERS["mcpServers"]["notes"]


def a_change_without_a_backup(tmp_path: Path) -> None:
    first = json.dumps({"mcpServers": {"notes": USERS["mcpServers"]["notes"]}}).encode()
    path = config_file(tmp_path, first)
    assert mcplab("config", "generic", "weather", "--write", str(path)).returncode == 0
    backup = path.with_name("mcp.json.bak")
    assert backup.read_bytes() == first and stat.S_IMODE(backup.stat().st_mode) == 0o600
    second = path.read_bytes()
    assert mcplab("config", "generic", "files", "--write", str(path)).returncode == 0
    assert backup.read_bytes() == first, "the first backup was overwritten"
    assert path.with_name("mcp.json.bak.2").read_bytes() == second
    unchanged = mcplab("config", "generic", "files", "--write", str(path))
    assert unchanged.returncode == 0 and not path.with_name("mcp.json.bak.3").exists()  # nothing changed: no backup


def a_file_with_a_key_written_twice(tmp_path: Path) -> None:
    original = (b'{"mcpServers": {"notes": {"command": "npx", "args": ["a"]},\n'
                b'                "notes": {"command": "npx", "args": ["b"]}}}\n')
    path = config_file(tmp_path, original)
    refused_in_one_sentence(mcplab("config", "generic", "weather", "--write", str(path)), "'notes'", "twice")
    assert path.read_bytes() == original


def a_file_nested_100_000_deep(tmp_path: Path) -> None:
    original = b'{"deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    path = config_file(tmp_path, original)
    refused_in_one_sentence(mcplab("config", "generic", "weather", "--write", str(path)), "mcp.json", "deep")
    assert path.read_bytes() == original


def a_file_in_utf_16(tmp_path: Path) -> None:
    original = json.dumps({"mcpServers": {}}).encode("utf-16")
    path = config_file(tmp_path, original)
    refused_in_one_sentence(mcplab("config", "generic", "weather", "--write", str(path)), "mcp.json", "UTF-16",
                            "UTF-8")
    assert path.read_bytes() == original


WRITER = r"""
import sys
from mcplab.cli import main
sys.stdin.read()  # both writers are loaded and wait here; the test lets them go at once
sys.exit(main(sys.argv[1:]))
"""


def two_writers_at_once(tmp_path: Path) -> None:
    lost = []
    for round_ in range(30):
        folder = tmp_path / f"round-{round_}"
        folder.mkdir()
        path = folder / "mcp.json"
        path.write_text(json.dumps({"mcpServers": {"notes": USERS["mcpServers"]["notes"]}}))
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, "config", "generic", f"{name}=weather",
                                     "--write", str(path)], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=ROOT, text=True) for name in ("one", "two")]
        for writer in writers:  # both go
            writer.stdin.close()
        outcomes = [(writer.wait(timeout=DEADLINE), writer.stderr.read()) for writer in writers]  # a line each
        assert [status for status, _ in outcomes] == [0, 0], outcomes
        servers = json.loads(path.read_text())["mcpServers"]
        if set(servers) != {"notes", "one", "two"}:
            lost.append((round_, sorted(servers)))
    assert not lost, f"an entry was lost in {len(lost)} of 30 rounds: {lost}"


ATTACKS: list[tuple[str, Callable[[Path], None]]] = [
    ("a course folder replaced by a link out of the copy", a_course_folder_replaced_by_a_link_out_of_the_copy),
    ("a course file replaced by a link", a_course_file_replaced_by_a_link),
    ("a folder that becomes a link while the copy runs", a_folder_that_becomes_a_link_while_the_copy_runs),
    ("copies killed half way are completed by a rerun", copies_killed_half_way_are_completed_by_a_rerun),
    ("the user's own entry of the same name", the_users_own_entry_of_the_same_name),
    ("a change without a backup", a_change_without_a_backup),
    ("a file with a key written twice", a_file_with_a_key_written_twice),
    ("a file nested 100,000 deep", a_file_nested_100_000_deep),
    ("a file in UTF-16", a_file_in_utf_16),
    ("two writers at once", two_writers_at_once),
]


@pytest.mark.parametrize("what, scenario", ATTACKS, ids=[row[0] for row in ATTACKS])
def test_the_users_files_survive_the_attack(what: str, scenario: Callable[[Path], None], tmp_path: Path) -> None:
    scenario(tmp_path)
