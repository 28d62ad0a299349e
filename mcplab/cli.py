"""The ``mcplab`` command: open the labs, start a bundled server, poke at any MCP server.

    mcplab lab                          JupyterLab on labs/
    mcplab serve weather|files|conformance [server flags]
    mcplab inspect (--stdio "CMD" | --url URL) [--era ...] [--version V] [--trace-jsonl FILE]
    mcplab call    (--stdio "CMD" | --url URL) METHOD [JSON-PARAMS] [same options]
    mcplab demo                         the whole tour in the terminal

Each subcommand imports what it needs only when it runs, so ``mcplab --help`` is instant.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVERS = ("weather", "files", "conformance")


def servers_dir() -> Path:
    """The bundled servers live beside the package in a checkout (``servers/``)."""
    path = REPO / "servers"
    if not path.is_dir():
        raise SystemExit("mcplab: the bundled servers are not here; mcplab runs from a checkout "
                         "of its repository (pip install -e .)")
    return path


def server_command(name: str, *flags: str) -> list[str]:
    """The argv that starts a bundled server over stdio, e.g. for ``stdio(...)``."""
    if name not in SERVERS:
        raise ValueError(f"unknown bundled server {name!r}; expected one of {', '.join(SERVERS)}")
    return [sys.executable, str(servers_dir() / f"{name}.py"), *flags]


def _lab(args: argparse.Namespace) -> int:
    labs = REPO / "labs"
    argv = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={labs}", *args.jupyter_args]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in argv:
        argv.append("--allow-root")  # containers and CI machines often run as root
    os.execv(sys.executable, argv)
    return 0  # not reached


def _serve(args: argparse.Namespace) -> int:
    script = servers_dir() / f"{args.name}.py"
    sys.argv = [str(script), *args.server_args]
    runpy.run_path(str(script), run_name="__main__")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcplab", description="A teaching lab for the Model Context Protocol.")
    sub = parser.add_subparsers(dest="command", required=True)

    lab = sub.add_parser("lab", help="open JupyterLab on the labs/ folder (other flags go to jupyter lab)")
    lab.set_defaults(run=_lab, passthrough="jupyter_args")

    serve = sub.add_parser("serve", help="start a bundled server (stdio unless --http; other flags go to the server)")
    serve.add_argument("name", choices=SERVERS)
    serve.set_defaults(run=_serve, passthrough="server_args")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # `lab` and `serve` hand every flag they do not know to jupyter / the server itself.
    args, extra = parser.parse_known_args(argv)
    passthrough = getattr(args, "passthrough", None)
    if extra and passthrough is None:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if passthrough:
        setattr(args, passthrough, extra)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
