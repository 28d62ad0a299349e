"""The wire trace: every frame that crossed a connection (``recorder``), and its views.

``frame`` (:class:`Frame`, which both of the next two read), ``recorder`` (:class:`Trace`, JSONL),
``views`` (one line per frame as text, a sequence diagram as HTML), ``http_text`` (HTTP frames as the
HTTP/1.1 text that crossed the wire).
The views sit beside the recorder because a trace shows itself (``repr``, ``_repr_html_``) in a
terminal as much as in a notebook; the notebook's viewer (``mcplab.notebook``) adds schema badges
and diffs on top.

Layer: just above ``wire``, the only part of mcplab it imports (with ``i18n`` for its labels); ``transports`` record into it, so
it sits below them, and everything from the client up reads it.
"""

from mcplab.trace.frame import Channel, Direction, Frame
from mcplab.trace.recorder import Trace

__all__ = ["Trace", "Frame", "Direction", "Channel"]
