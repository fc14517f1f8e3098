"""Ids a client cannot compute: keyed digests (HMAC-SHA256) with the server's secret.

A document's default id, the version tag in its source ids and a proxy result's handle are
all digests of the caller's tenant and the content they name, keyed with SOURCE_ID_SECRET
(else a secret made once and kept in the store).  Knowing a url or a text therefore gives
no id; and an id, once made, names that content only.  Pure, no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from mcp_summarizer.tenant import Tenant

__all__ = ["TAG_CHARS", "IdKey", "new_secret"]

TAG_CHARS = 16  # hex: 64 bits, more than a client could guess


def new_secret() -> str:
    return secrets.token_hex(32)


class IdKey:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def digest(self, kind: str, tenant: Tenant, *parts: str, chars: int = TAG_CHARS) -> str:
        """The keyed digest of ``parts`` (each length-prefixed: no two lists of parts share
        one), for ``kind`` of id and ``tenant``, as ``chars`` hex digits."""
        mac = hmac.new(self._secret, digestmod=hashlib.sha256)
        for part in (kind, tenant.name, *parts):
            data = part.encode("utf-8", "surrogatepass")
            mac.update(len(data).to_bytes(8, "big"))
            mac.update(data)
        return mac.hexdigest()[:chars]
