"""One frame of a wire trace: what crossed a connection once, raw and parsed (see ``recorder.py``).

Its own module so that the recorder, which records frames, and the views, which draw them, both read
it without reading each other: the recorder hands its frames to the views only when asked to draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError

__all__ = ["Channel", "Direction", "Frame", "Parsed"]

Direction = Literal["c2s", "s2c"]
Channel = Literal["stdio", "http", "stderr", "note"]
Parsed = Union[jsonrpc.Message, JSONRPCError, None]


@dataclass(frozen=True, slots=True)  # slots: no __dict__ per frame, one object fewer for the GC to walk
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
