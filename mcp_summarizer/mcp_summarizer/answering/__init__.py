"""A tool's answer between the MCP surface and the engine: how large it may be, resolved once
(`allowance`), and made again smaller until it fits the client (`refit`)."""
