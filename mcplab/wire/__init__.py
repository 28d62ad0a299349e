"""The wire: what MCP messages are, byte for byte. Sans-IO: nothing here reads or writes.

``jsonrpc`` (messages, ``encode``/``decode`` with exact error classification, batches, line
framing), ``versions`` (revisions, eras, the ``_meta`` keys and header names), ``errors`` (every
exception and wire error code), ``sse`` (server-sent events), ``headers`` (the modern routing
headers).

Layer: the bottom of the protocol. Of mcplab it imports only ``i18n`` (its error sentences are
looked up in the chosen language), and no anyio, httpx, subprocess or Starlette
(``tests/test_sans_io.py``); every other layer may import it (``tests/test_layers.py`` holds the
table).
"""
