"""What a lab prints, made the same on every run and readable whole.

Theory of operation
-------------------
A lab's stored outputs are checked by nbval on every run, so nothing in them may depend on the run:
not the port the system picked for a server (:func:`masked`), not the clock inside a sealed
``requestState`` (:func:`request_state_text`), not a lab's temporary folder, this machine's paths or
the random values an OAuth exchange makes up (:func:`masker`, for labs whose outputs hold them). And the point of a frame is often deep inside it
(``params._meta``, a result's ``capabilities``), where a one-line trace cuts it off: :func:`pretty`
shows one message whole, indented, and :func:`first_exchange` finds the request and the response
that answers it in a trace, so a lab can print exactly that pair.

A lab that teaches a server's code prints that code from the file it runs (:func:`source`: a
function, or the statement that makes one name of a module), so what it shows cannot drift from it.

These are the labs' plumbing, not their lesson: a student reads the frames they print, not them.
Pure functions, no I/O (:func:`source` reads a module's file, as :mod:`inspect` does).
"""

from __future__ import annotations

import ast
import base64
import binascii
import inspect
import json
import os
import re
from typing import Any, Callable, Iterable

from mcplab.trace.recorder import Frame
from mcplab.wire import jsonrpc

__all__ = ["masked", "masker", "pretty", "source", "first_exchange", "request_state_text", "PORT", "EXPIRY"]

PORT = "127.0.0.1:PORT"                  # what a loopback address with its port reads as
EXPIRY = "<now + 15 minutes>"           # what a sealed expiry reads as (the servers seal 15 minutes ahead)
_LOOPBACK = re.compile(r"127\.0\.0\.1:\d+")
_ATTACKER = re.compile(r"attacker\.example:\d+")  # Lab 14's pretend attacker listens on a loopback port too
_LENGTH = re.compile(r"(?im)^(content-length): \d+$")  # an HTTP body holding a port or a random id varies in length
# OAuth's made-up values (RFC 6749 client_id, state; RFC 7636 code_challenge; the consent page's nonce), in
# JSON ("client_id": "…"), a query string (state=…) or a header: eight characters or more, so a word stays.
_RANDOM = re.compile(r'("?(?:client_id|consent|state|code_challenge|client_id_issued_at)"?[=:]\s?"?)[\w.~-]{8,}')
RANDOM = "‹random›"


def masked(text: str) -> str:
    """``text`` with every ``127.0.0.1:<port>`` as ``127.0.0.1:PORT``: the system picks a new port each run."""
    return _LOOPBACK.sub(PORT, text)


def masker(folder: str | os.PathLike[str] | None = None) -> Callable[[Any], str]:
    """A function that prints text or JSON as a lab shows it: ``folder`` (the lab's temporary folder) as
    ``<work>``, this machine's paths as ``<python>``, ``<mcplab>`` and ``~``, ports as in :func:`masked`,
    ``Content-Length`` values as ``…`` and OAuth's random values as ``‹random›``.

    >>> shown = masker(WORK)
    >>> shown({"command": sys.executable, "args": [f"{WORK}/notes"]})
    '{\n  "command": "<python>",\n  "args": [\n    "<work>/notes"\n  ]\n}'
    """
    from mcplab.ecosystem.hostconfig import sanitise  # this machine's paths, as `mcplab config` prints them

    def shown(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        if folder is not None:
            text = text.replace(str(folder), "<work>")
        text = _ATTACKER.sub("attacker.example:PORT", masked(sanitise(text)))
        return _RANDOM.sub(rf"\1{RANDOM}", _LENGTH.sub(r"\1: …", text))
    return shown


def pretty(message: Any) -> str:
    """One message whole, indented one space a level: a dict, or a decoded JSON-RPC message."""
    if not isinstance(message, (dict, list)):
        message = jsonrpc.to_dict(message)
    return json.dumps(message, indent=1, ensure_ascii=False)


def source(obj: Any, name: str | None = None) -> str:
    """The source of a function or class; with ``name``, the statement of module ``obj`` that assigns it.

    >>> print(source(bookshelf, "server"))
    server = Server("bookshelf", "0.1.0", title="A bookshelf", ...)

    Raises :class:`LookupError`, naming both, when the module assigns no such name at its top level.
    """
    if name is None:
        return inspect.getsource(obj).rstrip()
    text = inspect.getsource(obj)
    for statement in ast.parse(text).body:
        targets = (statement.targets if isinstance(statement, ast.Assign)
                   else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return ast.get_source_segment(text, statement) or ""
    raise LookupError(f"expected a top-level assignment to {name!r} in {obj.__name__}, found none")


def first_exchange(trace: Iterable[Frame], method: str) -> tuple[Any, Any]:
    """The first request the client sent with ``method``, and the response that carries its id.

    >>> request, reply = first_exchange(client.trace, "tools/call")

    Raises :class:`LookupError`, naming the method, when the trace holds no such request or no answer.
    """
    frames = list(trace)
    request = next((f.message for f in frames if f.direction == "c2s"
                    and getattr(f.message, "method", None) == method and hasattr(f.message, "id")), None)
    if request is None:
        raise LookupError(f"expected a {method} request in the trace, found none")
    reply = next((f.message for f in frames if f.direction == "s2c" and not hasattr(f.message, "method")
                  and getattr(f.message, "id", None) == request.id), None)
    if reply is None:
        raise LookupError(f"expected a response with id {request.id!r} to {method}, found none")
    return request, reply


def request_state_text(state: str) -> str:
    """A ``requestState`` sealed by mcplab's servers, opened for reading: its parts' sizes and its payload.

    The format is this course's own (``base64url(JSON) "." base64url(HMAC-SHA256)``); a client MUST
    treat a ``requestState`` as opaque (2026-07-28, MRTR), so only a lab opens one, to learn from it.
    The expiry, a timestamp, reads as :data:`EXPIRY`; the MAC differs each run, so only its length shows.
    """
    body, dot, mac = state.partition(".")
    if not dot:
        raise ValueError(f"expected a requestState of the form <payload>.<mac>, got {state[:40]!r}")
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"expected base64url JSON before the '.', got {body[:40]!r}") from exc
    if isinstance(payload, dict) and "exp" in payload:
        payload["exp"] = EXPIRY
    return (f"requestState: {len(state)} characters = {len(body)} (base64url JSON) + '.' + {len(mac)} "
            f"(base64url HMAC)\npayload: {json.dumps(payload, ensure_ascii=False)}")
