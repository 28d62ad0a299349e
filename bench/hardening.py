"""The hardening numbers: each attack of the red-team review, measured against a checkout of mcplab.

    python bench/hardening.py                      # this checkout
    python bench/hardening.py --repo ../other      # another checkout (say, before a fix), same attacks
    python bench/hardening.py --only flood,sse     # some of them

Every measurement starts real processes from the checkout named by ``--repo`` (its servers, and its
``mcplab`` package for the clients), runs one attack, and reports what it cost: memory, time, or
how many bytes, files or requests got where they must not. Run it on two checkouts to compare a fix
with what came before; nothing here asserts anything (the tests do: tests/test_redteam_*.py).

    cancel      a notifications/cancelled with an array requestId, to each bundled server
    race        reads and writes through a link flipped between a folder inside the root and one outside
    confirm     a folder swapped for an outside link while "Replace?" is open: where does the write land?
    glob        search_files with 1 MB patterns: time per call, server memory after ten
    flood       a server sending 200,000 notifications: the client's peak memory and time, stdio and SSE
    sse         the client's event-stream parser on one 8 MiB and one 50 MiB event (64 KiB pieces)
    links       a dangling link and a link loop: do listings still answer, does a reply show the real path?
    quota       150 writes of 1 MiB: how many are accepted
    asking      300 elicitations a legacy HTTP client never answers: held, refused, server memory
    subscribe   2,000 subscriptions to 50 KB URIs, then 200 to real files: accepted, server memory
    sessions    100 legacy sessions, each initialized with a 3.9 MB clientInfo: server memory
    legacy      a legacy elicitation answered {"replace": "false"}: is the file replaced?
    http        another local port's Origin, a doubled MCP-Protocol-Version, a slow head, a vanished body
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable


def rss(pid: int, field: str = "VmRSS") -> int:
    """KiB of a process's memory, from /proc (Linux): VmRSS now, VmHWM at its peak."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


class Stdio:
    """A server process and a bare JSON-lines client (the checkout's own client is not under test here)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None, answer: Any = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            line = self.process.stdout.readline()
            if not line:
                return {"error": {"code": None, "message": "the server exited"}}
            message = json.loads(line)
            if "method" in message and "id" in message:  # the server asks: answer, or leave it
                if answer is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
            elif message.get("id") == self.next_id:
                return message

    def initialize(self, capabilities: dict | None = None) -> None:
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities or {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, answer: Any = None, **arguments: Any) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments}, answer)

    def close(self) -> int | None:
        self.process.stdin.close()
        try:
            return self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


class Bench:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONUNBUFFERED": "1"}
        sys.path.insert(0, str(repo))

    def server(self, name: str, *flags: str) -> list[str]:
        return [PYTHON, str(self.repo / "servers" / f"{name}.py"), *flags]

    def stdio(self, name: str, *flags: str) -> Stdio:
        return Stdio(self.server(name, *flags), self.env)

    def launch(self, name: str, *flags: str) -> Any:
        from mcplab.server.streamable_http import launch

        return launch(self.server(name, *flags), env={"PYTHONPATH": str(self.repo)})

    def child(self, code: str, timeout: float) -> dict:
        """Run ``code`` (prints one JSON object) with the checkout's mcplab; its peak memory is added."""
        # VmHWM, not ru_maxrss: on Linux ru_maxrss keeps the parent's peak across fork and exec.
        program = code + "\nRESULT['peak_mib'] = [int(l.split()[1]) // 1024 for l in open('/proc/self/status') " \
                         "if l.startswith('VmHWM:')][0]\nprint(json.dumps(RESULT))\n"
        try:
            done = subprocess.run([PYTHON, "-c", program], capture_output=True, text=True, timeout=timeout,
                                  env=self.env, cwd=HERE)
        except subprocess.TimeoutExpired:
            return {"outcome": f"not done after {timeout:g} s"}
        if done.returncode:
            return {"outcome": "failed: " + done.stderr.strip().splitlines()[-1][:200]}
        return json.loads(done.stdout.strip().splitlines()[-1])


def folder(outside_text: str = "OUTSIDE-SECRET") -> tuple[Path, Path]:
    base = Path(tempfile.mkdtemp(prefix="mcplab-hardening-"))
    (base / "outside").mkdir()
    (base / "outside" / "target.txt").write_text(outside_text)
    root = base / "root"
    (root / "inner").mkdir(parents=True)
    (root / "inner" / "target.txt").write_text("inside")
    (root / "notes.md").write_text("notes")
    return root, base / "outside"


FLIP = ("import os, sys\nkind, link, a, b = sys.argv[1:5]\ntmp = link + '.next'\nwhile True:\n"
        "    if kind == 'swap':\n        os.rename(link, a); os.symlink(b, link); os.unlink(link); os.rename(a, link)\n"
        "        continue\n    for t in (a, b):\n        try:\n            os.unlink(tmp)\n"
        "        except FileNotFoundError:\n            pass\n        os.symlink(t, tmp)\n        os.replace(tmp, link)\n")


# --- the measurements ----------------------------------------------------------------------------------------

def m_cancel(b: Bench) -> dict:
    killed = 0
    for name in ("weather", "files", "conformance"):
        server = b.stdio(name)
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}})
        killed += server.request("ping").get("error", {}).get("message") == "the server exited"
        server.close()
    with b.launch("weather") as process:
        import httpx

        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
        with httpx.Client(trust_env=False) as client:
            session = client.post(process.url, json=init, headers=headers).headers["mcp-session-id"]
            reply = client.post(process.url, headers={**headers, "Mcp-Session-Id": session}, json={
                "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}})
    return {"stdio servers killed": f"{killed}/3", "legacy HTTP status": reply.status_code}


def m_race(b: Bench, reads: int = 300, writes: int = 300) -> dict:
    root, outside = folder()
    (root / "flip").symlink_to("inner")
    (root / "last").symlink_to("inner/target.txt")
    (root / "swap").mkdir()
    (root / "swap" / "target.txt").write_text("inside")
    attackers = [subprocess.Popen([PYTHON, "-c", FLIP, *args]) for args in (
        ("link", str(root / "flip"), "inner", "../outside"),
        ("link", str(root / "last"), "inner/target.txt", str(outside / "target.txt")),
        ("swap", str(root / "swap"), str(root / ".aside"), str(outside)))]
    server = b.stdio("files", "--root", str(root), "--writable")
    server.initialize()
    escaped = sum("OUTSIDE-SECRET" in json.dumps(server.call("read_file", path=path))
                  for path in ("flip/target.txt", "last", "swap/target.txt") for _ in range(reads))
    for path in ("flip/planted.txt", "swap/planted.txt"):
        for _ in range(writes):
            server.call("write_file", path=path, content="PLANTED")
    for attacker in attackers:
        attacker.kill()
    server.close()
    planted = (outside / "planted.txt").exists()
    shutil.rmtree(root.parent)
    return {"reads that returned the outside file": f"{escaped}/{3 * reads} ({100 * escaped / (3 * reads):.1f}%)",
            "a write landed outside": planted}


def m_confirm(b: Bench) -> dict:
    root, outside = folder()
    (root / "docs").mkdir()
    (root / "docs" / "target.txt").write_text("inside")
    server = b.stdio("files", "--root", str(root), "--writable")
    server.initialize({"elicitation": {}})

    def swap_then_accept(question: dict) -> dict:
        (root / "docs").rename(root / "docs-aside")
        (root / "docs").symlink_to(outside)
        return {"action": "accept", "content": {"replace": True}}

    reply = server.call("write_file", swap_then_accept, path="docs/target.txt", content="PLANTED")
    server.close()
    landed = (outside / "target.txt").read_text() == "PLANTED"
    shutil.rmtree(root.parent)
    return {"the accepted write landed outside": landed,
            "reply": json.dumps(reply.get("result", reply.get("error")))[:90]}


def m_glob(b: Bench) -> dict:
    root, _ = folder()
    server = b.stdio("files", "--root", str(root))
    server.initialize()
    before = rss(server.process.pid)
    started = time.perf_counter()
    for number in range(10):
        server.call("search_files", pattern=f"{number}" + "*a" * (1 << 19))
    per_call = (time.perf_counter() - started) / 10
    grown = (rss(server.process.pid) - before) // 1024
    server.close()
    shutil.rmtree(root.parent)
    return {"seconds per 1 MB pattern": round(per_call, 3), "server memory after ten (MiB grown)": grown}


FLOOD_CLIENT = """
import asyncio, json, time
from mcplab import Client
from mcplab.server.streamable_http import launch
from mcplab.transports.http import http
from mcplab.transports.stdio import stdio
async def main():
    argv = [{python!r}, {helpers!r}, {kind!r}, "200000"]
    server = launch(argv) if {kind!r} == "flood-sse" else None
    wire = http(server.url) if server else stdio(argv)
    started = time.perf_counter()
    async with Client(wire, timeout=300) as client:
        await client.request("ping")
    if server:
        server.stop()
    return {{"seconds": round(time.perf_counter() - started, 1), "frames kept": len(wire.trace.frames)}}
RESULT = asyncio.run(main())
"""


def m_flood(b: Bench) -> dict:
    helpers = str(HERE.parent / "tests" / "redteam_helpers.py")
    out = {}
    for kind, label in (("flood-stdio", "stdio"), ("flood-sse", "SSE")):
        result = b.child(FLOOD_CLIENT.format(python=PYTHON, helpers=helpers, kind=kind), 600)
        out[f"{label}: client peak MiB, seconds, frames kept"] = (
            f"{result.get('peak_mib')}, {result.get('seconds')}, {result.get('frames kept')}"
            if "peak_mib" in result else result["outcome"])
    return out


SSE_PARSE = """
import json, time
from mcplab.wire.sse import SSEParser
body = b"data: " + b"y" * ({mib} << 20) + b"\\n\\n"
parser = SSEParser()
started = time.perf_counter()
events = []
for start in range(0, len(body), 1 << 16):
    events += parser.feed(body[start:start + (1 << 16)])
RESULT = {{"seconds": round(time.perf_counter() - started, 3), "events": len(events)}}
"""


def m_sse(b: Bench) -> dict:
    out = {}
    for mib in (8, 50):
        result = b.child(SSE_PARSE.format(mib=mib), 180)
        out[f"{mib} MiB event: parse seconds"] = result.get("seconds", result.get("outcome"))
    return out


def m_links(b: Bench) -> dict:
    root, _ = folder()
    (root / "dangling").symlink_to("nowhere")
    (root / "loop").symlink_to("loop")
    server = b.stdio("files", "--root", str(root))
    server.initialize()
    replies = [server.call("list_directory"), server.call("search_files", pattern="*"),
               server.request("resources/list"), server.request("completion/complete", {
                   "ref": {"type": "ref/prompt", "name": "summarize_file"}, "argument": {"name": "path", "value": ""}})]
    server.close()
    broken = sum("error" in r or r.get("result", {}).get("isError", False) for r in replies)
    shown = sum(str(root) in json.dumps(r) for r in replies)
    shutil.rmtree(root.parent)
    return {"listings broken (of 4)": broken, "replies showing the real root": shown}


def m_quota(b: Bench) -> dict:
    root, _ = folder()
    server = b.stdio("files", "--root", str(root), "--writable")
    server.initialize()
    data = "x" * (1 << 20)
    accepted = sum(not server.call("write_file", path=f"w{n}.txt", content=data)["result"]["isError"]
                   for n in range(150))
    server.close()
    shutil.rmtree(root.parent)
    return {"1 MiB writes accepted (of 150)": accepted}


def m_asking(b: Bench, asks: int = 300) -> dict:
    import httpx

    with b.launch("conformance") as process:
        url, pid = process.url, process.process.pid
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "b", "version": "1"}}}
        with httpx.Client(trust_env=False, timeout=30) as client:
            session = client.post(url, json=init, headers=headers).headers["mcp-session-id"]
            headers = {**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            before, asked = rss(pid), 0
            for number in range(asks):
                body = {"jsonrpc": "2.0", "id": number + 2, "method": "tools/call",
                        "params": {"name": "test_elicitation", "arguments": {"message": "x" * 10_000}}}
                with client.stream("POST", url, json=body, headers=headers) as reply:
                    for line in reply.iter_lines():
                        if line.startswith("data:") and line[5:].strip():
                            asked += '"elicitation/create"' in line
                            break
            grown = rss(pid) - before
    return {"questions left waiting (of 300)": asked, "server memory grown (KiB)": grown}


def m_subscribe(b: Bench) -> dict:
    root, _ = folder()
    for number in range(200):
        (root / f"f{number}.txt").write_text("x")
    server = b.stdio("files", "--root", str(root))
    server.initialize()
    before = rss(server.process.pid)
    huge = sum("result" in server.request("resources/subscribe", {"uri": f"file:///{n}" + "a" * 50_000})
               for n in range(2000))
    real = sum("result" in server.request("resources/subscribe", {"uri": f"file:///f{n}.txt"}) for n in range(200))
    grown = (rss(server.process.pid) - before) // 1024
    server.close()
    shutil.rmtree(root.parent)
    return {"50 KB URIs accepted (of 2000)": huge, "real files accepted (of 200)": real, "server MiB grown": grown}


def m_sessions(b: Bench) -> dict:
    import httpx

    with b.launch("weather") as process:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "n" * 3_900_000, "version": "1"}}})
        with httpx.Client(trust_env=False, timeout=30) as client:
            client.post(process.url, content=body, headers=headers)
            before = rss(process.process.pid)
            for _ in range(100):
                client.post(process.url, content=body, headers=headers)
            grown = (rss(process.process.pid) - before) // 1024
    return {"server MiB grown by 100 sessions": grown}


def m_legacy(b: Bench) -> dict:
    root, _ = folder()
    server = b.stdio("files", "--root", str(root), "--writable")
    server.initialize({"elicitation": {}})
    reply = server.call("write_file", lambda q: {"action": "accept", "content": {"replace": "false"}},
                        path="notes.md", content="REPLACED")
    server.close()
    replaced = (root / "notes.md").read_text() == "REPLACED"
    shutil.rmtree(root.parent)
    return {"file replaced": replaced, "reply code": (reply.get("error") or {}).get("code")}


def m_http(b: Bench) -> dict:
    import httpx

    with b.launch("weather") as process:
        url = process.url
        port = int(url.split(":")[2].split("/")[0])
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
        with httpx.Client(trust_env=False, timeout=30) as client:
            other = client.post(url, json=init, headers={**headers, "Origin": f"http://127.0.0.1:{port + 1}"})
            session = client.post(url, json=init, headers=headers).headers["mcp-session-id"]
            doubled = client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=httpx.Headers(
                [*headers.items(), ("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25"),
                 ("MCP-Protocol-Version", "2025-06-18")]))
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"POST /mcp HTTP/1.1\r\n")
        slow.settimeout(20)
        started = time.monotonic()
        try:
            closed = slow.recv(1) == b""
        except socket.timeout:
            closed = False
        waited = round(time.monotonic() - started, 1)
        before = len(process.stderr())
        for _ in range(5):
            gone = socket.create_connection(("127.0.0.1", port))
            gone.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Accept: application/json, text/event-stream\r\nContent-Length: 9999\r\n\r\n{")
            gone.close()
        time.sleep(1)
        logged = (len(process.stderr()) - before) // 5
    return {"Origin of another local port": other.status_code, "MCP-Protocol-Version twice": doubled.status_code,
            "slow head closed after (s)": waited if closed else f"still open after {waited}",
            "log bytes per vanished body": logged}


MEASURES: dict[str, Callable[[Bench], dict]] = {
    "cancel": m_cancel, "race": m_race, "confirm": m_confirm, "glob": m_glob, "flood": m_flood, "sse": m_sse,
    "links": m_links, "quota": m_quota, "asking": m_asking, "subscribe": m_subscribe, "sessions": m_sessions,
    "legacy": m_legacy, "http": m_http,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="the checkout to measure (default: this one)")
    parser.add_argument("--only", default=",".join(MEASURES), help="comma-separated names (default: all)")
    args = parser.parse_args()
    bench = Bench(args.repo.resolve())
    for name in args.only.split(","):
        started = time.monotonic()
        try:
            result = MEASURES[name](bench)
        except Exception as exc:  # one attack that cannot run on this checkout does not stop the others
            result = {"could not run": f"{type(exc).__name__}: {exc}"[:200]}
        print(f"{name:<10} ({time.monotonic() - started:5.1f} s)  " + "; ".join(f"{k}: {v}" for k, v in result.items()),
              flush=True)


if __name__ == "__main__":
    main()
