"""Checks for lab 15 (the ecosystem): a Claude Desktop entry written by hand, which operations change
the world, the backends nginx picks, and a server.json for the registry.

The host entry is started the way a host starts it (:func:`mcplab.ecosystem.hostconfig.launch_spec`: the argv,
no shell, a minimal environment) and must answer ``initialize``; the backend order comes from
round-robin over three backends; the server.json rules are the registry's documented ones. A server
that gives no answer within ``START_TIMEOUT`` gets no verdict: the feedback says the machine was slow.
In the browser edition, where no process starts, the entry gets every check but the start, and the
feedback says that one needs the local install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Text, Texts, _

__all__ = ["check_desktop_entry", "check_side_effects", "check_backends", "check_server_json",
           "OPERATIONS", "BALANCER_STORY"]

# --- 1. a Claude Desktop entry, by hand -------------------------------------------------------------

DESKTOP_FIELDS = {"command", "args", "env"}
START_TIMEOUT = 60  # seconds for the server to start and answer: on a busy classroom machine a start takes 5-10 s


def _handshake(argv: list[str], env: dict[str, str]) -> dict:
    """Start ``argv`` as a host would (no shell, its own folder, a minimal environment); initialize; stop."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "lab15-check", "version": "1"}}}
    done = subprocess.run(argv, input=(json.dumps(hello) + "\n").encode(), capture_output=True, timeout=START_TIMEOUT,
                          env=env, cwd=os.path.abspath(os.sep))
    for line in done.stdout.splitlines():
        reply = json.loads(line)
        if reply.get("id") == 1:
            return reply
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["nothing on stderr"]
    raise RuntimeError(_("it exited with code {code} before answering; its stderr says: {tail}", code=done.returncode,
                         tail=tail[0][:120]))


@check(N_("one mcpServers entry, as a dict"), dict)
def check_desktop_entry(answer: Any) -> Feedback:
    """One ``mcpServers`` entry that starts servers/weather.py speaking only the legacy handshake."""
    hint = _("a host runs no shell, has its own PATH and folder, and knows no virtual environment: spell out which "
             "interpreter, which script and which flags, every path in full (sys.executable and Path.resolve() help)")
    extra = set(answer) - DESKTOP_FIELDS
    if extra:
        return failed(_("Claude Desktop's entry has command, args and env only; {extra} is not among them",
                        extra=sorted(extra))
                      + (_(" (it has no working-directory field: make every path absolute instead)") if "cwd" in extra
                         else ""), hint)
    command, args = answer.get("command"), answer.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return failed(_("command must be a string and args a list of strings"), hint)
    if not os.path.isabs(command):
        return failed(_("{command!r} is not an absolute path: the host looks it up on its own PATH, which does not "
                        "hold this lab's interpreter", command=command), hint)
    from mcplab.course import servers_dir  # the checkout's servers, or a wheel's copy under mcplab/_course

    if not args or not os.path.isabs(args[0]) or Path(args[0]).resolve() != (servers_dir() / "weather.py").resolve():
        return failed(_("the first argument must be the absolute path of servers/weather.py: the host starts the "
                        "server from a folder of its own, so a relative path points nowhere"), hint)
    if args[1:] != ["--era", "legacy"]:
        return failed(_("after the script come the server's flags; to speak only the handshake it needs "
                        "--era legacy, got {flags}", flags=args[1:]), hint)
    from mcplab.ecosystem.hostconfig import host_environment

    env = answer.get("env")
    if env is not None and not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                               for k, v in env.items())):
        return failed(_("env must be an object of variable name → text, got {env!r}", env=env), hint)
    from mcplab import place

    if place.IN_BROWSER:  # no verdict, and no hint: nothing was wrong with the entry so far
        return Feedback(False, _("every field is as a host needs it; the last check, starting it as a host does and "
                                 "asking initialize, needs the local install: a browser page can start no process"))
    try:
        reply = _handshake([command, *args], host_environment(answer.get("env")))
    except subprocess.TimeoutExpired:  # the clock, not the entry: no verdict, and no hint either
        return Feedback(False, _("the weather server did not answer within {seconds} s on this machine; this says "
                                 "nothing about your entry; run the cell again (or close other work)",
                                 seconds=START_TIMEOUT))
    except (OSError, RuntimeError, ValueError) as exc:
        return failed(_("started as a host starts it, {exc}", exc=exc), hint)
    info = reply.get("result", {}).get("serverInfo", {})
    if info.get("name") != "weather":
        return failed(_("started as a host starts it, it answered {reply}", reply=json.dumps(reply)[:120]), hint)
    return passed(_("started as a host starts it (this argv, no shell, a minimal environment, another folder), "
                    "the weather server answered initialize at 2025-11-25"))


# --- 2. which operations change the world ---------------------------------------------------------

OPERATIONS = Texts({
    "a": "tools/call write_file {path: 'draft.md', content: '...'}   (annotations: readOnlyHint false, destructiveHint true)",
    "b": "resources/read file:///notes.md",
    "c": "prompts/get review_code {path: 'src/greet.py'}",
    "d": "tools/call get_weather {city: 'Paris'}   (annotations: readOnlyHint true)",
    "e": "resources/templates/list",
    "f": "tools/call read_file {path: 'notes.md'}   (annotations: readOnlyHint true)",
})
_CHANGES = {"a"}
_WHY = Texts({"b": "a resource is data the application reads: reading it changes nothing (seed 1: no side effects)",
        "c": "a prompt is a template: prompts/get fills it in and returns messages, nothing runs",
        "d": "a tool *may* act, but this one says readOnlyHint: true, and it only looks up a table",
        "e": "listing templates is discovery: it changes nothing",
        "f": "read_file is a tool, yet read-only (readOnlyHint: true): tools are where side effects live, "
             "not a promise that each has one"})


@check(N_("a set of letters"), (set, frozenset, list, tuple, str))
def check_side_effects(answer: Any) -> Feedback:
    """The set of OPERATIONS that change something outside the answer itself."""
    hint = _("seed 1: tools act (they may have side effects), resources have none, prompts are templates; "
             "a tool's annotations say whether it only reads")
    if isinstance(answer, str):
        answer = set(answer.replace(",", " ").split())
    if not isinstance(answer, (set, list, tuple, frozenset)):
        return failed(_("expected a set of letters such as {{'a'}}, got {kind}", kind=type(answer).__name__), hint)
    if not all(isinstance(letter, str) for letter in answer):
        return failed(_("expected a set of letters such as {{'a'}}, got {answer!r}", answer=answer), hint)
    chosen = {letter.strip().lower() for letter in answer}
    unknown = chosen - set(OPERATIONS)
    if unknown:
        return failed(_("{unknown} are not among the operations ({letters})", unknown=sorted(unknown),
                        letters=", ".join(OPERATIONS)), hint)
    for letter in sorted(chosen - _CHANGES):
        return failed(_("{letter} changes nothing: {why}", letter=letter, why=_WHY[letter]), hint)
    if _CHANGES - chosen:
        return failed(_("one operation does change the folder: a tool that writes, and says so in its annotations "
                        "(destructiveHint: true)"), hint)
    return passed(_("only write_file acts on the world; resources and prompts never do, and two of the three tools "
                    "say in their annotations that they only read"))


# --- 3. which backend answers ---------------------------------------------------------------------

BALANCER_STORY = Text("A freshly started nginx balances three backends round-robin (the shipped template). A modern "
                  "client sends server/discover, then one tools/call. Then a legacy client opens a session: "
                  "initialize, then notifications/initialized. Four POSTs in all.")


@check(N_("four (backend, status) pairs"), (list, tuple))
def check_backends(answer: Any) -> Feedback:
    """For each of the four POSTs of BALANCER_STORY: (backend number, HTTP status)."""
    hint = _("round-robin: each POST goes to the next backend in turn, whoever sends it; a legacy session lives "
             "in the process that answered initialize")
    whole = all(isinstance(pair, (tuple, list)) and len(pair) == 2
                and all(type(number) is int for number in pair) for pair in answer)
    if not whole:
        return failed(_("expected four (backend, status) pairs of whole numbers, e.g. [(1, 200), ...], got {answer!r}",
                        answer=answer), hint)
    given = [tuple(pair) for pair in answer]
    expected = [(1, 200), (2, 200), (3, 200), (1, 404)]
    if len(given) != len(expected):
        return failed(_("four POSTs, four pairs; got {count}", count=len(given)), hint)
    backends = [pair[0] for pair in given]
    if backends != [pair[0] for pair in expected]:
        return failed(_("backends {backends}: nginx keeps no memory of who asked, nor of which client it was; "
                        "it takes the next one in turn", backends=backends), hint)
    if given[3][1] != 404:
        return failed(_("notifications/initialized carries the session id backend 3 minted; backend 1 never saw it"),
                      hint)
    if any(pair[1] != 200 for pair in given[:3]):
        return failed(_("a modern request, and an initialize, stand alone: each gets 200 wherever it lands"), hint)
    return passed(_("the modern client never noticed the backends change; the legacy session broke on its second "
                    "request"))


# --- 4. a server.json -----------------------------------------------------------------------------

_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
_RANGE = re.compile(r"[\^~<>*]|\.x\b|\|\|| - ")


@check(N_("a server.json, as a dict"), dict)
def check_server_json(answer: Any) -> Feedback:
    """A server.json for the files server, published on PyPI as mcplab (``mcplab serve files``)."""
    hint = _("servers/weather.server.json is a model: name (a namespace, one '/', the server), description "
             "(100 characters at most) and version; one package saying where it comes from, its version, its "
             "transport and the arguments that start it")
    for key in ("name", "description", "version"):
        if not isinstance(answer.get(key), str) or not answer[key]:
            return failed(_("{key!r} is required (a non-empty string)", key=key), hint)
    if not _NAME.match(answer["name"]) or len(answer["name"]) > 200:
        return failed(_("name {name!r} must be a reverse-DNS namespace, one '/', then the server's name "
                        "(io.github.<you>/files)", name=answer['name']), hint)
    if len(answer["description"]) > 100:
        return failed(_("the registry takes 100 characters of description at most; this one has {count}",
                        count=len(answer['description'])), hint)
    if _RANGE.search(answer["version"]) or answer["version"] == "latest":
        return failed(_("version {version!r} is a range; the registry wants one specific version",
                        version=answer['version']), hint)
    packages = answer.get("packages")
    if not isinstance(packages, list) or not packages:
        return failed(_("a local server is found through its packages: a non-empty 'packages' list"), hint)
    package = packages[0]
    if not isinstance(package, dict):
        return failed(_("each package is an object, got {kind}", kind=type(package).__name__), hint)
    for key in ("registryType", "identifier", "version", "transport"):
        if key not in package:
            return failed(_("each package needs {key!r}", key=key), hint)
    if not isinstance(package["version"], str) or package["version"] == "latest" or _RANGE.search(package["version"]):
        return failed(_("a package version is one specific version, never 'latest' or a range"), hint)
    if package.get("transport") != {"type": "stdio"}:
        return failed(_("the files server speaks stdio when a client starts it: transport {{\"type\": \"stdio\"}}, "
                        "got {transport}", transport=package.get('transport')), hint)
    if (package["registryType"], package["identifier"]) != ("pypi", "mcplab"):
        return failed(_("the package is mcplab on PyPI: registryType 'pypi', identifier 'mcplab'"), hint)
    arguments = package.get("packageArguments", [])
    if not isinstance(arguments, list) or not all(isinstance(a, dict) for a in arguments):
        return failed(_("packageArguments is a list of objects such as {{\"type\": \"positional\", \"value\": ...}}"),
                      hint)
    values = [a.get("value") for a in arguments if a.get("type") == "positional"]
    if values[:2] != ["serve", "files"]:
        return failed(_("a client runs `mcplab` followed by the positional arguments: they must start serve, files; "
                        "got {values}", values=values), hint)
    return passed(_("a client would run `uvx mcplab serve files`, and the registry would accept the shape "
                    "(publishing also needs the namespace proven: a GitHub login for io.github.<you>)"))
