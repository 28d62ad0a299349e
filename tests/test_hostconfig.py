"""mcplab.ecosystem.hostconfig and ``mcplab config``: each host's block validates against that host's documented
shape; each configured command, started exactly as a host starts it (same argv, its cwd, a minimal
environment plus the env block, no shell), completes a handshake; --write merges atomically and
keeps the user's own entries; wrong configurations fail the shapes and bad requests fail with a
sentence that says why.

The shapes below are written from each host's documentation (not copied from any schema file):

* Claude Desktop: modelcontextprotocol.io "Connect to local MCP servers"
  (docs/develop/connect-local-servers): ``{"mcpServers": {NAME: {"command", "args", "env"}}}``; paths
  absolute; remote servers are connectors added in the app ("Connect to remote MCP servers").
* VS Code: code.visualstudio.com/docs/copilot/reference/mcp-configuration: ``{"servers": {...},
  "inputs": [...]}``; stdio: ``type`` (required, "stdio"), ``command`` (required), ``args``, ``env``,
  ``envFile``, ``sandboxEnabled``, ``sandbox``, ``dev``; HTTP: ``type`` ("http" or "sse") and ``url``
  (required), ``headers``; ``cwd`` for stdio as in VS Code's IMcpStdioServerConfiguration
  (src/vs/platform/mcp/common/mcpPlatformTypes.ts).
* Generic ``mcpServers``: the Claude Desktop shape plus ``{"type": "http", "url", "headers"}`` for a
  remote server, as Claude Code documents for .mcp.json (code.claude.com/docs/en/mcp) and other
  hosts (Cursor ...) read.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest

from mcplab.ecosystem import hostconfig
from mcplab.cli import main
from mcplab.ecosystem.hostconfig import HostConfigError

ROOT = Path(__file__).resolve().parent.parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"

STRINGS = {"type": "array", "items": {"type": "string"}}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

CLAUDE_DESKTOP = {
    "$schema": DRAFT, "type": "object", "required": ["mcpServers"],
    "properties": {"mcpServers": {"type": "object", "additionalProperties": {
        "type": "object", "required": ["command"], "additionalProperties": False,
        "properties": {"command": {"type": "string", "minLength": 1}, "args": STRINGS, "env": STRING_MAP}}}},
}

VSCODE_STDIO = {
    "type": "object", "required": ["type", "command"], "additionalProperties": False,
    "properties": {"type": {"const": "stdio"}, "command": {"type": "string", "minLength": 1}, "args": STRINGS,
                   "env": {"type": "object", "additionalProperties": {"type": ["string", "number", "null"]}},
                   "envFile": {"type": "string"}, "cwd": {"type": "string"}, "sandboxEnabled": {"type": "boolean"},
                   "sandbox": {"type": "object"}, "dev": {"type": "object"}},
}
VSCODE_HTTP = {
    "type": "object", "required": ["type", "url"], "additionalProperties": False,
    "properties": {"type": {"enum": ["http", "sse"]}, "url": {"type": "string", "minLength": 1},
                   "headers": STRING_MAP, "dev": {"type": "object"}},
}
VSCODE = {
    "$schema": DRAFT, "type": "object", "required": ["servers"],
    "properties": {
        "servers": {"type": "object", "additionalProperties": {"oneOf": [VSCODE_STDIO, VSCODE_HTTP]}},
        "inputs": {"type": "array", "items": {"type": "object", "required": ["type", "id", "description"],
                                              "properties": {"type": {"const": "promptString"},
                                                             "id": {"type": "string"},
                                                             "description": {"type": "string"},
                                                             "password": {"type": "boolean"}}}},
    },
}

GENERIC = {
    "$schema": DRAFT, "type": "object", "required": ["mcpServers"],
    "properties": {"mcpServers": {"type": "object", "additionalProperties": {"oneOf": [
        {"type": "object", "required": ["command"], "additionalProperties": False,
         "properties": {"type": {"const": "stdio"}, "command": {"type": "string", "minLength": 1},
                        "args": STRINGS, "env": STRING_MAP}},
        {"type": "object", "required": ["type", "url"], "additionalProperties": False,
         "properties": {"type": {"const": "http"}, "url": {"type": "string", "minLength": 1},
                        "headers": STRING_MAP}},
    ]}}},
}
SHAPES = {"claude-desktop": CLAUDE_DESKTOP, "vscode": VSCODE, "generic": GENERIC}


def problems(host: str, config: object) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(SHAPES[host]).iter_errors(config)]


def student_server(folder: Path) -> Path:
    """A student's own server on mcplab's toolkit, in a folder of its own."""
    path = folder / "my_server.py"
    path.write_text("from mcplab.server import Server, run\n\n"
                    "server = Server('my-server', '0.1.0')\n\n\n"
                    "@server.tool\n"
                    "def shout(text: str) -> str:\n"
                    "    \"\"\"Say it louder.\"\"\"\n"
                    "    return text.upper() + '!'\n\n\n"
                    "if __name__ == '__main__':\n"
                    "    run(server)\n", encoding="utf-8")
    return path


# --- the shapes themselves: every plausible mistake fails ---------------------------------------------

WRONG = [  # (host, a configuration that host would not read, why)
    ("claude-desktop", {}, "no mcpServers"),
    ("claude-desktop", {"mcpServers": {"w": {"args": ["w.py"]}}}, "no command"),
    ("claude-desktop", {"mcpServers": {"w": {"command": "python", "args": "w.py"}}}, "args not a list"),
    ("claude-desktop", {"mcpServers": {"w": {"command": "python", "env": {"N": 1}}}}, "env value not a string"),
    ("claude-desktop", {"mcpServers": {"w": {"command": "python", "cwd": "/srv"}}}, "cwd is not documented there"),
    ("claude-desktop", {"mcpServers": {"w": {"type": "http", "url": "http://x/mcp"}}}, "a URL in the file"),
    ("vscode", {"mcpServers": {"w": {"type": "stdio", "command": "python"}}}, "mcpServers, not servers"),
    ("vscode", {"servers": {"w": {"command": "python"}}}, "no type"),
    ("vscode", {"servers": {"w": {"type": "stdio", "url": "http://x/mcp"}}}, "stdio without a command"),
    ("vscode", {"servers": {"w": {"type": "http"}}}, "http without a url"),
    ("vscode", {"servers": {"w": {"type": "websocket", "url": "ws://x"}}}, "an unknown type"),
    ("vscode", {"servers": {}, "inputs": [{"id": "key"}]}, "an input without type and description"),
    ("generic", {"servers": {"w": {"command": "python"}}}, "servers, not mcpServers"),
    ("generic", {"mcpServers": {"w": {"args": ["w.py"]}}}, "no command"),
    ("generic", {"mcpServers": {"w": {"type": "http"}}}, "http without a url"),
    ("generic", {"mcpServers": {"w": {"command": "python", "url": "http://x/mcp"}}}, "both a command and a url"),
]


@pytest.mark.parametrize("host, config, why", WRONG, ids=[f"{h}: {w}" for h, _, w in WRONG])
def test_each_shape_refuses_a_plausible_mistake(host: str, config: dict, why: str) -> None:
    assert problems(host, config), why


@pytest.mark.parametrize("host", hostconfig.HOSTS)
def test_the_documented_examples_pass_their_shape(host: str) -> None:
    examples = {  # the pages' own examples, trimmed
        "claude-desktop": {"mcpServers": {"filesystem": {"command": "npx", "args": [
            "-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop"]}}},
        "vscode": {"inputs": [{"type": "promptString", "id": "key", "description": "API Key", "password": True}],
                   "servers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                                          "env": {"KEY": "${input:key}"}},
                               "context7": {"type": "http", "url": "https://mcp.context7.com/mcp"}}},
        "generic": {"mcpServers": {"shared-server": {"type": "http", "url": "https://example.com/mcp"},
                                   "local": {"command": "npx", "args": ["-y", "some-server"]}}},
    }
    assert problems(host, examples[host]) == []


# --- building each host's block ----------------------------------------------------------------------

@pytest.mark.parametrize("host", hostconfig.HOSTS)
def test_each_hosts_block_has_its_shape_and_absolute_paths(host: str, tmp_path: Path) -> None:
    mine = student_server(tmp_path)
    entries = [hostconfig.bundled("weather", era="modern"), hostconfig.bundled("files", root=tmp_path),
               hostconfig.script(mine), hostconfig.bundled("weather_sdk")]
    config = hostconfig.block(host, entries)
    assert problems(host, config) == []
    servers = config[hostconfig.SERVERS_KEY[host]]
    assert list(servers) == ["weather", "files", "my_server", "weather_sdk"]
    for name, server in servers.items():
        assert server["command"] == sys.executable and Path(server["command"]).is_absolute()
        assert Path(server["args"][0]).is_absolute() and Path(server["args"][0]).is_file(), name
        assert ("cwd" in server) is (host == "vscode")
    assert servers["weather"]["args"][1:] == ["--era", "modern"]
    assert servers["files"]["args"][1:] == ["--root", str(tmp_path.resolve()), "--era", "dual"]
    assert servers["my_server"]["args"] == [str(mine), "--era", "dual"]  # built on mcplab: it takes --era
    assert servers["weather_sdk"]["args"] == [str(ROOT / "servers" / "weather_sdk.py")]  # the SDK's: no flags of ours
    if host == "vscode":
        assert servers["my_server"]["cwd"] == str(tmp_path.resolve()) and servers["weather"]["cwd"] == str(ROOT)


def test_an_http_server_is_its_url_where_the_host_reads_urls() -> None:
    entry = hostconfig.remote("http://127.0.0.1:8000/mcp", name="weather_http")
    assert hostconfig.block("vscode", [entry]) == {"servers": {"weather_http": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}}}
    assert hostconfig.block("generic", [entry])["mcpServers"]["weather_http"]["url"] == "http://127.0.0.1:8000/mcp"
    with pytest.raises(HostConfigError, match="Connectors"):
        hostconfig.block("claude-desktop", [entry])


BAD_REQUESTS = [  # (what is asked, the words of the refusal)
    (lambda: hostconfig.bundled("weathr"), "unknown bundled server 'weathr'; expected one of weather"),
    (lambda: hostconfig.bundled("files", root="/no/such/folder"), "--root must be an existing folder"),
    (lambda: hostconfig.bundled("weather", root="."), "--root and --writable are for the files server"),
    (lambda: hostconfig.bundled("weather", era="newest"), "--era is one of dual, legacy, modern; got 'newest'"),
    (lambda: hostconfig.script("notes.txt"), "a server file is an existing .py file"),
    (lambda: hostconfig.remote("ftp://example.org/mcp"), "an http:// or https:// URL; got 'ftp://"),
    (lambda: hostconfig.parse_target("my server=weather"), "a server name is 1-64 letters"),
    (lambda: hostconfig.block("vscode", [hostconfig.bundled("weather")] * 2), "two servers share a name: ['weather']"),
    (lambda: hostconfig.block("cursor", []), "unknown host 'cursor'; expected one of claude-desktop"),
    (lambda: hostconfig.run("vscode", ["weather"], root="."), "--root and --writable are for the files server"),
]


@pytest.mark.parametrize("ask, words", BAD_REQUESTS, ids=[w for _, w in BAD_REQUESTS])
def test_a_bad_request_is_refused_with_a_sentence(ask, words: str) -> None:
    with pytest.raises(HostConfigError) as refused:
        ask()
    assert words in str(refused.value)


def test_targets_name_bundled_servers_files_and_urls() -> None:
    assert hostconfig.parse_target("weather").name == "weather"
    assert hostconfig.parse_target("sky=weather").name == "sky"
    assert hostconfig.parse_target("sdk=servers/weather_sdk.py").args == (str(ROOT / "servers" / "weather_sdk.py"),)
    remote = hostconfig.parse_target("sky=http://127.0.0.1:9/mcp")
    assert (remote.name, remote.url) == ("sky", "http://127.0.0.1:9/mcp")
    assert hostconfig.parse_target("https://example.org/mcp").name == "remote"


# --- starting each configured command as a host does ------------------------------------------------

async def handshake(argv: list[str], cwd: str | None, env: dict[str, str]) -> tuple[dict, list[str]]:
    from mcplab import Client
    from mcplab.transports.stdio import stdio

    async with Client(stdio(argv, env=env, cwd=cwd, inherit_env=False), era="auto") as client:
        return client.server_info, [tool.name for tool in await client.list_tools()]


@pytest.mark.subprocess
@pytest.mark.parametrize("host", hostconfig.HOSTS)
def test_each_configured_server_starts_as_the_host_starts_it_and_shakes_hands(host: str, tmp_path: Path,
                                                                              monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "todo.md").write_text("# todo\n", encoding="utf-8")
    mine = student_server(tmp_path)
    path = tmp_path / "host" / "config.json"
    entries = [hostconfig.bundled("weather", env={"MCPLAB_GREETING": "hi"}), hostconfig.bundled("files", root=work),
               hostconfig.script(mine), hostconfig.bundled("weather_sdk")]
    hostconfig.write(path, host, entries)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert problems(host, written) == []
    # A host's own environment is not the notebook's: nothing of this process's venv may leak through.
    monkeypatch.setenv("PYTHONPATH", "/nowhere")
    monkeypatch.setenv("VIRTUAL_ENV", "/nowhere")
    elsewhere = tmp_path / "elsewhere"  # a host without a cwd field starts servers in a folder of its own
    elsewhere.mkdir()
    expected = {"weather": ("weather", "get_weather"), "files": ("files", "read_file"), "my_server": ("my-server", "shout"),
                "weather_sdk": ("weather-sdk", "get_weather")}
    for name, (server_name, a_tool) in expected.items():
        argv, cwd, env = hostconfig.launch_spec(host, written, name)
        server = written[hostconfig.SERVERS_KEY[host]][name]
        assert argv == [server["command"], *server["args"]] and cwd == server.get("cwd")
        assert set(env) <= set(hostconfig.MINIMAL_ENV) | set(server.get("env", {}))
        assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
        info, tools = anyio.run(handshake, argv, cwd or str(elsewhere), env)
        assert info["name"] == server_name and a_tool in tools, name
    assert hostconfig.launch_spec(host, written, "weather")[2]["MCPLAB_GREETING"] == "hi"


@pytest.mark.subprocess
@pytest.mark.http
@pytest.mark.parametrize("host", ["vscode", "generic"])
def test_an_http_server_in_the_config_answers_at_its_url(host: str, tmp_path: Path) -> None:
    from mcplab import Client
    from mcplab.server.streamable_http import launch
    from mcplab.transports.http import http

    server = launch(["python", str(ROOT / "servers" / "weather.py")])
    try:
        path = tmp_path / "config.json"
        written = hostconfig.write(path, host, [hostconfig.remote(server.url, name="weather_http")])
        assert problems(host, written) == []
        url = written[hostconfig.SERVERS_KEY[host]]["weather_http"]["url"]
        with pytest.raises(HostConfigError, match="a host connects"):
            hostconfig.launch_spec(host, written, "weather_http")

        async def connect() -> str:
            async with Client(http(url), era="auto") as client:
                return (await client.call_tool("get_weather", {"city": "Seoul"})).text

        assert anyio.run(connect).startswith("Seoul: cloudy")
    finally:
        assert server.stop() == 0


# --- writing: merged, atomic, and the user's file is never lost -----------------------------------

def test_write_merges_and_keeps_the_users_other_entries_and_keys(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    users = {"globalShortcut": "Ctrl+Space", "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
        "weather": {"command": "old-python", "args": ["old.py"]}}}
    path.write_text(json.dumps(users), encoding="utf-8")
    os.chmod(path, 0o600)
    ours = [hostconfig.bundled("weather"), hostconfig.bundled("files")]
    merged = hostconfig.write(path, "claude-desktop", ours, replace=True)  # their weather goes only when asked
    on_disk = json.loads(path.read_text(encoding="utf-8"))
    assert on_disk == merged and problems("claude-desktop", on_disk) == []
    assert on_disk["globalShortcut"] == "Ctrl+Space"
    assert on_disk["mcpServers"]["filesystem"] == users["mcpServers"]["filesystem"]  # theirs, untouched
    assert on_disk["mcpServers"]["weather"]["command"] == sys.executable             # replaced, as asked
    assert list(on_disk["mcpServers"]) == ["filesystem", "weather", "files"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600                               # their permissions
    assert json.loads((tmp_path / f"{path.name}.bak").read_text(encoding="utf-8")) == users  # the file as it was
    # no temporary file left: only the file, its backup, and mcplab's lock and record beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{path.name}.mcplab", path.name, f"{path.name}.bak"]
    again = hostconfig.write(path, "claude-desktop", ours)  # no replace needed: both entries are mcplab's now
    assert again == merged and not (tmp_path / f"{path.name}.bak.2").exists()  # writing twice changes nothing


def test_an_entry_mcplab_wrote_is_replaced_without_asking_until_the_user_edits_it(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    hostconfig.write(path, "generic", [hostconfig.bundled("weather")])
    modern = hostconfig.write(path, "generic", [hostconfig.bundled("weather", era="modern")])
    assert modern["mcpServers"]["weather"]["args"][-2:] == ["--era", "modern"]
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["mcpServers"]["weather"]["env"] = {"CITY": "Oslo"}  # now the user's
    path.write_text(json.dumps(edited), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(HostConfigError) as refused:
        hostconfig.write(path, "generic", [hostconfig.bundled("weather", era="legacy")])
    assert "already has 1 server of your own that mcplab did not write, 'weather' (command " in str(refused.value)
    assert "--replace" in str(refused.value) and path.read_bytes() == before


def test_a_backup_is_never_written_over_nor_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {}}', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not a backup\n")
    (tmp_path / "mcp.json.bak").symlink_to(elsewhere)
    outcome = hostconfig.run("vscode", ["weather"], path=str(path))
    assert (tmp_path / "mcp.json.bak.2").read_text(encoding="utf-8") == '{"servers": {}}'
    assert elsewhere.read_text() == "not a backup\n" and (tmp_path / "mcp.json.bak").is_symlink()
    assert outcome.note.endswith(f"# the file as it was is kept in {tmp_path / 'mcp.json.bak.2'}")


def test_in_the_page_whose_fcntl_has_no_flock_a_write_goes_through_unlocked(tmp_path: Path, monkeypatch) -> None:
    # Pyodide's fcntl (the browser edition's) has no flock; the page is one process, with no other writer
    from types import SimpleNamespace
    from mcplab.ecosystem import configfile

    monkeypatch.setattr(configfile, "fcntl", SimpleNamespace())
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "x"]}}}), encoding="utf-8")
    merged = hostconfig.write(path, "claude-desktop", [hostconfig.bundled("files")])
    assert json.loads(path.read_text(encoding="utf-8")) == merged and list(merged["mcpServers"]) == ["filesystem", "files"]


def test_write_keeps_vscode_inputs_and_follows_a_symlinked_file(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"inputs": [{"type": "promptString", "id": "k", "description": "Key"}],
                                "servers": {}}), encoding="utf-8")
    link = tmp_path / ".vscode" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    hostconfig.write(link, "vscode", [hostconfig.bundled("weather")])
    assert link.is_symlink()
    on_disk = json.loads(real.read_text(encoding="utf-8"))
    assert on_disk["inputs"][0]["id"] == "k" and "weather" in on_disk["servers"]


UNWRITABLE = [  # (file content, the words of the refusal): each leaves the file exactly as it was, nothing beside it
    (b'{\n  // my servers\n  "servers": {}\n}\n', "is not plain JSON"),
    (b'{"servers": {},}', "is not plain JSON"),
    (b'["weather"]', "must hold a JSON object; it holds list"),
    (b'{"servers": ["weather"]}', "'servers' must be an object mapping names to servers; it is list"),
    (b'{"servers": {}, "inputs": [], "servers": {"mine": {"type": "http", "url": "http://x/mcp"}}}',
     "mcp.json has the key 'servers' twice in one object"),
    ('{"servers": {}}'.encode("utf-16-le"), "mcp.json is UTF-16 text"),  # no byte-order mark: its NUL bytes tell
    ('{"servers": {}}'.encode("utf-16"), "mcp.json is UTF-16 text"),
    (b'{"servers": {}, "note": "caf\xe9"}', "mcp.json is not UTF-8 (byte 28 is 0xe9)"),
    (b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}", "mcp.json is nested deeper than mcplab reads"),
]


@pytest.mark.parametrize("content, words", UNWRITABLE, ids=[w for _, w in UNWRITABLE])
def test_a_file_that_cannot_be_merged_is_refused_and_left_unchanged(content: bytes, words: str, tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(content)
    with pytest.raises(HostConfigError) as refused:
        hostconfig.write(path, "vscode", [hostconfig.bundled("weather")])
    assert words in str(refused.value)
    assert path.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.json"]


def test_a_utf8_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"servers": {}}')  # Windows' Notepad writes one
    assert list(hostconfig.write(path, "vscode", [hostconfig.bundled("weather")])["servers"]) == ["weather"]


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_write_that_fails_midway_leaves_the_old_file(step: str, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"theirs": {"type": "http", "url": "http://x/mcp"}}}', encoding="utf-8")
    before = path.read_text(encoding="utf-8")

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, step, crash)  # the backup's fsync or the new file's rename
    with pytest.raises(OSError):
        hostconfig.write(path, "vscode", [hostconfig.bundled("weather")])
    assert path.read_text(encoding="utf-8") == before
    # no temporary file and no backup of a file that did not change; mcplab's lock file stays
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mcp.json.mcplab", "mcp.json"]


# --- the command line and the notebook view -------------------------------------------------------

def test_mcplab_config_prints_the_block_and_says_where_it_goes(capsys) -> None:
    assert main(["config", "vscode", "weather", "--era", "legacy"]) == 0
    captured = capsys.readouterr()
    config = json.loads(captured.out)
    assert problems("vscode", config) == [] and config["servers"]["weather"]["args"][-2:] == ["--era", "legacy"]
    assert ".vscode/mcp.json" in captured.err


def test_mcplab_config_writes_and_refuses_with_status_two(tmp_path: Path, capsys) -> None:
    path = tmp_path / "claude_desktop_config.json"
    assert main(["config", "claude-desktop", "--root", str(tmp_path), "--env", "A=1", "--write", str(path)]) == 0
    written = json.loads(path.read_text(encoding="utf-8"))
    assert list(written["mcpServers"]) == ["weather", "files"] and problems("claude-desktop", written) == []
    assert written["mcpServers"]["files"]["env"] == {"A": "1"}
    assert "wrote weather, files" in capsys.readouterr().err
    assert main(["config", "claude-desktop", "http://127.0.0.1:9/mcp"]) == 2
    assert "Add custom connector" in capsys.readouterr().err


@pytest.mark.subprocess
def test_the_command_runs_as_a_program() -> None:
    done = subprocess.run([sys.executable, "-m", "mcplab.cli", "config", "generic", "weather"], capture_output=True,
                          text=True, timeout=30, cwd=ROOT)
    assert done.returncode == 0 and problems("generic", json.loads(done.stdout)) == []


def test_sanitise_hides_this_machines_paths() -> None:
    text = json.dumps(hostconfig.block("vscode", [hostconfig.bundled("weather")]))
    shown = hostconfig.sanitise(text)
    assert str(ROOT) not in shown and sys.executable not in shown
    assert '"command": "<python>"' in shown and '"<mcplab>/servers/weather.py"' in shown


@pytest.mark.subprocess
def test_a_tapped_entry_records_what_the_host_sends(tmp_path: Path) -> None:
    from mcplab.trace import Trace

    taps = tmp_path / "taps"
    outcome = hostconfig.run("vscode", ["weather"], tap=str(taps))
    assert problems("vscode", outcome.config) == []
    argv, cwd, env = hostconfig.launch_spec("vscode", outcome.config, "weather")
    assert argv[1:4] == ["-m", "mcplab.ecosystem.wiretap", str(taps.resolve() / "weather.jsonl")]
    info, tools = anyio.run(handshake, argv, cwd, env)
    assert info["name"] == "weather" and "get_weather" in tools
    sent = [f.message.method for f in Trace.load(taps / "weather.jsonl") if f.direction == "c2s"]
    assert sent[:1] == ["server/discover"] and "tools/list" in sent
    with pytest.raises(HostConfigError, match="the wiretap goes between a host and a stdio server"):
        hostconfig.tapped(hostconfig.remote("http://127.0.0.1:9/mcp"), taps)
