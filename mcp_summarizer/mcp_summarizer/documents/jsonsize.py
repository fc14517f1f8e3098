"""The compact JSON size of a `DocumentsSummary` being shrunk, kept current step by step.
Pure, no I/O.

`documents.trim_structure` shrinks a structure one small step at a time and needs its size after each.
Serializing the whole structure again each time is quadratic: 10,000 one-line documents took
16 minutes, almost all of it there.  Here the size is added up from parts, each measured only
when a step changes it:

- the frame: everything but the items of the three long lists (the index's clusters, the
  cluster summaries, the documents) and the counts of what was left out of them;
- each item of those lists, and the commas between them;
- each count present, as its ``,"key":n`` (none is the first key of its object).

Sizes are counted as `json_bytes` counts them: compact JSON, UTF-8, characters as they are.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from mcp_summarizer.documents.schema import Cluster, ClusterSummary, DocumentInfo, DocumentsSummary

__all__ = ["Sizes", "json_bytes", "value_bytes"]

Item = Cluster | ClusterSummary | DocumentInfo
ListName = Literal["clusters", "summaries", "documents"]
_COUNTS = ("documents_left_out", "cluster_summaries_left_out")  # top level
_INDEX_COUNTS = ("clusters_left_out",)


def value_bytes(value: Any) -> int:
    """A JSON value's size (a model as it dumps), compact, in UTF-8 bytes."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def json_bytes(summary: DocumentsSummary) -> int:
    """The size of ``summary`` as clients see it: its compact JSON, in UTF-8 bytes."""
    return value_bytes(summary)


class Sizes:
    """``summary``'s `json_bytes`, told of every change: `changed` (an item), `frame_changed`
    (the master summary, the coverage, the whole structure's id), `removed` (an item out of
    its list; the caller counts it in the list's ``*_left_out``)."""

    def __init__(self, summary: DocumentsSummary) -> None:
        self.summary = summary
        self._items: dict[int, int] = {}
        self._sums: dict[ListName, int] = {}
        self._counts: dict[ListName, int] = {}
        for name in ("clusters", "summaries", "documents"):
            items = self._list(name)
            self._sums[name] = sum(self._measure(i) for i in items)
            self._counts[name] = len(items)
        self._frame = self._measure_frame()

    def total(self) -> int:
        s = self.summary
        lists = sum(self._sums[n] + max(self._counts[n] - 1, 0) for n in self._sums)
        counts = [(k, getattr(s, k)) for k in _COUNTS] + [(k, getattr(s.index, k)) for k in _INDEX_COUNTS]
        return self._frame + lists + sum(len(f',"{k}":{v}') for k, v in counts if v is not None)

    def changed(self, item: Item) -> None:
        name = _list_of(item)
        old = self._items[id(item)]
        self._sums[name] += self._measure(item) - old

    def removed(self, item: Item) -> None:
        name = _list_of(item)
        self._sums[name] -= self._items.pop(id(item))
        self._counts[name] -= 1

    def frame_changed(self) -> None:
        self._frame = self._measure_frame()

    def _list(self, name: ListName) -> list[Any]:
        s = self.summary
        lists: dict[str, list[Any]] = {
            "clusters": s.index.clusters,
            "summaries": s.cluster_summaries,
            "documents": s.documents,
        }
        return lists[name]

    def _measure(self, item: Item) -> int:
        size = self._items[id(item)] = value_bytes(item)
        return size

    def _measure_frame(self) -> int:
        s = self.summary
        index = s.index.model_copy(update={"clusters": [], **dict.fromkeys(_INDEX_COUNTS)})
        empty: dict[str, Any] = {"index": index, "cluster_summaries": [], "documents": []}
        empty.update(dict.fromkeys(_COUNTS))
        return value_bytes(s.model_copy(update=empty))


def _list_of(item: Item) -> ListName:
    if isinstance(item, Cluster):
        return "clusters"
    return "summaries" if isinstance(item, ClusterSummary) else "documents"
