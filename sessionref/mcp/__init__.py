"""``sessionref mcp``: the sessions of a store offered to MCP clients (docs/mcp.md).

:mod:`sessionref.mcp.catalog` and :mod:`sessionref.mcp.tools` are plain Python over the index
and the resolver; only :mod:`sessionref.mcp.server` imports the MCP SDK (the ``mcp`` extra),
so import it explicitly and only when a server is to run.
"""
