"""Transports: how whole JSON-RPC messages reach one server and come back.

``base.Transport`` is the shape every transport has; ``stdio`` spawns the server as a child
process; ``http`` speaks Streamable HTTP; ``memory`` connects to a function in the same process
(for tests and labs). Each module is imported only when used, so ``import mcplab`` stays fast.

Layer: above ``trace`` (every frame is recorded as it crosses), ``wire``, ``portable``, ``pipes`` and the
sans-IO parts of ``auth`` (masking a token in a trace); the client side builds on it. It never
imports the client or the server side.
"""
