"""httpx's private connection pool (see the package's docstring)."""

from __future__ import annotations

import httpcore
import httpx

__all__ = ["set_connection_pool"]


def set_connection_pool(transport: httpx.AsyncHTTPTransport, pool: httpcore.AsyncConnectionPool) -> None:
    """Make ``pool`` the connection pool of ``transport``.  httpx 0.28's transport takes no
    network backend, but it is a thin wrapper around the httpcore pool in ``_pool``."""
    if not isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        raise RuntimeError("unsupported httpx version: AsyncHTTPTransport._pool is not a connection pool")
    transport._pool = pool
