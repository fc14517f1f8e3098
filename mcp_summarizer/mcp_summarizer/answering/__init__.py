"""The answer pipeline, between the MCP surface and the engine: how large an answer may be,
resolved once (`allowance`); looked up and kept in the result cache (`cached`); made by the
client's deadline, cited and fit (`text_summary` for a text, `page_summary` for a web page,
`page_answer` its header lines, `documents_answer` for many documents); made again smaller
until it fits the client (`refit`); and `expand`'s and `search`'s answers fitted to it
(`expand_answer`, `search_answer`)."""
