"""Views of a wire trace: one line per frame as text, a sequence diagram as HTML. Pure functions.

Theory of operation
-------------------
:func:`describe` reads the frames once, in order, and says what each one is (request,
notification, response, error response, refused frame, stderr line), gives it a short label
(``tools/call get_weather (id 3)``) and pairs every response with the request it answers:
the request that went the other way with the same id. Requests can travel either way
(a server may ask the client for sampling), so a pair is keyed by direction *and* id.

:func:`render_text` prints the raw frames, one line each; :func:`render_html` draws the
sequence diagram a notebook shows: the client's lifeline on the left, the server's on the
right, stderr in a third lane, arrows between the lifelines, a request and its response in
the same colour, responses dashed, notifications dotted, error responses and refused frames
on a tinted background. Clicking a frame opens its raw JSON, pretty-printed, with the HTTP
method, status and headers when the frame came over HTTP. A caller may hang a :class:`Badge`
on any frame (``mcplab.notebook`` uses them for schema checks): a small tag beside the label,
with its note at the top of the opened frame. What a badge adds sits between ``<!--badge-->`` and
``<!--/badge-->``, so that a comparison (nbval's sanitizer) can leave it out.

Both views are deterministic (no times, no generated ids, no JavaScript, no network), so a
notebook can store them and nbval can compare them. Every piece of text goes through
:func:`html.escape`: the wire is untrusted input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError, error_name
from mcplab.i18n import N_, _, ngettext

# html and urllib.parse are imported where they are used: every client loads this module, few draw a trace.

if TYPE_CHECKING:
    from mcplab.trace.frame import Frame

ARROWS = {"c2s": "→", "s2c": "←"}
OTHER_SIDE = {"c2s": "s2c", "s2c": "c2s"}

# Pair colours avoid red and orange, which mean "error" and "refused" here.
PAIR_COLOURS = ("#1565c0", "#2e7d32", "#6a1b9a", "#00838f", "#5d4037", "#827717")
NOTIFICATION_COLOUR = "#757575"
ERROR_COLOUR, ERROR_TINT = "#c62828", "#fdecea"
REFUSED_COLOUR, REFUSED_TINT = "#e65100", "#fff3e0"
BADGE_START, BADGE_END = "<!--badge-->", "<!--/badge-->"
MAX_PRETTY = 20_000  # characters of one frame's raw JSON shown in the HTML before it is cut

# kind → how the one-line summary counts it (singular, plural; shown through ngettext).
KINDS = {"request": (N_("{n} request"), N_("{n} requests")),
         "notification": (N_("{n} notification"), N_("{n} notifications")),
         "response": (N_("{n} response"), N_("{n} responses")),
         "error": (N_("{n} error response"), N_("{n} error responses")),
         "batch": (N_("{n} batch"), N_("{n} batches")),
         "refused": (N_("{n} refused frame"), N_("{n} refused frames")),
         "stderr": (N_("{n} stderr line"), N_("{n} stderr lines")), "note": (N_("{n} note"), N_("{n} notes")),
         "oauth": (N_("{n} authorization exchange"), N_("{n} authorization exchanges")),
         "raw": (N_("{n} other frame"), N_("{n} other frames"))}


@dataclass(frozen=True)
class View:
    """How one frame reads: its kind, a short label, and its request/response pairing."""
    frame: Frame
    kind: str
    label: str
    pair: int | None = None       # index of the request/response pair (picks the colour)
    answers: int | None = None    # seq of the request this response answers


@dataclass(frozen=True)
class Badge:
    """A tag shown beside one frame's label (``"✓ 2025-11-25"``), and a note shown when it opens."""
    text: str
    colour: str
    note: str = ""


def describe(frames: Iterable[Frame]) -> list[View]:
    """One :class:`View` per frame, with every response paired to its request by id."""
    waiting: dict[tuple[str, Any], tuple[int, int, str]] = {}  # (direction, id) → (seq, pair, method)
    views: list[View] = []
    pairs = 0
    for frame in frames:
        message = _parsed(frame)
        if frame.channel in ("stderr", "note"):
            views.append(View(frame, frame.channel, frame.raw.rstrip("\r\n")))
        elif frame.http and frame.http.get("oauth"):  # a step of the authorization flow (mcplab/auth/client.py)
            views.append(View(frame, "oauth", str(frame.http["oauth"])))
        elif isinstance(message, JSONRPCError):
            views.append(View(frame, "refused", _("refused: {code} {name}", code=message.code,
                                                  name=error_name(message.code))))
        elif isinstance(message, jsonrpc.Request):
            waiting[(frame.direction, message.id)] = (frame.seq, pairs, message.method)
            views.append(View(frame, "request", _("{method}{subject} (id {id})", method=message.method,
                                                  subject=_subject(message.params),
                                                  id=json.dumps(message.id, ensure_ascii=False)), pairs))
            pairs += 1
        elif isinstance(message, jsonrpc.Notification):
            views.append(View(frame, "notification", _("{method} (no id)", method=message.method)))
        elif isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            seq, pair, method = waiting.pop((OTHER_SIDE[frame.direction], message.id), (None, None, None))
            rid = json.dumps(message.id, ensure_ascii=False)
            if isinstance(message, jsonrpc.Response):
                label = (_("result of {method} (id {id})", method=method, id=rid) if method
                         else _("result (id {id})", id=rid))
                views.append(View(frame, "response", label, pair, seq))
            else:
                label = (_("error for {method}: {code} {message} (id {id})", method=method, code=message.code,
                           message=message.message, id=rid) if method
                         else _("error: {code} {message} (id {id})", code=message.code, message=message.message,
                                id=rid))
                views.append(View(frame, "error", label, pair, seq))
        elif isinstance(message, list):
            views.append(View(frame, "batch", _("batch of {count}", count=len(message))))
        else:
            views.append(View(frame, "raw", _("(empty body)") if not frame.raw.strip() else _("(not JSON-RPC)")))
    return views


def _parsed(frame: Frame) -> Any:
    """The frame's message; one recorded without it is decoded here, for display only."""
    if frame.message is not None or frame.channel in ("stderr", "note") or not frame.raw.strip():
        return frame.message
    try:
        return jsonrpc.decode(frame.raw, mcp=False, allow_batch=True)
    except JSONRPCError:
        return None  # the recorder did not call it refused, so the view does not either


def _subject(params: Any) -> str:
    # tools/call and prompts/get name what they call, resources/read a URI: worth a glance.
    if isinstance(params, dict):
        for key in ("name", "uri"):
            if isinstance(params.get(key), str):
                return f" {params[key]}"
    return ""


def summary(frames: list[Frame], dropped: int = 0) -> str:
    """``"9 frames: 4 requests, 3 responses, 1 notification, 1 stderr line"``."""
    counts = {kind: 0 for kind in KINDS}
    for view in describe(frames):
        counts[view.kind] += 1
    parts = [ngettext(*KINDS[kind], n) for kind, n in counts.items() if n]
    head = ngettext("{n} frame", "{n} frames", len(frames))
    if dropped:
        head += ngettext(" (and {n} earlier, dropped)", " (and {n} earlier, dropped)", dropped)
    return _("{frames}: {kinds}", frames=head, kinds=_(", ").join(parts)) if parts else head


def dropped_line(dropped: int) -> str:
    """The marker every view puts first when a trace let its oldest frames go."""
    return ngettext("… {n} earlier frame dropped: a trace keeps the latest ones only "
                    "(Trace(max_frames=None, max_chars=None) keeps all)",
                    "… {n} earlier frames dropped: a trace keeps the latest ones only "
                    "(Trace(max_frames=None, max_chars=None) keeps all)", dropped)


# --- text ----------------------------------------------------------------------------------------

def _channel(frame: Frame) -> str:
    if not frame.http:
        return frame.channel
    words = [frame.channel] + [str(frame.http[k]) for k in ("method", "status") if frame.http.get(k)]
    if frame.http.get("url") and frame.direction == "c2s":  # the flow's requests go to many URLs, MCP's to one
        from urllib.parse import urlsplit

        words.append(urlsplit(frame.http["url"]).path)
    return " ".join(words)


def render_text(frames: list[Frame], width: int = 100, *, dropped: int = 0) -> str:
    """One line per frame: seq, arrow, channel, raw text cut to ``width`` characters."""
    if not frames:
        return dropped_line(dropped) if dropped else _("(empty trace)")
    channels = [_channel(f) for f in frames]
    pad = max(map(len, channels))
    lines = []
    for frame, channel in zip(frames, channels):
        raw = " ⏎ ".join(part for part in frame.raw.splitlines() if part)  # an SSE body spans lines
        if len(raw) > width:
            raw = raw[: width - 1] + "…"
        arrow = "·" if frame.channel == "note" else ARROWS[frame.direction]  # a note crossed no wire
        lines.append(f"{frame.seq:>3} {arrow} {channel.ljust(pad)}  {raw}")
    return "\n".join(([dropped_line(dropped)] if dropped else []) + lines)


# --- HTML ----------------------------------------------------------------------------------------

# Short inline styles only: a stored notebook keeps one copy per frame, and sanitizers keep them. They are
# also the only styles that hold everywhere the view is shown: JupyterLab's sanitizer drops a <style> element
# from an untrusted output (a stored notebook opened before it runs), and an inline style outranks the page's
# own rules for HTML outputs (table-layout:fixed with equal columns, right-aligned cells, striped rows, and
# word-break:break-all in every <pre>). So each element the page styles states what it needs, and nothing
# leaks out: the view's one class, mcplab-trace-view, is there for tests and readers, not for a stylesheet.
# The columns are fixed: a narrow frame number, the two lanes at LANES_WIDTH, stderr in what is left.
LANES_WIDTH = "68%"
_TABLE = "border-collapse:collapse;table-layout:fixed;width:100%;margin:0;font:12px/1.4 sans-serif"
_ROW = "background:none"
_HEAD = "color:#555;border-bottom:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:bottom"
_SEQ = "color:#888;vertical-align:top;text-align:right;padding:2px 6px"
_LANES = "border:solid #bbb;border-width:0 3px;padding:2px 10px;vertical-align:top;text-align:left"
_STDERR = ("font-family:monospace;color:#555;white-space:pre-wrap;overflow-wrap:anywhere;vertical-align:top;"
           "text-align:left;padding:2px 6px")
_NOTE = "color:#555;font-style:italic;background:#fafafa;border:1px dashed #ccc;padding:2px 10px;text-align:left"
# An opened frame keeps its lines as the JSON has them, and a line longer than the lane scrolls: a token is
# never broken ("7-da / y" under break-all). Wrapping at spaces would still break after a hyphen
# ("2026- / 07-28") and between Chinese characters, and no CSS property stops that short of not wrapping.
_PRE = ("margin:2px 0;padding:4px;background:#f6f8fa;font-size:11px;white-space:pre;word-break:normal;"
        "overflow-wrap:normal;overflow-x:auto;text-align:left")


def _text(value: str) -> str:
    # Wire text only ever lands in element content, never in an attribute: <, > and & are what matter.
    import html

    return html.escape(value, quote=False)


def _look(view: View) -> tuple[str, str, str, str]:
    """(line colour, line style, label colour, background) for one frame's arrow."""
    if view.kind == "refused":
        return REFUSED_COLOUR, "solid", REFUSED_COLOUR, REFUSED_TINT
    if view.kind == "notification":
        return NOTIFICATION_COLOUR, "dotted", NOTIFICATION_COLOUR, ""
    colour = PAIR_COLOURS[view.pair % len(PAIR_COLOURS)] if view.pair is not None else "#444"
    if view.kind == "error":
        return colour, "dashed", ERROR_COLOUR, ERROR_TINT
    return colour, "dashed" if view.kind == "response" else "solid", colour, ""


def pretty(frame: Frame) -> str:
    """The frame's JSON indented, cut at MAX_PRETTY characters; HTTP method, status, headers first."""
    try:
        text = json.dumps(json.loads(frame.raw), indent=2, ensure_ascii=False)
    except ValueError:
        text = frame.raw
    if len(text) > MAX_PRETTY:
        text = text[:MAX_PRETTY] + "\n" + _("… ({count} more characters)", count=len(text) - MAX_PRETTY)
    if frame.http:
        head = [" ".join(str(frame.http[k]) for k in ("method", "status") if frame.http.get(k))]
        head += [f"{name}: {value}" for name, value in (frame.http.get("headers") or {}).items()]
        text = "HTTP " + "\n".join(head) + "\n\n" + text
    return text


def badge_html(badge: Badge) -> str:
    """A badge as a small framed tag, to sit inside a line of text."""
    look = (f"font-size:10px;font-style:normal;color:{badge.colour};border:1px solid {badge.colour};"
            "border-radius:3px;padding:0 3px;margin:0 4px")
    return f'{BADGE_START}<span style="{look}">{_text(badge.text)}</span>{BADGE_END}'


def _row(view: View, badge: Badge | None = None) -> str:
    frame = view.frame
    seq = f'<td style="{_SEQ}">#{frame.seq}</td>'
    if view.kind == "stderr":
        return (f'<tr style="{_ROW}">{seq}<td style="{_LANES}"></td>'
                f'<td style="{_STDERR}">{_text(view.label)}</td></tr>')
    if view.kind == "note":
        return f'<tr style="{_ROW}">{seq}<td colspan="2" style="{_NOTE}">✎ {_text(view.label)}</td></tr>'
    line, style, ink, tint = _look(view)
    label = {"error": "✗ ", "refused": "⊘ "}.get(view.kind, "") + view.label
    if view.answers is not None:
        label += f" ↩ #{view.answers}"
    if frame.http:
        label += f" · {_channel(frame)}"
    to_server = frame.direction == "c2s"
    note = f"{BADGE_START}{_text(badge.note)}\n\n{BADGE_END}" if badge and badge.note else ""
    italic = ";font-style:italic" if view.kind == "notification" else ""
    summary = (f'<details style="text-align:{"left" if to_server else "right"}">'
               f'<summary style="cursor:pointer;color:{ink}{italic}">{_text(label)}'
               f'{badge_html(badge) if badge else ""}</summary>'
               f'<pre style="{_PRE}">{note}{_text(pretty(frame))}</pre></details>')
    arrow = (f'<div style="border-bottom:2px {style} {line};color:{line};font-size:9px;line-height:7px;'
             f'text-align:{"right" if to_server else "left"}">{"▶" if to_server else "◀"}</div>')
    background = f";background:{tint}" if tint else ""
    return f'<tr style="{_ROW}">{seq}<td style="{_LANES}{background}">{summary}{arrow}</td><td></td></tr>'


def render_html(frames: list[Frame], badges: Mapping[int, Badge] | None = None, *, dropped: int = 0) -> str:
    """The trace as a self-contained HTML sequence diagram (inline styles only).

    ``badges`` maps a frame's ``seq`` to the :class:`Badge` shown beside it; ``dropped`` earlier
    frames (let go by a bounded trace) are announced in a first row.
    """
    marker = (f'<tr style="{_ROW}"><td colspan="3" style="{_NOTE}">{_text(dropped_line(dropped))}</td></tr>'
              if dropped else "")
    if not frames and not dropped:
        return f'<div style="color:#777"><em>{_text(_("empty trace"))}</em></div>'
    head = (f'<tr style="{_ROW}"><th style="{_HEAD};width:3.5em"></th>'
            f'<th style="{_HEAD};width:{LANES_WIDTH}"><span style="float:left">{_text(_("client"))}</span>'
            f'<span style="float:right">{_text(_("server"))}</span></th>'
            f'<th style="{_HEAD}">stderr</th></tr>')
    badges = badges or {}
    rows = "".join(_row(view, badges.get(view.frame.seq)) for view in describe(frames))
    return f'<table class="mcplab-trace-view" style="{_TABLE}">{head}{marker}{rows}</table>'
