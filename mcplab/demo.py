"""``mcplab demo``: the whole tour in a terminal, every step with the frames it put on the wire.

Theory of operation
-------------------
Six steps, one function each, in the order of the labs. Each says what to look for, does the
real thing (real servers, real pipes, real HTTP) and prints the wire trace its transport
recorded, one line per frame, ``→`` client to server, ``←`` back:

    1 JSON-RPC     the seeds' message shapes (and one MCP refuses), through decode_and_show_work
    2 handshake    initialize → result → notifications/initialized, the weather server on stdio
    3 primitives   a tool, a resource, a prompt; the file server refusing "../"
    4 HTTP         the same tools/call over Streamable HTTP: method, status, headers
    5 eras         the same call in the legacy and the modern era, and what changed on the wire
    6 economics    N×M against N+M, with the seeds' numbers

Each step opens its own connections, so ``--step N`` runs any one alone. Nothing leaves the
machine: stdio servers are child processes on pipes, the HTTP server listens on 127.0.0.1, and a
proxy in the environment is bypassed for 127.0.0.1 (httpx would send even loopback requests to it).
Ports show as ``PORT`` and session ids as ``<session 1>``, so the output is the same on every run.

A stdio server lives exactly as long as its ``async with Client(...)``, an HTTP server as long as
its ``with launch(...)``. Both run in their own process group, so a Ctrl-C reaches only the demo;
asyncio turns it into cancelling the tour, and those blocks unwind, each stopping its server
(stdin closed, then SIGTERM, then SIGKILL) before the demo exits with 130. Should the demo die
anyway (a second Ctrl-C, SIGKILL), each server sees its stdin end and exits by itself.

Step 5 tries the modern era (2026-07-28); a build without it gets one line saying why. Colour is
plain ANSI, off with ``--no-color``, ``NO_COLOR`` set, ``TERM=dumb``, or stdout not a terminal.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import time
import unicodedata
from typing import Awaitable, Callable, Iterable, TextIO

import anyio

from mcplab.wire import jsonrpc
from mcplab.trace import views as trace_views
from mcplab.course import server_command
from mcplab.client import Client
from mcplab.client.client import DEFAULT_TIMEOUT
from mcplab.economics import ILLUSTRATIVE_COSTS, SEED_EXAMPLES, compare, summarize
from mcplab.wire.errors import MCPLabError, RequestTimeout
from mcplab.i18n import N_, _, ngettext
from mcplab.server.streamable_http import launch
from mcplab.trace import Frame
from mcplab.transports.base import Transport
from mcplab.transports.http import http, render_http
from mcplab.transports.stdio import stdio
from mcplab.wire.versions import capabilities_text

__all__ = ["STEPS", "Terminal", "run", "use_color", "differences"]

# The 16 standard colours only: they follow the terminal's own theme, light or dark.
STYLES = {"title": "1", "number": "1;33", "label": "1", "c2s": "36", "s2c": "32", "notification": "35",
          "error": "31", "warn": "33", "dim": "2"}
LOOPBACK = "127.0.0.1"
TIMEOUT = DEFAULT_TIMEOUT  # seconds each request of the tour may take: a server start on a busy machine included
SEED_VERSION, SEED_CLIENT = "2025-06-18", {"name": "my-agent", "version": "0.1.0"}  # seed 2's handshake
CITY = {"city": "Beijing"}                                                          # seed 2's tools/call
SEED_MESSAGES = (  # seed 1's shapes word for word, and the one MCP refuses although JSON-RPC allows it
    (N_("a request: method, params, id"), '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                                          '"params":{"name":"read_file","arguments":{"path":"/tmp/test.txt"}}}'),
    (N_("a success response: the same id, a result"),
     '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"文件内容..."}]}}'),
    (N_("an error response: the same id, an error"),
     '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'),
    (N_("a notification: no id, so nobody answers"), '{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    (N_("what MCP refuses and JSON-RPC tolerates: a null id"), '{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),
)  # the labels are shown through _()


def use_color(no_color: bool = False, stream: TextIO = sys.stdout) -> bool:
    """Colour only for a terminal that wants it: not --no-color, NO_COLOR unset or empty, not TERM=dumb."""
    return (not no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
            and stream.isatty())


def _fit(text: str, width: int) -> int:
    """How many characters of ``text`` fit in ``width`` terminal columns (a CJK character takes two)."""
    used = 0
    for i, ch in enumerate(text):
        used += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used > width:
            return i
    return len(text)


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _wrap(row: str, width: int, indent: int) -> list[str]:
    """``row`` broken to ``width`` columns, after a comma or space where one is near; continuations indented."""
    rows = []
    while (cut := _fit(row, width)) < len(row) and cut > indent:
        near = indent + (width - indent) // 2
        cut = max(row.rfind(",", near, cut), row.rfind(" ", near, cut)) + 1 or cut
        rows.append(row[:cut].rstrip())
        row = " " * indent + row[cut:]
    return rows + [row]


class Terminal:
    """Where the tour prints: colour on or off, and the width lines are wrapped or cut to."""

    def __init__(self, color: bool, width: int = 120, out: TextIO = sys.stdout) -> None:
        self.color, self.width, self.out = color, width, out

    def paint(self, text: str, style: str | None) -> str:
        return f"\x1b[{STYLES[style]}m{text}\x1b[0m" if self.color and style and text.strip() else text

    def line(self, text: str = "", style: str | None = None) -> None:
        print(self.paint(text, style), file=self.out, flush=True)

    def rows(self, text: str, style: str | None = None, indent: int = 4) -> None:
        """Each line of ``text`` indented and wrapped, never cut: these are the lessons."""
        for row in text.split("\n"):
            for part in _wrap(" " * indent + row, self.width, indent):
                self.line(part[:indent] + self.paint(part[indent:], style))

    def heading(self, number: int, title: str) -> None:
        self.line()
        self.line(f"{self.paint(f'── {number}.', 'number')} {self.paint(title, 'title')} "
                  + "─" * max(0, min(self.width, 100) - _columns(title) - 7))

    def say(self, text: str) -> None:
        if _columns(text) != len(text):  # Chinese: no spaces to break at, and each character takes two columns
            for part in _wrap("  " + text, min(self.width, 100), 2):
                self.line(part)
            return
        self.line(textwrap.fill(text, min(self.width, 100), initial_indent="  ", subsequent_indent="  "))

    def item(self, label: str, value: str, style: str | None = None, sep: str = ":") -> None:
        """``label: value``, the value wrapped under itself (wrapped before painting: escapes take no room)."""
        head = " " * (_columns(label) + len(sep) + 3)
        rows = textwrap.wrap(value, self.width, initial_indent=head, subsequent_indent=" " * 6) or [head]
        self.line(f"  {self.paint(label + sep, 'label')} {self.paint(rows[0][len(head):], style)}")
        for row in rows[1:]:
            self.line(row[:6] + self.paint(row[6:], style))

    def trace(self, frames: Iterable[Frame], title: str = "", *, full: bool = False) -> None:
        """One line per frame (trace_views.render_text), coloured by what the frame is; cut at the
        width as ``mcplab inspect`` does, or with ``full`` wrapped under the start of the message."""
        frames = list(frames)
        self.line("  " + ngettext("{title} ({n} frame)", "{title} ({n} frames)", len(frames),
                                  title=title or _("wire trace")), "dim")
        for view, row in zip(trace_views.describe(frames), trace_views.render_text(frames, 10_000).splitlines()):
            if full:
                prefix = re.match(r" *\d+ [→←] .*?  +", row)  # seq, arrow, channel: the message starts after
                parts = _wrap(row, self.width, prefix.end() if prefix else 4)
            else:
                parts = [row if _fit(row, self.width) == len(row) else row[:_fit(row, self.width - 1)] + "…"]
            for part in parts:
                self.line(part, _style(view))

    def http_text(self, text: str) -> None:
        """render_http's output, the start line of each request and response coloured."""
        for row in text.split("\n"):
            start = "c2s" if re.match(r"(POST|GET|DELETE) ", row) else "s2c" if row.startswith("HTTP/") else None
            self.rows(row, start)


def _style(view: trace_views.View) -> str:
    if view.kind in ("error", "refused"):
        return "error"
    if view.kind in ("notification", "stderr", "raw"):
        return "notification" if view.kind == "notification" else "dim"
    message = view.frame.message
    if isinstance(message, jsonrpc.Response) and isinstance(message.result, dict) and message.result.get("isError"):
        return "error"  # a tool's own failure: a result on the wire, but the colour of trouble
    return view.frame.direction


def _capabilities(capabilities: dict) -> str:
    """``{"tools": {"listChanged": true}, "logging": {}}`` → ``logging (deprecated in 2026-07-28), tools (listChanged)``."""
    return capabilities_text(capabilities) if capabilities else _("none ({})")


def exchange(frames: Iterable[Frame], method: str) -> list[Frame]:
    """The first ``method`` request among ``frames``, and every response to it (trace_views pairs them)."""
    views = trace_views.describe(frames)
    first = next((v.frame for v in views if v.kind == "request" and v.frame.message.method == method), None)
    return [first, *(v.frame for v in views if first and v.answers == first.seq)] if first else []


# --- the steps -----------------------------------------------------------------------------------

async def step_jsonrpc(ui: Terminal) -> None:
    ui.say(_("Every MCP message is one JSON-RPC 2.0 object, and its keys alone say what it is. Here are "
             "seed 1's shapes, decoded step by step by jsonrpc.decode_and_show_work:"))
    for label, line in SEED_MESSAGES:
        ui.line()
        ui.line(f"  {_(label)}", "label")
        ui.rows(line, "c2s")
        ui.rows(repr(jsonrpc.decode_and_show_work(line)), "dim", indent=6)


async def step_handshake(ui: Terminal) -> None:
    ui.say(_("Over stdio the client starts the server as a child process and writes one message per line "
             "to its stdin. The first is initialize: the client's version ({version}, as in seed 2), "
             "capabilities and name. The server answers with the version it agrees to and what it offers; "
             "the client's notifications/initialized (no id: nobody answers it) ends the handshake.",
             version=SEED_VERSION))
    ui.line("  $ python servers/weather.py", "dim")
    async with Client(stdio(server_command("weather")), era="legacy", version=SEED_VERSION,
                      client_info=SEED_CLIENT, timeout=TIMEOUT) as client:
        ui.trace(client.trace, full=True)
        ui.item(_("asked for"), client.requested_version)
        ui.item(_("agreed on"), client.protocol_version or "?")
        ui.item(_("server"), f"{client.server_info.get('name')} {client.server_info.get('version')}")
        ui.item(_("server capabilities"), _capabilities(client.server_capabilities))
        ui.item(_("client capabilities"), _capabilities(client.client_capabilities))


async def step_primitives(ui: Terminal) -> None:
    ui.say(_("Tools are chosen by the model, resources by the application, prompts by the user. Each is "
             "listed, then used (the handshake of step 2 is left out of the trace):"))
    async with Client(stdio(server_command("weather")), era="legacy", timeout=TIMEOUT) as client:
        client.recent()
        tools = await client.list_tools()
        ui.item("tools/list", ", ".join(f"{t.name}({', '.join(t.parameters)})" for t in tools))
        ui.item("tools/call get_weather", (await client.call_tool("get_weather", CITY)).text, "s2c")
        city = await client.read_resource("weather://city/Beijing")
        ui.item("resources/read weather://city/Beijing", json.dumps(json.loads(city.text), ensure_ascii=False), "s2c")
        prompt = await client.get_prompt("weather_report", CITY)
        ui.item("prompts/get weather_report", _("{count} messages, the last: {text}", count=len(prompt.messages),
                                                text=prompt.messages[-1].content.as_text()), "s2c")
        ui.trace(client.recent())
    ui.say(_("A tool's arguments are written by a model, so the file server confines every path to its "
             "folder. A refusal is a tool error (isError: true) the model can read, not a protocol error:"))
    async with Client(stdio(server_command("files")), era="legacy", timeout=TIMEOUT) as files:
        files.recent()
        refused = await files.call_tool("read_file", {"path": "../secret.txt"})
        ui.item("tools/call read_file ../secret.txt", f"isError={str(refused.is_error).lower()}: {refused.text}",
                "error")
        ui.trace(files.recent())


async def step_http(ui: Terminal) -> None:
    ui.say(_("The same server, the same tools/call, over Streamable HTTP: every client message is a POST to "
             "one endpoint. A request gets 200 and its response, a notification 202 and no body; the session "
             "id from the initialize reply rides on every later POST, and DELETE ends the session."))
    ui.line(f"  $ python servers/weather.py --http --host {LOOPBACK} --port 0", "dim")
    # launch() blocks for the ~0.2 s the server takes to print its URL; nothing else runs meanwhile.
    with launch(server_command("weather"), host=LOOPBACK) as server:
        ui.item(_("serving at"), re.sub(r":\d+/", ":PORT/", server.url))
        async with Client(http(server.url), era="legacy", timeout=TIMEOUT) as client:
            await client.call_tool("get_weather", CITY)
    ui.trace(client.trace)
    ui.say(_("The tools/call exchange as the HTTP/1.1 text that crossed the wire (port and session id masked):"))
    ui.http_text(render_http(exchange(client.trace, "tools/call")))


async def _call_weather(transport: Transport, era: str) -> Client:
    async with Client(transport, era=era, timeout=TIMEOUT) as client:
        await client.call_tool("get_weather", CITY)
    return client


def differences(legacy: list[Frame], modern: list[Frame]) -> list[str]:
    """What changed on the wire between two traces of the same tools/call, read off the frames."""
    def opening(frames: list[Frame]) -> str:
        sent = [f.message.method for f in frames if f.direction == "c2s"
                and isinstance(f.message, (jsonrpc.Request, jsonrpc.Notification))]
        return " → ".join(sent[:sent.index("tools/call")] if "tools/call" in sent else sent) or _("nothing")

    def call(frames: list[Frame]) -> tuple[dict, dict]:
        request, *replies = exchange(frames, "tools/call") or [None]
        result = replies[0].message.result if replies and isinstance(replies[0].message, jsonrpc.Response) else {}
        return (request.message.params or {}) if request else {}, result if isinstance(result, dict) else {}

    lines = [_("opening: {legacy} (legacy) against {modern} (modern)", legacy=opening(legacy), modern=opening(modern))]
    for where, old, new in zip((_("request's params"), _("result")), call(legacy), call(modern)):
        for key in [k for k in new if k not in old]:  # an object by its keys (what _meta carries), else as JSON
            what = ", ".join(new[key]) if isinstance(new[key], dict) else json.dumps(new[key], ensure_ascii=False)
            lines.append(_("new in the tools/call {where}: {key} = {what}", where=where, key=key, what=what))
    lines.append(_("frames for one call on a fresh connection: {legacy} (legacy) against {modern} (modern)",
                   legacy=len(legacy), modern=len(modern)))
    return lines


async def step_eras(ui: Terminal) -> None:
    ui.say(_("The 2026-07-28 revision (modern) drops the handshake and the session: version, client identity "
             "and capabilities ride in every request's _meta, and server/discover says what a server offers. "
             "The weather server speaks both eras; here is the same get_weather call in each."))
    legacy = await _call_weather(stdio(server_command("weather")), "legacy")
    ui.trace(legacy.trace, _("legacy ({version}) wire trace", version=legacy.protocol_version))
    modern = await _call_weather(stdio(server_command("weather")), "modern")
    ui.trace(modern.trace, _("modern ({version}) wire trace", version=modern.protocol_version))
    ui.say(_("What changed:"))
    for line in differences(legacy.trace.frames, modern.trace.frames):
        ui.item("•", line, sep="")
    ui.say(_("The modern tools/call in full:"))
    ui.rows(json.dumps(jsonrpc.to_dict(exchange(modern.trace, "tools/call")[0].message), indent=2,
                       ensure_ascii=False), "c2s")
    ui.say(_("Over HTTP a modern request also names its method (and tool) in routing headers, so a gateway "
             "can route it without reading the body:"))
    with launch(server_command("weather"), host=LOOPBACK) as server:
        over_http = await _call_weather(http(server.url), "modern")
    ui.http_text(render_http(exchange(over_http.trace, "tools/call")[:1]))


async def step_economics(ui: Terminal) -> None:
    ui.say(_("Without a shared protocol each of N apps writes an adapter for each of M tools: N×M. With one, "
             "each app implements a client once and each tool a server once: N+M. Seed 1's two examples:"))
    for n, m in SEED_EXAMPLES:
        ui.item(f"compare({n}, {m:_})", str(compare(n, m)))
    ui.say(_("That counts every pair as wanted and an implementation as cheap as an adapter. Drop both: only "
             "5 % of the pairs wanted, an implementation three adapters' work, 5 years of upkeep, 2 revisions "
             "(economics.ILLUSTRATIVE_COSTS, a guess to argue with; lab 08 lets you move every number):"))
    ui.rows(summarize(100, 10_000, density=0.05, costs=ILLUSTRATIVE_COSTS, years=5, revisions=2).table())


STEPS: tuple[tuple[str, Callable[[Terminal], Awaitable[None]]], ...] = (
    (N_("JSON-RPC 2.0: requests, responses, errors, notifications"), step_jsonrpc),
    (N_("The initialize handshake over stdio"), step_handshake),
    (N_("Primitives: tools, resources, prompts"), step_primitives),
    (N_("Streamable HTTP: the same call as POSTs"), step_http),
    (N_("Legacy and modern: the same call in both eras"), step_eras),
    (N_("Economics: N×M against N+M"), step_economics),
)  # the titles are shown through _()


async def _tour(numbers: list[int], ui: Terminal) -> None:
    for number in numbers:
        title, step = STEPS[number - 1]
        ui.heading(number, _(title))
        await step(ui)


def _bypass_proxy_for_loopback() -> None:
    # httpx honours HTTP_PROXY/ALL_PROXY even for 127.0.0.1, and the demo's only HTTP is to itself.
    for name in ("NO_PROXY", "no_proxy"):  # urllib reads both, and the lowercase one wins
        os.environ[name] = ",".join(filter(None, [os.environ.get(name), LOOPBACK]))


def run(step: int | None = None, *, color: bool | None = None, out: TextIO = sys.stdout) -> int:
    """Run the tour, or its step ``step``: exit status 0; 1 on an MCP error; 130 on Ctrl-C; 141 on a closed pipe."""
    if step is not None and not 1 <= step <= len(STEPS):
        print(_("mcplab demo: --step must be between 1 and {count}, got {step}", count=len(STEPS), step=step),
              file=sys.stderr)
        return 2
    if hasattr(out, "reconfigure"):
        out.reconfigure(errors="replace")  # a terminal that cannot show 晴 or → gets ? rather than a crash
    ui = Terminal(use_color(stream=out) if color is None else color,
                  max(60, shutil.get_terminal_size((120, 24)).columns - 1), out)
    _bypass_proxy_for_loopback()
    numbers = [step] if step else list(range(1, len(STEPS) + 1))
    ui.line(_("mcplab demo: the Model Context Protocol on the wire. → client to server, ← server to client."), "dim")
    start = time.monotonic()
    try:
        anyio.run(_tour, numbers, ui)
    except BrokenPipeError:  # `mcplab demo | head`: the reader left; the servers were stopped on the way out
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the flush at exit cannot fail
        return 141
    except KeyboardInterrupt:
        ui.line("\n" + _("interrupted; every server the demo started has been stopped"), "warn")
        return 130
    except RequestTimeout:  # the clock, not the protocol: say so, and what to do
        ui.line("\n" + _("mcplab demo: a server did not answer within {seconds:g} s on this machine; this says nothing "
                         "about the protocol; run `mcplab demo` again (or close other work)", seconds=TIMEOUT), "error")
        return 1
    except MCPLabError as exc:
        ui.line(f"\nmcplab demo: {type(exc).__name__}: {exc}", "error")
        return 1
    ui.line("\n" + ngettext("{n} step in {seconds:.1f} s, every server stopped. Next: `mcplab lab` opens the "
                            "notebooks, one idea each.", "{n} steps in {seconds:.1f} s, every server stopped. Next: "
                            "`mcplab lab` opens the notebooks, one idea each.", len(numbers),
                            seconds=time.monotonic() - start), "dim")
    return 0
