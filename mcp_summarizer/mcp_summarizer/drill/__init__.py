"""Summaries an agent can drill into: the source kept behind a handle, and citations into it."""
