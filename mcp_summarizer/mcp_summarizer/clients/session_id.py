"""The `Mcp-Session-Id` that tells a stateless server who its client is.  Pure, no I/O.

Over streamable HTTP a client on a handshake-era protocol (2025-11-25 and before) names
itself (clientInfo) only in its `initialize` request; the server keeps no session, so the
requests that follow come with no name.  Every such client echoes the session id that
`initialize` was answered with on each later request, so the server answers with one that
carries the name: any replica reads it back without memory or shared state.

The id is ``v1.<32 random hex>.<base64url of the name's first 128 UTF-8 bytes>``: unique per
session as the spec asks, visible ASCII only.  It is not signed on purpose: the name is
the client's own claim either way (it could say any name in `initialize`), and it chooses
only how small the answers are, never whose data they read (that is the bearer token's).
An id the server did not make, or a garbled one, reads as no name.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets

__all__ = ["MAX_NAME_BYTES", "make", "name_in"]

# Client names are short ("codex-mcp-client"); detection reads their start, so a longer one
# is cut (at a character boundary) to keep the header small.
MAX_NAME_BYTES = 128

_ID = re.compile(r"v1\.[0-9a-f]{32}\.([A-Za-z0-9_-]{1,172})")


def make(client_name: str) -> str:
    """A new session id carrying ``client_name``."""
    raw = client_name.encode("utf-8", "replace")[:MAX_NAME_BYTES].decode("utf-8", "ignore").encode("utf-8")
    return f"v1.{secrets.token_hex(16)}.{base64.urlsafe_b64encode(raw).rstrip(b'=').decode('ascii')}"


def name_in(session_id: str | None) -> str | None:
    """The client name a session id made by `make` carries; None for any other value."""
    found = _ID.fullmatch(session_id or "")
    if found is None:
        return None
    encoded = found.group(1)
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        name = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return name if name.strip() and len(raw) <= MAX_NAME_BYTES else None
