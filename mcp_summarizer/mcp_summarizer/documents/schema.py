"""The shapes of `summarize_documents`: what comes in, and the structure that goes out.

The output models are the tool's published `outputSchema`: programs read the index and the
summaries from ``structuredContent`` instead of parsing markdown.  Every ``source_id`` is
``<doc id>#<chunk index>``, filled in Python (never by a model), and `expand` opens it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DOC_ID_PATTERN",
    "Cluster",
    "ClusterSummary",
    "Coverage",
    "DocumentIn",
    "DocumentInfo",
    "DocumentsSummary",
    "Index",
    "MasterSummary",
]

# Letters, digits and . _ - : short, so a citation such as [guide-3#2] stays cheap, and
# never '#', '[' or ']', which would make citations ambiguous.
DOC_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


def _left_out(
    description: str = "Ids left out of source_ids (the first ones are kept) to fit this client's "
    "size limit; absent when none were.",
) -> int | None:
    """An optional count of what was left out of a list to fit the client's size limit
    (`documents.trim_structure`); absent from the JSON when nothing was, so answers that fit are as they
    were."""
    return Field(None, ge=1, exclude_if=lambda v: v is None, description=description)


def _between(field: str) -> int | None:
    """The count of ids left out of a list of ids that is kept as its first and last only."""
    return _left_out(
        f"Ids left out of {field} to fit this client's size limit: its first and last are kept "
        "(none, at the very smallest), this many between them; absent when none were. "
        "whole_structure_id opens the whole list."
    )


class DocumentIn(BaseModel):
    """One document to summarize."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The document's text (markdown structure is used).")
    id: str | None = Field(
        None,
        pattern=DOC_ID_PATTERN,
        description="Your id for it (letters, digits, . _ -; at most 64). "
        "Default: a short stable hash of the url, or of the text when there is no url.",
    )
    title: str = Field(default="", max_length=1000, description="Its title, shown with its summaries.")
    url: str = Field(default="", max_length=4096, description="Where it came from.")


class DocumentInfo(BaseModel):
    id: str
    title: str
    url: str
    chunk_count: int = Field(
        description="Excerpts it was cut into: its source ids are id~version#0 .. id~version#(n-1)."
    )
    tokens: int
    version: str = Field(
        "", description="A digest of this version of the document: in each of its source ids."
    )


class Cluster(BaseModel):
    cluster_id: str
    topic: str
    subtopic: str
    relevance_score: float = Field(ge=0, le=1, description="The highest of its excerpts' scores.")
    source_ids: list[str]
    source_ids_left_out: int | None = _left_out()
    doc_ids: list[str]
    doc_ids_left_out: int | None = _between("doc_ids")
    excerpt_count: int
    summarized: bool = Field(description="false: dropped from the summaries (see dropped_because).")
    dropped_because: str | None = None


class Coverage(BaseModel):
    documents: int
    clusters: int
    excerpts: int
    clusters_summarized: int
    documents_not_covered: list[str] = Field(
        description="Ids of documents none of whose excerpts reached a summary (empty, or only "
        "in dropped clusters)."
    )
    documents_not_covered_left_out: int | None = _between("documents_not_covered")
    citations_removed: int = Field(
        description="Citation-shaped ids removed: cited by a summary that does not rest on them, "
        "or quoted in a document's text (never a citation)."
    )


class Index(BaseModel):
    clusters: list[Cluster] = Field(description="Most relevant first.")
    coverage: Coverage
    clusters_left_out: int | None = _left_out(
        "Clusters left out of clusters (the least relevant) to fit this client's size limit; "
        "absent when none were.  whole_structure_id opens them all."
    )


class ClusterSummary(BaseModel):
    cluster_id: str
    topic: str
    subtopic: str
    relevance_score: float
    summary: str = Field(
        description="Cites excerpts inline as [doc#chunk]; cut to fit this client's size limit, it "
        "ends at a sentence end with a line starting '[mcp-summarizer: cut' (or is only a "
        "'[mcp-summarizer: left out' line)."
    )
    source_ids: list[str] = Field(description="The excerpts this summary rests on.")
    source_ids_left_out: int | None = _left_out()
    doc_ids: list[str]
    doc_ids_left_out: int | None = _between("doc_ids")


class MasterSummary(BaseModel):
    summary: str = Field(
        description="Cites excerpts inline as [doc#chunk]; cut to fit this client's size limit, it "
        "ends at a sentence end with a line starting '[mcp-summarizer: cut'."
    )
    source_ids: list[str]
    source_ids_left_out: int | None = _left_out()
    cluster_ids: list[str]
    cluster_ids_left_out: int | None = _between("cluster_ids")
    doc_ids: list[str]
    doc_ids_left_out: int | None = _between("doc_ids")


class DocumentsSummary(BaseModel):
    index: Index
    cluster_summaries: list[ClusterSummary] = Field(description="Most relevant first.")
    master_summary: MasterSummary
    documents: list[DocumentInfo]
    documents_left_out: int | None = _left_out(
        "Documents left out of documents to fit this client's size limit (those no summary "
        "covers first, then from the end); absent when none were.  index.coverage counts them all."
    )
    cluster_summaries_left_out: int | None = _left_out(
        "Cluster summaries left out (the least relevant) to fit this client's size limit; absent "
        "when none were."
    )
    whole_structure_id: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="When lists were shortened to fit this client's size limit: the id of this "
        "whole structure as JSON, every list whole, kept in the content store: expand opens it "
        "(a page at a time), as does the excerpt resource (summary://<handle>/0).  Absent when nothing "
        "was left out, or it could not be kept.",
    )
