"""Bearer-token tenants: AUTH_TOKENS ("name:token" pairs) and AUTH_TOKENS_FILE, read once at
start, checked by the MCP SDK's bearer authentication through `Tokens`, a `TokenVerifier`.

A token names its tenant (the access token's ``client_id``); the tool layer reads it with
`tenant_of` and passes the tenant down to the store and the caches.  Without tokens the
service has one tenant, `LOCAL`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_summarizer.config import Settings
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.tenant import LOCAL, TENANT_NAME, Tenant

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

# The MCP SDK is imported where it is used: the command line's `summarize` reads the tokens
# (the stores' tenant shares) but serves no MCP, and importing the SDK is a second of its
# start's CPU.

__all__ = ["MIN_TOKEN_CHARS", "Tokens", "auth_settings", "load_tokens", "tenant_of"]

MIN_TOKEN_CHARS = 16


class Tokens:
    """The configured tokens, by a hash of each (a lookup never compares secrets char by char)."""

    def __init__(self, pairs: dict[str, str]) -> None:
        self._by_hash = {_hash(token): name for name, token in pairs.items()}

    def __bool__(self) -> bool:
        return bool(self._by_hash)

    def __len__(self) -> int:
        """How many tenants (one token each)."""
        return len(self._by_hash)

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        name = self._by_hash.get(_hash(token))
        return None if name is None else AccessToken(token=token, client_id=name, scopes=[])


def load_tokens(settings: Settings) -> Tokens:
    """AUTH_TOKENS and AUTH_TOKENS_FILE's pairs; a malformed one is a ConfigError naming where
    it is (never quoting a token), and so is a file that holds none: authentication fails
    closed."""
    pairs: dict[str, str] = {}
    entries = [(e, "AUTH_TOKENS") for e in settings.auth.auth_tokens.get_secret_value().split(",")]
    if settings.auth.auth_tokens_file:
        path = Path(settings.auth.auth_tokens_file).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"AUTH_TOKENS_FILE={path}: cannot be read ({type(exc).__name__})") from None
        if not any(line.strip() and not line.strip().startswith("#") for line in lines):
            # A secrets mount not yet filled must not start an open service: naming a file
            # says that authentication is wanted.
            raise ConfigError(
                f"AUTH_TOKENS_FILE={path}: holds no name:token line (it is empty, or comments "
                "only), so the service would start without authentication: fill it, or unset "
                "AUTH_TOKENS_FILE"
            )
        entries += [(line, f"AUTH_TOKENS_FILE line {n}") for n, line in enumerate(lines, 1)]
    tokens: set[str] = set()
    for entry, where in entries:
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        name, sep, token = entry.partition(":")
        name, token = name.strip(), token.strip()
        if not sep or not TENANT_NAME.match(name):
            raise ConfigError(
                f"{where}: expected name:token, the name of letters, digits and . _ - (at most 64)"
            )
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(f"{where}: the token of {name!r} is under {MIN_TOKEN_CHARS} characters")
        if name in pairs:
            raise ConfigError(f"{where}: tenant {name!r} is named twice")
        if token in tokens:
            raise ConfigError(f"{where}: the token of {name!r} is another tenant's too")
        pairs[name] = token
        tokens.add(token)
    return Tokens(pairs)


def auth_settings(settings: Settings) -> AuthSettings:
    """The SDK's auth settings for a resource server whose tokens are checked by `Tokens`
    (no OAuth flow: the issuer is only named, never called)."""
    from mcp.server.auth.settings import AuthSettings
    from pydantic import AnyHttpUrl

    here = AnyHttpUrl(
        f"http://{settings.transport.mcp_summarizer_host}:{settings.transport.mcp_summarizer_port}"
    )
    return AuthSettings(issuer_url=here, resource_server_url=None)


def tenant_of() -> Tenant:
    """The tenant of the request being served: its bearer token's (the SDK's authentication
    put it in the request's context), else the one tenant (no AUTH_TOKENS, or stdio: with
    AUTH_TOKENS, an HTTP request without a valid token never reaches a tool)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return LOCAL if token is None else Tenant(token.client_id)


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
