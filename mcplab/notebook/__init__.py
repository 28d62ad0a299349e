"""The notebook views: what a lab shows beside the code.

``viewer`` (``show``: a trace as a sequence diagram with a schema badge on every frame; ``diff``: two
traces side by side), ``schema_check`` (each frame against the official JSON Schema of its revision),
``inspector`` (``playground``: an Inspector inside the notebook), ``matrix`` (the compatibility
matrix of 2026-07-28, run live), ``prediction`` (``predict``: predict, then run: a question before a live exchange;
the course's questions are in ``predictions``), and the labs' plumbing, kept out of their cells so that
a student sees protocol: ``shown`` (ports, paths and random values masked, a message whole, a
request and its answer found in a trace, a sealed ``requestState`` opened, a server's code printed
from its file), ``raw_post`` (a hand-written POST, shown as it went and came back) and ``confirm``
(an elicitation answered by a form, or by a callback when nobody clicks).

Layer: near the top. It may import the client and the server sides, ``ecosystem`` (the matrix
starts ``ecosystem.proxy``), ``trace``, ``transports``, ``wire``, ``schemas`` and ``course``; above it
only ``grade`` (whose schema line is this schema check), the exercises and the command line.

``from mcplab import notebook`` then ``notebook.show(client.trace)``: the names below load on first
use, so jsonschema and ipywidgets are imported only when a view needs them. Imported in an IPython
kernel, the package gives the kernel ``rerun``'s register: running a cell again ends the servers its
last run started (every lab imports ``notebook`` or ``grade``, so no lab has to ask for it), and
``machine``'s ``%%machine WHAT`` line: a cell that needs the local install says so in the browser edition.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from mcplab.notebook import machine, rerun

rerun.install()  # in an IPython kernel only; elsewhere nothing happens
machine.install()  # the same: from now on a cell's `%%machine WHAT` line is understood

# name → the module that holds it (PEP 562: resolved on first use)
_LAZY = {
    **dict.fromkeys(("show", "diff", "TraceView", "TraceDiff", "align"), "mcplab.notebook.viewer"),
    **dict.fromkeys(("playground", "Playground", "form_for", "arguments_from"), "mcplab.notebook.inspector"),
    **dict.fromkeys(("Check", "Schemas", "schemas", "spec_dir", "check_frames", "SPEC_DIR_ENV"),
                    "mcplab.notebook.schema_check"),
    **dict.fromkeys(("Prediction", "digest_of"), "mcplab.notebook.prediction"),
    "predict": "mcplab.notebook.predictions",
    **dict.fromkeys(("masked", "masker", "pretty", "source", "first_exchange", "request_state_text"), "mcplab.notebook.shown"),
    **dict.fromkeys(("post", "post_discover", "send_post", "send_discover", "Posted"), "mcplab.notebook.raw_post"),
    **dict.fromkeys(("ConfirmForm", "always_confirm"), "mcplab.notebook.confirm"),
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
