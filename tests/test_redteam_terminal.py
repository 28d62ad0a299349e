"""Red team, the terminal: what a hostile server's text can make the terminal of ``mcplab inspect`` do.

A terminal obeys some characters instead of showing them. ESC starts a sequence that sets the window
title (OSC), clears the screen or hides text (CSI); the C1 controls (U+0080–U+009F) do the same in
one character; a carriage return or a backspace writes over what the line already shows; the bidi
controls reorder it (the "Trojan Source" characters); a lone surrogate cannot even be encoded. A
server chooses every name, title, description, result and error message the command prints, and
the lines of its stderr and its junk land in the wire trace. Each row of :data:`ATTACKS` is one
such text; the hostile server (``loud`` in tests/redteam_helpers.py) puts it in every string it
supplies, and three real runs of the command (``inspect``; ``call tools/call``; ``call ping``, which
the server answers with an error) must each print it visibly escaped, with no character a terminal
obeys but the newline, and do their job: the tables, the result, the error with exit status 1.

Size is the other weapon: a server's 3.9 MB description must be cut to what a table shows, say
how much was cut, and leave ``inspect`` as quick as a small one.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import unicodedata

import pytest

from redteam_helpers import ROOT, script

pytestmark = pytest.mark.subprocess

HANG_GUARD = 60  # seconds: only so that a hang ends the test; a run takes about one second
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")  # the embeddings, overrides, isolates


def obeyed(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on rather than show.

    The newline and the tab are text: one starts a line, the other moves over blanks; neither can
    take back what a line already shows.
    """
    return sorted({repr(ch) for ch in text
                   if ch not in "\n\t" and (unicodedata.category(ch) in ("Cc", "Cs") or ch in BIDI)})


ATTACKS = [  # (what, the server's text, how it reads inside a line, how it reads in an error message)
    ("OSC 0 sets the window title", "\x1b]0;pwned\x07", r"\x1b]0;pwned\x07", r"\x1b]0;pwned\x07"),
    ("OSC 8 hides a link behind its text", "\x1b]8;;http://evil.example/\x1b\\ok\x1b]8;;\x07",
     r"\x1b]8;;http://evil.example/\x1b\ok\x1b]8;;\x07", r"\x1b]8;;http://evil.example/\x1b\ok\x1b]8;;\x07"),
    ("CSI 2J clears the screen", "\x1b[2J\x1b[H", r"\x1b[2J\x1b[H", r"\x1b[2J\x1b[H"),
    ("CSI 8m makes the rest invisible", "\x1b[8mhidden", r"\x1b[8mhidden", r"\x1b[8mhidden"),
    ("the one-character CSI (C1) clears the screen", "\x9b2J", r"\x9b2J", r"\x9b2J"),
    ("the one-character OSC (C1) sets the title", "\x9d0;pwned\x9c", r"\x9d0;pwned\x9c", r"\x9d0;pwned\x9c"),
    ("BEL rings the bell", "\x07\x07", r"\x07\x07", r"\x07\x07"),
    ("a carriage return writes over the line", "safe\rEVIL", "safe EVIL", r"safe\rEVIL"),
    ("backspaces rub out what was shown", "rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls",
     r"rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls", r"rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls"),
    ("DEL", "a\x7fb", r"a\x7fb", r"a\x7fb"),
    ("NUL", "a\x00b", r"a\x00b", r"a\x00b"),
    ("a right-to-left override reverses the rest of the line", "\u202eevil\u202c", r"\u202eevil\u202c",
     r"\u202eevil\u202c"),
    ("a right-to-left isolate", "\u2067evil\u2069", r"\u2067evil\u2069", r"\u2067evil\u2069"),
    ("a lone surrogate, which no terminal encoding can carry", "\ud800", r"\ud800", r"\ud800"),
    ("plain text with CJK, accents and an emoji sequence stays as it is", "北京 café 👩‍💻", "北京 café 👩‍💻",
     "北京 café 👩‍💻"),
]


def mcplab(*argv: str) -> tuple[int, str]:
    """Run the command as a student would; its exit status and all it wrote (stdout, then stderr)."""
    try:
        done = subprocess.run([sys.executable, "-m", "mcplab", *argv], capture_output=True, timeout=HANG_GUARD,
                              cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"mcplab {argv[0]} did not finish: the {HANG_GUARD} s hang guard fired")
    return done.returncode, (done.stdout + done.stderr).decode("utf-8")


def loud(text: str, *flags: str) -> str:
    return shlex.join(script("loud", json.dumps(text), *flags))


@pytest.mark.parametrize("what, text, in_line, in_message", ATTACKS, ids=[row[0] for row in ATTACKS])
def test_a_servers_text_reaches_the_terminal_escaped_never_obeyed(what, text, in_line, in_message) -> None:
    server = loud(text)
    status, out = mcplab("inspect", "--stdio", server)
    assert status == 0 and not obeyed(out), f"{what}: exit {status}, obeyed {obeyed(out)}\n{out[-2000:]}"
    lines = out.splitlines()
    assert f"server        loud{in_line} 1{in_line} (title{in_line})" in lines, f"{what}:\n{out[:1500]}"
    assert f"instructions  instructions{in_line}" in lines
    assert any(line.startswith(f"  shout{in_line}  city{in_line}  description{in_line}") for line in lines), out

    status, out = mcplab("call", "--stdio", server, "tools/call", '{"name": "shout"}')
    assert status == 0 and not obeyed(out), f"{what}: exit {status}, obeyed {obeyed(out)}\n{out[-2000:]}"
    assert json.loads(out.split("\nwire trace")[0])["content"][0]["text"] == f"result{text}"  # escaped, not changed

    status, out = mcplab("call", "--stdio", server, "ping", "--no-trace")
    assert status == 1 and not obeyed(out), f"{what}: exit {status}, obeyed {obeyed(out)}\n{out[-2000:]}"
    assert f"error -32603 (Internal error): error{in_message}" in out, out


def test_junk_on_stdout_is_refused_and_shown_escaped_in_the_trace() -> None:
    status, out = mcplab("inspect", "--stdio", loud("\x1b]0;pwned\x07\x1b[2J", "--junk"))
    assert status == 1 and not obeyed(out), f"exit {status}, obeyed {obeyed(out)}\n{out[-2000:]}"
    assert "RemoteProtocolError: the server sent something that is not a JSON-RPC message" in out
    assert any(line.endswith(r"stdio   junk\x1b]0;pwned\x07\x1b[2J") for line in out.splitlines()), out


def test_a_3_9_mb_description_is_cut_to_its_column_and_inspect_says_how_much() -> None:
    big = 3_900_000
    status, out = mcplab("inspect", "--stdio", loud("", str(big)))
    assert status == 0, out[-2000:]
    assert len(out) < 20_000, f"inspect printed {len(out)} characters for one tool"
    row = next(line for line in out.splitlines() if line.startswith("  shout"))
    assert row.endswith("descriptiond" + "d" * 47 + "…")  # 59 characters of the description, then the cut
    description = len("description") + big
    assert f"  (cut to 60 columns: {description - 59} characters of 1 cell not shown)" in out, out[:1500]
