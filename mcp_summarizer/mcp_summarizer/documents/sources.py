"""Documents in, excerpts out: ids checked or made, each document cut into chunks, and each
chunk given its ``source_id`` (``<doc id>~<version>#<chunk index>``).  Pure, no I/O.

A default id is a keyed digest of the url (or of the text when there is no url), so the same
page gets the same id in every run of a tenant while knowing the url gives no id.  The
version is a keyed digest of the tenant, the id and everything the excerpts hold: an id names
one text for good, whatever a later request sends under the same document id, and a new
version never mixes with an old one.  Chunks do not overlap here (unlike a single summary's
map): a source id must point at one place, and neighbouring ids must be the text just before
and after.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import Source, source_id
from mcp_summarizer.store.ids import IdKey
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.tenant import Tenant

__all__ = [
    "Cut",
    "Document",
    "Excerpt",
    "cut",
    "cut_all",
    "document_ids",
    "excerpts_of",
    "plain",
    "source_id",
    "stored",
    "titles",
]

_HASH_CHARS = 8  # 32 bits: a collision among a run's documents is reported, never merged;
# the version tag in every source id carries the 64 bits no client can compute


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    title: str
    url: str
    tokens: int
    chunk_count: int
    version: str = ""  # its source ids are <id>~<version>#<n>


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One chunk of one document, with what the map step learned about it."""

    source_id: str
    doc_id: str
    index: int
    chunk_count: int
    title: str
    url: str
    text: str  # the chunk's exact original text (what `expand` returns)
    context: str  # the headings above it (the chunker's header path), for the model
    tokens: int  # of context + text, as the model reads it
    heading: str = ""  # the nearest heading above the chunk, if any

    @property
    def for_model(self) -> str:
        return self.context + self.text


def stored(e: Excerpt) -> Source:
    """The record the content store keeps for an excerpt."""
    return Source(
        source_id=e.source_id,
        doc_id=e.doc_id,
        index=e.index,
        chunk_count=e.chunk_count,
        text=e.text,
        title=e.title,
        url=e.url,
    )


def document_ids(documents: Sequence[DocumentIn], key: IdKey, tenant: Tenant) -> list[str]:
    """Each document's id: its own, or a keyed digest of its url (else its text).  Ids must
    be unique: a repeat is an error naming both positions, never a silent merge."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for i, doc in enumerate(documents):
        given = doc.id
        url = doc.url.strip()
        doc_id = given or key.digest("url" if url else "text", tenant, url or doc.text, chars=_HASH_CHARS)
        if doc_id in seen:
            j = seen[doc_id]
            why = (
                "the same id"
                if given
                else ("the same url" if doc.url.strip() else "the same text") + ", so the same default id"
            )
            raise InputError(
                f"documents[{j}] and documents[{i}] have {why} {doc_id!r}: ids must be unique "
                "(give each document its own id, or drop the duplicate)"
            )
        seen[doc_id] = i
        ids.append(doc_id)
    return ids


def cut(
    doc: DocumentIn, doc_id: str, chunk_size: int, key: IdKey, tenant: Tenant
) -> tuple[Document, list[Excerpt]]:
    """A document's excerpts: its text cut at markdown boundaries into chunks of at most
    ``chunk_size`` tokens, in order, without overlap, with ids of this version.  Empty text
    has no excerpt."""
    chunks = (
        chunk(doc.text, strategy="semantic", chunk_size=chunk_size, overlap=0) if doc.text.strip() else []
    )
    return excerpts_of(doc, doc_id, chunks, key, tenant)


def excerpts_of(
    doc: DocumentIn, doc_id: str, chunks: Sequence[Chunk], key: IdKey, tenant: Tenant
) -> tuple[Document, list[Excerpt]]:
    """`cut`'s answer from the chunks it cut ``doc`` into (`drill.keep` streams them)."""
    n = len(chunks)
    texts = [doc.text[c.start : c.end] for c in chunks]
    version = key.digest("doc", tenant, doc_id, doc.title, doc.url, *texts)
    excerpts = [
        Excerpt(
            source_id=source_id(doc_id, i, version),
            doc_id=doc_id,
            index=i,
            chunk_count=n,
            title=doc.title,
            url=doc.url,
            text=texts[i],
            context=c.context,
            tokens=c.tokens,
            heading=_nearest_heading(c.text, c.context),
        )
        for i, c in enumerate(chunks)
    ]
    total = sum(e.tokens for e in excerpts)
    return Document(doc_id, doc.title, doc.url, total, n, version), excerpts


@dataclass(slots=True)
class Cut:
    """A request's documents and all their excerpts, in order, cut to ``chunk_size``."""

    documents: list[Document]
    chunk_size: int
    excerpts: list[Excerpt] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(d.tokens for d in self.documents)


def cut_all(
    documents: Sequence[DocumentIn], ids: list[str], chunk_size: int, key: IdKey, tenant: Tenant
) -> Cut:
    out = Cut([], chunk_size)
    for doc, doc_id in zip(documents, ids, strict=True):
        document, excerpts = cut(doc, doc_id, chunk_size, key, tenant)
        out.documents.append(document)
        out.excerpts.extend(excerpts)
    return out


def titles(e: Excerpt) -> str:
    """What an excerpt is under: its document's title and the headings above it."""
    return f"{e.title}\n{e.context}"


# Markdown inline markup in a heading, for a label that reads as plain words: a link's target
# and title go, its text stays; code ticks and emphasis marks go.  Bounded: linear on any text.
_LINK_TARGET = re.compile(r"\]\([^()\n]{0,2000}\)")
_MARKS = re.compile(r"[`*\[\]]+")


def plain(heading: str) -> str:
    """A markdown heading's words, without its markup (links, code ticks, emphasis)."""
    return " ".join(_MARKS.sub("", _LINK_TARGET.sub("", heading)).split())


def _nearest_heading(text: str, context: str) -> str:
    """The chunk's own first heading, else the last heading of the path above it."""
    for line in text.splitlines()[:50]:
        stripped = line.lstrip()
        if stripped.startswith("#"):
            heading = plain(stripped.lstrip("#"))
            if heading:
                return heading[:200]
    for line in reversed(context.splitlines()):
        heading = plain(line.lstrip().lstrip("#"))
        if heading:
            return heading[:200]
    return ""
