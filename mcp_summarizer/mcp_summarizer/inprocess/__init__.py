"""The engine for Python callers in the same process: `summarize_if_needed` and its kin
(`if_needed`), and the tool-output ticket's `SummarizationService` over them (`ticket_api`).
Both are exported by the package root, which is where callers import them from."""
