"""The course's predictions: one question before each key live exchange, keyed ``"<lab>.<name>"``.

Theory of operation
-------------------
Each entry is asked in its lab by :func:`mcplab.notebook.prediction.predict` right before the cell that
runs the exchange it is about, and that cell's output is where the answer shows. An entry keeps the
digest of its answer, never the answer (see :mod:`mcplab.notebook.prediction`); the test suite holds
the answers and checks each against the digest and against what the lab's next cell really prints.

``wrong`` is what a wrong prediction reads: which frame or line of the next cell's output to look
at, and the rule (with the spec section) that decides it. Every text is marked with ``N_`` so that
``mcplab i18n update`` puts it into the package's catalog; a choice that is a wire value (a
revision, a code) is the same in every language and is not marked.

To add one: write the entry here, put its answer in ``tests/test_predict.py``'s table (the test
prints the digest to paste when they disagree), and ask it in the lab.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from mcplab.i18n import N_
from mcplab.notebook.prediction import Prediction

__all__ = ["PREDICTIONS"]

_ALL = (
    # --- Lab 01 · JSON-RPC 2.0 ------------------------------------------------------------------
    Prediction(
        key="01.null_id",
        question=N_('Under MCP\'s rules, what does decode make of {"jsonrpc":"2.0","id":null,"method":"tools/list"}?'),
        choices=(N_("a request with id null, to be answered"),
                 N_("a notification, since the id is null"),
                 N_("refused with -32600 (Invalid Request)"),
                 N_("refused with -32700 (Parse error)")),
        digest="sha256:305d5e0a15e443626e6d371b5648a51d48b6c1a672eaf4c0b7db3ef74e9074c2",
        wrong=N_("Run the next cell and read step 3 of the first answer: the text is JSON (so it is not a "
                 "parse error) and has an id member (so it is not a notification), and MCP forbids a null "
                 "request id in every revision (Basic: Requests)."),
        right=N_("The second answer, without MCP's rule, is plain JSON-RPC's."),
    ),
    Prediction(
        key="01.batch",
        question=N_('A batch answered the JSON-RPC way holds a tools/list request (id 2), the notification '
                    'notifications/initialized and {"foo":"boo"}. How many responses are in the array sent back?'),
        choices=(),
        digest="sha256:b10deac3728967033b2063fdf75b4ea055d2fc0a136010626d45c74ef9d170a0",
        wrong=N_('Run the next cell and count the objects on the "replies:" line: one response per request, '
                 'none for a notification, and an element that is not a message at all gets an error of its '
                 'own, with id null (JSON-RPC 2.0 §6).'),
    ),
    Prediction(
        key="01.framer",
        question=N_("The framer is fed the stream in four chunks (10, 59, 40 and 37 bytes); the first line, the "
                    "success reply with its \\r\\n, is 89 bytes. After which chunk (1 to 4) does the first "
                    "message come out?"),
        choices=(),
        digest="sha256:95e96024631fc1d3481e17a159c9ea906a10be1b441120ff292fa497dad2e4b1",
        wrong=N_('Run the next cell and add up the "bytes waiting" column: a message comes out only once its '
                 'whole line, newline included, has arrived, however the chunks fall.'),
    ),
    # --- Lab 02 · the handshake -----------------------------------------------------------------
    Prediction(
        key="02.same_version",
        question=N_("The client asks the weather server for revision 2024-11-05, an old one the server still "
                    "supports. Which protocolVersion does the server's reply carry?"),
        choices=("2024-11-05", N_("2025-11-25, the server's newest"),
                 N_("none: the server refuses an old revision with an error")),
        digest="sha256:b4043f5db2572f693eafd5ac22c81917f762166e43bcc2a8fcf22edf73f399d0",
        wrong=N_('Run the next cell and read the "from stdout" line, result.protocolVersion: a server that '
                 'supports the revision the client asked for must answer with that same revision '
                 '(Lifecycle: Version Negotiation).'),
    ),
    Prediction(
        key="02.initialized_reply",
        question=N_("The client now sends notifications/initialized, then tools/list with id 2. How many "
                    "messages does the server send back?"),
        choices=(),
        digest="sha256:f96206a229fec75f7a6ed0d884f405235098d87a258468f957060607bbe98cc1",
        wrong=N_("Run the next cells and read frames 3 to 5 of the trace: frame 3, the notification, has no "
                 "id, so there is nothing a reply could name (JSON-RPC 2.0 §4.1); count the ← frames after it."),
    ),
    Prediction(
        key="02.completions",
        question=N_("Asked for 2025-06-18 instead of 2024-11-05, the weather server declares one capability "
                    "more. Which one?"),
        choices=("completions", "logging", "sampling", "roots"),
        digest="sha256:557071693bd272602c416abca3db18261195baf8645dfc8d5ae6ddc58cc45bc5",
        wrong=N_("Run the next cell and compare its capabilities line with the one section 2 printed for "
                 "2024-11-05. Sampling and roots are offered by a client, never by a server; the new key "
                 "came with revision 2025-03-26 (Server: Utilities)."),
    ),
    Prediction(
        key="02.downgrade",
        question=N_("The client asks for 2024-10-07, a revision the weather server does not speak (the cell "
                    "sends it by hand: Client refuses to ask for it). Which protocolVersion does the reply carry?"),
        choices=(),
        digest="sha256:bf61b58cc2e6083538539aae880d07cd89f0fa3d98c75abf6f54a01b8efc4f65",
        wrong=N_("Run the next cell and read frame 2 of its trace, result.protocolVersion: a server that does "
                 "not support the requested revision answers with one it does support, and should pick its "
                 "latest (Lifecycle: Version Negotiation); section 5 above showed which revisions this server "
                 "speaks."),
    ),
    # --- Lab 03 · tools, resources, prompts -----------------------------------------------------
    Prediction(
        key="03.default_units",
        question=N_('get_weather is called with only {"city": "Beijing"}. In what unit does the temperature '
                    'come back?'),
        choices=("°C", "°F", N_("none: the call fails, units is missing")),
        digest="sha256:893d9acc82e64fe0b46112a07778c4a060d81ee70f0bcf45c44e94b894c3557b",
        wrong=N_("Look at the inputSchema printed above: units is not in required, and its default is what "
                 "the server uses when the arguments leave it out. Then run the next cell and read the "
                 "result's text."),
    ),
    Prediction(
        key="03.unknown_tool",
        question=N_("The next cell's third call names a tool that does not exist, get_wether. Which JSON-RPC "
                    "error code does the server answer with?"),
        choices=(),
        digest="sha256:ac5e95a5701397838085785508c411e730a18f6ddb04308247c3e00bc994e1c9",
        wrong=N_('Run the next cell and read the "protocol error" line (the error response in the trace): the '
                 'method, tools/call, exists, so it is not -32601; the spec lists an unknown tool among the '
                 'protocol errors of tools/call (Server: Tools, Error Handling).'),
    ),
    Prediction(
        key="03.resource_escape",
        question=N_("The next cell ends with resources/read of file:///../weather.py, a URI outside the file "
                    "server's folder. Which JSON-RPC error code comes back?"),
        choices=(),
        digest="sha256:394b0eb143f565467015dd6cf1b796cde17c7ea7c217ba27fb82ab8366b7cbc4",
        wrong=N_('Run the next cell and read its "resources/read:" line: the server did not look for a file '
                 'and miss it (that would be -32002, Resource not found); it refused the argument itself, '
                 'before touching the disk.'),
    ),
    # --- Lab 04 · the host ----------------------------------------------------------------------
    Prediction(
        key="04.twins",
        question=N_("Two copies of the weather server join one host, as weather and backup. Under what "
                    "function name does the model see the backup's get_weather?"),
        choices=(),
        digest="sha256:b527b9051bb0478cdd489c005a14201d2025537d8ad4e5ca97c8814af7bda233",
        wrong=N_('Run the next cell and read the "function name" column of the backup line: both copies '
                 'are renamed, the server\'s name in front, joined by characters every model API allows '
                 'in a function name.'),
    ),
    Prediction(
        key="04.crash",
        question=N_("The weather server is killed (SIGKILL) and the same question asked again. What does "
                    "the model get for its get_weather call?"),
        choices=(N_("a tool result that says the server failed"),
                 N_("nothing: the host raises and the whole run stops"),
                 N_("the answer of the first run, from a cache"),
                 N_("the files server's answer instead")),
        digest="sha256:a4d8d34fcb07bf4aea536672d53bcf298fab62b3921402af0c87f52cef515823",
        wrong=N_('Run the next cell and read the line "host → weather tools/call get_weather": the host '
                 'keeps one client per server, so a crash ends one connection, and the model hears of it '
                 'the only way it hears anything, as a tool result.'),
    ),
    Prediction(
        key="04.catalogue",
        question=N_("The host offered 6 tools before the crash. How many are in its catalogue now?"),
        choices=(),
        digest="sha256:b9ead31b13a1f8b83565b5d9e410f3d048513444b9d5cdc3a1d513f986fd040a",
        wrong=N_("Run the next cell and count the rows of the catalogue at the end: a tool whose server is "
                 "gone cannot be called, so offering it would only make the model fail again."),
    ),
    # --- Lab 05 · Streamable HTTP ---------------------------------------------------------------
    Prediction(
        key="05.notification_status",
        question=N_("Over HTTP the client POSTs notifications/initialized, a notification. Which HTTP status "
                    "comes back?"),
        choices=(),
        digest="sha256:d3e1448f6b7d843830bd7fe68d1903ba64e91bc03eadfbb16210cc5ac84a7122",
        wrong=N_("Run the next cell and read frame 4 of the HTTP trace: nobody answers a notification, but "
                 "HTTP answers every request, with the status that means accepted, with nothing to say "
                 "(Transports: Sending Messages to the Server)."),
    ),
    Prediction(
        key="05.session_headers",
        question=N_("The HTTP trace of section 1 has 10 frames, from initialize to DELETE. How many of them "
                    "carry an Mcp-Session-Id header?"),
        choices=(),
        digest="sha256:6b5c8278ac26a8fcdcba54bd476849f36180357f012adaa588213885f2fe26c1",
        wrong=N_('Run the next cell and count "yes" in the last column: the server sends the id once, on its '
                 'reply to initialize, and the client sends it back on every message after that; no other '
                 'reply repeats it (Transports: Session Management).'),
    ),
    Prediction(
        key="05.not_acceptable",
        question=N_("The first bad request says Accept: application/json only, leaving out text/event-stream. "
                    "Which HTTP status comes back?"),
        choices=(),
        digest="sha256:07701380a882df5a3d87b34418a0137798d0f581eb7f9780e739de2fc299b586",
        wrong=N_("Run the next cell and read its first line: a client must accept both a JSON reply and an "
                 "event stream (Transports: Sending Messages to the Server), and HTTP has its own status "
                 "for a request whose Accept the server cannot meet."),
    ),
    # --- Lab 11 · security and authorization ---------------------------------------------------
    Prediction(
        key="11.no_token",
        question=N_("The file server now runs with --auth. The client's first POST /mcp, its initialize, carries "
                    "no access token. Which HTTP status comes back?"),
        choices=(),
        digest="sha256:f6251ea379b948fda6edd232f0aa2d2dc0844b1a8466af3cf8113e3a3ee4efd3",
        wrong=N_("Run the next cell and read row 1 of the table: a request without a token is one that needs "
                 "authorization, and the refusal says where to get it, in a WWW-Authenticate header naming the "
                 "resource's metadata (Authorization: Protected Resource Metadata Discovery Requirements, "
                 "Error Handling)."),
    ),
    Prediction(
        key="11.sandbox_link",
        question=N_("Our file server is asked for shortcut.txt, a symlink inside its folder that leads to the "
                    "secret outside it. What comes back?"),
        choices=(N_("the secret: the link itself is inside the folder"),
                 N_("a tool result with isError: true that names the rule"),
                 N_("a JSON-RPC error, -32602 (Invalid params)"),
                 N_("a JSON-RPC error, -32002 (Resource not found)")),
        digest="sha256:ca42940340adf395de2b4cd7406bf03354ac53dd6d2d93622a6d7114754d819f",
        wrong=N_('Run the next cell and read its "shortcut.txt" line: the server follows the link before it opens '
                 'anything and refuses what lands outside its folder. A bad argument to a tool that exists is a '
                 'tool execution error, reported in the result with isError (Server: Tools, Error Handling), so '
                 'the model can read why and correct itself.'),
    ),
    Prediction(
        key="11.passthrough",
        question=N_("The token minted for the docs file server is replayed at another file server of the same "
                    "authorization server, which has the same scopes. Which HTTP status does ours answer with?"),
        choices=(),
        digest="sha256:5cb80e9c21e85894df728e91c32b5986330023840a248fed49ed20703d1e22c8",
        wrong=N_('Run the next cell and read the "ours" line: the signature, the issuer and the expiry all check '
                 'out, but the token names another server as its audience, so for this server it is an invalid '
                 'token, not one with too little scope (Authorization: Token Handling, where invalid tokens MUST '
                 'get 401; Error Handling).'),
    ),
    Prediction(
        key="11.recover",
        question=N_("The file server was killed under both hosts. The user now asks what is in notes.md. What "
                    "does our host do?"),
        choices=(N_("starts the file server again and answers from notes.md"),
                 N_("answers without the file tools: their server is gone"),
                 N_("stops the run with an error"),
                 N_("starts both servers again, to be safe")),
        digest="sha256:0922ff1433623c7e3d5b7981c60223eea800f72dd0a25117cdceb7881bcdc6a1",
        wrong=N_('Run the next cell and read the line "ours": the host controls each client connection\'s '
                 'lifecycle (Architecture: Core Components), so before the run it brings back the one route that '
                 'failed, a new process and a new handshake; the last line shows that the other connection kept '
                 'its process.'),
    ),
    # --- Lab 12 · the ecosystem -----------------------------------------------------------------
    Prediction(
        key="12.host_frames",
        question=N_("Playing the host, the next cell runs the legacy handshake, lists the tools, the prompts and "
                    "the resources, then closes the server's stdin. How many frames does the trace hold?"),
        choices=(),
        digest="sha256:f15612e8f66ca6fa5b22348fa0e1078e65d1807d97f5c6be5905f37690461650",
        wrong=N_("Run the next cell and count the numbered frames: each request (initialize and the three lists) "
                 "gets one response, notifications/initialized gets none (JSON-RPC 2.0 §4.1), and closing stdin "
                 "is no message at all: it is how a stdio connection ends (Lifecycle: Shutdown)."),
    ),
    Prediction(
        key="12.unknown_resource",
        question=N_("Both weather servers are asked resources/read weather://city/Atlantis, a city neither knows. "
                    "Which error codes come back: ours (mcplab), then the SDK's?"),
        choices=(N_("-32002, then -32002"), N_("-32002, then -32602"), N_("-32602, then -32602"),
                 N_("no error: a result with isError: true from both")),
        digest="sha256:bd4912e499ffa51ccd014b47731feab6abad44bebe4edc5244c90cade7c3dfed",
        wrong=N_('Run the next cell and read the "error for resources/read" line of the diff: a missing resource '
                 'was -32002 (Resource not found) up to 2025-11-25, and 2026-07-28 makes it -32602 (Invalid '
                 'params), asking clients to accept both (Server: Resources, Error Handling). A resource is not a '
                 'tool: isError belongs to tool results.'),
    ),
    Prediction(
        key="12.sdk_extra",
        question=N_("The two clients each call get_weather once. What does the SDK's client send after the call "
                    "that ours does not?"),
        choices=("tools/list", "ping", "notifications/cancelled", N_("nothing: the two traces match")),
        digest="sha256:72f2b57ea81ee368340b132bf48f2c59569bf0b7538d69ae65a335e96767cbbf",
        wrong=N_("Run the next cell and read the frames at the end of the diff that only the SDK's client has: a "
                 "client that gets structured content checks it against the tool's outputSchema (Server: Tools, "
                 "Output Schema: clients SHOULD validate), and that schema comes with the tool list."),
    ),
)

#: key → prediction, in the order of the labs (read-only)
PREDICTIONS: Mapping[str, Prediction] = MappingProxyType({prediction.key: prediction for prediction in _ALL})
