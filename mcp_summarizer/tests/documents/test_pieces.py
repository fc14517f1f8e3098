"""The pure parts of summarize_documents: ids, excerpts, citations, topics, the index and its
budget plan.  (The whole tool, over MCP, is in test_documents.py.)"""

from __future__ import annotations

import time

import pytest

from mcp_summarizer.citations import syntax as cite
from mcp_summarizer.documents.index import MIN_CLUSTER_TOKENS, group, plan
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.sources import Excerpt, cut, document_ids, plain, titles
from mcp_summarizer.documents.topics import (
    Label,
    focus_terms,
    label_excerpts,
    read_words,
    relevance,
    relevances,
)
from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import doc_of, sibling
from mcp_summarizer.store.ids import IdKey
from mcp_summarizer.tenant import LOCAL, Tenant
from mcp_summarizer.text import tokens


def doc(text: str, **kw: str) -> DocumentIn:
    return DocumentIn(text=text, **kw)


KEY = IdKey(b"k" * 32)


# -- ids and excerpts -----------------------------------------------------------------------


def test_default_ids_are_stable_hashes_of_the_url_else_the_text() -> None:
    a = document_ids([doc("one", url="https://a.example/x"), doc("two")], KEY, LOCAL)
    b = document_ids([doc("changed text", url="https://a.example/x"), doc("two")], KEY, LOCAL)
    assert a[0] == b[0] and a[1] == b[1]  # the url decides, not the text
    assert len(a[0]) == 8 and a[0] != a[1]


def test_default_ids_are_keyed_by_the_secret_and_the_tenant() -> None:
    import hashlib

    docs = [doc("one", url="https://a.example/x")]
    mine = document_ids(docs, KEY, LOCAL)[0]
    assert mine != hashlib.sha256(b"https://a.example/x").hexdigest()[:8]  # not computable from the url
    assert mine != document_ids(docs, IdKey(b"other secret" * 3), LOCAL)[0]
    assert mine != document_ids(docs, KEY, Tenant("bob"))[0]


def test_given_ids_are_kept() -> None:
    assert document_ids([doc("x", id="guide"), doc("y", id="faq-2")], KEY, LOCAL) == ["guide", "faq-2"]


@pytest.mark.parametrize(
    ("documents", "words"),
    [
        ([doc("x", id="a"), doc("y", id="a")], ["documents[0] and documents[1]", "same id 'a'"]),
        ([doc("x", url="https://e.example"), doc("y", url="https://e.example")], ["same url"]),
        ([doc("x"), doc("z"), doc("x")], ["documents[0] and documents[2]", "same text"]),
    ],
)
def test_repeated_ids_are_refused_naming_both(documents: list[DocumentIn], words: list[str]) -> None:
    with pytest.raises(InputError) as info:
        document_ids(documents, KEY, LOCAL)
    for w in words:
        assert w in str(info.value)


def test_an_id_with_a_hash_or_brackets_is_refused_by_the_schema() -> None:
    for bad in ("a#1", "[x]", "", "a b", "x" * 65):
        with pytest.raises(ValueError):
            DocumentIn(text="t", id=bad)


def test_excerpts_partition_the_document_with_sequential_source_ids() -> None:
    text = "\n\n".join(f"## Part {i}\n\n" + f"Sentence {i} about the river Elwynn. " * 60 for i in range(12))
    document, excerpts = cut(doc(text, title="T", url="u"), "d1", 512, KEY, LOCAL)
    assert len(excerpts) > 3 and document.chunk_count == len(excerpts)
    assert len(document.version) == 16  # 64 bits
    assert [e.source_id for e in excerpts] == [f"d1~{document.version}#{i}" for i in range(len(excerpts))]
    assert all(doc_of(e.source_id) == "d1" for e in excerpts)
    assert sibling(excerpts[1].source_id, 2) == excerpts[2].source_id
    assert "".join(e.text for e in excerpts) == text  # no overlap, nothing lost
    assert all(e.chunk_count == len(excerpts) and e.title == "T" and e.url == "u" for e in excerpts)
    assert all(e.tokens <= 512 for e in excerpts)
    assert all(e.for_model.endswith(e.text) for e in excerpts)
    assert excerpts[3].heading.startswith("Part")


def test_empty_text_has_no_excerpt() -> None:
    document, excerpts = cut(doc("  \n "), "e", 512, KEY, LOCAL)
    assert excerpts == [] and document.chunk_count == 0 and document.tokens == 0


def test_the_version_in_source_ids_names_one_content() -> None:
    """Any change to what an excerpt holds (its text, its document's title or url, where it
    is cut) gives other ids; the same content gives the same ids; another tenant or secret,
    other ids."""
    text = "\n\n".join(f"## Part {i}\n\n" + f"Sentence {i} about the river. " * 60 for i in range(6))

    def version(
        text: str = text, key: IdKey = KEY, tenant: Tenant = LOCAL, size: int = 512, **kw: str
    ) -> str:
        return cut(doc(text, **{"title": "T", "url": "u", **kw}), "d", size, key, tenant)[0].version

    same = version()
    assert same == version()
    others = [
        version(text.replace("Sentence 5", "Sentence 6")),
        version(title="T2"),
        version(url="u2"),
        version(size=256),
        version(tenant=Tenant("bob")),
        version(key=IdKey(b"x" * 32)),
    ]
    assert same not in others and len(set(others)) == len(others)


def test_plain_heading_drops_markup_but_keeps_identifiers() -> None:
    assert plain('[`argparse`](#module-argparse "x") — *Parser* for `add_argument`') == (
        "argparse — Parser for add_argument"
    )


# -- citations ------------------------------------------------------------------------------


def test_citations_are_found_in_order_and_made_up_ones_removed() -> None:
    text = "Goldshire has an inn [d1#0]. Wolves roam [d1#2, zz#9]. Hogger leads gnolls [ghost#4]."
    assert cite.cited(text) == ["d1#0", "d1#2", "zz#9", "ghost#4"]
    cleaned, removed = cite.clean(text, {"d1#0", "d1#2"})
    assert cleaned == "Goldshire has an inn [d1#0]. Wolves roam [d1#2]. Hogger leads gnolls."
    assert removed == 2


def test_brackets_that_are_not_citations_stay() -> None:
    text = "A list [1, 2] and a link [text](http://x#frag) and [see above]."
    assert cite.clean(text, set()) == (text, 0)


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
def test_citation_scan_is_linear_on_hostile_text() -> None:
    # Many opening brackets and id-like runs with no closing bracket: a backtracking pattern
    # would be quadratic here.  Compared with the same scan of a text 10x shorter.
    def scan(n: int) -> float:
        text = "[a#1, " * n
        start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
        cite.clean(text, {"a#1"})
        return time.thread_time() - start

    # linear: ~10x; quadratic: ~100x.  Over the limit it is measured again (a loaded machine
    # can stall one measurement; a quadratic scan is over it every time).
    for _ in range(3):
        small, big = min(scan(2_000) for _ in range(3)), min(scan(20_000) for _ in range(3))
        if big < small * 30:
            break
    assert big < small * 30, (small, big)


# -- topics and relevance -------------------------------------------------------------------


def excerpt(sid: str, text: str, heading: str = "") -> Excerpt:
    doc_id = sid.split("#")[0]
    return Excerpt(sid, doc_id, int(sid.split("#")[1]), 1, "", "", text, "", tokens.count(text), heading)


def test_relevance_is_the_share_of_focus_terms_mentioned() -> None:
    terms = focus_terms("NPCs, factions")
    assert relevance("The NPC Marshal Dughan serves the Stormwind faction.", terms) == 1.0
    assert relevance("Marshal Dughan is an NPC.", terms) == 0.5
    assert relevance("Rivers and hills.", terms) == 0.0
    assert relevance("anything", ()) == 1.0


def test_excerpts_about_one_subject_share_a_label_and_others_do_not() -> None:
    wolves = "Wolves hunt in packs in the forest. The wolf pack follows the alpha wolf through the forest."
    json_text = "The json module encodes Python objects. json.dumps encodes, json.loads decodes JSON text."
    excerpts = [
        excerpt("a#0", wolves),
        excerpt("b#0", json_text),
        excerpt("a#1", wolves.replace("alpha", "grey")),
        excerpt("b#1", json_text.replace("objects", "dicts")),
    ]
    labels = label_excerpts(excerpts)
    assert labels[0] == labels[2] and labels[1] == labels[3] and labels[0] != labels[1]
    assert "wolf" in labels[0].topic or "wolves" in labels[0].topic or "forest" in labels[0].topic
    assert "json" in labels[1].topic or "encode" in labels[1].topic


def test_labels_are_deterministic_and_cope_with_cjk_and_no_words() -> None:
    excerpts = [
        excerpt("c#0", "東京は日本の首都です。東京の人口は多い。"),
        excerpt("n#0", "12 34 56 ... !!!"),
    ]
    assert label_excerpts(excerpts) == label_excerpts(excerpts)
    assert all(label.topic for label in label_excerpts(excerpts))


def titled(sid: str, text: str, title: str, context: str) -> Excerpt:
    doc_id = sid.split("#")[0]
    return Excerpt(sid, doc_id, int(sid.split("#")[1]), 1, title, "", text, context, tokens.count(text))


RELEVANCE_EXCERPTS = [
    titled("f#0", "The -maxdepth option descends levels when recursing.", "find - directory hierarchy", ""),
    titled("f#1", "Traversal of directories, recursively.", "", "# Traversing\n## Options\n"),
    titled("g#0", "Merging branches: conflicts are marked.", "git-merge", "# MERGE CONFLICTS\n"),
    titled("c#0", "東京は日本の首都です。", "", ""),
    titled("n#0", "", "", ""),
]


@pytest.mark.parametrize(
    "focus", ["recursive directory traversal", "merge conflicts, branches", "東京", "NPCs", ""]
)
def test_relevances_from_words_read_once_are_each_excerpts_relevance(focus: str) -> None:
    terms = focus_terms(focus)
    expected = [relevance(e.text, terms, titles=titles(e)) for e in RELEVANCE_EXCERPTS]
    words = read_words(RELEVANCE_EXCERPTS)
    assert relevances(RELEVANCE_EXCERPTS, terms, words) == expected
    assert expected != [1.0] * len(expected) or not terms


def test_labels_from_words_read_once_are_the_labels() -> None:
    wolves = "Wolves hunt in packs in the forest. The wolf pack follows the alpha wolf."
    excerpts = [excerpt(f"a#{i}", wolves.replace("alpha", f"grey{i}")) for i in range(3)]
    excerpts += [excerpt("b#0", "The json module encodes Python objects; json.loads decodes.")]
    words = read_words(excerpts)
    assert words.each[0][:3] == ["wolves", "hunt", "in"], "each excerpt's lowercase words, in order"
    assert words.uses["wolf"] == 6 and next(iter(words.uses)) == "wolves", "uses in order of first use"
    assert label_excerpts(excerpts, words) == label_excerpts(excerpts)


# -- index and plan -------------------------------------------------------------------------


def test_near_duplicate_labels_merge_and_clusters_rank_by_relevance() -> None:
    es = [excerpt(f"d#{i}", f"text {i}") for i in range(4)]
    labels = [
        Label("Quests", "quest givers"),
        Label("quests", "Quest-givers"),  # same stems: one cluster
        Label("Geography", "rivers"),
        Label("Quests", "quest givers and rewards"),  # same topic, subtopic Jaccard >= 0.5
    ]
    groups = group(es, labels, [0.4, 0.9, 0.95, 0.1])
    assert [g.cluster_id for g in groups] == ["geography::rivers", "quests::quest-givers"]
    quests = groups[1]
    assert quests.source_ids == ["d#0", "d#1", "d#3"] and quests.relevance == 0.9


def test_plan_keeps_the_budget_and_drops_low_relevance_first() -> None:
    es = [excerpt(f"d#{i}", "x") for i in range(6)]
    labels = [Label(f"topic{i}", "") for i in range(6)]
    groups = group(es, labels, [0.9, 0.1, 0.8, 0.7, 0.05, 0.6])
    shape = plan(groups, 600, min_relevance=0.2, overhead=lambda g: 40, master_overhead=20)
    assert shape.master_tokens == 150
    assert sum(shape.shares) + 40 * len(shape.kept) + shape.master_tokens + 20 <= 600
    assert all(s >= MIN_CLUSTER_TOKENS for s in shape.shares)
    kept = {g.cluster_id for g in shape.kept}
    dropped = [g for g in groups if g.cluster_id not in kept]
    assert kept and dropped
    # everything kept is at least as relevant as everything dropped above the threshold
    assert min(g.relevance for g in shape.kept) >= max(
        (g.relevance for g in dropped if g.relevance >= 0.2), default=0
    )
    assert all(g.dropped_because for g in dropped)
    assert any("CLUSTER_MIN_RELEVANCE=0.2" in (g.dropped_because or "") for g in dropped)


def test_a_budget_too_small_for_any_cluster_goes_to_the_master_summary() -> None:
    groups = group([excerpt("d#0", "x")], [Label("a", "b")], [1.0])
    shape = plan(groups, 50, min_relevance=0.2, overhead=lambda g: 40, master_overhead=10)
    assert shape.kept == [] and shape.master_tokens == 40
