"""Beyond the lab: mcplab's servers and traces among real hosts, SDKs and load balancers.

``hostconfig`` (a real host's configuration for the bundled servers: ``mcplab config``),
``wiretap`` (records what any stdio client and server say: ``python -m mcplab.ecosystem.wiretap``),
``proxy`` (a round-robin reverse proxy written to be read, Lab 07), ``balancer`` (the same behind
nginx, Lab 15).

Layer: above the server side (it starts servers with ``server.streamable_http.launch``) and
``trace`` (the wiretap records into one), which it may import with ``wire`` below them; it never
imports the client side. The notebook views (the compatibility matrix runs behind the proxy), the
exercises and the command line build on it.
"""
