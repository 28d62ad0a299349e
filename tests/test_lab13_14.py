"""Labs 13 (authorization) and 14 (attacks) against the real parts: their answer keys are what the servers
really do (the refusals of the authorization parts, the file server's refusals), and their stored notebooks
carry no port, path, token or error, cite the spec beside each section, and leave every exercise unanswered."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from auth_helpers import REDIRECT
from mcplab import Client
from mcplab.auth.wire import bearer_challenge
from mcplab.exercises import lab13, lab14
from mcplab.server.streamable_http import launch
from mcplab.transports.stdio import stdio

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
LABS = {13: ROOT / "labs" / "13_authorization.ipynb", 14: ROOT / "labs" / "14_attacks.ipynb"}
SOLUTIONS = {13: ROOT / "labs" / "solutions" / "13_authorization_solutions.ipynb",
             14: ROOT / "labs" / "solutions" / "14_attacks_solutions.ipynb"}


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def outputs(path: Path) -> str:
    texts = []
    for cell in cells(path):
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text") or output.get("data", {}).get("text/plain") or ""))
    return "\n".join(texts)


# --- the answer keys are the servers' own answers --------------------------------------------------

@pytest.mark.http
@pytest.mark.subprocess
def test_the_refusals_key_is_what_the_authorization_parts_answer(tmp_path):
    from test_auth_bad_input import CLIENT, SECRET, World, reused_code, wrong_secret, wrong_verifier

    shutil.copytree(SERVERS / "samples", tmp_path / "served")
    with launch([sys.executable, str(SERVERS / "auth.py"), "--client", f"{CLIENT}:{SECRET}:{REDIRECT}",
                 "--auto-approve"]) as main, \
         launch([sys.executable, str(SERVERS / "files.py"), "--root", str(tmp_path / "served"), "--writable",
                 "--auth", main.url]) as files, \
         launch([sys.executable, str(SERVERS / "weather.py"), "--auth", main.url]) as weather:
        w = World(main, main, files, weather)
        token = w.token()
        tampered = token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]
        replies = {
            "a": w.call(files.url, None),
            "b": w.call(files.url, tampered),
            "c": w.call(files.url, w.token(resource=weather.url, scope="weather:read")),
            "d": w.call(files.url, token, "tools/call", {"name": "write_file",
                                                         "arguments": {"path": "x.md", "content": "x"}}),
            "e": w.call(files.url, token, query_token=True),
            "f": wrong_verifier(w), "g": reused_code(w), "h": wrong_secret(w)}
        assert w.call(files.url, token).status_code == 200  # and the server is still serving
        w.http.close()
    seen = {}
    for letter, reply in replies.items():
        challenge = bearer_challenge(reply.headers)
        error = challenge.get("error", "") if challenge is not None else reply.json().get("error", "")
        seen[letter] = (reply.status_code, error)
    assert seen == lab13._REFUSALS


def sandbox(root: Path) -> None:
    root.mkdir()
    shutil.copytree(SERVERS / "samples", root, dirs_exist_ok=True)
    (root.parent / "secret.txt").write_text("outside")
    os.symlink("../secret.txt", root / "shortcut.txt")
    os.mkfifo(root / "pipe")
    os.symlink("/dev/zero", root / "zero")


def verdict(result) -> str:
    if not result.is_error:
        return "read"
    for words, label in (("'..' is not allowed", ".."), ("absolute paths", "absolute"), ("outside the served folder", "link"),
                         ("not a regular file", "not regular"), ("NUL byte", "NUL"), ("no such file", "no such file")):
        if words in result.text:
            return label
    return f"unknown refusal: {result.text}"


@pytest.mark.subprocess
def test_the_sandbox_key_is_what_the_file_server_answers(tmp_path):
    root = tmp_path / "served"
    sandbox(root)
    paths = {"a": "notes.md", "b": "../secret.txt", "c": "src/../notes.md", "d": f"{root}/notes.md",
             "e": "shortcut.txt", "f": "pipe", "g": "zero", "h": "notes.md\x00.png", "i": "%2e%2e/secret.txt"}
    assert set(paths) == set(lab14.SANDBOX_TRIES)

    async def ask() -> dict[str, str]:
        async with Client(stdio([sys.executable, str(SERVERS / "files.py"), "--root", str(root)]), timeout=10) as files:
            return {k: verdict(await files.call_tool("read_file", {"path": p})) for k, p in paths.items()}

    assert anyio.run(ask) == lab14._SANDBOX


# --- the stored notebooks ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [*LABS.values(), *SOLUTIONS.values()],
                         ids=["lab13", "lab14", "solutions13", "solutions14"])
def test_stored_outputs_hold_no_port_path_token_or_error(path):
    text = outputs(path)
    assert text, "store the notebook executed"
    fixed = r"(?!800[01]\b)"  # the exercises' own example addresses (ATTACK_PAGE, ME), the same on every machine
    assert not re.search(rf"127\.0\.0\.1:{fixed}\d|localhost:\d|attacker\.example:{fixed}\d", text)
    assert "/tmp/" not in text and str(ROOT) not in text and "/work" not in text and "/root" not in text
    assert not re.search(r"eyJ[\w-]{10,}\.", text)  # no JWT
    assert all(o["output_type"] != "error" and o.get("name") != "stderr"
               for cell in cells(path) for o in cell.get("outputs", []))
    assert all(cell["execution_count"] is not None for cell in cells(path) if cell["cell_type"] == "code")


# each section and the spec link it must cite (2025-11-25), numbered as each lab numbers them
CITES = {13: {"2": "basic/authorization#scope-challenge-handling",
              "4": "basic/security_best_practices#token-passthrough"},
         14: {"1": "server/tools#", "2": "server/tools#list-changed-notification", "3": "server/tools#tool",
              "4": "basic/transports#security-warning", "5": "basic/security_best_practices#local-mcp-server-compromise",
              "6": "architecture#core-components"}}


@pytest.mark.parametrize("lab, count", [(13, 4), (14, 6)])
def test_each_section_cites_the_spec_section_its_defence_comes_from(lab, count):
    markdown = [("".join(c["source"])) for c in cells(LABS[lab]) if c["cell_type"] == "markdown"]
    sections: dict[str, str] = {}
    current = None
    for text in markdown:
        for line in text.splitlines():
            heading = re.match(r"### (\d+)\. ", line)
            if heading:
                current = heading.group(1)
            elif current:
                sections[current] = sections.get(current, "") + line + "\n"
    assert sorted(sections, key=int) == [str(n) for n in range(1, count + 1)]
    for section, link in CITES[lab].items():
        assert f"modelcontextprotocol.io/specification/2025-11-25/{link}" in sections[section], section


@pytest.mark.parametrize("lab, count", [(13, 2), (14, 6)])
def test_every_exercise_is_left_unanswered_and_shows_no_hint_before_a_try(lab, count):
    checked = [c for c in cells(LABS[lab]) if c["cell_type"] == "code"
               and "".join(c["source"]).startswith("exercises.check_")]
    assert len(checked) == count
    for cell in checked:
        text = "".join("".join(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell["outputs"])
        assert text.startswith("✗ Not answered yet") and "hint" not in text, text
    solved = [c for c in cells(SOLUTIONS[lab]) if c["cell_type"] == "code"
              and "".join(c["source"]).startswith("exercises.check_")]
    assert len(solved) == count and all("".join(c["outputs"][0]["data"]["text/plain"]).startswith("✓") for c in solved)
