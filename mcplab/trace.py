"""The wire trace: every frame that crossed a connection, in order, exactly as it was sent.

Theory of operation
-------------------
Every transport owns a :class:`Trace` and calls :meth:`Trace.record` once per frame, in
each direction, *before* anything else looks at it: the raw text is what crossed the
wire, byte for byte (decoded as UTF-8, with invalid bytes shown as U+FFFD), and the parsed
message, or the decode error, sits beside it. Lines the server writes on stderr are frames
too, on their own channel, so a crash and its traceback appear where they happened.

A frame is ``seq`` (1, 2, 3 … in arrival order), ``t`` (seconds since the trace began),
``direction`` (``"c2s"`` client→server or ``"s2c"``), ``channel`` (``"stdio"``, ``"http"``
or ``"stderr"``; ``"note"`` is no wire at all but the client's own remark, e.g. why a dual-era
client chose its era), ``raw``, ``message`` and, for HTTP, ``http`` = ``{"method", "status",
"headers"}``; an exchange of the OAuth flow (mcplab/auth/client.py) adds ``"url"`` and ``"oauth"``
(which step it is), with tokens, codes and secrets masked. One frame per line in JSONL is the
export format (see DESIGN.md).

Rendered views (plain text, HTML sequence diagram) never show ``t``: stored notebook
outputs must be the same on every run. They live in :mod:`mcplab.trace_views`; the
methods here only hand the frames over.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Union

from mcplab import jsonrpc, trace_views
from mcplab.errors import InvalidRequest, JSONRPCError, ParseError

Direction = Literal["c2s", "s2c"]
Channel = Literal["stdio", "http", "stderr", "note"]
Parsed = Union[jsonrpc.Message, JSONRPCError, None]
_REFUSALS = {ParseError.code: ParseError, InvalidRequest.code: InvalidRequest}


@dataclass(frozen=True)
class Frame:
    seq: int
    t: float
    direction: Direction
    channel: Channel
    raw: str
    message: Parsed = None
    http: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSONL object: ``message`` is the decoded JSON object, or an error description."""
        if isinstance(self.message, JSONRPCError):
            message: Any = {"error": {"code": self.message.code, "message": self.message.message}}
        elif self.message is None:
            message = None
        else:
            message = jsonrpc.to_dict(self.message)
        return {"seq": self.seq, "t": round(self.t, 6), "direction": self.direction,
                "channel": self.channel, "raw": self.raw, "message": message, "http": self.http}


class Trace:
    """An append-only list of frames; transports write it, notebooks and tests read it."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self._start = time.monotonic()

    def record(self, direction: Direction, channel: Channel, raw: str | bytes,
               message: Parsed = None, http: dict[str, Any] | None = None) -> Frame:
        if isinstance(raw, (bytes, bytearray)):
            raw = bytes(raw).decode("utf-8", errors="replace")
        frame = Frame(len(self.frames) + 1, time.monotonic() - self._start, direction, channel,
                      raw, message, http)
        self.frames.append(frame)
        return frame

    def note(self, text: str) -> Frame:
        """Record a remark of this side's own (nothing crossed the wire): why it chose an era, say."""
        return self.record("c2s", "note", text)

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self):
        return iter(self.frames)

    # --- views (no times in any of them: notebooks store these) -------------------------------
    def text(self, width: int = 100) -> str:
        """One line per frame: ``  3 → stdio  {"jsonrpc":"2.0","id":2,"method":"tools/list"}``."""
        return trace_views.render_text(self.frames, width)

    __str__ = text

    def __repr__(self) -> str:
        return f"<Trace: {trace_views.summary(self.frames)}>"

    def _repr_html_(self) -> str:
        """A sequence diagram: client and server lifelines, requests paired with responses."""
        return trace_views.render_html(self.frames)

    def messages(self) -> list[jsonrpc.Message]:
        """The decoded messages only (no stderr lines, no refused frames)."""
        return [f.message for f in self.frames
                if f.message is not None and not isinstance(f.message, JSONRPCError)]

    # --- JSONL -------------------------------------------------------------------------------
    def to_jsonl(self) -> str:
        return "".join(json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in self.frames)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    @classmethod
    def from_jsonl(cls, lines: str | Iterable[str]) -> Trace:
        """Rebuild a trace; messages are decoded again from ``raw``, the source of truth.

        A frame recorded without a message (stderr, an empty HTTP body) comes back without
        one, and a refused frame comes back refused with the error it was refused with.
        """
        trace = cls()
        for line in lines.splitlines() if isinstance(lines, str) else lines:
            if not line.strip():
                continue
            obj = json.loads(line)
            stored, message = obj.get("message"), None
            if obj["channel"] in ("stderr", "note") or stored is None:
                pass
            elif "jsonrpc" not in stored:  # written by Frame.to_json for a refused frame
                refusal = _REFUSALS.get(stored["error"]["code"], JSONRPCError)
                message = refusal(stored["error"]["message"], raw=obj["raw"])
            else:
                try:
                    message = jsonrpc.decode(obj["raw"], mcp=False)  # type: ignore[assignment]
                except JSONRPCError as exc:
                    message = exc
            trace.frames.append(Frame(obj["seq"], obj["t"], obj["direction"], obj["channel"],
                                      obj["raw"], message, obj.get("http")))
        return trace

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        return cls.from_jsonl(Path(path).read_text(encoding="utf-8"))
