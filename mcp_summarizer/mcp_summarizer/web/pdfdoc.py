"""A PDF's text: the text layer via ``pypdf``, pages separated by blank lines, and its title.

A scanned PDF without a text layer gives empty text; an encrypted or unreadable one is refused
with :class:`UnsupportedContent` naming why.
"""

from __future__ import annotations

import io
import re

from mcp_summarizer.errors import UnsupportedContent

__all__ = ["pdf_text"]

WHITESPACE = re.compile(r"\s+")


def pdf_text(body: bytes) -> tuple[str, str]:
    """(text of every page, "\\n\\n" between pages; title from the document information, or "")."""
    import pypdf  # imported on first use: most fetches are not PDFs

    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnsupportedContent(
                "application/pdf (encrypted, needs a password) cannot be converted to text"
            )
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        meta = reader.metadata
        title = (meta.title or "") if meta is not None else ""
    except UnsupportedContent:
        raise
    except Exception as exc:
        # A damaged or hostile file makes pypdf raise almost anything (PdfReadError, KeyError,
        # struct.error, zlib.error, RecursionError...); DependencyError when AES needs a crypto
        # library.  Whatever it is, this body cannot be turned into text.
        raise UnsupportedContent(
            f"application/pdf could not be read ({type(exc).__name__}: {exc}); cannot be converted to text"
        ) from exc
    text = "\n\n".join(page for page in pages if page)
    return text, WHITESPACE.sub(" ", str(title)).strip()
