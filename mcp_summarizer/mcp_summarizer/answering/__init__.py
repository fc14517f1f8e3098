"""A tool's answer between the MCP surface and the engine: how large it may be, resolved once
(`allowance`), made again smaller until it fits the client (`refit`), and `expand`'s and
`search`'s answers fitted to it (`expand_answer`, `search_answer`)."""
