"""The course's predictions: one question before each key live exchange, keyed ``"<lab>.<name>"``.

Theory of operation
-------------------
Each entry is asked in its lab by :func:`predict` right before the cell that
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
from mcplab.notebook.prediction import Asked, Prediction

__all__ = ["PREDICTIONS", "predict"]

_ALL = (
    # --- Lab 00 · start here -----------------------------------------------------------------------
    Prediction(
        key="00.frames",
        question=N_("The next cell sends three requests (initialize, tools/list, tools/call) and one "
                    "notification (notifications/initialized). How many frames will its trace show, both "
                    "directions counted?"),
        choices=(),
        digest="sha256:4f2cb8c043ab14c932978ec2d0df9f4e856c7d6accbcc61bdb3d41b3cd0cdfaf",
        wrong=N_("Run the next cell and read the first line of the trace, which counts the frames by kind: "
                 "every request gets exactly one response, carrying its id (Basic: Responses), and nobody "
                 "answers a notification (Basic: Notifications)."),
    ),
    Prediction(
        key="00.new_handshake",
        question=N_("The playground starts a weather server of its own and connects to it. What is the first "
                    "message on its pipe?"),
        choices=(N_("initialize: a new connection needs a handshake of its own"),
                 N_("tools/list: the cell above has done the handshake already"),
                 N_("a greeting the new server sends before the client says anything")),
        digest="sha256:ec0d09305ea3592ab44247e043ca99c82d88652c2155e2abd6f7467903baee49",
        wrong=N_("Run the next cells and read frame 1 of the playground's trace: the first server exited when "
                 "its connection closed, this is a new process on a new pipe, and the first interaction of "
                 "every connection is the initialization, which the client starts (Lifecycle: "
                 "Initialization)."),
    ),
    Prediction(
        key="00.send_frames",
        question=N_("The playground's trace above holds 11 frames. Send calls get_weather once, on the open "
                    "connection. How many frames will the trace hold after it?"),
        choices=(),
        digest="sha256:45428a4a4301f3476c1dff8c78005c36896c85461f966a2246ad608489a5d765",
        wrong=N_("Run the next cell and read the first line of the trace it shows, then its last rows: a call "
                 "on an open connection is one request and the one response that carries its id (Basic: "
                 "Responses); the handshake is not done again."),
    ),
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
    Prediction(
        key="02.cancelled",
        question=N_("get_forecast for China is waiting on the user (the server sent elicitation/create). The "
                    "client sends notifications/cancelled for its tools/call, then ping with id 3. What is the next "
                    "message the server sends?"),
        choices=(N_("the tools/call response, with isError: true"),
                 N_("an error response to the tools/call: request cancelled"),
                 N_("the ping response: the cancelled call gets no response at all"),
                 N_("notifications/cancelled for its own elicitation/create")),
        digest="sha256:76362ab3eb9ed2ee49d7a69c86f6ccaff0cd384365d9bad0ed61ab1357858e69",
        wrong=N_("Run the next cell and read the frames after the notifications/cancelled the client sent: the "
                 "receiver of a cancellation SHOULD stop the work and not send a response for that request "
                 "(Basic: Cancellation, Behavior Requirements), so the next frame from the server answers id 3."),
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
    Prediction(
        key="03.pages",
        question=N_("The file server now sends at most 2 resources a page, and it has 5 files. How many "
                    "resources/list requests does list_resources() send before it has them all?"),
        choices=(),
        digest="sha256:d532dcf44fcf443edc001679d6c66f4315e00b4d7137d15842f89a505a5df00d",
        wrong=N_("Run the next cell and count the lines that start with → resources/list: a page ends with "
                 "nextCursor while more items exist, and only a result without it is the last page "
                 "(Server: Pagination, Response Format)."),
    ),
    Prediction(
        key="03.structured_mismatch",
        question=N_('The next cell\'s second server declares the forecast\'s outputSchema but sends "high_c": '
                    '"19", a string where the schema says integer. What does a client that validates do?'),
        choices=(N_("it answers the server with a JSON-RPC error for that response"),
                 N_("it keeps the result but does not use structuredContent as data"),
                 N_("nothing: the response is well-formed JSON-RPC, so the object is used as it came"),
                 N_("it calls the tool again until the object conforms")),
        digest="sha256:fe09d6a3f1e5d3ca0f10cb28b975f8ca08cfdb6edec1841a6b53f9874bf38d24",
        wrong=N_("Run the next cell and read the ✗ line under \"what came\" and the trace below it: nobody answers "
                 "a response, so the check happens in the client after the frame has crossed, and the server "
                 "broke its MUST (Server: Tools, Output Schema: servers MUST conform, clients SHOULD validate)."),
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
    # --- Lab 06 · the stateless core (2026-07-28) -----------------------------------------------
    Prediction(
        key="05.before_initialize",
        question=N_("Over stdio the weather server answers tools/list sent before initialize with the error "
                    "-32600. What does the same server answer over Streamable HTTP to a POST of tools/list "
                    "before any initialize, so with no Mcp-Session-Id header?"),
        choices=(N_("HTTP 200 with the tool list"), N_("HTTP 400 Bad Request, with -32600 in the body"),
                 N_("HTTP 404 (Not Found)"), N_("HTTP 202 Accepted and an empty body")),
        digest="sha256:845fb2c652e77c11b7bba7a1cd3f91640c6b005c21874924977f820098a7c537",
        wrong=N_("Run the next cell and read the status line under the HTTP POST: a server that requires a "
                 "session SHOULD answer a request without Mcp-Session-Id (other than initialize) with 400 Bad "
                 "Request, and 404 is for a session id it no longer knows (Transports: Session Management)."),
    ),
    Prediction(
        key="06.modern_frames",
        question=N_("The same get_weather call, from a client that speaks 2026-07-28 only and opens with "
                    "server/discover. How many messages cross the pipe, both ways counted?"),
        choices=(),
        digest="sha256:c3f5225a4a27b863f9b45bcc2dbc44f53a1e19048e617914e4221e8ab78fe204",
        wrong=N_("Run the next cell and count the numbered lines of the second trace: server/discover and its "
                 "result take the place of initialize, its result and notifications/initialized, and nothing "
                 "follows a discovery the way notifications/initialized follows a handshake (2026-07-28, "
                 "Versioning: Protocol Version Negotiation)."),
    ),
    Prediction(
        key="06.supported_versions",
        question=N_("The weather server runs as dual-era. Which versions does its server/discover result list "
                    "in supportedVersions?"),
        choices=(N_("only 2026-07-28, the one modern revision"),
                 N_("2026-07-28 and the four legacy revisions it also speaks"),
                 N_("none: in 2026-07-28 the version travels in each request's _meta instead")),
        digest="sha256:1001bf5f8e351ba4ec586e1296182ebfdae9c719f854850fb15dc7daf5827163",
        wrong=N_("Run the next cell and read the supportedVersions array of the second frame: it lists every "
                 "version the server supports, for the client to choose from (2026-07-28, Discovery: "
                 "DiscoverResult); this server answers initialize in four legacy revisions too."),
    ),
    Prediction(
        key="06.retry_version",
        question=N_("A client from the future asks for 2027-01-01 and gets -32022 with data.supported. Which "
                    "version does the dual-era client ask for next?"),
        choices=("2026-07-28", "2025-11-25", "2027-01-01",
                 N_("none: -32022 ends the conversation")),
        digest="sha256:f3d252d15848be43a14714381980af67f14bc3e2a775d9de80dd9dad1bccd65a",
        wrong=N_('Run the next cell and read the line "the client decides": -32022 is a modern error, so the '
                 'server is modern, and a dual-era client that meets a modern server stays modern (2026-07-28, '
                 'Versioning: Compatibility Matrix); it retries with a version in supported that it speaks itself.'),
    ),
    Prediction(
        key="06.matrix_failures",
        question=N_("The matrix has seven rows of client era × server era. How many of them fail over stdio?"),
        choices=(),
        digest="sha256:f3411ecc165d7103152e3533b135bc17b6ccd27517a46a58c03f39b7db34a51a",
        wrong=N_('Run the next cell and count "fails:" in the "live (stdio)" column: a dual-era side adapts to '
                 'either era, so only a single-era client meeting a single-era server of the other era fails '
                 '(2026-07-28, Versioning: Compatibility Matrix).'),
    ),
    # --- Lab 07 · scaling and multi-round-trip requests (2026-07-28) ----------------------------
    Prediction(
        key="07.session_404",
        question=N_("A legacy client opens through the proxy: initialize reaches backend 1, which mints a "
                    "session id; notifications/initialized, carrying that id, reaches backend 2. Which HTTP "
                    "status does backend 2 answer?"),
        choices=(),
        digest="sha256:32f6da79584de3d35519265573b14705256817a4623b1ff14774764b5408bb59",
        wrong=N_("Run the next cell and read its first line, then the response that says x-backend: 2 in the "
                 "HTTP trace: a server answers a session id it does not hold as a session that is over, and the "
                 "client must start again with initialize (2025-11-25, Transports: Session Management)."),
    ),
    Prediction(
        key="07.input_required",
        question=N_("write_file is asked to replace notes.md, which exists, and the server asks before it "
                    "replaces a file. What is the resultType of its first reply?"),
        choices=("complete", "input_required",
                 N_("none: the server sends its own elicitation/create request instead")),
        digest="sha256:4b5dc04c8570e165a67044646b5856a6d5a6915501ea4fd40f7fc5b185de6f7a",
        wrong=N_("Run the next cell and read the resultType line at the top of the result: a 2026-07-28 server "
                 "never sends a request of its own; it answers with what it needs in inputRequests, and the "
                 "client sends the request again (2026-07-28, Multi Round-Trip Requests)."),
    ),
    Prediction(
        key="07.tampered",
        question=N_("The client changes one character of round 2's requestState and sends round 3 with it. "
                    "What comes back?"),
        choices=(N_("an error, before the tool runs"),
                 N_("the final result: a requestState is only echoed, never checked"),
                 N_("round 2's question again"),
                 N_("a new requestState")),
        digest="sha256:5516b47d867bb052ce6357b7ca4c11d3c4f7e507fabd950281414999eea238c0",
        wrong=N_("Run the next cell and read its first line and frame 10 of the trace: a server must treat "
                 "requestState as attacker input and reject state that fails verification; this one seals it "
                 "with an HMAC (2026-07-28, Multi Round-Trip Requests: Server Requirements)."),
    ),
    # --- Lab 08 · the economics, N×M versus N+M ---------------------------------------------------
    Prediction(
        key="08.not_exponential",
        question=N_("The apps stay at 100 while the tools grow from 10 to 100,000. What does the ratio "
                    "N·M / (N+M), adapters per implementation, do?"),
        choices=(N_("it levels off just below 100"),
                 N_("it grows about tenfold with every tenfold of tools"),
                 N_("it grows exponentially, without bound"),
                 N_("it stays at about 50")),
        digest="sha256:a731bb8cd4e20ae0b162012b45775f5624548e0711a19c4848616874ca4cc979",
        wrong=N_("Run the next cell and read the ratio column from row to row: N·M / (N+M) is N times "
                 "M / (N+M), a fraction that creeps towards 1 but never reaches it, so the ratio stays below "
                 "N, the smaller side: a product against a sum (section 1)."),
    ),
    Prediction(
        key="08.doubled",
        question=N_("Double both sides: 6 apps and 8 tools. How many adapter lines does the left picture "
                    "draw?"),
        choices=(),
        digest="sha256:c9b5b9a38b7b195c2a7a52f5ea127e83930b826c67335be6b42b1a94b8bc8ea9",
        wrong=N_('Run the next cell and read "adapters" on its first line: one line per pair, N×M of them, '
                 "so doubling both sides doubles the product twice, while the sum, the implementations, "
                 "only doubles (section 1)."),
    ),
    Prediction(
        key="08.sparse",
        question=N_("Each of the 3 apps wants only 2 of the 4 tools (density 0.5), and every piece costs the "
                    "same. Which way needs fewer pieces?"),
        choices=(N_("point-to-point"), N_("the protocol"), N_("neither: both need the same number")),
        digest="sha256:08f962dde92e0b50292abcf849c5f8b4909cdbab3c0fff1153571642b49ba542",
        wrong=N_("Run the next cell and read its last line: point-to-point builds only the adapters someone "
                 "wants, density · N · M of them, while the protocol still builds one implementation per app "
                 "and per tool, N + M (section 5.1)."),
        right=N_("The million-adapter argument assumes every app wants every tool."),
    ),
    Prediction(
        key="08.revision",
        question=N_("With the prices printed above (ILLUSTRATIVE_COSTS), what does one revision cost through "
                    "the protocol at 3 apps × 4 tools? Type it to one decimal place."),
        choices=(),
        digest="sha256:e280a1ef3e14259ced6fab6c845a2575a76b8dcb2e3beae4d15190ced86113ec",
        wrong=N_("Run the next cell and read its first line: through the protocol a revision touches every "
                 "implementation once, N + M of them, each at implementation_revision (section 5.3)."),
    ),
    # --- Lab 09 · build a server ------------------------------------------------------------------
    Prediction(
        key="09.error_members",
        question=N_("The next cell makes three calls that all fail: find_book for a book not on the shelves, "
                    "average_year (the bug), and burn_book, a tool the server does not have. Of the three "
                    'answers on the wire, how many carry an "error" member instead of a "result"?'),
        choices=(),
        digest="sha256:aaae8f5a22d0762df1ba5952475a8ce24d5fc8a156cfc3321220bfa59d6c6548",
        wrong=N_('Run the next cell and read the lines under "the three answers on the wire": a tool that ran '
                 "and could not do it answers with a result marked isError: true, which the model can read; "
                 "only a request the server cannot serve at all, such as a call to an unknown tool, gets a "
                 "JSON-RPC error (Server: Tools, Error Handling)."),
    ),
    Prediction(
        key="09.capabilities",
        question=N_("The bookshelf registers tools, a resource and a resource template, and two prompts "
                    "(sections 2 to 5). How many capabilities does it declare?"),
        choices=(),
        digest="sha256:8a73008c83b76251175fc3b8a941f064b06ebfb9b5cd62fd94b920fe34846471",
        wrong=N_('Run the next cell and count the keys on the line "the bookshelf:": the toolkit declares one '
                 "capability for each kind of thing registered, one more when a template or a prompt offers "
                 "values (complete=, a Literal hint), and nothing it will not use (Lifecycle: Capability "
                 "Negotiation; Server: Utilities, Completion)."),
    ),
    Prediction(
        key="09.round_robin",
        question=N_("Two copies that keep their books in their own process stand behind the round-robin "
                    "proxy. add_book puts Dune on one of them, then find_book asks for it three times. How "
                    "many of the three lookups find it?"),
        choices=(),
        digest="sha256:13b622685c5a7dea3364491bbda4385f0225a32c9cf73365430a1f810d88709c",
        wrong=N_('Run the next cell and read the lines after add_book under "books in each process": the '
                 "proxy sends each request to the next copy, and a book kept in a process exists in that copy "
                 "only; state that spans requests must live where every copy can reach it (2026-07-28, Basic: "
                 "Statelessness)."),
    ),
    # --- Lab 10 · build a client ------------------------------------------------------------------
    Prediction(
        key="10.flush",
        question=N_("The client writes initialize (174 bytes and a newline) to the server's stdin and does "
                    "not flush. Does an answer come within half a second?"),
        choices=(N_("no: the line is still in the client's own buffer"),
                 N_("yes: a pipe delivers every write at once"),
                 N_("yes: the newline at the end sends the line")),
        digest="sha256:94c7bcf61e71b9767b1835f2d4df142f2350c1b311d062399a0a33c9162e671e",
        wrong=N_("Run the next cell and read its first line: Python keeps what you write to a pipe in a "
                 "buffer of several kilobytes until the buffer fills or you flush, so the server has not yet "
                 "seen a byte; on stdio a message is a line the server has received (Transports: stdio)."),
    ),
    Prediction(
        key="10.stderr_full",
        question=N_("A server writes about 190 kB to stderr before it answers, and the client never reads its "
                    "stderr. What does the client get within 1 s?"),
        choices=(N_("nothing: the server is stuck writing into a full pipe"),
                 N_("the answer: a pipe drops what nobody reads"),
                 N_("the answer, with the log mixed into stdout"),
                 N_("a JSON-RPC error, -32603 (Internal error)")),
        digest="sha256:33e529da1f0ff2004b2c8f4c3b33402ef6743a8d92de9f732faaae1c917fde95",
        wrong=N_('Run the next cell and read the "stderr never read" line: a pipe holds 64 KiB and a write '
                 "into a full pipe waits for a reader, so the server never reaches its answer. A client may "
                 "ignore what stderr says (Transports: stdio), not the pipe itself."),
    ),
    Prediction(
        key="10.sigkill_status",
        question=N_("This server ignores the end of its stdin and SIGTERM too. Which exit status does "
                    "subprocess report once shut_down has stopped it?"),
        choices=(),
        digest="sha256:657c820a900a17517e57a6c0beb147d7cc112108f341e8457c946f11dc333a20",
        wrong=N_("Run the next cell and read its line: after closing stdin and SIGTERM, the last step is "
                 "SIGKILL (Lifecycle: Shutdown, stdio), and Popen reports a process ended by a signal as "
                 "minus the signal's number, where a shell would print 128 plus it."),
    ),
    # --- Lab 11 · build a server, part two -----------------------------------------------------
    Prediction(
        key="11.progress_count",
        question=N_("The next cell calls run_errand(stops=4) with a progress token. How many "
                    "notifications/progress frames come before its response?"),
        choices=(),
        digest="sha256:ff9bee93491485119cf3e2cb796f76dd69c437af9d8b3e03e3fac5f990408166",
        wrong=N_('Run the next cell and read the line "notifications/progress frames:": the tool reports once '
                 "after each stop, with the request's token and a progress value that goes up each time "
                 "(Basic: Utilities, Progress)."),
    ),
    Prediction(
        key="11.cancel_response",
        question=N_("The next cell cancels run_errand(stops=50) after its second progress notification, then "
                    "runs a short errand to its end. How many responses for the cancelled request's id reach "
                    "the client?"),
        choices=(),
        digest="sha256:fbd9dfa209b386eb342eab153168c2c648ac5b95bd37eff892c4efea9f8b72e8",
        wrong=N_('Run the next cell and read the line "responses for the cancelled id:": a server that receives '
                 "notifications/cancelled stops the work and must not answer that request at all (Basic: "
                 "Utilities, Cancellation)."),
    ),
    Prediction(
        key="11.pages",
        question=N_("The errand server lists 40 errands as resources, 10 to a page. How many resources/list "
                    "requests does it take to see them all?"),
        choices=(),
        digest="sha256:b3655faaa7b8803e0146850b3d6177bd4cfbc6607ac1153b9a5e5ca89c279af0",
        wrong=N_('Run the next cell and read the line "resources/list requests:": each request gets one page, '
                 "and the client stops at the first page without nextCursor (Server: Utilities, Pagination)."),
    ),
    Prediction(
        key="11.legacy_ask_id",
        question=N_("In 2025-11-25 the client's tools/call for confirm_errand has id 2, and while it runs the "
                    "server asks the user with an elicitation/create request of its own. What id does that "
                    "request carry?"),
        choices=(),
        digest="sha256:7b94d8f9f11fbae0d8bde9c68b86cf66d4a6bf7fa77d52865c581428cdeb4f15",
        wrong=N_("Run the next cell and read the elicitation/create frame in the trace: each side numbers the "
                 "requests it sends itself, so the server's first request has the server's first id, whatever "
                 "the client's ids are (Basic: Requests; Client: Elicitation)."),
    ),
    Prediction(
        key="11.modern_rounds",
        question=N_("In 2026-07-28, confirm_errand asks the user a question and the user answers. How many "
                    "tools/call requests does the client send in all?"),
        choices=(),
        digest="sha256:cde1bd675f944ac796600e07ac94ff106bd3fbe946a363c5187fa16652fafd70",
        wrong=N_('Run the next cell and read the line "tools/call requests:": the first gets an input_required '
                 "result, and the client sends the call again, a new request with a new id, carrying the "
                 "answer in inputResponses (2026-07-28, Basic: Multi Round-Trip Requests)."),
    ),
    Prediction(
        key="11.http_streams",
        question=N_("Over Streamable HTTP, run_errand(stops=3) sends three progress notifications and then its "
                    "result. In how many HTTP responses do the four messages come?"),
        choices=(),
        digest="sha256:8b3aea2701897e487733ec8e15b097be1814b54334b0e1343ebd0914ce573f25",
        wrong=N_("Run the next cell and read the line of each era: the POST of the tools/call is answered with "
                 "one SSE stream that carries the request's notifications first and its response last "
                 "(Basic: Transports, Streamable HTTP)."),
    ),
    Prediction(
        key="10.post_headers",
        question=N_("After initialize, the next cell POSTs tools/list with four headers (Accept with both types, "
                    "Content-Type, Mcp-Session-Id, MCP-Protocol-Version), then four times more, each time leaving "
                    "one of them out. How many of those four POSTs does the weather server refuse?"),
        choices=(),
        digest="sha256:4d2b43a4ef518b518b3601c6aa8bb25839d9b4d5f0679f12af78e34f14af55a6",
        wrong=N_("Run the next cell and read its last four lines: 406 for an Accept without text/event-stream, "
                 "415 for no Content-Type, 400 for no session id; a POST without MCP-Protocol-Version is "
                 "answered, because a server SHOULD take a missing header for 2025-03-26 (Transports: Protocol "
                 "Version Header). Your client still MUST send it: the card has a line for it."),
    ),
    Prediction(
        key="10.header_mismatch",
        question=N_("The same 2026-07-28 tools/call of get_weather goes out three times: with Mcp-Name: "
                    "get_weather, with Mcp-Name: get_forecast, and with no Mcp-Name. What do the second and the "
                    "third get?"),
        choices=(N_("HTTP 400 with the error -32020 (HeaderMismatch), twice"),
                 N_("HTTP 200 twice: the body is the source of truth, so get_weather runs"),
                 N_("HTTP 200 for the second, running get_forecast as its header says; HTTP 400 for the third"),
                 N_("HTTP 404 with the error -32601 (Method not found), twice")),
        digest="sha256:695b5e8c1a0e2b27c7427b4cb9a8d9c26bbc8a15bbc8414ff13b40bce09809be",
        wrong=N_("Run the next cell and read its last two lines: a server that reads the body MUST refuse a "
                 "request whose routing headers disagree with it or are missing, with 400 and -32020 "
                 "(2026-07-28, Streamable HTTP: Server Validation), so that a gateway and the server never act "
                 "on two different requests."),
    ),
    Prediction(
        key="10.before_response",
        question=N_("The recorder answers a 2026-07-28 tools/call with an event stream. What comes on the stream "
                    "before the response?"),
        choices=(N_("a comment line, then a notifications/message about the request"),
                 N_("nothing: the response is the first event"),
                 N_("a priming event (an id and empty data), then the response"),
                 N_("the tool's progress, as notifications/progress")),
        digest="sha256:e5a8056826fa76627babc26595fe25fe9c05e1a6eec0d29bb9a73e7de43cd110",
        wrong=N_('Run the next cell and read the lines before the one with "id": 2: a line that starts with a '
                 "colon is a comment, then a data: line whose message has a method, notifications/message, a "
                 "notification about the request, which a stream MAY carry before the response (2026-07-28, "
                 "Streamable HTTP: Receiving Messages). Priming events and their ids are legacy."),
    ),
    # --- Lab 12 · build a client, part two -------------------------------------------------------
    Prediction(
        key="12.undeclared",
        question=N_("While book_table runs, the desk sends roots/list to mcplab's client, which declared "
                    "elicitation and nothing else. What does the client send back?"),
        choices=(N_("error -32601 (Method not found)"),
                 N_("an empty list of roots"),
                 N_("nothing: a client does not answer the server"),
                 N_("error -32602 (Invalid params)")),
        digest="sha256:6486f34bde4b85a11410ff12d4b7f3eb086f528cf5731529e44b245031302582",
        wrong=N_("Run the next cell and read frame 8, the client's response to roots/list: a client that "
                 "did not declare roots does not offer that method, and a request for a method the receiver "
                 "does not offer gets -32601 (Lifecycle: Capability Negotiation; JSON-RPC 2.0, Error object); "
                 "no request of the server's goes unanswered."),
    ),
    Prediction(
        key="12.pages",
        question=N_("The desk has five tools and puts two on a page. How many tools/list requests does a "
                    "client send to have them all?"),
        choices=(),
        digest="sha256:f0447d4a868859bdc34b8bdc66de343e378a0fc7a44bb5fd993a5112a9700910",
        wrong=N_("Run the next cell and count its lines, one per tools/list: pages of two, two and one, and "
                 "the client stops at the first result without nextCursor (Server: Utilities, Pagination)."),
    ),
    Prediction(
        key="12.first_modern",
        question=N_("mcplab's client opens the desk with --era modern and lists its tools. Which request is "
                    "the first on the pipe?"),
        choices=("server/discover", "initialize", "tools/list"),
        digest="sha256:0a33aff075f5b1836436008b2d3d7b96b43c18d113e2b44ce224ad7fb7dac499",
        wrong=N_("Run the next cell and read frame 1 of its trace: 2026-07-28 has no handshake, so initialize "
                 "is gone, and a client opens with server/discover to learn which revisions the server speaks "
                 "(2026-07-28, Server: Discover); the _meta printed above the trace is that request's."),
    ),
    Prediction(
        key="12.input_required",
        question=N_("In 2026-07-28, book_table needs the user. What does the desk send first when the client "
                    "calls it?"),
        choices=(N_("a result: resultType input_required, with the question in it"),
                 N_("an elicitation/create request on the pipe, as in 2025-11-25"),
                 N_("nothing until the user has answered")),
        digest="sha256:1e91da9857143c5894ebe91078f1b769ab9084af52ae0467c1c6d14ad9bf964d",
        wrong=N_("Run the next cell and read the resultType line of what it prints: a 2026-07-28 server sends no "
                 "requests of its own, so it answers the call itself with input_required, and the question "
                 "travels in inputRequests (2026-07-28, Multi Round-Trip Requests)."),
    ),
    Prediction(
        key="12.tampered",
        question=N_("The client retries book_table with its answer, but with one character of requestState "
                    "changed. What does the desk answer?"),
        choices=(N_("error -32602 (Invalid params)"),
                 N_("the booking: the answer is in inputResponses anyway"),
                 N_("a new input_required, asking again")),
        digest="sha256:1d234c091438ab050766e490ae94caaab6bd8eb6c34b31df8740a7ec229e9071",
        wrong=N_("Run the next cell and read its first line: requestState comes back through the client, so "
                 "the server treats it as attacker input and rejects one that fails its integrity check "
                 "(2026-07-28, Multi Round-Trip Requests); mcplab answers that with -32602."),
    ),
    # --- Lab 13 · authorization ----------------------------------------------------------------------
    Prediction(
        key="13.no_token",
        question=N_("The file server now runs with --auth. The client's first POST /mcp, its initialize, carries "
                    "no access token. Which HTTP status comes back?"),
        choices=(),
        digest="sha256:947f7a1926b8b2f857be37417c8dd88141d270196595d6c9841c2e8e06a44e22",
        wrong=N_("Run the next cell and read row 1 of the table: a request without a token is one that needs "
                 "authorization, and the refusal says where to get it, in a WWW-Authenticate header naming the "
                 "resource's metadata (Authorization: Protected Resource Metadata Discovery Requirements, "
                 "Error Handling)."),
    ),
    Prediction(
        key="13.step_up",
        question=N_("The client's token holds files:read only. It now calls write_file, which needs files:write "
                    "as well. Which HTTP status answers that first POST /mcp?"),
        choices=(),
        digest="sha256:2c3d32caacc4a007e82a5fe2bb27f1fb7477dd02be7ae8d3a36af49e20fdf4c9",
        wrong=N_("Run the next cell and read row 1 of its table: the token is good, it is just not enough, so "
                 "this is not 401 (no or bad credentials) but 403 with error=\"insufficient_scope\" and the scope "
                 "the operation needs (Authorization: Scope Challenge Handling; RFC 6750 §3.1)."),
    ),
    Prediction(
        key="13.passthrough",
        question=N_("The token minted for the docs file server is replayed at another file server of the same "
                    "authorization server, which has the same scopes. Which HTTP status does ours answer with?"),
        choices=(),
        digest="sha256:f012999555c59a51e92fd6cdc466bc0b956e773d060c760cdb32503c20f73638",
        wrong=N_('Run the next cell and read the "ours" line: the signature, the issuer and the expiry all check '
                 'out, but the token names another server as its audience, so for this server it is an invalid '
                 'token, not one with too little scope (Authorization: Token Handling, where invalid tokens MUST '
                 'get 401; Error Handling).'),
    ),
    # --- Lab 14 · attacks ------------------------------------------------------------------------------
    Prediction(
        key="14.rebinding",
        question=N_("The page's script sends its initialize to our file server on 127.0.0.1, with Host and Origin "
                    "naming attacker.example. Which HTTP status does ours answer with?"),
        choices=(),
        digest="sha256:bd6d58821cfd6add8329cf2b90921f8f7f976a6f37b225de0f31d698f121ad94",
        wrong=N_('Run the next cell and read the "ours" line: a server MUST validate the Origin header and answer '
                 'an invalid one with 403 Forbidden (Transports: Security Warning; 2026-07-28: Streamable HTTP, '
                 'Security & Endpoint); ours checks Host as well, and refuses before any JSON-RPC is read.'),
    ),
    Prediction(
        key="14.sandbox_link",
        question=N_("Our file server is asked for shortcut.txt, a symlink inside its folder that leads to the "
                    "secret outside it. What comes back?"),
        choices=(N_("the secret: the link itself is inside the folder"),
                 N_("a tool result with isError: true that names the rule"),
                 N_("a JSON-RPC error, -32602 (Invalid params)"),
                 N_("a JSON-RPC error, -32002 (Resource not found)")),
        digest="sha256:88885d335e70314f5271ea9adcc868eb8a8f68141b513bea11ff2f8beebef537",
        wrong=N_('Run the next cell and read its "shortcut.txt" line: the server follows the link before it opens '
                 'anything and refuses what lands outside its folder. A bad argument to a tool that exists is a '
                 'tool execution error, reported in the result with isError (Server: Tools, Error Handling), so '
                 'the model can read why and correct itself.'),
    ),
    Prediction(
        key="14.recover",
        question=N_("The file server was killed under both hosts. The user now asks what is in notes.md. What "
                    "does our host do?"),
        choices=(N_("starts the file server again and answers from notes.md"),
                 N_("answers without the file tools: their server is gone"),
                 N_("stops the run with an error"),
                 N_("starts both servers again, to be safe")),
        digest="sha256:fc229625e3d5402a3a56b5c94435b37fd09712202f53904ca76664320a752f36",
        wrong=N_('Run the next cell and read the line "ours": the host controls each client connection\'s '
                 'lifecycle (Architecture: Core Components), so before the run it brings back the one route that '
                 'failed, a new process and a new handshake; the last line shows that the other connection kept '
                 'its process.'),
    ),
    # --- Lab 15 · the ecosystem -----------------------------------------------------------------
    Prediction(
        key="15.host_frames",
        question=N_("Playing the host, the next cell runs the legacy handshake, lists the tools, the prompts and "
                    "the resources, then closes the server's stdin. How many frames does the trace hold?"),
        choices=(),
        digest="sha256:0834c90e2345340d2c7352f848d7a7fd2d5d5727061179d67c4294e199184acf",
        wrong=N_("Run the next cell and count the numbered frames: each request (initialize and the three lists) "
                 "gets one response, notifications/initialized gets none (JSON-RPC 2.0 §4.1), and closing stdin "
                 "is no message at all: it is how a stdio connection ends (Lifecycle: Shutdown)."),
    ),
    Prediction(
        key="15.unknown_resource",
        question=N_("Both weather servers are asked resources/read weather://city/Atlantis, a city neither knows. "
                    "Which error codes come back: ours (mcplab), then the SDK's?"),
        choices=(N_("-32002, then -32002"), N_("-32002, then -32602"), N_("-32602, then -32602"),
                 N_("no error: a result with isError: true from both")),
        digest="sha256:c9f063eae106597ab5596d5b6ac4415b6ab0cd4997b82917271d39fb3787eefe",
        wrong=N_('Run the next cell and read the "error for resources/read" line of the diff: a missing resource '
                 'was -32002 (Resource not found) up to 2025-11-25, and 2026-07-28 makes it -32602 (Invalid '
                 'params), asking clients to accept both (Server: Resources, Error Handling). A resource is not a '
                 'tool: isError belongs to tool results.'),
    ),
    Prediction(
        key="15.sdk_extra",
        question=N_("The two clients each call get_weather once. What does the SDK's client send after the call "
                    "that ours does not?"),
        choices=("tools/list", "ping", "notifications/cancelled", N_("nothing: the two traces match")),
        digest="sha256:65ce1f88f0d0ab9c50c0f9c905e899b5f2f6a85e9718741496e02f86be6ea851",
        wrong=N_("Run the next cell and read the frames at the end of the diff that only the SDK's client has: a "
                 "client that gets structured content checks it against the tool's outputSchema (Server: Tools, "
                 "Output Schema: clients SHOULD validate), and that schema comes with the tool list."),
    ),
)

#: key → prediction, in the order of the labs (read-only)
PREDICTIONS: Mapping[str, Prediction] = MappingProxyType({prediction.key: prediction for prediction in _ALL})


def predict(prediction: str | Prediction) -> Asked:
    """Ask a prediction of the course by its key (``"02.downgrade"``), or one of your own."""
    if isinstance(prediction, str):
        if prediction not in PREDICTIONS:
            raise KeyError(f"no prediction {prediction!r}; the course has {', '.join(PREDICTIONS)}")
        prediction = PREDICTIONS[prediction]
    return Asked(prediction)
