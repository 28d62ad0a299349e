"""A folder of schemas served over real HTTP on 127.0.0.1, laid out as the specification repository
lays them out (``schema/<version>/schema.json``): what ``mcplab schemas`` downloads from in the tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@contextmanager
def serving(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """``folder`` over real HTTP on 127.0.0.1: its base URL, and the paths asked for so far."""
    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def do_GET(self):
            asked.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)  # http.server is blocking: a thread
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def mirror(root: Path, files: dict[str, bytes]) -> Path:
    for version, data in files.items():
        (root / "schema" / version).mkdir(parents=True, exist_ok=True)
        (root / "schema" / version / "schema.json").write_bytes(data)
    return root
