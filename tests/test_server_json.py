"""servers/weather.server.json: the weather server described for the MCP Registry.

The shape below is written from the registry's documentation (github.com/modelcontextprotocol/registry,
docs/reference/server-json/: generic-server-json.md, official-registry-requirements.md, and the field
descriptions of server.schema.json 2025-12-11), not copied from its schema file:

* ``name``: reverse-DNS namespace, exactly one "/", 3-200 characters; ``description``: 1-100
  characters; ``version``: at most 255 characters, a specific version, never a range;
* ``packages[]``: ``registryType``, ``identifier``, ``version`` (never "latest") and ``transport``
  (``stdio``; ``streamable-http`` and ``sse`` with a ``url``) are required; arguments are
  ``positional`` (with ``value`` or ``valueHint``) or ``named`` (with ``name``);
* ``remotes[]``: ``type`` and ``url``; a server has packages, remotes, or both;
* the official registry also pins ``registryBaseUrl`` per registry type and keeps only the
  ``io.modelcontextprotocol.registry/publisher-provided`` key of ``_meta``.

Then the file is checked against the server it describes: the same version and title as the
weather server's ``serverInfo``, mcplab's own version for the package, and the command a client
would build from the package arguments starts that server and completes a handshake.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import jsonschema
import pytest

import mcplab
from server_helpers import RawServer, load_server_module

ROOT = Path(__file__).resolve().parent.parent
SERVER_JSON = ROOT / "servers" / "weather.server.json"
NOT_A_RANGE = r"^(?!.*(\^|~|>|<|\*|\|\||\.x$|\.x\.| - )).+$"

ARGUMENT = {"type": "object", "required": ["type"], "properties": {
    "type": {"enum": ["positional", "named"]}, "name": {"type": "string"}, "value": {"type": "string"},
    "valueHint": {"type": "string"}, "description": {"type": "string"}, "default": {"type": "string"},
    "isRequired": {"type": "boolean"}, "isRepeated": {"type": "boolean"}, "isSecret": {"type": "boolean"},
    "format": {"enum": ["string", "number", "boolean", "filepath"]},
    "choices": {"type": "array", "items": {"type": "string"}}},
    "allOf": [{"if": {"properties": {"type": {"const": "positional"}}},
               "then": {"anyOf": [{"required": ["value"]}, {"required": ["valueHint"]}]}},
              {"if": {"properties": {"type": {"const": "named"}}}, "then": {"required": ["name"]}}]}
KEY_VALUE = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "description": {"type": "string"}, "isRequired": {"type": "boolean"},
    "isSecret": {"type": "boolean"}, "default": {"type": "string"}}}
TRANSPORT = {"type": "object", "required": ["type"], "properties": {
    "type": {"enum": ["stdio", "streamable-http", "sse"]}, "url": {"type": "string"},
    "headers": {"type": "array", "items": KEY_VALUE}},
    "if": {"properties": {"type": {"enum": ["streamable-http", "sse"]}}}, "then": {"required": ["url"]}}
BASE_URLS = {"npm": "https://registry.npmjs.org", "pypi": "https://pypi.org"}  # the official registry's only ones
PACKAGE = {"type": "object", "required": ["registryType", "identifier", "version", "transport"],
           "properties": {
               "registryType": {"type": "string", "minLength": 1}, "registryBaseUrl": {"type": "string"},
               "identifier": {"type": "string", "minLength": 1},
               "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}, "pattern": NOT_A_RANGE},
               "runtimeHint": {"type": "string"}, "transport": TRANSPORT, "fileSha256": {"pattern": "^[a-f0-9]{64}$"},
               "runtimeArguments": {"type": "array", "items": ARGUMENT},
               "packageArguments": {"type": "array", "items": ARGUMENT},
               "environmentVariables": {"type": "array", "items": KEY_VALUE}},
           "allOf": [{"if": {"properties": {"registryType": {"const": kind}}, "required": ["registryBaseUrl"]},
                      "then": {"properties": {"registryBaseUrl": {"const": url}}}} for kind, url in BASE_URLS.items()]}
REMOTE = {"type": "object", "required": ["type", "url"], "properties": {
    "type": {"enum": ["streamable-http", "sse"]}, "url": {"type": "string", "pattern": "^(https?://|\\{)"},
    "headers": {"type": "array", "items": KEY_VALUE}}}
SERVER_JSON_SHAPE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "required": ["name", "description", "version"],
    "properties": {
        "$schema": {"type": "string", "pattern": "^https://static\\.modelcontextprotocol\\.io/schemas/"},
        "name": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255, "pattern": NOT_A_RANGE},
        "websiteUrl": {"type": "string", "pattern": "^https?://"},
        "repository": {"type": "object", "required": ["url", "source"],
                       "properties": {"url": {"type": "string"}, "source": {"type": "string"},
                                      "subfolder": {"type": "string"}, "id": {"type": "string"}}},
        "packages": {"type": "array", "items": PACKAGE},
        "remotes": {"type": "array", "items": REMOTE},
        "_meta": {"type": "object", "propertyNames": {"const": "io.modelcontextprotocol.registry/publisher-provided"}},
    },
    "anyOf": [{"required": ["packages"], "properties": {"packages": {"minItems": 1}}},
              {"required": ["remotes"], "properties": {"remotes": {"minItems": 1}}}],
}


def problems(document: object) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(SERVER_JSON_SHAPE).iter_errors(document)]


def described() -> dict:
    return json.loads(SERVER_JSON.read_text(encoding="utf-8"))


def test_the_weather_servers_server_json_has_the_registrys_shape() -> None:
    assert problems(described()) == []


def edited(change) -> dict:
    document = copy.deepcopy(described())
    change(document)
    return document


WRONG = [  # (what is wrong, how) — each breaks one documented rule
    ("no name", lambda d: d.pop("name")),
    ("a name without a namespace", lambda d: d.update(name="weather")),
    ("a name with two slashes", lambda d: d.update(name="io.github.x/weather/v2")),
    ("a description over 100 characters", lambda d: d.update(description="x" * 101)),
    ("an empty description", lambda d: d.update(description="")),
    ("no version", lambda d: d.pop("version")),
    ("a version range", lambda d: d.update(version="^1.0.0")),
    ("neither packages nor remotes", lambda d: d.pop("packages")),
    ("an empty package list", lambda d: d.update(packages=[])),
    ("a package without a transport", lambda d: d["packages"][0].pop("transport")),
    ("a package version 'latest'", lambda d: d["packages"][0].update(version="latest")),
    ("a package without a version", lambda d: d["packages"][0].pop("version")),
    ("a package without an identifier", lambda d: d["packages"][0].pop("identifier")),
    ("an HTTP transport without a url", lambda d: d["packages"][0].update(transport={"type": "streamable-http"})),
    ("an unknown transport", lambda d: d["packages"][0].update(transport={"type": "websocket"})),
    ("PyPI from a mirror", lambda d: d["packages"][0].update(registryBaseUrl="https://pypi.example.org")),
    ("a positional argument with neither value nor hint", lambda d: d["packages"][0]["packageArguments"][0].pop("value")),
    ("a named argument without a name", lambda d: d["packages"][0]["packageArguments"][2].pop("name")),
    ("snake_case from the 2025-07-09 format", lambda d: d["packages"][0].update(
        registry_type=d["packages"][0].pop("registryType"))),
    ("a remote without a url", lambda d: d.update(remotes=[{"type": "streamable-http"}])),
    ("a _meta key the registry drops", lambda d: d.update(_meta={"com.example/build": {"id": 1}})),
]


@pytest.mark.parametrize("why, change", WRONG, ids=[w for w, _ in WRONG])
def test_each_documented_rule_refuses_a_plausible_mistake(why: str, change) -> None:
    assert problems(edited(change)), why


def test_the_description_matches_the_server_it_describes() -> None:
    weather = load_server_module("weather").server
    document = described()
    assert document["version"] == weather.info["version"]    # "Equivalent of Implementation.version"
    assert document["title"] == weather.info["title"]
    assert document["name"].split("/")[1] == weather.info["name"]
    (package,) = document["packages"]
    assert (package["registryType"], package["identifier"], package["version"]) == ("pypi", "mcplab", mcplab.__version__)
    assert package["transport"] == {"type": "stdio"}


def client_argv(package: dict, executable: str) -> list[str]:
    """The command a client builds from a package entry: the program, then each argument in order."""
    argv = [executable]
    for argument in package.get("packageArguments", []):
        if argument["type"] == "positional":
            argv.append(argument["value"])
        else:
            argv += [argument["name"], argument.get("value", argument.get("default", ""))]
    return argv


@pytest.mark.subprocess
def test_the_package_arguments_start_the_weather_server() -> None:
    (package,) = described()["packages"]
    entry_point = Path(sys.executable).parent / "mcplab"  # what `uvx mcplab` would run: the console script
    argv = client_argv(package, str(entry_point) if entry_point.exists() else "mcplab")
    assert argv[1:] == ["serve", "weather", "--era", "dual"]
    with RawServer(argv, version="2025-11-25") as server:
        info = server.initialize("2025-11-25")["serverInfo"]
        assert (info["name"], info["version"]) == ("weather", described()["version"])
        assert {t["name"] for t in server.result("tools/list")["tools"]} == {"get_weather", "get_forecast"}
        assert server.close() == 0
