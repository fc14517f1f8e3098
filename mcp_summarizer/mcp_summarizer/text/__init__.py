"""Text tools under the capabilities: cl100k tokens and their character offsets, the one
markdown grammar, the lexicon (words, stems), and site chrome removal.

Pure functions over strings, no I/O: `summarize/`, `web/`, `documents/` and `fidelity/`
build on them; nothing in here imports those packages."""
