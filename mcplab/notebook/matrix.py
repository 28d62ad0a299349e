"""The compatibility matrix of 2026-07-28, run live: which client meets which server, and what happens.

Theory of operation
-------------------
The spec ("basic/versioning", backward compatibility) lists seven pairings of a client era with a
server era and says how each one ends. This module runs every row for real: it starts the bundled
weather server with that ``--era``, connects a :class:`~mcplab.client.Client` of that era, calls
``get_weather``, and records what happened::

    client     Client(era=…)    server     servers/weather.py --era …
    modern     "modern"         modern     "modern"
    dual-era   "auto"           dual-era   "dual"
    legacy     "legacy"         legacy     "legacy"

    client    server    the spec says  live (stdio)                    on the wire
    modern    legacy    fails          fails: -32601 Method not found  server/discover → -32601
    dual-era  legacy    works          works: legacy 2025-11-25        server/discover → -32601 · initialize → …

An :class:`Outcome` keeps the era and version spoken (or the error code and HTTP status that
stopped it), the client's own account of how it chose (``era_reason``), the requests on the wire in
one line, and the whole trace. :class:`Matrix` prints them as a text table (nbval compares it) and
as HTML. Nothing in a row depends on ports or process ids, so the table is the same on every run.

Nor does a verdict depend on time. A row that ended because something was not answered in time
(its deadline, a request's timeout, a probe given up before the client moved on) says only that the
server did not answer within N s on this machine (``Outcome.waited``): a busy machine, not the spec,
and never "differs from the spec". The summary counts such rows apart; running the cell again settles them.

Rows run concurrently (one child process each over stdio, ~0.3 s apiece), so the seven take about a
second. Over HTTP pass ``urls``, one running server per server era (``launch`` them with ``--era``);
``launch_servers`` does that. Each row uses a fresh era cache: a remembered era would skip the probe
the row is meant to show.
"""

from __future__ import annotations

import html
import sys
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import anyio

from mcplab.client import Client
from mcplab.course import servers_dir
from mcplab.wire.errors import HTTPStatusError, MCPLabError, RemoteError, RequestTimeout, TransportError, error_name
from mcplab.client.eras import error_in
from mcplab.i18n import N_, _
from mcplab.wire.jsonrpc import ErrorResponse, Request, Response
from mcplab.trace import Trace

__all__ = ["Row", "Outcome", "Matrix", "SPEC_ROWS", "CLIENT_ERA", "SERVER_ERA", "WEATHER", "run_row",
           "run_matrix", "launch_servers", "wire_summary"]

WEATHER = servers_dir() / "weather.py"  # in a clone or an installed wheel alike
CLIENT_ERA = {"modern": "modern", "dual-era": "auto", "legacy": "legacy"}   # row label → Client(era=…)
SERVER_ERA = {"modern": "modern", "dual-era": "dual", "legacy": "legacy"}   # row label → --era …
CALL = ("get_weather", {"city": "Beijing"})
ROW_TIMEOUT = 60.0    # seconds for one row, opening included: a quiet machine needs ~0.3, a busy one far more
PROBE_TIMEOUT = 2.0   # a dual-era client's wait for server/discover (from the server's read of it, on Linux)
                      # before calling the server legacy


@dataclass(frozen=True)
class Row:
    """One row of the spec's table: who meets whom, and what the spec says happens."""
    client: str   # "modern", "dual-era" or "legacy"
    server: str
    spec: str     # "works" or "fails"
    says: str     # the spec's reason, in short
    http_status: int | None = None  # the HTTP status the spec names for a failure over HTTP, if it names one


SPEC_ROWS: tuple[Row, ...] = (  # `says` is shown through _()
    Row("modern", "modern", "works", N_("server/discover optional; a version mismatch gets -32022 and a retry")),
    Row("modern", "legacy", "fails",
        N_("the legacy server rejects the probe (or stays silent): show an actionable error")),
    Row("dual-era", "modern", "works", N_("the probe returns a DiscoverResult (or -32022): stay modern")),
    Row("dual-era", "legacy", "works", N_("the probe gets a non-modern error or no reply: fall back to initialize")),
    Row("legacy", "modern", "fails", N_("initialize is rejected (stdio: a JSON-RPC error, its code the server's "
                                        "choice; HTTP: 400, the modern headers are missing)"), http_status=400),
    Row("legacy", "dual-era", "works", N_("the server answers initialize and serves the legacy revision")),
    Row("legacy", "legacy", "works", N_("the legacy revision, as before 2026-07-28")),
)
N_("works"), N_("fails")  # a row's `spec`, shown through _()
"""The seven rows of the spec's compatibility matrix, in the spec's order."""


@dataclass(frozen=True)
class Outcome:
    """What one row did, live."""
    row: Row
    transport: str                 # "stdio" or "http"
    ok: bool                       # did get_weather return its result?
    era: str | None = None         # the era the connection spoke, when it opened
    version: str | None = None
    code: int | None = None        # the JSON-RPC error code that stopped it
    status: int | None = None      # …and the HTTP status it came with
    detail: str = ""               # the tool's text, or the error's message
    reason: str = ""               # the client's account of choosing its era
    wire: str = ""                 # the requests and their answers, on one line
    waited: float | None = None    # seconds it waited for an answer that did not come, when that ended the row
    trace: Trace = field(default_factory=Trace, repr=False, compare=False)

    @property
    def settled(self) -> bool:
        """Did the row end on something the server said, not on a timeout? Only then can it speak of the spec."""
        return self.waited is None

    @property
    def matches_spec(self) -> bool:
        """Works or fails as the spec says, and over HTTP with the status it names (only stdio leaves it open)."""
        if not self.settled or self.ok != (self.row.spec == "works"):
            return False
        return self.ok or self.transport != "http" or self.row.http_status in (None, self.status)

    @property
    def result(self) -> str:
        """``works: modern 2026-07-28`` or ``fails: -32601 Method not found``."""
        if self.ok:
            return _("works: {era} {version}", era=self.era, version=self.version)
        status = f"HTTP {self.status}, " if self.status else ""
        code = f"{self.code} {error_name(self.code)}" if self.code is not None else _("no error code")
        return _("fails: {reason}", reason=status + code)


def _columns(text: str) -> int:
    """Terminal columns ``text`` takes: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _reply(message: Any, frame: Any) -> str:
    status = (frame.http or {}).get("status")
    prefix = f"{status} " if status and status != 200 else ""
    if isinstance(message, ErrorResponse):
        return f"{prefix}{message.code}"
    if isinstance(message, Response):
        kind = message.result.get("resultType") if isinstance(message.result, dict) else None
        return f"{prefix}{kind or 'result'}"
    return prefix.strip() or "(no body)"


def wire_summary(trace: Trace) -> str:
    """Each request and what came back, e.g. ``server/discover → -32601 · initialize → result``.

    Modern results say their ``resultType`` (``complete``); a legacy result has none (``result``).
    """
    asked: dict[Any, str] = {}
    order: list[Any] = []
    answers: dict[Any, str] = {}
    for frame in trace.frames:
        message = frame.message
        if frame.direction == "c2s" and isinstance(message, Request):
            asked[message.id] = message.method
            order.append(message.id)
        elif frame.direction == "s2c" and isinstance(message, (Response, ErrorResponse)) and message.id in asked:
            answers.setdefault(message.id, _reply(message, frame))
        elif frame.direction == "s2c" and frame.http and order and order[-1] not in answers:
            answers[order[-1]] = _reply(message, frame)  # an HTTP refusal without the id answers the last POST
    return " · ".join(f"{asked[i]} → {answers.get(i) or _('no answer')}" for i in order)


def _error_of(exc: BaseException) -> tuple[int | None, int | None, str]:
    """(JSON-RPC code, HTTP status, message) of whatever stopped a row."""
    if isinstance(exc, RemoteError):
        return exc.code, None, exc.message
    if isinstance(exc, HTTPStatusError):
        error = error_in(exc)
        return (error.code if error else None), exc.status, (error.message if error else str(exc))
    cause = exc.__cause__ or exc.__context__
    if cause is not None and isinstance(cause, (RemoteError, HTTPStatusError)):
        code, status, _ = _error_of(cause)
        return code, status, str(exc)
    return None, None, str(exc)


def _given_up(trace: Trace) -> str | None:
    """The first request the client stopped waiting for: no answer before its next request, or none at all."""
    waiting: str | None = None
    asked: Any = None
    for frame in trace.frames:
        message = frame.message
        if frame.direction == "c2s" and isinstance(message, Request):
            if waiting is not None:
                return waiting  # the client moved on: it had given this one up (a late answer changes nothing)
            waiting, asked = message.method, message.id
        elif frame.direction == "s2c" and waiting is not None and (
                (isinstance(message, (Response, ErrorResponse)) and message.id == asked) or frame.http):
            waiting = None  # over HTTP a refusal without the id answers the last POST, as in wire_summary
    return waiting


def _waited(exc: BaseException, client: Client, timeout: float) -> float | None:
    """How long the row waited for an answer that never came, if that is what ended it; None if it did not."""
    chain = [exc, exc.__cause__, exc.__context__]
    if any(isinstance(e, (TimeoutError, RequestTimeout)) for e in chain):
        return timeout
    if isinstance(exc, TransportError):
        return None  # the server exited or broke the framing: that is an answer of a kind, not a slow one
    method = _given_up(client.trace)
    if method is None:
        return None
    probing = method == "server/discover" and client.asked_era == "auto"
    return min(client.probe_timeout, timeout) if probing else timeout


def _first_refusal(trace: Trace) -> tuple[int | None, int | None]:
    """The first error the server sent, and its HTTP status: what a failed opening ran into."""
    for frame in trace.frames:
        if frame.direction == "s2c" and isinstance(frame.message, ErrorResponse):
            return frame.message.code, (frame.http or {}).get("status")
    return None, None


async def run_row(row: Row, *, transport: str = "stdio", url: str | None = None,
                  server: Sequence[str] | None = None, timeout: float = ROW_TIMEOUT) -> Outcome:
    """Run one row: start (stdio) or reach (``url``) the server, connect, call get_weather."""
    from mcplab.place import local
    from mcplab.transports.http import http

    if transport == "http":
        if url is None:
            raise ValueError("over HTTP, pass the url of a server started with --era " + SERVER_ERA[row.server])
        link: Any = http(url)
    else:
        # a child over stdio on a machine; in the browser edition the same file in the page (place.py)
        link = local([*(server or [sys.executable, str(WEATHER)]), "--era", SERVER_ERA[row.server]])
    client = Client(link, era=CLIENT_ERA[row.client], timeout=timeout)
    client.probe_timeout = PROBE_TIMEOUT
    try:
        with anyio.fail_after(timeout):
            async with client:
                result = await client.call_tool(*CALL)
        return Outcome(row, transport, not result.is_error, client.era, client.protocol_version,
                       detail=result.text, reason=client.era_reason, wire=wire_summary(client.trace),
                       trace=client.trace)
    except (MCPLabError, TimeoutError) as exc:
        code, status, message = _error_of(exc)
        seen_code, seen_status = _first_refusal(client.trace)  # what stopped it, as it was on the wire
        if code is None or code == seen_code:  # an opening that gave up (EraError) says why only in words
            code, status = seen_code, status or seen_status
        return Outcome(row, transport, False, code=code, status=status,
                       detail=(message.splitlines() or [_("no answer within {timeout:g} s", timeout=timeout)])[0],
                       reason=client.era_reason, wire=wire_summary(client.trace),
                       waited=_waited(exc, client, timeout), trace=client.trace)


async def run_matrix(rows: Sequence[Row] = SPEC_ROWS, *, transport: str = "stdio",
                     urls: Mapping[str, str] | None = None, server: Sequence[str] | None = None,
                     timeout: float = ROW_TIMEOUT) -> Matrix:
    """Run every row concurrently; the table keeps the rows' order. ``server`` replaces the weather
    server's command (stdio; ``--era`` is appended), ``urls`` names one running server per era (HTTP).

    >>> await run_matrix()                                          # doctest: +SKIP
    >>> await run_matrix(transport="http", urls={"modern": …, "legacy": …, "dual-era": …})
    """
    outcomes: list[Outcome | None] = [None] * len(rows)

    async def one(index: int, row: Row) -> None:
        url = (urls or {}).get(row.server) if transport == "http" else None
        outcomes[index] = await run_row(row, transport=transport, url=url, server=server, timeout=timeout)

    async with anyio.create_task_group() as tg:
        for index, row in enumerate(rows):
            tg.start_soon(one, index, row)
    return Matrix(tuple(o for o in outcomes if o is not None), transport)


def launch_servers(eras: Sequence[str] = ("modern", "dual-era", "legacy"), server: Sequence[str] | None = None
                   ) -> dict[str, Any]:
    """One HTTP server per server era, started together: {"modern": ServerProcess, …}.

    Stop them with ``mcplab.ecosystem.proxy.stop_all(servers.values())``.
    """
    from mcplab.ecosystem.proxy import launch_all

    argv = list(server or ["python", str(WEATHER)])
    return dict(zip(eras, launch_all([[*argv, "--era", SERVER_ERA[era]] for era in eras])))


@dataclass(frozen=True)
class Matrix:
    """The outcomes of a run, as a table (text for print and nbval, HTML for the notebook)."""
    outcomes: tuple[Outcome, ...]
    transport: str = "stdio"

    def headings(self) -> tuple[str, ...]:
        return (_("client"), _("server"), _("the spec says"), _("live ({transport})", transport=self.transport),
                _("on the wire"), "")

    @property
    def all_match(self) -> bool:
        return all(o.matches_spec for o in self.outcomes)

    def cells(self, outcome: Outcome) -> tuple[str, ...]:
        row = outcome.row
        spec = f"{_(row.spec)}: HTTP {row.http_status}" if self.transport == "http" and row.http_status else _(row.spec)
        if not outcome.settled:
            verdict = "? " + _("the server did not answer within {seconds:g} s on this machine, so this row says "
                               "nothing about the spec: run the cell again", seconds=outcome.waited)
        else:
            verdict = "✓" if outcome.matches_spec else "✗ " + _("differs from the spec")
        return (row.client, row.server, spec, outcome.result, outcome.wire, verdict)

    def summary(self) -> str:
        agree = sum(o.matches_spec for o in self.outcomes)
        slow = sum(not o.settled for o in self.outcomes)
        differ = len(self.outcomes) - agree - slow
        return (_("{rows} rows over {transport}: {agree} as the spec says", rows=len(self.outcomes),
                  transport=self.transport, agree=agree)
                + (_(", {count} not", count=differ) if differ else "")
                + (_(", {count} not answered in time on this machine", count=slow) if slow else ""))

    def __repr__(self) -> str:
        head = self.headings()
        rows = [head, *(self.cells(o) for o in self.outcomes)]
        widths = [max(_columns(r[i]) for r in rows) for i in range(len(head) - 1)]
        lines = ["  ".join(cell + " " * (w - _columns(cell)) for cell, w in zip(r, widths)) + "  " + r[-1]
                 for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join([*(line.rstrip() for line in lines), "", self.summary()])

    def _repr_html_(self) -> str:
        cell = "padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top"
        rows = ["<tr>" + "".join(f'<th style="{cell}">{html.escape(h)}</th>' for h in self.headings()) + "</tr>"]
        for outcome in self.outcomes:
            tint = "#e8f5e9" if outcome.ok else "#ffebee" if outcome.settled else "#fff8e1"  # amber: undecided
            values = self.cells(outcome)
            tds = []
            for index, value in enumerate(values):
                style = cell + (f";background:{tint}" if index == 3 else "")
                style += ";font:11px monospace" if index == 4 else ""
                tip = {2: _(outcome.row.says), 3: outcome.reason}.get(index)  # the spec's reason, the client's
                title = f' title="{html.escape(tip)}"' if tip else ""
                tds.append(f'<td style="{style}"{title}>{html.escape(value)}</td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        return (f'<table style="border-collapse:collapse;font:12px/1.4 sans-serif">{"".join(rows)}</table>'
                f'<div style="font:12px sans-serif;color:#555;margin-top:4px">{html.escape(self.summary())}</div>')
