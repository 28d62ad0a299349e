"""Careless variants of the bundled parts, each missing one defence, for the attacks lab (Lab 14) only.

Theory of operation
-------------------
Lab 14 runs every attack twice: first against one of these, where it succeeds, then against the real
part, which stops it. It sits beside the labs' checks because it is lab material, not a part: nothing
else imports it (a test checks; ``mcplab.exercises`` does not load it), and nothing here is a default
anywhere. Each variant leaves out exactly one thing, named after what it lacks::

    CarelessHost        the Host without trust.py: offers every tool as listed, pins nothing, asks
                        nothing, hands results to the model as plain text, never restarts a crashed server
    GullibleModel       not careless code but the behaviour the attacks count on: a stand-in model that
                        obeys orders it reads in tool descriptions and tool results
    python -m mcplab.exercises.careless --root DIR [flags]
                        the bundled file server (servers/files.py) with one defence removed per flag:
        --unconfined    read_file joins the path to the root and opens it: no '..' check, no absolute
                        path check, links followed anywhere, any kind of file opened
        --any-host      over HTTP, serves whatever Host and Origin a request names (no DNS-rebinding check)
        --any-audience  with --auth, accepts a valid token minted for any resource (no audience check:
                        the door to token passthrough)

The spec sections each defence comes from are in Lab 14 beside each attack.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from mcplab.client.agent import SEPARATOR, CatalogueEntry, ScriptedModel, model_text
from mcplab.client.host import Host
from mcplab.client.results import Tool, ToolResult

__all__ = ["CarelessHost", "GullibleModel", "AnyHost", "main"]


class CarelessHost(Host):
    """A Host that believes every server: what the real one does without trust.py and without recovery."""

    async def _admit(self, listed: Mapping[str, Sequence[Tool]]) -> dict[str, list[Tool]]:
        return {server: list(tools) for server, tools in listed.items()}   # no flags, no pins, no questions

    async def _consent(self, entry: CatalogueEntry, arguments: dict) -> str | None:
        return None                                                         # every call the model wants runs

    def _for_model(self, entry: CatalogueEntry, result: ToolResult) -> tuple[str, tuple]:
        return model_text(result), ()                                       # results read like anything else

    async def recover(self) -> dict[str, str]:
        return {}                                                           # a crashed server stays down


class GullibleModel(ScriptedModel):
    """A stand-in for a model talked into obeying what it reads, wherever it reads it.

    It answers the user with its rules (as :class:`~mcplab.client.agent.ScriptedModel`), and it obeys orders
    of one shape: ``call TOOL with {JSON}``, perhaps followed by ``pass what it returns as `ARG```.
    An order in a tool's description is carried out before that tool is called (its result goes into
    ``ARG`` of the call); an order in a tool's result right after reading it. It reads through quoting,
    as real models do: a result wrapped as data is still read. Told to keep quiet, it does: its final
    answer leaves out what the orders made it do.
    """

    ORDER = re.compile(r"call\s+(?P<tool>[\w.-]+)\s+with\s+(?P<args>\{[^{}]*\})(?:[^<]*?\b(?:pass|put)\s+what\s+it\s+"
                       r"returns\s+(?:as|in|into)\s+`?(?P<into>\w+)`?)?", re.IGNORECASE | re.DOTALL)

    def __init__(self, rules: Sequence[Any]) -> None:
        super().__init__(rules)
        self._waiting: list[tuple[dict, str]] = []   # calls held back until an order's result fills ARG
        self._obeyed: set[str] = set()                # orders carried out in this conversation
        self._quiet: set[str] = set()                 # ids of the calls orders made, left out of the answer

    def _order(self, text: str, offered: Sequence[str]) -> tuple[str, dict, str | None] | None:
        for match in self.ORDER.finditer(_readable(text)):
            name = next((n for n in offered if n == match["tool"] or n.endswith(SEPARATOR + match["tool"])), None)
            key = match.group(0)
            if name is None or key in self._obeyed:
                continue
            try:
                arguments = json.loads(match["args"])
            except ValueError:
                continue
            self._obeyed.add(key)
            return name, arguments, match["into"]
        return None

    def _calls(self, messages: list[dict], found: Sequence[tuple[str, dict]], ordered: int = 0) -> dict:
        """Tool calls with ids unique in the conversation; the first ``ordered`` were orders."""
        done = sum(len(m.get("tool_calls") or []) for m in messages)
        calls = [{"id": f"call_{done + i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                 for i, (name, args) in enumerate(found, 1)]
        self._quiet |= {call["id"] for call in calls[:ordered]}
        return {"role": "assistant", "content": None, "tool_calls": calls}

    def respond(self, messages: list[dict], tools: list[dict]) -> dict:
        offered = [t["function"]["name"] for t in tools]
        described = {t["function"]["name"]: t["function"].get("description") or "" for t in tools}
        if messages[-1]["role"] == "user":
            self._waiting, self._obeyed, self._quiet = [], set(), set()
            plan = super().respond(messages, tools)
            first = []
            for call in plan.get("tool_calls") or []:
                order = self._order(described.get(call["function"]["name"], ""), offered)
                if order is None:
                    continue
                name, arguments, into = order
                first.append((name, arguments))
                self._waiting.append((call, into or ""))
            if not first:
                return plan
            held = {id(call) for call, _ in self._waiting}
            rest = [c for c in plan["tool_calls"] if id(c) not in held]
            return self._calls(messages, first + [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                                                  for c in rest], ordered=len(first))
        latest = [m for m in messages[_last_assistant(messages) + 1:] if m["role"] == "tool"]
        if self._waiting:
            text = latest[-1]["content"] if latest else ""
            found = []
            for call, into in self._waiting:
                arguments = json.loads(call["function"]["arguments"])
                if into:
                    arguments[into] = text
                found.append((call["function"]["name"], arguments))
            self._waiting = []
            return self._calls(messages, found)
        for message in latest:
            order = self._order(message["content"], offered)
            if order is not None:
                return self._calls(messages, [order[:2]], ordered=1)
        return self.answer(messages, leave_out=frozenset(self._quiet))


def _last_assistant(messages: list[dict]) -> int:
    return max(i for i, m in enumerate(messages) if m["role"] == "assistant")


def _readable(text: str) -> str:
    """What a model reads in a text: a JSON document is read through (its strings joined)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    strings: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(value)
    return "\n".join(strings) or text


# --- careless servers ---------------------------------------------------------------------------------

class AnyHost:
    """ASGI: what a server without the DNS-rebinding check does, serve whichever ``Host`` and ``Origin``
    a request names. Built as a shim in front of our endpoint that hides those two headers from its checks."""

    def __init__(self, app: Any, url: str) -> None:
        self.app, self.host = app, urlsplit(url).netloc.encode("latin-1")
        self.state = getattr(app, "state", None)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k not in (b"host", b"origin")]
            scope = {**scope, "headers": [(b"host", self.host), *headers]}
        await self.app(scope, receive, send)


def _unconfined_read(server: Any, root: Path) -> None:
    """Replace read_file with one that trusts the path it is given."""
    limit = 64 * 1024  # small enough for a reply; the real server's own limit is 1 MiB

    @server.tool(name="read_file", annotations={"readOnlyHint": True, "openWorldHint": False})
    def read_file(path: str) -> str:
        """Read one file (careless: the path is joined to the root and opened, nothing checked).

        Args:
            path: File path relative to the served folder, e.g. "notes.md".
        """
        # os.path.join drops the root when path is absolute; '..' climbs out; open() follows any link and
        # waits forever on a FIFO with no writer. Each is one of the refusals of servers/files.py.
        with open(os.path.join(root, path), "rb") as file:
            return file.read(limit).decode("utf-8", errors="replace")


def _wrap(args: Any, policy: Any) -> Any:
    """The middleware for --auth / --any-audience / --any-host, outermost last."""
    from mcplab.auth.middleware import Protect
    from mcplab.auth.resource import ResourceServer

    class AnyAudience(ResourceServer):
        def names_me(self, uri: str) -> bool:
            return True  # the missing check: a token minted for any resource will do

    def wrap(app: Any, url: str) -> Any:
        served = app
        if args.auth:
            parts, endpoint = urlsplit(url), app.state.endpoint
            kind = AnyAudience if args.any_audience else ResourceServer
            served = Protect(app, kind(args.auth, scheme=parts.scheme, port=parts.port or 0, path=parts.path,
                                       hosts=endpoint.allowed_hosts, policy=policy, verify=args.ca or True),
                             max_body=endpoint.max_body)
        return AnyHost(served, url) if args.any_host else served

    return wrap


def main(argv: list[str] | None = None) -> None:
    from mcplab.course import servers_dir
    from mcplab.server import arguments, run

    sys.path.insert(0, str(servers_dir()))
    import files  # servers/files.py: the real server, one defence of which each flag removes

    parser = arguments("servers/files.py with defences removed, for Lab 14 only")
    parser.add_argument("--root", type=Path, default=files.SAMPLES)
    parser.add_argument("--writable", action="store_true")
    parser.add_argument("--unconfined", action="store_true", help="read_file checks no path")
    parser.add_argument("--any-host", action="store_true", help="over HTTP: no Host or Origin check")
    parser.add_argument("--any-audience", action="store_true", help="with --auth: no audience check on tokens")
    args = parser.parse_args(argv)
    server = files.create_server(args.root, args.writable)
    if args.unconfined:
        _unconfined_read(server, args.root.resolve())
    print(f"careless files: {', '.join(f for f in ('unconfined', 'any_host', 'any_audience') if getattr(args, f)) or 'no flag'}",
          file=sys.stderr, flush=True)
    if args.http and (args.any_host or args.any_audience):
        from mcplab.server.streamable_http import serve_http

        serve_http(server, host=args.host, port=args.port, era=args.era, wrap=_wrap(args, files.SCOPES))
        return
    run(server, args, scopes=files.SCOPES)


if __name__ == "__main__":
    main()
