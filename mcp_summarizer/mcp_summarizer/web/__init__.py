"""Web pages in, markdown out: the guarded download, robots.txt, conversion to markdown, and
the `fetch_url` answer built on the summarize engine."""
