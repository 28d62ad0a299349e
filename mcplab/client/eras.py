"""Which era does this server speak? The decisions of a dual-era client, as pure functions. Sans-IO.

Theory of operation
-------------------
A client that speaks both eras must find out which one the server speaks (2026-07-28,
"basic/versioning", "Backward Compatibility"; the stdio and Streamable HTTP pages say how).
It opens the modern way, with ``server/discover``, and reads the answer:

    answer to server/discover                          the server is   next step
    -------------------------------------------------  --------------  ------------------------------
    a DiscoverResult                                   modern          use a version it lists
    -32022 UnsupportedProtocolVersion                  modern          ask again with one of data.supported
    -32021 / -32020 (HTTP: also 404 + -32601)          modern          fix the request, or give up
    any other error, or a result that is no
    DiscoverResult, or no answer in time               legacy          initialize
    HTTP 400/404/405 whose body is no modern error     legacy          initialize

The spec insists that the fallback is never keyed to one error code: legacy servers answer an
unknown request before ``initialize`` with -32601, -32602, something else, or nothing at all.
And the other way round: ``initialize`` refused with -32022 naming a modern version means the
server is modern after all (:func:`judge_initialize_refusal`).

Each decision is a :class:`Verdict`: the era, the next step (:data:`DISCOVER`, :data:`INITIALIZE`,
:data:`USE` the answer, or :data:`FAIL`), the version to use, and a sentence saying why. The
client keeps every verdict (``client.era_decisions``) and their sentences (``client.era_reason``).

The era is a property of the server, so a client SHOULD remember it for the server process
(stdio) or origin (HTTP) and ask again when the remembered answer stops working.
:class:`EraCache` is that memory, keyed by :func:`server_key`: the command line for stdio,
the URL for HTTP.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Hashable

from mcplab.wire.errors import (
    HEADER_MISMATCH, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
    HTTPStatusError, error_name,
)
from mcplab.i18n import _
from mcplab.wire.jsonrpc import ErrorResponse, Response
from mcplab.wire.versions import ALL_VERSIONS, LATEST_LEGACY, LATEST_MODERN, LEGACY_VERSIONS, MODERN_VERSIONS, era_of

__all__ = ["Verdict", "DISCOVER", "INITIALIZE", "USE", "FAIL", "MODERN_ERRORS", "first_step",
           "judge_discover", "judge_initialize_refusal", "error_in", "EraCache", "server_key"]

DISCOVER, INITIALIZE, USE, FAIL = "discover", "initialize", "use", "fail"
#: Error codes only a modern server sends (2026-07-28, "basic/index", error codes).
MODERN_ERRORS = {UNSUPPORTED_PROTOCOL_VERSION: "UnsupportedProtocolVersion",
                 MISSING_REQUIRED_CLIENT_CAPABILITY: "MissingRequiredClientCapability",
                 HEADER_MISMATCH: "HeaderMismatch"}
FALLBACK_STATUSES = (400, 404, 405)  # an HTTP refusal that may come from a legacy server


@dataclass(frozen=True)
class Verdict:
    """One decision: the era (None while unknown), the next step, the version for it, and why."""
    era: str | None
    step: str
    version: str | None
    reason: str


def _pick(candidates: Any, speaks: tuple[str, ...], era: str) -> str | None:
    """The latest version of ``era`` that both sides speak (``candidates`` comes off the wire)."""
    if not isinstance(candidates, list):
        return None
    of_era = MODERN_VERSIONS if era == "modern" else LEGACY_VERSIONS
    common = [v for v in speaks if v in candidates and v in of_era]
    return common[-1] if common else None


def first_step(era: str, version: str | None, cached: Verdict | None = None) -> Verdict:
    """How to open, before anything is on the wire: from the ``era=`` and ``version=`` asked for."""
    if era not in ("auto", "legacy", "modern"):
        raise ValueError(_("era must be 'auto', 'legacy' or 'modern', got {era}", era=repr(era)))
    if version is not None and era_of(version) != era and era != "auto":
        raise ValueError(_("version {version} belongs to the {belongs} era, but era={era} was asked for",
                           version=version, belongs=era_of(version), era=repr(era)))
    if era == "legacy":
        return Verdict("legacy", INITIALIZE, version or LATEST_LEGACY, _("era='legacy': open with initialize"))
    if era == "modern":
        return Verdict("modern", DISCOVER, version or LATEST_MODERN, _("era='modern': open with server/discover"))
    if version is not None and era_of(version) == "legacy":
        return Verdict("legacy", INITIALIZE, version, _("version {version} is a legacy revision, so no probe: "
                                                        "open with initialize", version=version))
    if cached is not None and version is None:
        step = DISCOVER if cached.era == "modern" else INITIALIZE
        return Verdict(cached.era, step, cached.version, _("remembered from an earlier connection to this "
                                                           "server: it speaks the {era} era", era=cached.era))
    return Verdict(None, DISCOVER, version or LATEST_MODERN, _("era='auto': probe with server/discover first"))


def error_in(answer: Any) -> ErrorResponse | None:
    """The JSON-RPC error an answer carries: an error response, or the body of an HTTP refusal.

    A refusal body is read leniently (no ``id``, a null one, no ``"jsonrpc"``): only its error matters.
    """
    if isinstance(answer, ErrorResponse):
        return answer
    if not isinstance(answer, HTTPStatusError):
        return None
    try:
        body = json.loads(answer.body)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return None
    return ErrorResponse(body.get("id"), error["code"], str(error.get("message", "")), error.get("data"))


def _describe(answer: Any, status: int | None) -> str:
    if answer is None:
        return _("no answer in time")
    error = error_in(answer)
    http = _("HTTP {status} with ", status=status) if status is not None else ""
    if error is not None:
        return http + _("error {code} ({name})", code=error.code, name=error_name(error.code))
    if isinstance(answer, HTTPStatusError):
        return _("HTTP {status} with ", status=answer.status) + (_("no JSON-RPC error") if answer.body.strip()
                                                                  else _("an empty body"))
    return _("a result that is not a DiscoverResult")


def judge_discover(answer: Any, asked: str, *, status: int | None = None,
                   speaks: tuple[str, ...] = ALL_VERSIONS, attempt: int = 1) -> Verdict:
    """What an answer to ``server/discover`` (sent with version ``asked``) says about the server.

    ``answer`` is the Response or ErrorResponse, an :class:`~mcplab.wire.errors.HTTPStatusError` (a
    refusal with no JSON-RPC error tied to the request), or None (no answer in time). ``status``
    is the HTTP status the answer came with, if it came over HTTP.
    """
    said = _("server/discover ({asked}) got {answer}", asked=asked,
             answer=_describe(answer, status or getattr(answer, 'status', None)))
    legacy = LATEST_LEGACY if LATEST_LEGACY in speaks else _pick(list(LEGACY_VERSIONS), speaks, "legacy")
    fallback = Verdict("legacy", INITIALIZE, legacy, _("{said}: not a modern answer, so the server is legacy; "
                                                       "fall back to initialize", said=said))
    if isinstance(answer, Response):
        result = answer.result
        supported = result.get("supportedVersions") if isinstance(result, dict) else None
        if not isinstance(supported, list) or not isinstance(result.get("capabilities"), dict):
            return fallback
        said = _("server/discover ({asked}) got a DiscoverResult listing {versions}", asked=asked,
                 versions=", ".join(map(str, supported)))
        chosen = asked if asked in supported and asked in speaks else _pick(supported, speaks, "modern")
        if chosen is not None:
            return Verdict("modern", USE, chosen, _("{said}: the server is modern; use {version}", said=said,
                                                    version=chosen))
        return _no_modern(supported, speaks, said)
    error = error_in(answer)
    if error is None:
        if isinstance(answer, HTTPStatusError) and answer.status not in FALLBACK_STATUSES:
            return Verdict(None, FAIL, None, _("{said}: an HTTP failure, not an answer about eras", said=said))
        return fallback
    if error.code == UNSUPPORTED_PROTOCOL_VERSION:
        supported = error.data.get("supported") if isinstance(error.data, dict) else None
        said += _(", supported: {versions}", versions=", ".join(map(str, supported or [])) or _("not said"))
        chosen = _pick(supported, speaks, "modern")
        if chosen is not None and attempt < 2:
            return Verdict("modern", DISCOVER, chosen, _("{said}: the server is modern; ask again with {version}",
                                                         said=said, version=chosen))
        if chosen is not None:
            return Verdict("modern", FAIL, None, _("{said}: the server refused {asked} twice; giving up", said=said,
                                                   asked=asked))
        return _no_modern(supported, speaks, said)
    if error.code in MODERN_ERRORS or (error.code == METHOD_NOT_FOUND and status == 404):
        return Verdict("modern", FAIL, None, _("{said}: a modern error, so the server is modern, but it refused "
                                               "the probe itself: {message}", said=said, message=error.message))
    return fallback


def _no_modern(supported: Any, speaks: tuple[str, ...], said: str) -> Verdict:
    legacy = _pick(supported, speaks, "legacy")
    if legacy is not None:  # a dual-era server that serves only legacy versions here: use one with initialize
        return Verdict("legacy", INITIALIZE, legacy, _("{said}: no modern version in common, but {version} is; "
                                                       "open with initialize", said=said, version=legacy))
    return Verdict(None, FAIL, None, _("{said}: no version in common (this client speaks {versions})", said=said,
                                       versions=", ".join(speaks)))


def judge_initialize_refusal(error: ErrorResponse, speaks: tuple[str, ...] = ALL_VERSIONS) -> Verdict | None:
    """``initialize`` was refused: a -32022 naming a modern version means the server is modern after all."""
    supported = error.data.get("supported") if isinstance(error.data, dict) else None
    chosen = _pick(supported, speaks, "modern") if error.code == UNSUPPORTED_PROTOCOL_VERSION else None
    if chosen is None:
        return None
    return Verdict("modern", DISCOVER, chosen, _("initialize got error {code} ({name}) listing {versions}: the "
                                                 "server is modern; open with server/discover ({version})",
                                                 code=error.code, name=error_name(error.code),
                                                 versions=", ".join(map(str, supported)), version=chosen))


def server_key(transport: Any) -> Hashable | None:
    """What identifies "the same server": its command line (stdio) or its URL (HTTP); None: don't cache."""
    argv, url = getattr(transport, "argv", None), getattr(transport, "url", None)
    if argv is not None:
        return ("stdio", tuple(argv), getattr(transport, "cwd", None))
    if isinstance(url, str):
        return ("http", url)
    return None


class EraCache:
    """The era each server spoke last time, so a second connection need not probe again.

    The spec: cache it "for the lifetime of the server process (stdio) or origin (HTTP)", MAY keep
    it across restarts of the same configuration, and probe again when it stops working. This
    one lives as long as the Python process; a notebook kernel restart forgets everything.
    """

    def __init__(self) -> None:
        self._eras: dict[Hashable, Verdict] = {}

    def get(self, key: Hashable | None) -> Verdict | None:
        return self._eras.get(key) if key is not None else None

    def remember(self, key: Hashable | None, era: str, version: str) -> None:
        if key is not None:
            self._eras[key] = Verdict(era, USE, version, _("the server spoke {era} ({version})", era=era,
                                                            version=version))

    def forget(self, key: Hashable | None) -> None:
        self._eras.pop(key, None)

    def __len__(self) -> int:
        return len(self._eras)
