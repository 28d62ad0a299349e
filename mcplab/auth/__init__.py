"""OAuth 2.1 for Streamable HTTP, as the spec's "basic/authorization" chapter describes it (2025-11-25, 2026-07-28).

Theory of operation
-------------------
Three roles, the modules that play them, and plain wire helpers::

    wire.py        what crosses the wire: WWW-Authenticate challenges (RFC 6750 §3, RFC 9728 §5.1),
                   client authentication headers, and masking of tokens, codes and secrets in traces
    resource.py    the MCP server as an OAuth resource server: its Protected Resource Metadata
                   (RFC 9728), bearer tokens checked for signature, expiry, issuer and audience
                   (RFC 8707 / RFC 9068), the scopes each request needs (403 insufficient_scope)
    scopes.py      the scope policy itself (which scopes each request needs): plain data a server declares
    middleware.py  resource.py wrapped around the Streamable HTTP app (``--auth``)
    discovery.py   the client's metadata discovery: the well-known URLs each revision tries, in order
    client.py      the MCP client as an OAuth client: from a 401 to a token and back, registration,
                   PKCE S256, the resource indicator, refresh, step-up on 403, bounded retries
    browser.py     the user agent: a headless one that follows (and approves) a consent page
    story.py       the flow told from a trace: each exchange, its step, the spec section and RFC behind it

The authorization server itself is ``servers/auth.py`` (Authlib on Starlette), one readable file.
Nothing here loads at ``import mcplab``: Authlib and joserfc load when a flow or a check first runs.

Layer: the package spans three, as the roles do. ``wire.py``, ``discovery.py`` and ``story.py`` are
sans-IO and import nothing of mcplab but ``i18n`` (the transports use them to mask tokens); ``resource.py``,
``scopes.py`` and ``middleware.py`` sit below the server side, which wraps its app in them; ``client.py`` and
``browser.py`` sit above both sides, since the user agent listens for the redirect with the
server side's ``bind``. The client side never imports them: a transport is handed an OAuth object.
"""
