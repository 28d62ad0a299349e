"""A real host's configuration for MCP servers: the JSON block a desktop app or an editor reads.

Theory of operation
-------------------
A host starts each local server itself, as a child process it talks to over stdio, and it learns
how from a configuration file: a command, its arguments, maybe a working directory and some
environment variables. An HTTP server is a URL instead. Three shapes cover most hosts:

    claude-desktop   {"mcpServers": {NAME: {"command", "args", "env"}}}
                     claude_desktop_config.json; stdio only (a URL is added in the app, as a
                     connector), and no working-directory field
    vscode           {"servers": {NAME: {"type": "stdio", "command", "args", "cwd", "env"}
                                  | {"type": "http", "url", "headers"}}, "inputs": [...]}
                     .vscode/mcp.json in a workspace
    generic          {"mcpServers": {NAME: {"command", "args", "env"} | {"type": "http", "url"}}}
                     the shape most other hosts read (Cursor, Claude Code's .mcp.json, ...)

(Where each shape is documented: tests/test_hostconfig.py cites the pages and encodes each as a
JSON Schema.) A host does not run a shell and does not know our virtual environment, so every path
is absolute: the interpreter is the one running mcplab (``sys.executable``, not "python" from
PATH), the script is the bundled file or the student's, ``--root`` is resolved, and ``--era`` is
spelled out for servers built on mcplab's toolkit.

How a host then starts a server (:func:`launch_spec`): ``command`` with ``args`` as the argv, no
shell; ``cwd`` when the shape has one; and a *minimal* environment, the few variables the official
SDKs pass on (``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``, ``USER`` on POSIX) plus the
entry's ``env`` block. That is why the interpreter must be absolute and nothing may depend on a
variable the notebook happened to have.

``--tap DIR`` (:func:`tapped`) puts :mod:`mcplab.ecosystem.wiretap` in front of each stdio server, so that
DIR/NAME.jsonl records what the host really sends and gets: load it with ``Trace.load``.

Writing (:func:`write`) merges into the file that is there: the user's other servers and other
keys stay; an entry of one of our names is replaced only when mcplab wrote it (its digest is in
the record beside the file) or when asked (``--replace``), since any other is the user's own; a
file that is not a JSON object (or a VS Code file with comments, a key written twice, UTF-16) is
refused rather than rewritten. :mod:`mcplab.ecosystem.configfile` keeps the file whole while it
changes: one writer at a time under a lock, a backup of the file as it was, and the new file
written beside the old one and renamed over it, so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from mcplab.ecosystem import configfile
from mcplab.ecosystem.configfile import HostConfigError
from mcplab.i18n import Texts, _, ngettext

__all__ = ["HOSTS", "Entry", "HostConfigError", "bundled", "script", "remote", "tapped", "parse_target", "block",
           "merge", "write", "launch_spec", "host_environment", "sanitise", "MINIMAL_ENV"]

REPO = Path(__file__).resolve().parents[2]  # mcplab/ecosystem/ → the checkout
SERVERS_DIR = REPO / "servers"
HOSTS = ("claude-desktop", "vscode", "generic")
SERVERS_KEY = {"claude-desktop": "mcpServers", "vscode": "servers", "generic": "mcpServers"}
WHERE = Texts({  # shown as a hint: where each host looks for the file
    "claude-desktop": "macOS: ~/Library/Application Support/Claude/claude_desktop_config.json · "
                      "Windows: %APPDATA%\\Claude\\claude_desktop_config.json",
    "vscode": ".vscode/mcp.json in your workspace (or MCP: Open User Configuration)",
    "generic": "the host's own file, e.g. .mcp.json (Claude Code) or .cursor/mcp.json (Cursor)",
})
# Bundled servers, and whether each runs on mcplab's toolkit (and so takes --era).
BUNDLED = {"weather": True, "files": True, "conformance": True, "weather_sdk": False}
ERAS = ("dual", "legacy", "modern")
# What the official SDKs' stdio clients pass on to a server from their own environment.
MINIMAL_ENV = (("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "SYSTEMDRIVE",
                "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE") if sys.platform == "win32"
               else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"))
_USES_TOOLKIT = re.compile(r"^\s*(from\s+mcplab(\.server)?\s+import|import\s+mcplab)", re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Entry:
    """One server as a host sees it: a command to start (stdio) or a URL (HTTP)."""
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise HostConfigError(_("a server name is 1-64 letters, digits, '_' or '-'; got {name!r}", name=self.name))
        if (self.command is None) == (self.url is None):
            raise HostConfigError(_("server {name!r} needs a command (stdio) or a URL (HTTP), not both",
                                    name=self.name))


def bundled(name: str, *, era: str = "dual", root: str | os.PathLike | None = None, writable: bool = False,
            env: Mapping[str, str] | None = None) -> Entry:
    """A bundled server (``weather``, ``files`` ...) started by this interpreter, every path absolute."""
    if name not in BUNDLED:
        raise HostConfigError(_("unknown bundled server {name!r}; expected one of {names}", name=name,
                                  names=", ".join(BUNDLED)))
    args = [str(SERVERS_DIR / f"{name}.py")]
    if name == "files":
        folder = Path(root if root is not None else SERVERS_DIR / "samples").expanduser().resolve()
        if not folder.is_dir():
            raise HostConfigError(_("--root must be an existing folder; {folder!r} is not one", folder=str(folder)))
        args += ["--root", str(folder)] + (["--writable"] if writable else [])
    elif root is not None or writable:
        raise HostConfigError(_("--root and --writable are for the files server, not {name!r}", name=name))
    return _stdio(name, args, era if BUNDLED[name] else None, env)


def script(path: str | os.PathLike, *, name: str | None = None, era: str = "dual",
           env: Mapping[str, str] | None = None) -> Entry:
    """A student's own server file. ``--era`` is added only when the file is built on mcplab's toolkit."""
    file = Path(path).expanduser().resolve()
    if file.suffix != ".py" or not file.is_file():
        raise HostConfigError(_("a server file is an existing .py file; {file!r} is not one", file=str(file)))
    source = file.read_text(encoding="utf-8", errors="replace")
    return _stdio(name or file.stem.replace(".", "_"), [str(file)],
                  era if _USES_TOOLKIT.search(source) else None, env, cwd=file.parent)


def remote(url: str, *, name: str = "remote") -> Entry:
    """A server already running at a Streamable HTTP URL."""
    if not re.match(r"^https?://[^/\s]+", url):
        raise HostConfigError(_("an HTTP server is an http:// or https:// URL; got {url!r}", url=url))
    return Entry(name, url=url)


def _stdio(name: str, args: list[str], era: str | None, env: Mapping[str, str] | None,
           cwd: Path = REPO) -> Entry:
    if era is not None and era not in ERAS:
        raise HostConfigError(_("--era is one of {eras}; got {era!r}", eras=", ".join(ERAS), era=era))
    flags = ["--era", era] if era is not None else []
    return Entry(name, command=sys.executable, args=(*args, *flags), cwd=str(cwd),
                 env=tuple(sorted((env or {}).items())))


def tapped(entry: Entry, folder: str | os.PathLike) -> Entry:
    """``entry`` started behind :mod:`mcplab.ecosystem.wiretap`, which records the host's traffic in FOLDER/NAME.jsonl."""
    if entry.command is None:
        raise HostConfigError(_("{name!r} is an HTTP server; the wiretap goes between a host and a stdio server",
                                name=entry.name))
    trace = Path(folder).expanduser().resolve() / f"{entry.name}.jsonl"
    return Entry(entry.name, sys.executable, ("-m", "mcplab.ecosystem.wiretap", str(trace), "--", entry.command, *entry.args),
                 entry.cwd, entry.env)


def parse_target(spec: str, *, era: str = "dual", root: str | None = None, writable: bool = False,
                 env: Mapping[str, str] | None = None) -> Entry:
    """``[NAME=]TARGET``: a bundled server's name, a path to a .py file, or an http(s) URL."""
    name, _, target = spec.rpartition("=") if "=" in spec.split("://")[0] else ("", "", spec)
    if target.startswith(("http://", "https://")):
        return remote(target, name=name or "remote")
    if target in BUNDLED:
        files = target == "files"  # --root and --writable belong to the files server alone
        entry = bundled(target, era=era, root=root if files else None, writable=writable and files, env=env)
    else:
        entry = script(target, era=era, env=env)
    return Entry(name, entry.command, entry.args, entry.cwd, entry.env) if name else entry


# --- the shapes ------------------------------------------------------------------------------------

def _server(host: str, entry: Entry) -> dict[str, Any]:
    if entry.url is not None:
        if host == "claude-desktop":
            raise HostConfigError(_("Claude Desktop's config file starts local (stdio) servers only; add {url} in "
                                    "the app instead: Settings → Connectors → Add custom connector", url=entry.url))
        return {"type": "http", "url": entry.url}
    shape: dict[str, Any] = {"type": "stdio"} if host == "vscode" else {}
    shape |= {"command": entry.command, "args": list(entry.args)}
    if host == "vscode" and entry.cwd:
        shape["cwd"] = entry.cwd  # the other two shapes have no such field: every path is absolute instead
    if entry.env:
        shape["env"] = dict(entry.env)
    return shape


def block(host: str, entries: Sequence[Entry]) -> dict[str, Any]:
    """The configuration ``host`` reads for ``entries``, as a JSON-ready dict."""
    if host not in HOSTS:
        raise HostConfigError(_("unknown host {host!r}; expected one of {hosts}", host=host, hosts=", ".join(HOSTS)))
    names = [entry.name for entry in entries]
    if len(set(names)) != len(names):
        raise HostConfigError(_("two servers share a name: {names}",
                                  names=sorted(n for n in set(names) if names.count(n) > 1)))
    return {SERVERS_KEY[host]: {entry.name: _server(host, entry) for entry in entries}}


def merge(existing: Any, new: dict[str, Any], host: str, where: str = "the file",
          ours: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``existing`` with ``new``'s servers added or replaced; everything else left as it was.

    With ``ours`` (name → digest of each entry as mcplab wrote it), an entry already there under
    one of ``new``'s names, different from the new one and not as mcplab wrote it, is the user's:
    it is refused, not replaced. Without ``ours``, every such entry is replaced.
    """
    key = SERVERS_KEY[host]
    if not isinstance(existing, dict):
        raise HostConfigError(_("{where} must hold a JSON object; it holds {kind}", where=where,
                                  kind=type(existing).__name__))
    servers = existing.get(key, {})
    if not isinstance(servers, dict):
        raise HostConfigError(_("{where}: {key!r} must be an object mapping names to servers; it is {kind}",
                                  where=where, key=key, kind=type(servers).__name__))
    if ours is not None:
        theirs = [name for name, server in new[key].items() if name in servers and servers[name] != server
                  and ours.get(name) != configfile.digest(servers[name])]
        if theirs:
            raise HostConfigError(ngettext(
                "{where} already has {n} server of your own that mcplab did not write, {servers}; run again "
                "with --replace (in Python: replace=True) to replace it, after a backup of the file",
                "{where} already has {n} servers of your own that mcplab did not write, {servers}; run again "
                "with --replace (in Python: replace=True) to replace them, after a backup of the file",
                len(theirs), where=where, servers=", ".join(_described(name, servers[name]) for name in theirs)))
    return {**existing, key: {**servers, **new[key]}}


def _described(name: str, server: Any) -> str:
    """``'weather' (command /opt/my-weather)``: a user's entry, by what starts it."""
    what = (f"command {server['command']}" if isinstance(server, dict) and isinstance(server.get("command"), str)
            else f"url {server['url']}" if isinstance(server, dict) and isinstance(server.get("url"), str)
            else type(server).__name__)
    return f"{name!r} ({what[:100]})"


def write(path: str | os.PathLike, host: str, entries: Sequence[Entry], *, replace: bool = False) -> dict[str, Any]:
    """Merge ``entries`` into the file at ``path`` (created if missing), atomically; return the result."""
    return _write(path, host, entries, replace)[0]


def _write(path: str | os.PathLike, host: str, entries: Sequence[Entry], replace: bool) -> tuple[dict[str, Any], Path | None]:
    """:func:`write`, and where the file as it was is kept (None: it was not there, or did not change)."""
    target = Path(path).expanduser().resolve()  # a symlinked config file keeps its link
    new, key = block(host, entries), SERVERS_KEY[host]
    # What cannot be read or merged is refused before anything is made beside the file.
    merge(configfile.load(target)[0], new, host, target.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with configfile.locked(target) as written:  # from here to the rename, a second writer waits
        existing, data = configfile.load(target)
        merged = merge(existing, new, host, target.name, None if replace else written.of(key))
        if data is not None and merged == existing:
            return merged, None
        mode = target.stat().st_mode & 0o777 if data is not None else 0o644
        kept = configfile.backup(target, data, mode) if data is not None else None
        try:
            configfile.replace(target, json.dumps(merged, indent=2, ensure_ascii=False) + "\n", mode)
        except BaseException:
            if kept is not None:
                kept.unlink()  # the file did not change: its backup would only be litter
            raise
        written.save(key, merged[key], new[key])
    return merged, kept


# --- starting a server the way a host does -----------------------------------------------------------

def host_environment(env_block: Mapping[str, str] | None = None,
                     parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a host gives a stdio server: a few of its own variables plus the entry's ``env``."""
    parent = os.environ if parent is None else parent
    return {**{k: parent[k] for k in MINIMAL_ENV if k in parent}, **dict(env_block or {})}


def launch_spec(host: str, config: Mapping[str, Any], name: str) -> tuple[list[str], str | None, dict[str, str]]:
    """From a host's configuration: (argv, cwd, env) to start server ``name``, as the host would."""
    server = config[SERVERS_KEY[host]][name]
    if "url" in server:
        raise HostConfigError(_("server {name!r} is an HTTP server at {url}: a host connects, it starts nothing",
                                  name=name, url=server["url"]))
    return ([server["command"], *server.get("args", [])], server.get("cwd"), host_environment(server.get("env")))


def sanitise(text: str) -> str:
    """``text`` with this machine's paths replaced by placeholders, for notebooks and docs."""
    for real, shown in ((sys.executable, "<python>"), (str(REPO), "<mcplab>"), (str(Path.home()), "~")):
        text = text.replace(real, shown).replace(json.dumps(real)[1:-1], shown)
    return text


@dataclass(frozen=True)
class Outcome:
    """What ``mcplab config`` did: the block (or the merged file) and a note for the terminal."""
    config: dict[str, Any]
    note: str = ""
    entries: tuple[Entry, ...] = field(default=())


def run(host: str, targets: Sequence[str], *, era: str = "dual", root: str | None = None, writable: bool = False,
        env: Mapping[str, str] | None = None, path: str | None = None, tap: str | None = None,
        replace: bool = False) -> Outcome:
    """What ``mcplab config HOST [TARGET ...]`` does; with no target: weather and files."""
    targets = list(targets) or ["weather", "files"]
    if (root is not None or writable) and not any(t.rpartition("=")[2] == "files" for t in targets):
        raise HostConfigError(_("--root and --writable are for the files server; add 'files' to the servers"))
    entries = tuple(parse_target(t, era=era, root=root, writable=writable, env=env) for t in targets)
    if tap is not None:  # every stdio server behind the wiretap: read what the host really sends
        Path(tap).expanduser().mkdir(parents=True, exist_ok=True)
        entries = tuple(tapped(e, tap) if e.command else e for e in entries)
    if path is None:
        return Outcome(block(host, entries), _("# {host} reads this from {where}", host=host, where=WHERE[host]),
                       entries)
    merged, kept = _write(path, host, entries, replace)
    names = ", ".join(e.name for e in entries)
    note = _("# wrote {names} into {path}; restart the host (or reload its MCP servers) to use them",
             names=names, path=path)
    if kept is not None:
        note += "\n" + _("# the file as it was is kept in {backup}", backup=str(kept))
    return Outcome(merged, note, entries)
