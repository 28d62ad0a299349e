"""Files: an MCP server that reads (and, if allowed, writes) files inside one folder, and nowhere else.

    python servers/files.py                       # serves servers/samples/, read-only
    python servers/files.py --root DIR --writable [--write-quota MiB]

    tools      read_file, list_directory, search_files, get_file_info; write_file only with --writable
    resources  every file as file:///<path relative to the root>, plus the template file:///{+path}
    prompts    summarize_file(path), review_code(path, focus)

The lesson is the boundary. A tool argument is written by a model, and a model can be talked into
anything, so every path goes through a :class:`~mcplab.server.confine.Folder` before the server
touches the disk. It refuses NUL bytes, absolute paths and any ``..`` outright, then opens the path
one name at a time from the root, following a symlink only while it stays inside, so that a link
flipped by another program in the middle of a request cannot lead the server out (confine.py says
how). A file must be a regular file (not a device, FIFO or socket) and at most 1 MiB; a link that
dangles or loops is left out of every listing. Refusals are tool errors (``isError: true``) that say
why, and nothing outside the root is opened.

Writes go to a temporary file beside the target and are renamed over it: a crash leaves the old file
or the new one, never half of each. A writable server writes at most ``--write-quota`` MiB in all
(64 by default), so that a model in a loop cannot fill the disk. A search pattern is at most 256
characters, and a search steps aside for other requests as it walks, so it holds up nobody else.

URIs name files relative to the root, as if the root were ``/``: ``file:///notes.md``. The root's
real location never leaves the server (and notebook outputs stay the same on every machine).

Replacing a file that exists asks the user first, when the client can ask (it declared elicitation):
a legacy client gets an ``elicitation/create`` request, a 2026-07-28 client an ``input_required``
result, and the write happens on its retry. In the modern era a writable server also tells clients
not to cache file lists or contents (``ttlMs`` 0), since its own tool changes them.
"""

from __future__ import annotations

import fnmatch
import os
import re
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Callable, Literal
from urllib.parse import quote

from mcplab.auth.scopes import ScopePolicy
from mcplab.wire.errors import InvalidParams
from mcplab.server import Contents, Context, Server, ToolError, arguments, embedded, image, run, user
from mcplab.server.confine import Entry, Folder, NotFound
from mcplab.server.streamable_http.address import LOOPBACK, hostname

SAMPLES = Path(__file__).resolve().parent / "samples"
MAX_BYTES = 1 << 20     # 1 MiB: larger reads and writes are refused
MAX_LISTED = 500        # entries in a listing or search, so a huge root cannot flood the client
MAX_VISITED = 10_000    # names a search looks at before it stops, however large the folder
MAX_PATTERN = 256       # characters in a search pattern: a glob never needs more, a model may send megabytes
WRITE_QUOTA = 64 << 20  # bytes a writable server writes in all: plenty for a class, not a full disk
# With --auth (an OAuth resource server, mcplab/auth/): reading needs files:read; write_file needs
# files:write as well, so a token granted for reading is refused with 403 insufficient_scope (step-up).
SCOPES = ScopePolicy(base=("files:read",), tools={"write_file": ("files:write",)})
MIME_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".json": "application/json", ".py": "text/x-python",
              ".csv": "text/csv", ".html": "text/html", ".toml": "application/toml", ".yaml": "application/yaml",
              ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def uri_of(path: str) -> str:
    return "file:///" + quote(path)


def mime_of(path: str) -> str:
    return MIME_TYPES.get(PurePosixPath(path).suffix.lower(), "application/octet-stream")


def as_text(data: bytes) -> str | None:
    """The text of a file, or None if it is binary (not UTF-8, or holding NUL bytes)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def matcher(pattern: str) -> Callable[[Entry], bool]:
    """The test search_files puts to each file: a glob on its path or name, or a piece of its name."""
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"refused: the pattern is {len(pattern)} characters; a search pattern has at most "
                        f"{MAX_PATTERN} characters")
    # Compiled here, not with fnmatch.fnmatch: that caches up to 32,768 compiled patterns, megabytes each.
    glob = re.compile(fnmatch.translate(os.path.normcase(pattern)))
    piece = pattern.lower()
    return lambda entry: bool(glob.match(os.path.normcase(entry.path)) or glob.match(os.path.normcase(entry.name))
                              or piece in entry.name.lower())


CONFIRM_REPLACE = {"type": "object", "required": ["replace"],
                   "properties": {"replace": {"type": "boolean", "title": "Replace the file", "default": False}}}


def create_server(root: Path = SAMPLES, writable: bool = False, write_quota: int = WRITE_QUOTA) -> Server:
    """A file server for ``root``; ``writable`` adds the write_file tool, which writes ``write_quota`` bytes in all."""
    folder = Folder(root)
    mode = "read-write" if writable else "read-only"
    server = Server("files", "1.0.0", title=f"Files ({mode})",
                    instructions=f"Files in one folder ({mode}). Paths are relative to that folder, e.g. notes.md.",
                    ttl_ms={"resources/list": 0, "resources/read": 0} if writable else None)
    add_reading_tools(server, folder)
    if writable:
        add_write_file(server, folder, Quota(write_quota))
    add_file_resources(server, folder)
    add_prompts(server, folder)
    return server


def completer(folder: Folder) -> Callable[[str], list[str]]:
    """Completion for a ``path`` argument: the paths of the files that start with what was typed."""
    return lambda prefix: [entry.path for entry in folder.files(limit=MAX_LISTED) if entry.path.startswith(prefix)]


# --- tools ---------------------------------------------------------------------------------------

def add_reading_tools(server: Server, folder: Folder) -> None:
    """read_file, list_directory, search_files, get_file_info: none of them changes anything."""

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def read_file(path: str) -> object:
        """Read one file: text comes back as text, an image as an image, other binary as a base64 blob.

        Args:
            path: File path relative to the served folder, e.g. "notes.md" or "src/greet.py".
        """
        data, entry = folder.read(path, MAX_BYTES)
        text = as_text(data)
        if text is not None:
            return text
        if mime_of(entry.path).startswith("image/"):
            return image(data, mime_of(entry.path))
        return embedded(uri_of(entry.path), blob=data, mime_type=mime_of(entry.path))

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def list_directory(path: str = ".") -> str:
        """List a folder: one line per entry, folders first.

        Args:
            path: Folder relative to the served folder; "." is the folder itself.
        """
        entries = sorted(folder.list(path), key=lambda e: (e.kind != "folder", e.name))[:MAX_LISTED]
        lines = [f"[dir]  {e.name}/" if e.kind == "folder" else f"[file] {e.name} ({e.size} bytes)"
                 if e.kind == "file" else f"[other] {e.name} (not a regular file)" for e in entries]
        return "\n".join(lines) or "(empty folder)"

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    async def search_files(pattern: str, path: str = ".") -> str:
        """Find files by name: a glob such as "*.md", or a piece of the name such as "greet".

        Args:
            pattern: A glob (matched against the path relative to the folder) or a substring of a file name.
            path: Where to start searching; "." is the whole folder.
        """
        hits = await folder.search(path, keep=matcher(pattern), limit=MAX_LISTED, visits=MAX_VISITED)
        return "\n".join(entry.path for entry in hits) or f"no file matches {pattern!r}"

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def get_file_info(path: str) -> dict:
        """Size, kind, MIME type and modification time of a file or folder.

        Args:
            path: Path relative to the served folder.
        """
        entry = folder.info(path)
        return {"path": entry.path, "type": "directory" if entry.kind == "folder" else "file", "size": entry.size,
                "mimeType": None if entry.kind == "folder" else mime_of(entry.path),
                "modified": datetime.fromtimestamp(entry.modified, timezone.utc).isoformat(timespec="seconds")}


class Quota:
    """How much write_file may write in all, and how much it wrote so far (one per server)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.written = limit, 0


def add_write_file(server: Server, folder: Folder, quota: Quota) -> None:
    """write_file: atomic, within the quota, and asking the user before it replaces a file."""

    @server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                              "openWorldHint": False})
    async def write_file(path: str, content: str, ctx: Context) -> str:
        """Create or replace a text file (UTF-8). The old content is replaced in one step.

        Needs the files:write scope when the server requires authorization (--auth).

        Args:
            path: File path relative to the served folder; its folder must exist.
            content: The complete new text of the file.
        """
        data = content.encode("utf-8")
        if len(data) > MAX_BYTES:
            raise ToolError(f"refused: {len(data)} bytes is more than this server writes ({MAX_BYTES} bytes, 1 MiB)")
        if quota.written + len(data) > quota.limit:
            raise ToolError(f"refused: this server writes at most {quota.limit} bytes in all (its write quota) "
                            f"and has written {quota.written}; this write of {len(data)} bytes would pass it")
        existing = folder.check_write(path)
        # Everything above runs again on a modern retry, so it only checks: the write comes after the question.
        if existing is not None and ctx.can_ask("elicitation"):
            answer = await ctx.elicit(f"Replace {path} ({existing.size} bytes) with {len(data)} new bytes?",
                                      CONFIRM_REPLACE, key="confirm_replace")
            if answer.get("action") != "accept" or not (answer.get("content") or {}).get("replace"):
                return f"left {path} unchanged: the user did not confirm replacing it"
        # The folder may have changed while the user thought: write() walks from the root again.
        where, replaced = folder.write(path, data)
        quota.written += len(data)
        if not replaced:
            server.changed("resources")
        server.resource_updated(uri_of(where))
        return f"wrote {len(data)} bytes to {where}"


# --- resources -----------------------------------------------------------------------------------

def add_file_resources(server: Server, folder: Folder) -> None:
    """The template file:///{+path}, which lists every file under the folder."""

    def list_files() -> list[dict]:
        return [{"uri": uri_of(e.path), "name": e.path, "mimeType": mime_of(e.path), "size": e.size}
                for e in folder.files(limit=MAX_LISTED)]

    @server.resource("file:///{+path}", name="file", lister=list_files, complete={"path": completer(folder)})
    def file(path: str) -> Contents:
        """Any file under the served folder, by its path relative to that folder."""
        try:
            data, entry = folder.read(path, MAX_BYTES)
        except NotFound:
            raise LookupError(path) from None  # the toolkit answers "Resource not found"
        except ToolError as exc:
            raise InvalidParams(str(exc), data={"uri": "file:///" + path}) from None
        text = as_text(data)
        return Contents(text=text, mime_type=mime_of(entry.path)) if text is not None else \
            Contents(blob=data, mime_type=mime_of(entry.path))


# --- prompts -------------------------------------------------------------------------------------

def add_prompts(server: Server, folder: Folder) -> None:
    """summarize_file and review_code, each with the file attached as an embedded resource."""

    def attach(path: str) -> dict:
        try:
            data, entry = folder.read(path, MAX_BYTES)
        except ToolError as exc:
            raise InvalidParams(str(exc)) from None
        text = as_text(data)
        if text is None:
            raise InvalidParams(f"{path} is not a text file")
        return embedded(uri_of(entry.path), text=text, mime_type=mime_of(entry.path))

    @server.prompt(complete={"path": completer(folder)})
    def summarize_file(path: str) -> list:
        """Summarize one file, which is attached to the prompt.

        Args:
            path: File path relative to the served folder, e.g. "notes.md".
        """
        return [user(attach(path)), user(f"Summarize {path} in three bullet points.")]

    @server.prompt(complete={"path": completer(folder)})
    def review_code(path: str, focus: Literal["bugs", "style", "security", "all"] = "all") -> list:
        """Review a source file, which is attached to the prompt.

        Args:
            path: Source file relative to the served folder, e.g. "src/greet.py".
            focus: What to look for: "bugs", "style", "security" or "all".
        """
        ask = "everything worth fixing" if focus == "all" else f"{focus} issues"
        return [user(attach(path)),
                user(f"Review {path}. Look for {ask}; for each finding give the line, the problem and a fix.")]


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=SAMPLES, help="the folder to serve (default: servers/samples)")
    parser.add_argument("--writable", action="store_true", help="add the write_file tool")
    parser.add_argument("--write-quota", type=float, default=WRITE_QUOTA / (1 << 20), metavar="MiB",
                        help=f"how much write_file may write in all (default {WRITE_QUOTA >> 20} MiB)")
    parser.add_argument("--writable-by-anyone", action="store_true",
                        help="with --writable on a network address and no --auth: yes, anyone who can reach it may write")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"--root {args.root}: not a folder")
    # A folder anyone on the network may write into is never a default: ask for --auth, or say so.
    on_network = args.http and hostname(args.host or "127.0.0.1") not in LOOPBACK
    if args.writable and on_network and not args.auth and not args.writable_by_anyone:
        parser.error(f"--writable on {args.host} without --auth lets anyone who can reach this machine write into "
                     f"{args.root}: add --auth ISSUER, serve 127.0.0.1, or add --writable-by-anyone if that is what you want")
    run(create_server(args.root, args.writable, int(args.write_quota * (1 << 20))), args, scopes=SCOPES)


if __name__ == "__main__":
    main()
