"""What a process loads before it does anything: ``import mcplab``, a client's imports, a stdio server.

Start-up time is mostly imports, and ``bench/`` measures it (never a test: the machine's speed is
no assertion). What a test can keep is the reason it is short: each of these paths leaves out the
modules it never uses, by name. A bare ``import mcplab`` resolves every name on first use; a
client that only records a trace does not load the code that draws one; a stdio server answers
``tools/list`` without the HTTP side, the OAuth resource server, the schema checker, ``pathlib`` or,
when it is given no flags, ``argparse``.
Each check runs in a fresh interpreter and looks only at what the path itself added to
``sys.modules``, so a tool that preloads modules (coverage, say) can hide a regression but never
fake one.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RECORD = ("import sys\n"
          "before = set(sys.modules)\n"
          "{code}\n"
          "added = sorted(set(sys.modules) - before)\n"
          "print(repr(added))\n")


def added_by(code: str) -> set[str]:
    """The modules ``code`` loads in a fresh interpreter, beyond what the interpreter had already."""
    done = subprocess.run([sys.executable, "-c", RECORD.format(code=code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(ast.literal_eval(done.stdout.splitlines()[-1]))


def test_import_mcplab_loads_the_package_and_nothing_else_not_even_typing():
    added = added_by("import mcplab")
    assert "mcplab" in added
    assert {m for m in added if not m.startswith("importlib")} <= {"mcplab", "__future__", "warnings"}, added


def test_a_client_starts_without_the_trace_views_the_server_side_oauth_or_asyncio():
    added = added_by("from mcplab import Client, stdio")
    assert {"mcplab.client.client", "mcplab.transports.stdio", "mcplab.trace.recorder"} <= added
    left_out = {"mcplab.trace.views", "html", "mcplab.server", "mcplab.auth", "pathlib", "urllib.parse",
                "gettext", "jsonschema", "httpx", "asyncio"}  # asyncio: anyio loads it when a loop starts
    assert not left_out & added, sorted(left_out & added)


SERVE = """\
import atexit, json, runpy, sys
before = set(sys.modules)

def record():
    with open({out!r}, "w", encoding="utf-8") as file:
        json.dump(sorted(set(sys.modules) - before), file)

atexit.register(record)
sys.argv = ["weather.py"]
runpy.run_path("servers/weather.py", run_name="__main__")
"""

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def test_the_stdio_weather_server_answers_tools_list_without_http_oauth_checks_or_pathlib(tmp_path):
    out = tmp_path / "modules.json"
    lines = "".join(json.dumps(m) + "\n" for m in SESSION)
    done = subprocess.run([sys.executable, "-c", SERVE.format(out=str(out))], input=lines, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2] and replies[1]["result"]["tools"], done.stdout  # it served
    added = set(json.loads(out.read_text(encoding="utf-8")))
    assert {"mcplab.server.stdio", "mcplab.auth.scopes"} <= added
    left_out = {"mcplab.auth.resource", "mcplab.auth.discovery", "mcplab.auth.middleware",
                "mcplab.server.streamable_http", "mcplab.client", "mcplab.transports", "mcplab.trace",
                "jsonschema", "httpx", "starlette", "uvicorn", "joserfc", "pathlib", "urllib.parse", "difflib",
                "argparse", "gettext"}  # no flags, no parser
    assert not left_out & added, sorted(left_out & added)


def test_a_server_started_without_flags_runs_with_the_defaults_the_parser_gives():
    from mcplab.server.runner import DEFAULTS, arguments

    assert vars(arguments().parse_args([])) == dict(DEFAULTS)


def weather(*flags: str, session: list[dict] = SESSION) -> subprocess.CompletedProcess:
    lines = "".join(json.dumps(m) + "\n" for m in session)
    return subprocess.run([sys.executable, "servers/weather.py", *flags], input=lines, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def test_the_flags_still_work_when_given_help_a_wrong_flag_and_era():
    done = weather("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: weather.py"), done
    for flag in ("--http", "--port PORT", "--era {dual,legacy,modern}", "--log-level", "(default dual)"):
        assert flag in done.stdout, (flag, done.stdout)
    done = weather("--no-such-flag")
    assert done.returncode == 2 and "unrecognized arguments: --no-such-flag" in done.stderr, done
    done = weather("--era", "modern")  # a modern-only server refuses the legacy handshake
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and replies[0]["error"]["code"] == -32601, done.stdout
    done = weather("--era", "legacy")
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2] and replies[1]["result"]["tools"], done.stdout
