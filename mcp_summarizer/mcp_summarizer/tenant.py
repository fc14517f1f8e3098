"""Who a request is for: the tenant whose namespace it reads and writes.

Everything kept beyond a request (the originals behind `expand` ids, the result and map
caches, the proxy's handles) is keyed by a tenant, which the tool layer takes from the
caller's bearer token (AUTH_TOKENS) and hands down as a parameter.  Without AUTH_TOKENS, and
under stdio, every caller is the one tenant `LOCAL`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LOCAL", "TENANT_NAME", "Tenant"]

# A configured tenant's name: letters, digits and . _ - (never "/", which ends the prefix).
TENANT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str

    def key(self, key: str) -> str:
        """``key`` in this tenant's namespace (store and cache keys alike)."""
        return f"{self.name}/{key}"


# The single tenant: no configured name can start with "_", so it shares nothing with any.
LOCAL = Tenant("_")
