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
outputs must be the same on every run. They live in :mod:`mcplab.trace.views`; the
methods here only hand the frames over. A :class:`Frame` itself is ``frame.py``, which both
this module and the views read.

**Bounded.** A server can send notifications as fast as it likes, and a notebook kernel must
survive it, so a trace keeps at most :data:`MAX_FRAMES` frames and :data:`MAX_CHARS` characters of
raw text. When either bound is passed, the oldest frames go, an eighth of the bound at a time (so
that recording stays cheap), and :attr:`Trace.dropped` counts them; every view and the JSONL export
then start with a line saying how many earlier frames were dropped, and sequence numbers go on
from where they were. A lab that wants everything says so: ``Trace(max_frames=None,
max_chars=None)``, given to a transport (``stdio(..., trace=...)``, ``http(..., trace=...)``).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Iterable

from mcplab.wire import jsonrpc
from mcplab.wire.errors import InvalidRequest, JSONRPCError, ParseError
from mcplab.trace.frame import Channel, Direction, Frame, Parsed

# views.py is imported by the methods that draw a trace: every client records one, few ever look at it.

_REFUSALS = {ParseError.code: ParseError, InvalidRequest.code: InvalidRequest}

MAX_FRAMES = 10_000      # frames a trace keeps by default: hours of a lab, seconds of a flood
MAX_CHARS = 16 << 20     # characters of raw text a trace keeps by default (16 Mi)


class Trace:
    """The latest frames, in order; transports write it, notebooks and tests read it.

    At most ``max_frames`` frames and ``max_chars`` characters of raw text are kept (None: no
    bound); :attr:`dropped` counts the older frames let go (see the module docstring).
    """

    def __init__(self, *, max_frames: int | None = MAX_FRAMES, max_chars: int | None = MAX_CHARS) -> None:
        self.frames: list[Frame] = []
        self.dropped = 0
        self.max_frames, self.max_chars = max_frames, max_chars
        self._chars = 0
        self._start = time.monotonic()

    def record(self, direction: Direction, channel: Channel, raw: str | bytes,
               message: Parsed = None, http: dict[str, Any] | None = None) -> Frame:
        if not isinstance(raw, str):  # bytes or bytearray
            raw = bytes(raw).decode("utf-8", errors="replace")
        frames = self.frames
        frame = Frame(self.dropped + len(frames) + 1, time.monotonic() - self._start, direction, channel,
                      raw, message, http)
        frames.append(frame)
        self._chars += len(raw)
        if ((self.max_frames is not None and len(frames) > self.max_frames)
                or (self.max_chars is not None and self._chars > self.max_chars)):
            self._trim()
        return frame

    def _trim(self) -> None:
        """Drop the oldest frames until both bounds hold with an eighth to spare (never the newest frame)."""
        frames_goal = len(self.frames) if self.max_frames is None else self.max_frames - self.max_frames // 8
        chars_goal = self._chars if self.max_chars is None else self.max_chars - self.max_chars // 8
        cut, chars = 0, self._chars
        while cut < len(self.frames) - 1 and (len(self.frames) - cut > frames_goal or chars > chars_goal):
            chars -= len(self.frames[cut].raw)
            cut += 1
        del self.frames[:cut]
        self.dropped += cut
        self._chars = chars

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
        from mcplab.trace import views as trace_views

        return trace_views.render_text(self.frames, width, dropped=self.dropped)

    __str__ = text

    def __repr__(self) -> str:
        from mcplab.trace import views as trace_views

        return f"<Trace: {trace_views.summary(self.frames, dropped=self.dropped)}>"

    def _repr_html_(self) -> str:
        """A sequence diagram: client and server lifelines, requests paired with responses."""
        from mcplab.trace import views as trace_views

        return trace_views.render_html(self.frames, dropped=self.dropped)

    def messages(self) -> list[jsonrpc.Message]:
        """The decoded messages only (no stderr lines, no refused frames)."""
        return [f.message for f in self.frames
                if f.message is not None and not isinstance(f.message, JSONRPCError)]

    # --- JSONL -------------------------------------------------------------------------------
    def to_jsonl(self) -> str:
        """One frame per line; a trace that dropped frames starts with a note line saying how many."""
        from mcplab.trace import views as trace_views

        marker = []
        if self.dropped:
            marker = [json.dumps({"seq": self.dropped, "t": 0.0, "direction": "c2s", "channel": "note",
                                  "raw": trace_views.dropped_line(self.dropped), "message": None, "http": None,
                                  "dropped": self.dropped}, ensure_ascii=False) + "\n"]
        return "".join(marker + [json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in self.frames])

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as file:  # open(), not pathlib: a client starts without it
            file.write(self.to_jsonl())

    @classmethod
    def from_jsonl(cls, lines: str | Iterable[str]) -> Trace:
        """Rebuild a trace; messages are decoded again from ``raw``, the source of truth.

        A frame recorded without a message (stderr, an empty HTTP body) comes back without
        one, and a refused frame comes back refused with the error it was refused with.
        """
        trace = cls(max_frames=None, max_chars=None)
        for line in lines.splitlines() if isinstance(lines, str) else lines:
            if not line.strip():
                continue
            obj = json.loads(line)
            if "dropped" in obj:  # the marker line of a trace that had let frames go
                trace.dropped = obj["dropped"]
                continue
            stored, message = obj.get("message"), None
            if obj["channel"] in ("stderr", "note") or stored is None:
                pass
            elif "jsonrpc" not in stored:  # written by Frame.to_json for a refused frame
                refusal = _REFUSALS.get(stored["error"]["code"], JSONRPCError)
                message = refusal(stored["error"]["message"], raw=obj["raw"])
            else:
                message = jsonrpc.decode_as_sent(obj["raw"])  # type: ignore[assignment]
            trace.frames.append(Frame(obj["seq"], obj["t"], obj["direction"], obj["channel"],
                                      obj["raw"], message, obj.get("http")))
        return trace

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trace:
        with open(path, encoding="utf-8") as file:
            return cls.from_jsonl(file.read())
