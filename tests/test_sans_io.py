"""The wire, lifecycle, toolkit and trace layers do no I/O: importing them, in a fresh
interpreter, loads no networking, process or async library (DESIGN.md, "Layers")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

IO_LIBRARIES = ("anyio", "asyncio", "httpx", "subprocess", "socket", "starlette", "uvicorn", "trio")
SANS_IO = ["mcplab", "mcplab.wire.jsonrpc", "mcplab.wire.versions", "mcplab.wire.errors", "mcplab.trace", "mcplab.trace.views",
           "mcplab.lifecycle", "mcplab.client.eras", "mcplab.wire.headers", "mcplab.client.results", "mcplab.server.toolkit",
           "mcplab.wire.sse", "mcplab.trace.http_text", "mcplab.server.streamable_http.header_checks"]

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[2:])))
"""


@pytest.mark.parametrize("module", SANS_IO)
def test_importing_a_sans_io_module_loads_no_io_library(module):
    # A fresh process: this one has long since imported pytest and everything it pulls in.
    done = subprocess.run([sys.executable, "-c", PROBE, module, *IO_LIBRARIES],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], f"importing {module} loaded an I/O library"
