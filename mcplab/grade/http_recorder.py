"""The instrumented HTTP server a student's HTTP client is graded against: a recording proxy.

    python -m mcplab.grade.http_recorder --log EXCHANGES.jsonl [--http --host 127.0.0.1 --port 0]

Theory of operation
-------------------
The grader starts this process with ``launch`` (``server/streamable_http/process.py``), as it would a
bundled server: it binds 127.0.0.1, prints its URL, answers only the user who started it (``owner.py``)
and exits when the grader's end of its stdin closes. It launches the bundled weather server the same
way, in both eras at once (``--era dual``), and relays every request to it. Each graded run of the
client has an endpoint of its own::

    /legacy/mcp       a legacy session; every answer a JSON body
    /modern/mcp       2026-07-28 requests; every answer a JSON body
    /legacy-sse/mcp   the same two eras, every request answered with an event stream: an event that
    /modern-sse/mcp   carries no message first (legacy: a priming event, an id and empty data; modern:
                      a comment), then a notifications/message about the request, then its response

Every request is written to the log as it arrives, before anything is judged: HTTP method, headers
and body, one JSON line (``{"run", "seq", "kind": "request", ...}``), and the answer the client got
after it (``"kind": "answer"``: status, headers, body). The log is the whole record: a run that is
stopped still leaves what it sent.

The proxy is lenient on purpose: what goes on to the weather server is repaired (the right Accept and
Content-Type, the session id and revision of the run's session, notifications/initialized if the
client never sent it, the 2026-07-28 ``_meta`` and routing headers taken from the body), so that one
mistake in a client costs it one line of its card, not every line after it. What the client sent is
what the log keeps. A GET is answered 405 here (a server may offer no standalone stream).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, AsyncIterator, BinaryIO, Sequence

RUNS = ("legacy", "modern", "legacy-sse", "modern-sse")
ACCEPT = "application/json, text/event-stream"
LOG_NOTE = "answering {method}"  # the data of the notifications/message sent before each streamed response
SESSION = "mcp-session-id"
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def era(run: str) -> str:
    return run.split("-")[0]


def streams(run: str) -> bool:
    return run.endswith("-sse")


def parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def response_in(content_type: str, body: bytes, request_id: Any) -> dict | None:
    """The JSON-RPC response to ``request_id`` in a JSON body or an event stream; None if there is none."""
    if content_type.startswith("application/json"):
        message = parse(body)
        return message if isinstance(message, dict) else None
    if content_type.startswith("text/event-stream"):
        from mcplab.wire.sse import SSEParser

        for event in SSEParser().feed(body + b"\n\n"):
            message = parse(event.data.encode()) if event.data else None
            if isinstance(message, dict) and "method" not in message and message.get("id") == request_id:
                return message
    return None


class Recorder:
    """The proxy's state: the log, the weather server's URL, each run's session (no module-level state)."""

    def __init__(self, log: BinaryIO, upstream: str) -> None:
        self.log, self.upstream = log, upstream
        self.seq = 0
        self.sessions: dict[str, dict[str, Any]] = {run: {} for run in RUNS}  # run → id, version, initialized

    def write(self, entry: dict[str, Any]) -> int:
        self.seq += 1
        self.log.write((json.dumps({"seq": self.seq, **entry}, ensure_ascii=False) + "\n").encode("utf-8"))
        self.log.flush()
        return self.seq

    def repaired(self, run: str, message: Any) -> tuple[dict, Any]:
        """The headers and message to relay: what the client meant, in the form the weather server needs."""
        from mcplab.lifecycle.modern import stamp
        from mcplab.wire.headers import request_headers
        from mcplab.wire.versions import LATEST_MODERN

        out = {"content-type": "application/json", "accept": ACCEPT}
        session = self.sessions[run]
        if era(run) == "legacy":
            if not (isinstance(message, dict) and message.get("method") == "initialize") and "id" in session:
                out.update({SESSION: session["id"], "mcp-protocol-version": session["version"]})
            return out, message
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
            theirs = meta if isinstance(meta, dict) else {}
            params = stamp(message.get("params") if isinstance(message.get("params"), dict) else None, LATEST_MODERN,
                           theirs.get("io.modelcontextprotocol/clientCapabilities") or {})
            params["_meta"].update(theirs)
            message = {**message, "params": params}
            out.update({k.lower(): v for k, v in request_headers(message["method"], params, LATEST_MODERN).items()})
        return out, message

    async def relay(self, http: Any, run: str, method: str, message: Any, raw: bytes) -> tuple[int, dict, bytes]:
        """Send the repaired request on to the weather server; its status, headers and body."""
        out, message = self.repaired(run, message)
        session = self.sessions[run]
        if method == "DELETE":
            out = {k: v for k, v in out.items() if k not in ("content-type", "accept")}
            if era(run) == "legacy" and "id" in session:
                out.update({SESSION: session["id"], "mcp-protocol-version": session["version"]})
            reply = await http.delete(self.upstream, headers=out)
            return reply.status_code, dict(reply.headers), reply.content
        is_request = isinstance(message, dict) and "method" in message and "id" in message
        if era(run) == "legacy" and is_request and message["method"] not in ("initialize", "ping") \
                and "id" in session and not session.get("initialized"):
            # The client skipped notifications/initialized: the weather server still needs it to go on.
            await http.post(self.upstream, headers=out, content=INITIALIZED)
            session["initialized"] = True
        if isinstance(message, dict) and message.get("method") == "notifications/initialized":
            session["initialized"] = True
        body = json.dumps(message).encode() if message is not None else raw
        reply = await http.post(self.upstream, headers=out, content=body)
        return reply.status_code, dict(reply.headers), reply.content

    async def exchange(self, request: Any) -> Any:
        from starlette.responses import PlainTextResponse, Response, StreamingResponse

        run = request.path_params["run"]
        if run not in RUNS:
            return PlainTextResponse(f"no such run: {run}; expected one of {', '.join(RUNS)}\n", status_code=404)
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        seq = self.write({"run": run, "kind": "request", "method": request.method, "headers": headers,
                          "body": raw.decode("utf-8", errors="replace")})
        if request.method not in ("POST", "DELETE"):
            return self.answered(run, seq, PlainTextResponse("this server offers no standalone stream\n",
                                                             status_code=405, headers={"Allow": "POST, DELETE"}))
        message = parse(raw) if request.method == "POST" else None
        http = request.app.state.http
        status, upstream_headers, body = await self.relay(http, run, request.method, message, raw)
        kind = upstream_headers.get("content-type", "")
        passed = {k: v for k, v in upstream_headers.items() if k in (SESSION, "content-type")}
        is_request = isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message
        answer = response_in(kind, body, message.get("id")) if is_request else None
        if answer is None:
            return self.answered(run, seq, Response(body, status_code=status, headers=passed))
        if message["method"] == "initialize" and isinstance(answer.get("result"), dict):
            result = answer["result"]
            self.sessions[run].update(id=upstream_headers.get(SESSION), version=result.get("protocolVersion"))
            if isinstance(result.get("capabilities"), dict):  # it logs in the streamed runs, so it says so
                result["capabilities"] = {**result["capabilities"], "logging": {}}
            if self.sessions[run]["id"] is None:
                del self.sessions[run]["id"]
        passed.pop("content-type", None)
        if not streams(run):
            return self.answered(run, seq, Response(json.dumps(answer).encode(), status_code=status,
                                                    headers=passed, media_type="application/json"))
        events = self.events(run, seq, message, answer)

        async def sent() -> AsyncIterator[bytes]:
            for event in events:  # one write each: a client must put an event together across reads
                yield event

        return self.answered(run, seq, StreamingResponse(sent(), status_code=status, media_type="text/event-stream",
                                                         headers={**passed, "cache-control": "no-cache",
                                                                  "x-accel-buffering": "no"}), b"".join(events))

    def events(self, run: str, seq: int, message: dict, answer: dict) -> list[bytes]:
        """The event stream of one answer: an event with no message, a log notification, the response."""
        first = f"id: {seq}-0\ndata:\n\n" if era(run) == "legacy" else ": keep-alive\n\n"
        note = {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "weather", "data": LOG_NOTE.format(method=message["method"])}}
        ids = (f"id: {seq}-1\n", f"id: {seq}-2\n") if era(run) == "legacy" else ("", "")
        return [first.encode(), f"{ids[0]}data: {json.dumps(note)}\n\n".encode(),
                f"{ids[1]}data: {json.dumps(answer)}\n\n".encode()]

    def answered(self, run: str, seq: int, response: Any, body: bytes | None = None) -> Any:
        """``response``, once the log has it (``body``: what a streamed response will send)."""
        self.write({"run": run, "kind": "answer", "of": seq, "status": response.status_code,
                    "headers": {k: v for k, v in response.headers.items()},
                    "body": bytes(response.body if body is None else body).decode("utf-8", errors="replace")})
        return response


def create_app(recorder: Recorder) -> Any:
    import contextlib

    import httpx
    from starlette.applications import Starlette
    from starlette.routing import Route

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=60.0) as http:
            app.state.http = http
            yield

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return Starlette(routes=[Route("/{run}/mcp", recorder.exchange, methods=methods)], lifespan=lifespan)


def main(argv: Sequence[str] | None = None) -> int:
    import asyncio

    from mcplab.course import server_command
    from mcplab.server.streamable_http.process import BANNER, bind, endpoint_url, launch, serve_app

    parser = argparse.ArgumentParser(prog="python -m mcplab.grade.http_recorder", description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, help="the file to append every exchange to (JSONL)")
    parser.add_argument("--http", action="store_true", help="serve over HTTP (the only way this one serves)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    # the course's weather server, in a checkout or an installed wheel
    with launch(server_command("weather", "--era", "dual")) as upstream, open(args.log, "ab") as log:
        sock = bind(args.host, args.port)
        app = create_app(Recorder(log, upstream.url))
        try:
            asyncio.run(serve_app(app, sock, BANNER.format(name="the grader's recorder", url=endpoint_url(sock))))
        except KeyboardInterrupt:
            return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
