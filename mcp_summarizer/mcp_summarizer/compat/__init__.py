"""Every use of the MCP SDK's and httpx's private names, in one place.

The service needs four seams neither library publishes: a network backend under httpx's
transport (the SSRF guard connects to the address it checked), the low-level server under
`MCPServer` (stdio with a read stream that answers malformed lines), and the SDK's stream and
HTTP-client helpers the proxy's transports are built from (and, for its
upstreams, the client session's output-schema table and closed flag).  Each is named here, checked when
used (a changed layout fails loudly, naming the library), and the versions these were read
from are pinned from above in pyproject.toml (`mcp<2.4`, `httpx<0.29`): a new release is
tried here before it is allowed.  `tests/library/test_compat.py` checks each seam.

`httpx_pool` is for `web/` (which knows nothing of MCP), `mcp_sdk` for the MCP surfaces.
"""
