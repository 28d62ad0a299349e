"""The ``mcplab`` command: open the labs, start a bundled server, poke at any MCP server.

    mcplab setup [--extra lab|test|dev] [--no-lab] [jupyter flags]   what `make lab` does (python -m mcplab setup)
    mcplab lab [--dir DIR] [--copy-only] [--lang zh]   JupyterLab on labs/ (a clone) or on a copy of the course
                                        (a wheel); --lang zh opens the Chinese edition, labs/zh-CN/
    mcplab serve weather|files|conformance [server flags]
    mcplab inspect (--stdio "CMD" | --url URL | --server NAME) [--era ...] [--version V] [--trace-jsonl FILE]
    mcplab call    (--stdio "CMD" | --url URL | --server NAME) METHOD [JSON-PARAMS] [same options]
    mcplab demo [--lang zh]             the whole tour in the terminal
    mcplab i18n [update|build|status|check]   keep the translations in step with the English (authors)
    mcplab config HOST [SERVER ...] [--write FILE [--replace]]   a real host's configuration for these servers
    mcplab schemas [--base-url URL] [--cache-dir DIR]   fetch the official schemas into the cache
    mcplab site lock|fetch|build [--out DIR] [--cache-dir DIR] [--mirror URL]   the course as a JupyterLite site

Each subcommand imports what it needs only when it runs, so ``mcplab --help`` is instant.

Every subcommand but ``i18n`` takes ``--lang en|zh``; without it ``MCPLAB_LANG`` decides, then the
locale (``LANG=zh_CN.UTF-8`` is Chinese). The choice is made before the parser is built, so the help,
argparse's own words (``usage:``, its errors) and every message come from the catalog in that language
(mcplab/i18n/commandline.py), and whatever the command starts (JupyterLab's kernels, a server) inherits it.

``inspect`` and ``call`` are a terminal view of the client: the era (with ``--era auto``, the
default, the probe and why it decided as it did), the server's capabilities and its tools,
resources and prompts as tables, or one request's result, and then the wire trace, every frame
as it crossed the pipe (``--no-trace`` hides it, ``--trace-jsonl`` saves it). A server that asks
the user something (elicitation: a legacy request, or a modern ``input_required`` round) is
answered on the terminal, field by field, or declined when there is no terminal. Exit status:
0 on success, 1 when the server answered with an error (or a tool reported ``isError``), the
connection failed or the command was refused.

What a server supplied is printed through mcplab/terminal.py, which shows what a terminal would
obey (ESC, C1, bidi controls, a lone surrogate) as escapes and cuts long cells in linear time.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import sys
from pathlib import Path
from typing import Any

# Where the bundled servers are (a checkout or an installed wheel) is mcplab.course's business;
# these names stay here for the code that has always imported them from the command line module.
from mcplab import terminal
from mcplab.course import BUNDLED as SERVERS
from mcplab.i18n import _, language, ngettext
from mcplab.course import server_command, servers_dir


def _lab(args: argparse.Namespace) -> int:
    import importlib.util

    from mcplab import course

    if args.dir is None and course.is_checkout():
        folder = course.labs_dir()  # a clone is the student's own: open its labs/ in place
    else:
        try:
            report = course.copy_course(args.dir or course.DEFAULT_COPY)
        except (OSError, ValueError) as exc:
            raise SystemExit(_("mcplab: could not copy the course: {error}", error=exc)) from None
        print(report.text(), file=sys.stderr)
        folder = report.dest
    if args.copy_only:
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        raise SystemExit(_("mcplab: JupyterLab is not installed in this environment; install the lab extra: "
                           "pip install 'mcplab[lab]' (pipx: pipx install 'mcplab[lab]')"))
    jupyter_args = list(args.jupyter_args)
    code = language()  # --lang (main() set it), else $MCPLAB_LANG, else the locale; normalized
    if code != "en":
        _choose_language(code)  # the kernels inherit it: feedback in the language even in an English lab
        start = _language_start(Path(folder), code)
        if start:  # LabApp's own default_url: JupyterLab overrides ServerApp's with its launcher
            jupyter_args.append(f"--LabApp.default_url=/lab/tree/{start}")
        from mcplab import lab_language

        jupyter_args, translated = lab_language.launch_flags(code, jupyter_args)
        if not translated:
            print(_("mcplab: JupyterLab's own menus stay English: its language pack is not installed "
                    "(pip install jupyterlab-language-pack-zh-CN, or python3 -m mcplab setup)"), file=sys.stderr)
    argv = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={folder}", *jupyter_args]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in argv:
        argv.append("--allow-root")  # containers and CI machines often run as root
    from mcplab import launch  # JupyterLab as a child, then one line of ours: where to begin

    return launch.run(argv, Path(folder), code)


def _choose_language(code: str) -> None:
    from mcplab import i18n

    try:
        i18n.set_language(code)
    except ValueError as exc:
        raise SystemExit(_("mcplab: {error}", error=exc)) from None


def _language_start(folder: Path, code: str) -> str | None:
    """The first lab of the language's edition, as a path under ``folder`` (None: not there)."""
    from mcplab.i18n import LANGUAGES, normalize

    edition = LANGUAGES[normalize(code)][1]
    for labs in (folder, folder / "labs"):
        first = labs / edition / "00_start_here.ipynb"
        if edition and first.is_file():
            return first.relative_to(folder).as_posix()
    return None


def _serve(args: argparse.Namespace) -> int:
    script = servers_dir() / f"{args.name}.py"
    sys.argv = [str(script), *args.server_args]
    runpy.run_path(str(script), run_name="__main__")
    return 0


# --- inspect and call ------------------------------------------------------------------------------

def _transport(args: argparse.Namespace) -> Any:
    if args.stdio or args.server:
        from mcplab.transports.stdio import stdio
        return stdio(args.stdio or server_command(args.server))
    try:
        from mcplab.transports.http import http  # type: ignore[import-not-found]
    except ImportError:
        raise SystemExit(_("mcplab: --url needs the Streamable HTTP transport, which this version does not "
                           "have yet; use --stdio")) from None
    return http(args.url)


def _era(client: Any) -> str:
    """The era line, then one line per decision of the opening (the probe, when there was one)."""
    lines = [_label(_("era")) + client.era]
    lines += [_label("") + f"{'→ ' if i else ''}{terminal.line(d.reason)}" for i, d in enumerate(client.era_decisions)]
    return "\n".join(lines)


def _label(word: str) -> str:
    """A label of the inspect view, padded to the column its values start at (a CJK character is two wide)."""
    return word + " " * max(1, LABEL_WIDTH - terminal.text_width(word))


LABEL_WIDTH = 14


async def _inspect_server(client: Any) -> int:
    info = client.server_info
    title = f" ({terminal.line(str(info['title']), 60)})" if info.get("title") else ""
    print(_label(_("server")) + f"{terminal.line(str(info.get('name', '?')), 60)} "
          f"{terminal.line(str(info.get('version', '')), 60)}{title}")
    print(_era(client))
    asked = client.requested_version
    print(_label(_("protocol")) + terminal.line(str(client.protocol_version))
          + ("" if asked == client.protocol_version else _(" (asked for {version})", version=asked)))
    if client.discovery is not None:
        print(_label(_("discovery")) + _("may be cached {ttl} ms, {scope}",
                                           ttl=terminal.line(str(client.discovery.get("ttlMs", "?")), 60),
                                           scope=terminal.line(str(client.discovery.get("cacheScope")
                                                                   or _("scope not said")), 60)))
    from mcplab.wire.versions import capabilities_text

    print(_label(_("capabilities")) + terminal.line(capabilities_text(client.server_capabilities)))
    if client.instructions:
        print(_label(_("instructions")) + terminal.line(client.instructions))
    declared = client.server_capabilities
    if "tools" in declared:
        tools = await client.list_tools()
        required = {t.name: set(t.input_schema.get("required", [])) for t in tools}
        print("\n" + _("tools ({n})", n=len(tools)))
        print(terminal.table([(_("name"), _("arguments"), _("description"))] + [
            (t.name, ", ".join(p if p in required[t.name] else p + "?" for p in t.parameters),
             t.description) for t in tools]))
    if "resources" in declared:
        resources = await client.list_resources()
        print("\n" + _("resources ({n})", n=len(resources)))
        print(terminal.table([("uri", _("name"), _("mime type"))]
                             + [(r.uri, r.name, r.mime_type or "") for r in resources]))
        templates = await client.list_resource_templates()
        print("\n" + _("resource templates ({n})", n=len(templates)))
        print(terminal.table([(_("uri template"), _("name"), _("mime type"))]
                    + [(t.uri_template, t.name, t.mime_type or "") for t in templates]))
    if "prompts" in declared:
        prompts = await client.list_prompts()
        print("\n" + _("prompts ({n})", n=len(prompts)))
        print(terminal.table([(_("name"), _("arguments"), _("description"))] + [
            (p.name, ", ".join(a["name"] + ("" if a.get("required") else "?") for a in p.arguments),
             p.description) for p in prompts]))
    return 0


FIELD_TYPES = {"boolean": lambda text: text.strip().lower() in ("y", "yes", "true", "1"),
               "integer": int, "number": float}


def ask_on_terminal(params: dict) -> dict:
    """Answer an elicitation (legacy request or modern input request) on the terminal, field by field.

    With no terminal to ask (stdin is a pipe), decline: nobody is there to accept.
    """
    message = str(params.get("message", ""))
    if not sys.stdin.isatty():
        print(_("mcplab: the server asks '{question}'; there is no terminal to answer, so: decline",
                question=terminal.line(message)), file=sys.stderr)
        return {"action": "decline"}
    print("\n" + _("the server asks: {question}", question=terminal.message(message)), file=sys.stderr)
    if params.get("mode") == "url":
        print("  " + _("open {url}", url=terminal.line(str(params.get("url")))), file=sys.stderr)
    content: dict[str, Any] = {}
    try:  # input() blocks the event loop: fine here, the CLI has one connection and nothing else to do
        for name, field in (params.get("requestedSchema") or {}).get("properties", {}).items():
            kind = field.get("type", "string")
            hint = f" [{terminal.line(str(field['default']), 60)}]" if "default" in field else ""
            text = input(f"  {terminal.line(str(field.get('title', name)), 60)} ({terminal.line(str(kind), 60)}){hint}: ")
            if text == "" and "default" in field:
                content[name] = field["default"]
            elif text != "":
                content[name] = FIELD_TYPES.get(kind, str)(text)
        if input("  " + _("send? [Y/n] ")).strip().lower() in ("n", "no"):
            return {"action": "decline"}
    except (EOFError, KeyboardInterrupt):
        return {"action": "cancel"}
    except ValueError as exc:
        print(_("mcplab: {error}; declining", error=exc), file=sys.stderr)
        return {"action": "decline"}
    return {"action": "accept", "content": content} if params.get("mode") != "url" else {"action": "accept"}


async def _call_method(client: Any, method: str, params: dict | None) -> int:
    result = await client.request(method, params)
    print(terminal.visible_json(result))  # whole: this one result is what was asked for
    return 1 if method == "tools/call" and isinstance(result, dict) and result.get("isError") else 0


async def _session(args: argparse.Namespace, work: Any) -> int:
    from mcplab.client import Client
    from mcplab.wire.errors import MCPLabError

    transport = _transport(args)
    status = 1
    try:
        # One connection per command: nothing to remember the era for, and each run shows its own probe.
        client = Client(transport, era=args.era, version=args.version, timeout=args.timeout,
                        elicitation=ask_on_terminal)
        async with client:
            status = await work(client)
    except (MCPLabError, ValueError) as exc:
        print(f"mcplab: {type(exc).__name__}: {terminal.message(str(exc))}", file=sys.stderr)
    finally:
        if not args.no_trace:
            width = max(60, shutil.get_terminal_size((120, 24)).columns - 2)
            print("\n" + ngettext("wire trace ({n} frame)", "wire trace ({n} frames)", len(transport.trace)))
            print(terminal.visible(transport.trace.text(width)))  # each frame's line is cut to the width already
        if args.trace_jsonl:
            transport.trace.save(args.trace_jsonl)
    return status


def _inspect(args: argparse.Namespace) -> int:
    import anyio
    return anyio.run(_session, args, _inspect_server)


def _call(args: argparse.Namespace) -> int:
    import anyio
    try:
        params = json.loads(args.params) if args.params else None
    except json.JSONDecodeError as exc:
        raise SystemExit(_("mcplab: JSON-PARAMS is not valid JSON: {error}", error=exc)) from None
    if params is not None and not isinstance(params, dict):
        raise SystemExit(_("mcplab: JSON-PARAMS must be a JSON object, e.g. '{\"name\": \"get_weather\"}'"))
    return anyio.run(_session, args, lambda client: _call_method(client, args.method, params))


def _demo(args: argparse.Namespace) -> int:
    from mcplab import demo
    return demo.run(args.step, color=False if args.no_color else None)


def _config(args: argparse.Namespace) -> int:
    from mcplab.ecosystem import hostconfig

    env = dict(item.partition("=")[::2] for item in args.env)
    try:
        outcome = hostconfig.run(args.host, args.servers, era=args.era, root=args.root, writable=args.writable,
                                 env=env, path=args.write, tap=args.tap, replace=args.replace)
    except (hostconfig.HostConfigError, OSError) as exc:
        print(_("mcplab config: {error}", error=exc), file=sys.stderr)
        return 2
    if args.write is None:
        print(json.dumps(outcome.config, indent=2, ensure_ascii=False))
    print(outcome.note, file=sys.stderr)
    return 0


def _setup(args: argparse.Namespace) -> int:
    from mcplab import install
    language_flag = ["--lang", args.lang] if getattr(args, "lang", None) else []  # for the lab it opens: its first page
    return install.main([*language_flag, *args.jupyter_args], extra=args.extra, open_lab=not args.no_lab)


def _schemas(args: argparse.Namespace) -> int:
    from mcplab import schemas
    status, lines = schemas.command(args.base_url, Path(args.cache_dir) if args.cache_dir else None)
    print("\n".join(lines), file=sys.stderr if status else sys.stdout)
    return status


def _site(args: argparse.Namespace) -> int:
    from mcplab.site.steps import command
    return command(args.step, out=Path(args.out) if args.out else None,
                   cache=Path(args.cache_dir) if args.cache_dir else None, mirror=args.mirror)


def _client_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", metavar="CMD",
                       help=_('start the server with this command, e.g. "python servers/weather.py"'))
    where.add_argument("--url", help=_("connect to a Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp"))
    where.add_argument("--server", choices=SERVERS,
                       help=_("start a bundled server over stdio (wherever mcplab is installed)"))
    parser.add_argument("--era", choices=("auto", "legacy", "modern"), default="auto",
                        help=_("how to open: auto (default) probes with server/discover and falls back to "
                               "initialize; legacy: initialize; modern: server/discover"))
    parser.add_argument("--version", help=_("the protocol revision to ask for, e.g. 2024-11-05 (default: the latest)"))
    parser.add_argument("--timeout", type=float, default=30.0, help=_("seconds to wait for each response"))
    parser.add_argument("--trace-jsonl", metavar="FILE", help=_("save every frame to FILE, one JSON object a line"))
    parser.add_argument("--no-trace", action="store_true", help=_("do not print the wire trace"))


def _language_option() -> argparse.ArgumentParser:
    """``--lang``, shared by every subcommand but ``i18n`` (read before parsing: mcplab.i18n.commandline)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lang", metavar="LANG", default=argparse.SUPPRESS,  # not None over the main parser's
                        help=_("the language of this command and of what it starts: en or zh (简体中文); "
                               "default: $MCPLAB_LANG, else the locale (LANG=zh_CN.UTF-8 is zh)"))
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _language_option()
    parser = argparse.ArgumentParser(prog="mcplab", description=_("A teaching lab for the Model Context Protocol."),
                                     parents=[common])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, parents=[common])

    setup = command("setup", _("what `make lab` does: .venv, the pinned packages (uv), the official "
                               "schemas, then JupyterLab (other flags go to jupyter lab)"))
    setup.add_argument("--extra", choices=("lab", "test", "dev", "site"), default="lab",
                       help=_("what to install besides the package: lab (default), test, dev (both) or site "
                              "(what builds the browser edition: mcplab site)"))
    setup.add_argument("--no-lab", action="store_true", help=_("stop after installing; do not open JupyterLab"))
    setup.set_defaults(run=_setup, passthrough="jupyter_args")

    lab = command("lab", _("open JupyterLab on the labs (other flags go to jupyter lab); installed "
                           "from a wheel, it first copies the course into a folder of your own"))
    lab.add_argument("--dir", metavar="DIR", help=_("copy the course into DIR and open it there (default: labs/ "
                                                    "in a clone, ~/mcplab-course otherwise); your changes are kept"))
    lab.add_argument("--copy-only", action="store_true",
                     help=_("copy or bring the course up to date, do not open it"))
    lab.set_defaults(run=_lab, passthrough="jupyter_args")

    serve = command("serve", _("start a bundled server (stdio unless --http; other flags go to the server)"))
    serve.add_argument("name", choices=SERVERS)
    serve.set_defaults(run=_serve, passthrough="server_args")

    inspect = command("inspect", _("connect to a server: capabilities, tools, resources, prompts, trace"))
    _client_options(inspect)
    inspect.set_defaults(run=_inspect)

    call = command("call", _("send one request and print its result and the trace"))
    _client_options(call)
    call.add_argument("method", help=_("e.g. tools/call, resources/read, prompts/get, ping"))
    call.add_argument("params", nargs="?", help=_('the params as JSON, e.g. \'{"name": "get_weather", '
                                                  '"arguments": {"city": "Beijing"}}\''))
    call.set_defaults(run=_call)

    demo = command("demo", _("the whole tour in the terminal, every step with its wire trace"))
    demo.add_argument("--step", type=int, metavar="N", help=_("run only step N (1-6)"))
    demo.add_argument("--no-color", action="store_true",
                      help=_("no colours (also: NO_COLOR set, or not a terminal)"))
    demo.set_defaults(run=_demo)

    grade = command("grade", _("grade your own server or client (Labs 09 to 12): a report card, "
                               "exit status 1 if a line fails"))
    grade.add_argument("kind", choices=("server", "client", "http-client", "server-two", "client-two"))
    grade.add_argument("target", nargs="+", metavar="PATH", help=_("my_server.py / my_client.py, or a command"))
    grade.add_argument("--timeout", type=float, help=_("seconds to wait for each answer (server 5, client 3, server-two 30)"))
    grade.add_argument("--era", choices=("legacy", "modern", "both"), default="both",
                       help=_("http-client, server-two, client-two: the era(s) to grade it in (default both)"))
    grade.add_argument("--transport", choices=("stdio", "http", "both"), default="both",
                       help=_("server-two: the transport(s) to grade it over (default both)"))
    grade.set_defaults(run=_grade)

    i18n_text = _("for authors: bring the translation catalogs up to date with the English labs, then "
                  "rebuild labs/zh-CN/ (make translations)")
    i18n = sub.add_parser("i18n", help=i18n_text, description=i18n_text)
    i18n.add_argument("step", nargs="?", choices=("update", "build", "status", "check"),
                      help=_("only this step: update the catalogs, build the labs, list what is left to "
                             "translate, or check that all is in step (default: update, then build)"))
    i18n.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help=_("build only these (e.g. 01_jsonrpc)"))
    i18n.add_argument("--lang", default="zh", help=_("the language of the catalogs (default zh)"))
    i18n.add_argument("--no-execute", action="store_true", help=_("build without running the notebooks"))
    i18n.set_defaults(run=_i18n)

    config = command("config", _("print (or --write) the block a real host reads to start these servers"))
    config.add_argument("host", choices=("claude-desktop", "vscode", "generic"))
    config.add_argument("servers", nargs="*", metavar="SERVER",
                        help=_("[NAME=]weather|files|conformance|weather_sdk|PATH.py|URL (default: weather files)"))
    config.add_argument("--era", choices=("dual", "legacy", "modern"), default="dual",
                        help=_("--era for servers built on mcplab (default dual)"))
    config.add_argument("--root", help=_("the folder the files server serves (default: servers/samples)"))
    config.add_argument("--writable", action="store_true", help=_("let the files server write"))
    config.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help=_("add to each env block"))
    config.add_argument("--write", metavar="FILE", help=_("merge into FILE (atomically) instead of printing"))
    config.add_argument("--replace", action="store_true", help=_("with --write: replace entries of these names "
                                                                 "that you wrote yourself (FILE is backed up first)"))
    config.add_argument("--tap", metavar="DIR",
                        help=_("record each stdio server's traffic in DIR/NAME.jsonl (mcplab.ecosystem.wiretap)"))
    config.set_defaults(run=_config)

    fetch = command("schemas", _("download the official MCP schemas (for the trace viewer's badges) "
                                 "into the user's cache, each checked against its SHA-256 digest"))
    fetch.add_argument("--base-url", help=_("a mirror holding <version>/schema.json (default: $MCPLAB_SCHEMA_URL, "
                                            "else the official repository at the pinned commit)"))
    fetch.add_argument("--cache-dir", metavar="DIR", help=_("fill DIR instead of the user's cache folder"))
    fetch.set_defaults(run=_schemas)

    site = command("site", _("the course as a static JupyterLite site (Pyodide): lock (authors), fetch "
                             "(online), build (offline, into site/); serve it with python -m http.server"))
    site.add_argument("step", choices=("lock", "fetch", "build"))
    site.add_argument("--out", metavar="DIR", help=_("build: the site's folder (default: site/ in the checkout)"))
    site.add_argument("--cache-dir", metavar="DIR", help=_("the cache of locked files (default: "
                                                           "$XDG_CACHE_HOME/mcplab/site, else ~/.cache/mcplab/site)"))
    site.add_argument("--mirror", metavar="URL", help=_("fetch: take every file from URL/<file name> "
                                                        "(default: $MCPLAB_SITE_MIRROR, else its registry)"))
    site.set_defaults(run=_site)
    return parser


def _i18n(args: argparse.Namespace) -> int:
    from mcplab.i18n import normalize, tool

    return tool.main(args.step, normalize(args.lang), args.notebooks, execute=not args.no_execute)


def _grade(args: argparse.Namespace) -> int:
    from mcplab import grade
    target = args.target[0] if len(args.target) == 1 else args.target
    eras = ("legacy", "modern") if args.era == "both" else (args.era,)
    if args.kind == "http-client":
        report = grade.http_client(target, eras=eras)
    elif args.kind == "server-two":
        report = grade.server_two(target, eras=eras, transports=("stdio", "http") if args.transport == "both"
                                  else (args.transport,), **({"timeout": args.timeout} if args.timeout else {}))
    elif args.kind == "client-two":
        report = grade.client_two(target, eras=eras, **({"timeout": args.timeout} if args.timeout else {}))
    else:
        report = (grade.server if args.kind == "server" else grade.client)(
            target, **({"timeout": args.timeout} if args.timeout else {}))
    print(report)
    for note in report.notes:  # how this machine's speed was taken out of the card: beside it, not in it
        print(note, file=sys.stderr)
    return report.exit_code


def main(argv: list[str] | None = None) -> int:
    from mcplab.i18n import commandline

    argv = sys.argv[1:] if argv is None else list(argv)
    code = commandline.chosen(argv)
    if code:  # before the parser is built: its help is written in the language
        _choose_language(code)
    commandline.speak_argparse()
    parser = build_parser()
    # `lab`, `setup` and `serve` hand every flag they do not know to jupyter / the server itself.
    args, extra = parser.parse_known_args(argv)
    passthrough = getattr(args, "passthrough", None)
    if extra and passthrough is None:
        parser.error(_("unrecognized arguments: %s") % " ".join(extra))
    if passthrough:
        setattr(args, passthrough, extra)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
