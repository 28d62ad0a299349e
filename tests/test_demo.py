"""``mcplab demo``: the whole tour runs offline, fast, shows every step's wire strings, and leaves no process behind."""

from __future__ import annotations

import io
import os
import pty
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest
import wire_log

from mcplab import demo
from mcplab.cli import main
from slow_start import slow_start

pytestmark = pytest.mark.subprocess
ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("mcplab")  # the console script pip installed beside the interpreter
MCPLAB = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "mcplab.cli"]
BUDGET = 30.0  # seconds: the acceptance criterion
MARK = "MCPLAB_DEMO_TEST_MARK"  # every child inherits it, so /proc shows which processes are ours


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    """What `env -i PATH=... HOME=...` gives: no proxy, no locale, no colour settings, nothing else."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), **extra}


def ours(mark: str) -> list[int]:
    """Live processes whose environment carries ``mark`` (zombies have an empty environ)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"{MARK}={mark}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass  # gone meanwhile, or not ours to read
    return found


def run_demo(args: list[str], env: dict[str, str], prefix: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess,
                                                                                           float]:
    start = time.monotonic()
    done = subprocess.run([*prefix, *MCPLAB, "demo", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=BUDGET * 2)
    return done, time.monotonic() - start


def assert_the_whole_tour(out: str) -> None:
    for number, (title, _) in enumerate(demo.STEPS, 1):
        assert f"── {number}. {title}" in out
    for wire in ['"method":"initialize"', '{"jsonrpc":"2.0","method":"notifications/initialized"}',
                 '"method":"tools/call"', '"method":"tools/list"', '"method":"resources/read"',
                 '"method":"prompts/get"',
                 "'..' is not allowed in a path", "POST /mcp HTTP/1.1", "HTTP/1.1 200 OK", "http POST 202",
                 "Mcp-Session-Id: <session 1>", "http://127.0.0.1:PORT/mcp",
                 "12 adapters vs 7 implementations", "1,000,000 adapters vs 10,100 implementations"]:
        assert wire in out, wire
    assert not re.search(r"127\.0\.0\.1:\d", out), "a real port leaked into the output"
    assert '"_meta"' in out and "server/discover" in out and "Mcp-Method: tools/call" in out
    assert "not available" not in out


@pytest.mark.http
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc to find leftover processes")
def test_the_whole_tour_runs_in_a_bare_environment_in_under_30_seconds_and_leaves_no_process(tmp_path):
    mark = uuid.uuid4().hex
    done, took = run_demo(["--no-color"], bare_env(tmp_path, **{MARK: mark}))
    assert done.returncode == 0, done.stderr
    assert took < BUDGET, f"the demo took {took:.1f} s"
    assert_the_whole_tour(done.stdout)
    assert "\x1b[" not in done.stdout
    assert ours(mark) == []


@pytest.mark.http
def test_the_tour_needs_no_network_only_loopback(tmp_path):
    # A fresh network namespace has nothing but a loopback interface: any other address is unreachable.
    # Whether a user may make one is the kernel's setting, not a tool we could install: skip, even in CI.
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not (unshare and ip) or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode:
        pytest.skip("cannot make a network namespace here (unshare -rn), so cannot cut the network off")
    prefix = (unshare, "-rn", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh")
    done, took = run_demo(["--no-color"], bare_env(tmp_path), prefix)
    assert done.returncode == 0, done.stderr
    assert took < BUDGET
    assert_the_whole_tour(done.stdout)


@pytest.mark.http
def test_a_proxy_in_the_environment_is_bypassed_for_loopback(tmp_path):
    nowhere = "http://127.0.0.1:9"  # the discard port: nothing listens, so a proxied request would fail
    done, _ = run_demo(["--no-color", "--step", "4"], bare_env(tmp_path, HTTP_PROXY=nowhere, http_proxy=nowhere,
                                                               ALL_PROXY=nowhere, all_proxy=nowhere))
    assert done.returncode == 0, done.stderr
    assert "POST /mcp HTTP/1.1" in done.stdout and "HTTP/1.1 200 OK" in done.stdout


def test_colours_are_off_when_stdout_is_not_a_terminal(tmp_path):
    done, _ = run_demo(["--step", "1"], bare_env(tmp_path, TERM="xterm-256color"))
    assert done.returncode == 0 and "── 1. JSON-RPC" in done.stdout
    assert "\x1b[" not in done.stdout
    assert demo.use_color(stream=io.StringIO()) is False


def in_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the demo with a pseudo-terminal as its stdout; return what it wrote."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([*MCPLAB, "demo", *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                               stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=BUDGET) == 0
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.parametrize(("args", "extra", "coloured"), [
    ([], {}, True),
    (["--no-color"], {}, False),
    ([], {"NO_COLOR": "1"}, False),
    ([], {"TERM": "dumb"}, False),
])
def test_colours_in_a_terminal_follow_no_color_and_the_flag(tmp_path, args, extra, coloured):
    out = in_a_terminal(["--step", "1", *args], bare_env(tmp_path, **{"TERM": "xterm-256color", **extra}))
    assert "JSON-RPC" in out
    assert ("\x1b[" in out) is coloured


def test_a_broken_modern_era_fails_the_demo_with_the_servers_refusal(monkeypatch):
    """The modern era is part of the tour, not an option: if the client stops stamping ``_meta``,
    the weather server refuses the call and the demo says so and exits 1."""
    from mcplab.lifecycle import ModernLifecycle

    monkeypatch.setattr(ModernLifecycle, "stamp", lambda self, params: dict(params or {}))
    out = io.StringIO()
    with wire_log.wrong_on_purpose():  # requests without _meta: the point of the test
        assert demo.run(5, color=False, out=out) == 1
    text = out.getvalue()
    assert "legacy (2025-11-25) wire trace (5 frames)" in text
    assert "mcplab demo: " in text and "not available" not in text
    assert "modern (2026-07-28) wire trace" not in text


def test_a_step_out_of_range_is_refused(capsys):
    assert main(["demo", "--step", str(len(demo.STEPS) + 1)]) == 2
    assert "--step must be between 1 and 6" in capsys.readouterr().err


def test_differences_name_what_the_modern_era_changed_on_the_wire():
    from mcplab.wire.jsonrpc import Notification, Request, Response
    from mcplab.trace import Trace

    legacy, modern = Trace(), Trace()
    for trace, frames in ((legacy, [("c2s", Request(1, "initialize", {})), ("s2c", Response(1, {})),
                                    ("c2s", Notification("notifications/initialized")),
                                    ("c2s", Request(2, "tools/call", {"name": "get_weather"})),
                                    ("s2c", Response(2, {"content": []}))]),
                          (modern, [("c2s", Request(1, "server/discover", {})), ("s2c", Response(1, {})),
                                    ("c2s", Request(2, "tools/call", {"name": "get_weather", "_meta": {"a/b": 1}})),
                                    ("s2c", Response(2, {"content": [], "resultType": "complete"}))])):
        for direction, message in frames:
            trace.record(direction, "stdio", "{}", message)
    assert demo.differences(legacy.frames, modern.frames) == [
        "opening: initialize → notifications/initialized (legacy) against server/discover (modern)",
        "new in the tools/call request's params: _meta = a/b",
        'new in the tools/call result: resultType = "complete"',
        "frames for one call on a fresh connection: 5 (legacy) against 4 (modern)",
    ]


def test_a_server_that_does_not_answer_in_time_is_said_to_be_slow_not_broken(tmp_path, monkeypatch):
    slow_start(5, tmp_path, monkeypatch)            # the weather server starts 5 s late ...
    monkeypatch.setattr(demo, "TIMEOUT", 1, raising=False)   # ... and the tour waits 1 s for each answer
    out = io.StringIO()
    assert demo.run(2, color=False, out=out) == 1  # step 2, the handshake: the first server
    assert out.getvalue().rstrip().endswith(
        "mcplab demo: a server did not answer within 1 s on this machine; this says nothing about the protocol; "
        "run `mcplab demo` again (or close other work)"), out.getvalue()[-400:]
