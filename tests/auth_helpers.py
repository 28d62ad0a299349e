"""Helpers for the authorization tests: a local CA and certificates (trustme), the bundled authorization
server and protected servers started together, and a client's metadata document served over HTTPS.

Run as a script to serve one JSON document over HTTPS (the way ``launch`` expects: ``--http --host H
--port 0``, the URL on stderr), as a client's Client ID Metadata Document::

    python tests/auth_helpers.py DOCUMENT.json CERT.pem KEY.pem --http --host 127.0.0.1 --port 0
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REDIRECT = "http://127.0.0.1:33418/callback"


@dataclass(frozen=True)
class Certificates:
    """A throwaway CA and one server certificate for 127.0.0.1, as PEM files."""
    ca: Path
    cert: Path
    key: Path


def make_certificates(folder: Path) -> Certificates:
    import trustme

    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    files = Certificates(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    ca.cert_pem.write_to_path(str(files.ca))
    server.cert_chain_pems[0].write_to_path(str(files.cert))
    for extra in server.cert_chain_pems[1:]:
        extra.write_to_path(str(files.cert), append=True)
    server.private_key_pem.write_to_path(str(files.key))
    return files


def serve_document(argv: list[str]) -> None:
    """Serve one JSON file at /client.json over HTTPS; print the banner launch() waits for."""
    import argparse
    import asyncio

    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from mcplab.server.streamable_http.process import bind, serve_app

    parser = argparse.ArgumentParser()
    parser.add_argument("document")
    parser.add_argument("cert")
    parser.add_argument("key")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    async def document(request: object) -> Response:
        # read on each request: the document names its own URL, known only once this server is up
        return Response(Path(args.document).read_bytes(), media_type="application/json",
                        headers={"Cache-Control": "max-age=60"})

    sock = bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    app = Starlette(routes=[Route("/client.json", document)])
    asyncio.run(serve_app(app, sock, f"mcplab: serving cimd at https://{host}:{port}", tls=(args.cert, args.key)))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    serve_document(sys.argv[1:])
