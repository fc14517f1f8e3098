"""The source kept while its summary is made (`drill.keep`): the excerpts cut as a stream
are the ones a whole cut gives, a map prompt waits only for the excerpts its chunk holds and
then names the same ones, and a request that ends stops the cut.

In process, with the real SQLite store and the real chunker: no mock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.sources import cut, document_ids
from mcp_summarizer.drill.keep import EXCERPT_TOKENS, Kept, begin, keep
from mcp_summarizer.process import pacing
from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.ids import IdKey
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.engine.model import named_cut
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text.boilerplate import strip_boilerplate
from tests.citations.test_attribute import wrapped_markdown
from tests.drill.test_drill import LOG


@pytest.fixture
def store() -> Iterator[SQLiteStore]:
    yield SQLiteStore(None, StoreOptions(ttl_seconds=3600, max_bytes=1 << 30))


def whole_cut(secret: bytes, text: str) -> Kept:
    """The excerpts as the source was kept before it was streamed: one cut of the whole
    text, and each excerpt found after the one before."""
    key = IdKey(secret)
    doc = DocumentIn(text=text, id=None, title="", url="")
    (doc_id,) = document_ids([doc], key, LOCAL)
    document, excerpts = cut(doc, doc_id, EXCERPT_TOKENS, key, LOCAL)
    starts, at = [], 0
    for e in excerpts:
        at = max(text.find(e.text, at), 0)
        starts.append(at)
        at += len(e.text)
    return Kept(f"{doc_id}~{document.version}", excerpts, starts, True)


def site_page(sections: int) -> str:
    """Markdown pages, each under a menu of links (site chrome by its shape), long sections."""
    menu = "\n".join(f"- [Topic {i}](/topics/{i})" for i in range(12))
    return "\n\n".join(
        f"# Page {s}\n\n{menu}\n\n## Section {s}\n\n"
        + " ".join(f"Fact {s}.{i} holds value {s * 31 + i}." for i in range(400))
        for s in range(sections)
    )


SOURCES = {
    "log": LOG,
    "wrapped markdown": wrapped_markdown(),
    "site page": site_page(12),
    "one line of words": " ".join(f"word{i}" for i in range(30_000)),
    "CJK without spaces": "漢字仮名交じり文" * 3_000,
    "leading white space": "\n\n   \n" + LOG,
    "one letter": "a" * 50_000,
}


@pytest.mark.parametrize("name", list(SOURCES))
async def test_the_streamed_cut_keeps_what_a_whole_cut_keeps(store: SQLiteStore, name: str) -> None:
    text = SOURCES[name]
    kept = await keep(store, LOCAL, text)
    want = whole_cut(await store.id_secret(), text)
    assert kept.stored and kept.handle == want.handle
    assert kept.excerpts == want.excerpts and kept.starts == want.starts
    assert len(kept.excerpts) >= 2


async def test_white_space_alone_has_no_excerpt(store: SQLiteStore) -> None:
    kept = await keep(store, LOCAL, " \n\t\n ")
    assert kept.excerpts == [] and kept.starts == [] and kept.stored


@pytest.mark.parametrize("cleaned", [False, True], ids=["source", "chrome removed"])
async def test_a_map_prompt_waits_for_its_excerpts_and_names_the_whole_cuts(
    store: SQLiteStore, cleaned: bool
) -> None:
    """Each chunk's prompt, built as soon as `named_cut` lets it while the cut is still going,
    names the excerpts the finished cut says it holds (the summary's chunks come from the
    source with the site chrome removed, so their offsets are before their place in it)."""
    source = site_page(60)
    text = strip_boilerplate(source).text if cleaned else source
    assert (text != source) == cleaned
    pieces = chunk(text, strategy="semantic", chunk_size=3_000)
    keeping = await begin(store, LOCAL, source)
    growing = Ask(source, (), keeping.starts)
    await named_cut(growing, keeping, None)
    early = [growing.map_values(None)]
    known = []  # excerpts cut when each prompt was made
    for piece in pieces:
        await named_cut(growing, keeping, piece)
        early.append(growing.map_values(piece))
        known.append(len(keeping.starts))
    kept = await keeping.kept()
    whole = Ask(source, [e.source_id for e in kept.excerpts], kept.starts)
    assert early == [whole.map_values(None), *(whole.map_values(p) for p in pieces)]
    assert len(pieces) >= 50 and known[0] < len(kept.excerpts) // 2, (
        "the first prompts came before the cut's end"
    )


async def test_a_request_that_ends_stops_the_cut(store: SQLiteStore) -> None:
    text = site_page(600)  # 7.5M characters, 4,200 excerpts: a second or more of cutting
    keeping = await begin(store, LOCAL, text)
    whole = asyncio.ensure_future(keeping.kept())  # all of it wanted: the cut does not wait
    await keeping.first(1)
    keeping.close()
    with pytest.raises(asyncio.CancelledError):
        await whole
    await asyncio.sleep(0.3)  # the thread stops at its next excerpt
    stopped_at = len(keeping.starts)
    await asyncio.sleep(0.5)
    assert len(keeping.starts) == stopped_at, "the cut went on for a request that ended"
    assert stopped_at < 2_000


async def test_a_held_cut_gives_what_is_asked_and_no_more(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the request's first steps run (`pacing.hold`), the cut's thread stops where
    the excerpts asked for end, and goes on from there when released: the same excerpts."""
    monkeypatch.setattr(pacing, "HOLD_SECONDS", 60.0)  # a loaded machine's pace is not the test's
    text = site_page(60)  # 750k characters: a tenth of a second of cutting, ~280 excerpts
    want = whole_cut(await store.id_secret(), text)
    keeping = await begin(store, LOCAL, text)
    release = pacing.hold()  # before its thread starts (at the event loop's next turn)
    keeping.expect(3)
    await keeping.first(3)
    await asyncio.sleep(0.3)
    assert len(keeping.starts) == 3, "the cut went past what was asked while held"
    await keeping.reach(want.starts[6] - 1)  # the excerpts that start before it: 0 to 5
    await asyncio.sleep(0.3)
    assert 6 <= len(keeping.starts) <= 7, "the cut went past what was asked while held"
    release()
    kept = await keeping.kept()
    assert kept.excerpts == want.excerpts and kept.starts == want.starts


async def test_a_hold_nobody_releases_ends_by_itself(store: SQLiteStore) -> None:
    """A hold is bounded in time: a caller that never releases it (a bug, a path that
    forgot) delays the cut, it cannot stop it."""
    text = site_page(20)
    keeping = await begin(store, LOCAL, text)
    pacing.hold()
    kept = await asyncio.wait_for(keeping.kept(), timeout=60)
    want = whole_cut(await store.id_secret(), text)
    assert kept.excerpts == want.excerpts and kept.starts == want.starts


async def test_a_held_write_waits_for_the_request_to_want_it(store: SQLiteStore) -> None:
    """A request that may be answered from the cache cuts its source at once but writes the
    excerpts only once it knows it was not (`store`, or `kept`): a hit renews what an earlier
    request kept, so its write must not land first, and a hit that needs none writes none."""
    ids = [e.source_id for e in whole_cut(await store.id_secret(), LOG).excerpts]

    unwanted = await begin(store, LOCAL, LOG, held=True)
    await unwanted.reach(len(LOG))  # cut whole
    await asyncio.sleep(0.3)
    assert not unwanted.done and not await store.renew(LOCAL, ids), "written before it was wanted"
    unwanted.close()
    await asyncio.sleep(0.1)
    assert not await store.renew(LOCAL, ids), "a closed cut wrote its excerpts"

    wanted = await begin(store, LOCAL, LOG, held=True)
    await wanted.reach(len(LOG))
    wanted.store()
    kept = await asyncio.wait_for(wanted.kept(), timeout=60)
    assert kept.stored and [e.source_id for e in kept.excerpts] == ids
    assert await store.renew(LOCAL, ids) and (await store.get(LOCAL, ids[0])).text == kept.excerpts[0].text
