"""Files: an MCP server that reads (and, if allowed, writes) files inside one folder, and nowhere else.

    python servers/files.py                       # serves servers/samples/, read-only
    python servers/files.py --root DIR --writable

    tools      read_file, list_directory, search_files, get_file_info; write_file only with --writable
    resources  every file as file:///<path relative to the root>, plus the template file:///{+path}
    prompts    summarize_file(path), review_code(path, focus)

The lesson is the boundary. A tool argument is written by a model, and a model can be talked into
anything, so every path goes through :func:`confine` before the server touches the disk. It refuses
NUL bytes, absolute paths and any ``..`` outright, then resolves symlinks and refuses whatever lands
outside the root; a file must be a regular file (not a device, FIFO or socket) and at most 1 MiB.
Refusals are tool errors (``isError: true``) that say why, and nothing outside the root is opened.
Writes go to a temporary file beside the target and are renamed over it: a crash leaves the old
file or the new one, never half of each.

URIs name files relative to the root, as if the root were ``/``: ``file:///notes.md``. The root's
real location never leaves the server (and notebook outputs stay the same on every machine).

Replacing a file that exists asks the user first, when the client can ask (it declared elicitation):
a legacy client gets an ``elicitation/create`` request, a 2026-07-28 client an ``input_required``
result, and the write happens on its retry. In the modern era a writable server also tells clients
not to cache file lists or contents (``ttlMs`` 0), since its own tool changes them.
"""

from __future__ import annotations

import os
import stat
import tempfile
from datetime import datetime, timezone
from fnmatch import fnmatch
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from mcplab.auth.resource import ScopePolicy
from mcplab.errors import InvalidParams
from mcplab.server import Contents, Context, Server, ToolError, arguments, embedded, image, run, user

SAMPLES = Path(__file__).resolve().parent / "samples"
MAX_BYTES = 1 << 20   # 1 MiB: larger reads and writes are refused
MAX_LISTED = 500      # entries in a listing or search, so a huge root cannot flood the client
# With --auth (an OAuth resource server, mcplab/auth/): reading needs files:read; write_file needs
# files:write as well, so a token granted for reading is refused with 403 insufficient_scope (step-up).
SCOPES = ScopePolicy(base=("files:read",), tools={"write_file": ("files:write",)})
MIME_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".json": "application/json", ".py": "text/x-python",
              ".csv": "text/csv", ".html": "text/html", ".toml": "application/toml", ".yaml": "application/yaml",
              ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def confine(root: Path, path: str) -> Path:
    """The real path for ``path`` (relative to ``root``), or a ToolError saying why it is refused."""
    if "\0" in path:
        raise ToolError(f"refused {path!r}: the path contains a NUL byte")
    if path.startswith(("/", "\\")) or Path(path).is_absolute():
        raise ToolError(f"refused {path!r}: absolute paths are not allowed; give a path relative to the root, "
                        f"e.g. notes.md")
    if ".." in Path(path).parts:
        raise ToolError(f"refused {path!r}: '..' is not allowed in a path")
    if not inside(root, root / path):  # resolve() follows symlinks, so a link that points out is caught
        raise ToolError(f"refused {path!r}: it leads outside the served folder (through a symlink)")
    return (root / path).resolve()


def inside(root: Path, path: Path) -> bool:
    """Does ``path``, symlinks followed, stay within ``root``?"""
    real = path.resolve()
    return real == root or root in real.parents


def uri_of(root: Path, real: Path) -> str:
    return "file:///" + quote(real.relative_to(root).as_posix())


def mime_of(path: Path) -> str:
    return MIME_TYPES.get(path.suffix.lower(), "application/octet-stream")


def read_bytes(real: Path, shown: str) -> bytes:
    """A regular file's bytes, opened without following a last-moment symlink, at most 1 MiB."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # O_NONBLOCK: a FIFO must not hang us
    except FileNotFoundError:
        raise ToolError(f"{shown}: no such file") from None
    except OSError as exc:
        raise ToolError(f"{shown}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{shown} is a directory; use list_directory")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"refused {shown}: not a regular file (a device, FIFO or socket)")
        if info.st_size > MAX_BYTES:
            raise ToolError(f"refused {shown}: it is {info.st_size} bytes and this server reads at most "
                            f"{MAX_BYTES} bytes (1 MiB)")
        return file.read(MAX_BYTES + 1)[:MAX_BYTES]


def as_text(data: bytes) -> str | None:
    """The text of a file, or None if it is binary (not UTF-8, or holding NUL bytes)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


CONFIRM_REPLACE = {"type": "object", "required": ["replace"],
                   "properties": {"replace": {"type": "boolean", "title": "Replace the file", "default": False}}}


def create_server(root: Path = SAMPLES, writable: bool = False) -> Server:
    """A file server for ``root``; ``writable`` adds the write_file tool."""
    root = root.resolve(strict=True)
    mode = "read-write" if writable else "read-only"
    server = Server("files", "1.0.0", title=f"Files ({mode})",
                    instructions=f"Files in one folder ({mode}). Paths are relative to that folder, e.g. notes.md.",
                    ttl_ms={"resources/list": 0, "resources/read": 0} if writable else None)

    def walk(start: Path) -> list[Path]:
        """Regular files under ``start``, sorted, never following a symlink out of the root."""
        found = []
        for folder, dirs, files in os.walk(start):
            dirs.sort()
            for name in sorted(files):
                path = Path(folder, name)
                if not name.startswith(".") and inside(root, path) and path.resolve().is_file():
                    found.append(path)
                if len(found) >= MAX_LISTED:
                    return found
        return found

    def completions(prefix: str) -> list[str]:
        return [p.relative_to(root).as_posix() for p in walk(root) if p.relative_to(root).as_posix().startswith(prefix)]

    # --- tools ---------------------------------------------------------------------------------------

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def read_file(path: str) -> object:
        """Read one file: text comes back as text, an image as an image, other binary as a base64 blob.

        Args:
            path: File path relative to the served folder, e.g. "notes.md" or "src/greet.py".
        """
        real = confine(root, path)
        data = read_bytes(real, path)
        text = as_text(data)
        if text is not None:
            return text
        if mime_of(real).startswith("image/"):
            return image(data, mime_of(real))
        return embedded(uri_of(root, real), blob=data, mime_type=mime_of(real))

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def list_directory(path: str = ".") -> str:
        """List a folder: one line per entry, folders first.

        Args:
            path: Folder relative to the served folder; "." is the folder itself.
        """
        real = confine(root, path)
        if not real.is_dir():
            raise ToolError(f"{path} is not a folder")
        entries = sorted((p for p in real.iterdir() if inside(root, p) and not p.name.startswith(".")),
                         key=lambda p: (not p.is_dir(), p.name))[:MAX_LISTED]
        lines = [f"[dir]  {p.name}/" if p.is_dir() else f"[file] {p.name} ({p.stat().st_size} bytes)"
                 for p in entries]
        return "\n".join(lines) or "(empty folder)"

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def search_files(pattern: str, path: str = ".") -> str:
        """Find files by name: a glob such as "*.md", or a piece of the name such as "greet".

        Args:
            pattern: A glob (matched against the path relative to the folder) or a substring of a file name.
            path: Where to start searching; "." is the whole folder.
        """
        start = confine(root, path)
        hits = [p.relative_to(root).as_posix() for p in walk(start)
                if fnmatch(p.relative_to(root).as_posix(), pattern) or fnmatch(p.name, pattern)
                or pattern.lower() in p.name.lower()]
        return "\n".join(hits) or f"no file matches {pattern!r}"

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def get_file_info(path: str) -> dict:
        """Size, kind, MIME type and modification time of a file or folder.

        Args:
            path: Path relative to the served folder.
        """
        real = confine(root, path)
        if not real.exists():
            raise ToolError(f"{path}: no such file or folder")
        info = real.stat()
        return {"path": real.relative_to(root).as_posix() or ".", "type": "directory" if real.is_dir() else "file",
                "size": info.st_size, "mimeType": None if real.is_dir() else mime_of(real),
                "modified": datetime.fromtimestamp(info.st_mtime, timezone.utc).isoformat(timespec="seconds")}

    if writable:
        @server.tool(annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                                  "openWorldHint": False})
        async def write_file(path: str, content: str, ctx: Context) -> str:
            """Create or replace a text file (UTF-8). The old content is replaced in one step.

            Needs the files:write scope when the server requires authorization (--auth).

            Args:
                path: File path relative to the served folder; its folder must exist.
                content: The complete new text of the file.
            """
            real = confine(root, path)
            data = content.encode("utf-8")
            if len(data) > MAX_BYTES:
                raise ToolError(f"refused: {len(data)} bytes is more than this server writes ({MAX_BYTES} bytes, 1 MiB)")
            if not real.parent.is_dir():
                raise ToolError(f"{path}: its folder does not exist")
            if real.exists() and not real.is_file():
                raise ToolError(f"refused {path}: not a regular file")
            existed = real.exists()
            # Everything above runs again on a modern retry, so it only checks: the write comes after the question.
            if existed and ctx.can_ask("elicitation"):
                answer = await ctx.elicit(f"Replace {path} ({real.stat().st_size} bytes) with {len(data)} new bytes?",
                                          CONFIRM_REPLACE, key="confirm_replace")
                if answer.get("action") != "accept" or not (answer.get("content") or {}).get("replace"):
                    return f"left {path} unchanged: the user did not confirm replacing it"
            fd, temp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())  # the bytes are on disk before the rename makes them visible
                os.replace(temp, real)       # atomic: readers see the old file or the new one
            except BaseException:
                os.unlink(temp)
                raise
            if not existed:
                server.changed("resources")
            server.resource_updated(uri_of(root, real))
            return f"wrote {len(data)} bytes to {real.relative_to(root).as_posix()}"

    # --- resources -----------------------------------------------------------------------------------

    def list_files() -> list[dict]:
        return [{"uri": uri_of(root, p), "name": p.relative_to(root).as_posix(), "mimeType": mime_of(p),
                 "size": p.stat().st_size} for p in walk(root)]

    @server.resource("file:///{+path}", name="file", list=list_files, complete={"path": completions})
    def file(path: str) -> Contents:
        """Any file under the served folder, by its path relative to that folder."""
        try:
            real = confine(root, path)
            if not real.exists():
                raise LookupError(path)  # the toolkit answers "Resource not found"
            data = read_bytes(real, path)
        except ToolError as exc:
            raise InvalidParams(str(exc), data={"uri": "file:///" + path}) from None
        text = as_text(data)
        return Contents(text=text, mime_type=mime_of(real)) if text is not None else \
            Contents(blob=data, mime_type=mime_of(real))

    # --- prompts -------------------------------------------------------------------------------------

    def attach(path: str) -> dict:
        try:
            real = confine(root, path)
            data = read_bytes(real, path)
        except ToolError as exc:
            raise InvalidParams(str(exc)) from None
        text = as_text(data)
        if text is None:
            raise InvalidParams(f"{path} is not a text file")
        return embedded(uri_of(root, real), text=text, mime_type=mime_of(real))

    @server.prompt(complete={"path": completions})
    def summarize_file(path: str) -> list:
        """Summarize one file, which is attached to the prompt.

        Args:
            path: File path relative to the served folder, e.g. "notes.md".
        """
        return [user(attach(path)), user(f"Summarize {path} in three bullet points.")]

    @server.prompt(complete={"path": completions})
    def review_code(path: str, focus: Literal["bugs", "style", "security", "all"] = "all") -> list:
        """Review a source file, which is attached to the prompt.

        Args:
            path: Source file relative to the served folder, e.g. "src/greet.py".
            focus: What to look for: "bugs", "style", "security" or "all".
        """
        ask = "everything worth fixing" if focus == "all" else f"{focus} issues"
        return [user(attach(path)),
                user(f"Review {path}. Look for {ask}; for each finding give the line, the problem and a fix.")]

    return server


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=SAMPLES, help="the folder to serve (default: servers/samples)")
    parser.add_argument("--writable", action="store_true", help="add the write_file tool")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"--root {args.root}: not a folder")
    run(create_server(args.root, args.writable), args, scopes=SCOPES)


if __name__ == "__main__":
    main()
