"""Graders for the build labs: a student's server and a student's client, each given a report card.

    from mcplab import grade
    print(grade.server("build/my_server.py"))            # Lab 09
    print(grade.client("build/my_client.py"))            # Lab 10
    print(grade.server_two("build/my_server_two.py"))    # Lab 11

    mcplab grade server labs/build/my_server.py          # the same from a terminal: exit 1 if a line fails
    mcplab grade client labs/build/my_client.py
    mcplab grade http-client labs/build/my_http_client.py [--era legacy|modern]
    mcplab grade server-two labs/build/my_server_two.py [--era legacy|modern] [--transport stdio|http]
    mcplab grade client-two labs/build/my_client_two.py [--era legacy|modern]      # Lab 12

Modules, one idea each: ``report`` (the card: lines, marks, where to look), ``keeper`` (a student's
command and every process it starts, ended together), ``pipes`` (a child process read line by line
against a deadline), ``in_process`` (the same, in the browser edition, over the file run in the page), ``arguments`` (arguments a tool's inputSchema admits), ``probe`` (one session
with a server, walking every primitive within the card's time), ``frames`` (the schema line),
``server_checks`` (the server grader), ``recorder`` (the instrumented server a client is graded
against), ``output`` (what a client printed, kept at both ends), ``client_runs`` (the client grader's
four runs) and ``client_checks`` (its lines); ``http_recorder`` (the recording proxy a Streamable
HTTP client is graded against), ``http_client_runs`` (that grader's four runs), ``http_client_checks`` and
``http_modern_checks`` (its lines); ``server_two_runs`` (the part-two server's runs, each era over each
transport) and ``server_two_checks`` (its lines); ``desk`` (the server a part-two client answers), ``client_two_runs``
(its runs in both eras) and ``client_two_checks`` (its lines). Everything works offline and without Node; the schema line needs the
official schemas and says so when they are missing.

Layer: above the notebook views (the schema line is ``notebook.schema_check``), the server side
(``server.schema`` makes arguments and loads jsonschema), ``trace`` and ``wire``; only the command
line imports it.
"""

from mcplab.grade.client_runs import client
from mcplab.grade.client_two_runs import client_two
from mcplab.grade.http_client_runs import http_client
from mcplab.grade.report import FAIL, PASS, SKIP, Line, Report
from mcplab.grade.server_checks import server
from mcplab.grade.server_two_checks import server_two

__all__ = ["server", "client", "http_client", "server_two", "client_two", "Report", "Line", "PASS", "FAIL", "SKIP"]
