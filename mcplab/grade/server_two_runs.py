"""The part-two server grader's runs (Lab 11): one session per era and transport, each walking the brief.

Theory of operation
-------------------
:func:`walk` opens one session with the student's server, in one era (``initialize`` at 2025-11-25, or
2026-07-28's ``_meta`` on every request) over one transport (the server's stdin and stdout, or
Streamable HTTP: the same file started with ``--http --host 127.0.0.1 --port 0``, where the toolkit's
endpoint serves only the user who started it). The session is mcplab's own :class:`~mcplab.Client`,
and the run keeps what it saw; ``server_two_checks.py`` judges it. The four runs go side by side, each
with a server of its own. (In the browser edition, where no process starts, ``place.local`` and the
in-page app stand in for both, and the cell waits through ``pyodide.ffi.run_sync``; the tests here run
the processes.) In order:

    progress    crunch(steps=4) with a progressToken: the notifications/progress that came for it
    cancel      crunch(steps=200) cancelled after its second progress notification (notifications/cancelled;
                2026-07-28 over HTTP: its response stream closed), then steps_done("cancelled") read
                after one short crunch ran to its end and again after a second one: a job that stopped
                did not move while they ran (the short jobs, steps of the same tool, are the clock)
    pages       resources/list followed from cursor to cursor, then a cursor this server never issued
    ask         sign_off: the elicitation/create request (legacy) or the input_required result and its
                retry with inputResponses and requestState (modern), answered with a name made here

Every wait is for an event (a notification, a response) bounded by ``timeout``, sized for a loaded
machine; when it fires the run records which step it cut, and the card says the machine was slow.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import anyio

from mcplab import place
from mcplab.i18n import _
from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError, MCPLabError, RemoteError, ServerExited

ERAS = ("legacy", "modern")
TRANSPORTS = ("stdio", "http")
PROGRESS_TOKEN, CANCEL_TOKEN = "server-two-progress", "server-two-cancel"
LONG_STEPS = 200      # the job that is cancelled: some 10 s of steps, far more than the walk needs
WITNESS_STEPS = 5     # each witness job, run to its end while the cancelled job should stand still


@dataclass
class Run:
    """What one session saw; ``None`` for a step it never reached."""
    era: str
    transport: str
    opened: bool = False
    open_error: str = ""
    late: set[str] = field(default_factory=set)     # the steps a deadline cut (a slow machine)
    unjudged: dict[str, str] = field(default_factory=dict)  # step → why it could not be judged in this run
    errors: dict[str, str] = field(default_factory=dict)  # step → what went wrong on the wire
    tools: list[str] = field(default_factory=list)
    progress: list[dict] | None = None               # every notifications/progress params during the step
    progress_result: dict | None = None
    cancel: dict[str, Any] | None = None             # steps_done before/after/later, the id sent, responses
    pages: list[list[str]] | None = None
    cursors: list[Any] = field(default_factory=list)
    bad_cursor: Any = None                            # the error code, the result that came instead, or None
    asked: list[dict] = field(default_factory=list)  # elicitation/create params, or the input_required result
    answer: str = ""
    ask_result: dict | None = None


def fill(schema: dict, name: str) -> dict[str, Any]:
    """A form's answer: every string field gets ``name``, other fields a value of their type."""
    content: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if isinstance(prop, dict) and prop.get("enum"):
            content[key] = prop["enum"][0]
        elif kind == "boolean":
            content[key] = True
        elif kind in ("number", "integer"):
            content[key] = 1
        else:
            content[key] = name
    return content


def text_of(result: Any) -> str:
    """The text blocks of a tools/call result, joined."""
    if not isinstance(result, dict):
        return ""
    return " ".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))


def walk_all(argv: Sequence[str], eras: Sequence[str], transports: Sequence[str], timeout: float,
             cwd: str | None = None) -> list[Run]:
    """Every (era, transport) run, side by side (each its own server process), on an event loop in a
    thread of its own: a notebook's kernel already runs one, which this walk must not share."""
    from concurrent.futures import ThreadPoolExecutor

    runs = [Run(era, transport) for transport in transports for era in eras]

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for run in runs:
                group.start_soon(walk, list(argv), run, timeout, cwd)

    if place.IN_BROWSER:  # no threads in the page: the cell waits while the page's loop runs the walk (JSPI)
        from mcplab.grade.in_process import wait

        wait(main())
    else:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(anyio.run, main).result()
    return runs


async def walk(argv: list[str], run: Run, timeout: float, cwd: str | None) -> None:
    """One session: open it, then each step in order; a step's failure does not stop the next."""
    from mcplab import Client, http

    process = None
    heard: list[dict] = []
    arrived = anyio.Event()  # set (and replaced) at each progress notification

    async def on_note(note: Any) -> None:
        nonlocal arrived
        if note.method == "notifications/progress":
            heard.append(dict(note.params or {}))
            arrived.set()
            arrived = anyio.Event()

    async def progress_for(token: str, count: int) -> None:
        while sum(p.get("progressToken") == token for p in heard) < count:
            await arrived.wait()

    def answer_form(params: dict) -> dict:
        run.asked.append(params)
        return {"action": "accept", "content": fill(params.get("requestedSchema") or {}, run.answer)}

    run.answer = f"Grader {secrets.token_hex(3)}"
    client = None
    try:
        try:
            with anyio.fail_after(timeout * 3):  # a start on a loaded machine: an event (the URL), bounded
                if run.transport == "http":
                    from mcplab.server.streamable_http.process import launch

                    if place.IN_BROWSER:  # the file's app, served in the page (in_page.py)
                        process = launch(argv, cwd=cwd)
                    else:  # launch waits for the printed URL: in a worker thread, so the other runs go on
                        process = await anyio.to_thread.run_sync(
                            lambda: launch(argv, cwd=cwd, timeout=timeout * 3))
                    transport: Any = http(process.url)
                else:  # a child process over stdio; in the browser edition, the file run in the page
                    transport = place.local(argv, **({"cwd": cwd} if cwd else {}))
                client = Client(transport, era=run.era, timeout=timeout, elicitation=answer_form,
                                on_notification=on_note)
                await client.connect()
        except TimeoutError:
            run.late.add("open")
            return
        except (MCPLabError, OSError) as exc:
            run.open_error = _said(exc)
            return
        run.opened = True
        if "tools" in client.server_capabilities:  # a server with no tools yet: every tool is missing
            listing = await client.request("tools/list")
            run.tools = [t.get("name") for t in listing.get("tools", []) if isinstance(t, dict)]
        for step in (_progress, _cancel, _pages, _ask):
            try:
                with anyio.fail_after(timeout * 2):
                    await step(client, run, heard, progress_for)
            except TimeoutError:
                run.late.add(step.__name__[1:])
            except MCPLabError as exc:
                run.errors[step.__name__[1:]] = _said(exc)
    except MCPLabError as exc:  # the session broke between the steps (the server exited, say)
        run.open_error = _said(exc)
    finally:
        with anyio.CancelScope(shield=True):  # the server must end even when this walk is cancelled
            if client is not None:
                try:
                    await client.aclose()
                except MCPLabError:
                    pass
            _stop(process)


def _said(exc: BaseException) -> str:
    """What went wrong, in a sentence; a server that exited is quoted by its stderr, not by its command
    line (which holds a path on this machine)."""
    if isinstance(exc, ServerExited):
        tail = " ".join(line.strip() for line in (exc.stderr_tail or [])[-3:])
        return _("the server exited with status {code} before it answered; its stderr ends: {tail}",
                 code=exc.returncode, tail=tail or _("(nothing)"))
    return f"{type(exc).__name__}: {exc}"


def _stop(process: Any) -> None:
    if process is not None:
        process.stop()


async def _call(client: Any, name: str, arguments: dict, token: str | None = None, **options: Any) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return await client.request("tools/call", params, **options)


async def _progress(client: Any, run: Run, heard: list[dict], progress_for: Any) -> None:
    if "crunch" not in run.tools:
        return
    start = len(heard)
    run.progress_result = await _call(client, "crunch", {"steps": 4, "label": "progress"}, PROGRESS_TOKEN)
    run.progress = heard[start:]


async def _steps(client: Any) -> int | str:
    said = text_of(await _call(client, "steps_done", {"label": "cancelled"})).strip()
    return int(said) if said.isdigit() else said


async def _cancel(client: Any, run: Run, heard: list[dict], progress_for: Any) -> None:
    if "crunch" not in run.tools or "steps_done" not in run.tools:
        return
    if sum(p.get("progressToken") == PROGRESS_TOKEN for p in run.progress or []) < 2:
        # The cancel comes on the job's second progress notification: without them there is no event to wait for.
        run.unjudged["cancel"] = _("crunch sent fewer than two progress notifications (see the progress line), "
                                   "and this check cancels it on its second")
        return
    seen: dict[str, Any] = {"response": None}
    async with anyio.create_task_group() as group:
        async def long_job() -> None:
            seen["response"] = await _call(client, "crunch", {"steps": LONG_STEPS, "label": "cancelled"},
                                           CANCEL_TOKEN, timeout=60 * LONG_STEPS)
            group.cancel_scope.cancel()  # it answered before the cancel: nothing left to cancel

        group.start_soon(long_job)
        await progress_for(CANCEL_TOKEN, 2)
        group.cancel_scope.cancel()  # the client sends notifications/cancelled (or closes the HTTP stream)
    seen["sent"] = _request_id(client, CANCEL_TOKEN)
    seen["before"] = await _steps(client)
    await _call(client, "crunch", {"steps": WITNESS_STEPS, "label": "witness"})
    seen["after"] = await _steps(client)
    await _call(client, "crunch", {"steps": WITNESS_STEPS, "label": "witness"})
    seen["later"] = await _steps(client)
    seen["late_response"] = _answered(client, seen["sent"])
    run.cancel = seen


def _request_id(client: Any, token: str) -> Any:
    """The id of the request that carried ``token`` as its progressToken, from the trace."""
    for frame in client.trace:
        message = _dict(frame)
        if (frame.direction == "c2s" and message.get("method") == "tools/call"
                and ((message.get("params") or {}).get("_meta") or {}).get("progressToken") == token):
            return message.get("id")
    return None


def _answered(client: Any, request_id: Any) -> bool:
    """Did a response (result or error) for ``request_id`` reach the client, even after it gave up?"""
    return request_id is not None and any(
        frame.direction == "s2c" and _dict(frame).get("id") == request_id
        and ("result" in _dict(frame) or "error" in _dict(frame)) for frame in client.trace)


def _dict(frame: Any) -> dict:
    """A trace frame's message as a JSON object ({} for a line that was not one)."""
    if frame.message is None or isinstance(frame.message, JSONRPCError):
        return {}
    return jsonrpc.to_dict(frame.message)


async def _pages(client: Any, run: Run, heard: list[dict], progress_for: Any) -> None:
    if "resources" not in client.server_capabilities:  # no resources at all: no long list to page
        run.pages = []
        return
    pages, cursor = [], None
    for _ in range(50):  # a server whose cursors go round would never end
        result = await client.request("resources/list", {"cursor": cursor} if cursor is not None else {})
        pages.append([r.get("uri") for r in result.get("resources", []) if isinstance(r, dict)])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        run.cursors.append(cursor)
    run.pages = pages
    try:
        run.bad_cursor = await client.request("resources/list", {"cursor": "not-a-cursor-of-yours"})
    except RemoteError as exc:
        run.bad_cursor = exc.code


async def _ask(client: Any, run: Run, heard: list[dict], progress_for: Any) -> None:
    if "sign_off" not in run.tools:
        return
    if run.era == "legacy":
        run.ask_result = await _call(client, "sign_off", {})
        return
    first = await _call(client, "sign_off", {}, rounds=False)
    run.asked.append(first)
    if first.get("resultType") != "input_required":
        run.ask_result = first
        return
    requests = first.get("inputRequests") or {}
    answers = {key: {"action": "accept", "content": fill((r.get("params") or {}).get("requestedSchema") or {},
                                                          run.answer)}
               for key, r in requests.items() if isinstance(r, dict) and r.get("method") == "elicitation/create"}
    params: dict[str, Any] = {"name": "sign_off", "arguments": {}, "inputResponses": answers}
    if "requestState" in first:
        params["requestState"] = first["requestState"]
    run.ask_result = await client.request("tools/call", params, rounds=False)


def argv_for(target: str | Path | Sequence[str]) -> list[str]:
    """``my_server_two.py`` → ``["python", "my_server_two.py"]``; a list is a command as it is."""
    if isinstance(target, (str, Path)):
        return ["python", str(target)]
    return [str(a) for a in target]
