"""Which units an extractive summary keeps: the selection behind `extractive.summarize`.

``Selector(doc, budget, focus, kind, lexicon).run()`` takes the units `text.units` parsed out
of a markdown text and returns the rendered summary (or "" when there is no unit at all).

How, and why this way:

1. **Units that respect markdown** (`text.units`, one pass over the text): the sentences
   of paragraphs and list items, table rows, quote lines, code blocks (fenced or indented),
   the statements of source code pasted without a fence (`text.code`), and headers.
   Headers are structure: a selected unit brings its header path (a table row its table's
   header row and separator line), each printed once.  A table whose first column is names
   also has that column as a unit (its *outline*: a table of tools or options listed where
   its rows do not fit); the outline and the rows exclude each other.  A code block larger
   than a third of the budget is never selected, nor a statement that only imports, and
   nothing is cut inside a unit (but see 6), so the summary is made of the author's own
   sentences, in the author's order.
2. **Salience** (`salience`), SumBasic/centroid style.  Terms are `text.lexicon`'s: stemmed words and
   named things (identifiers, numbers, dates, names).  With ``df`` the number of units
   containing a word among ``N`` units, its weight is ``df/N * log(1 + N/df)`` scaled so the
   heaviest word weighs 1: frequent words are central, and the log discounts words found
   almost everywhere.  A named thing weighs a constant (more when repeated), so units
   that carry facts beat vague ones.  A unit's gain is the sum of the weights of its
   distinct terms and its score ``gain / size**0.7``: long units pay for their length,
   less than linearly, so one rich sentence can beat a short fragment.  Code blocks score
   0.6 times as much (a docstring alone reads as prose: 1), a sentence ending with ":" (it
   announces what follows) 0.3, a sentence in parentheses 0.5, a table's outline 2 (it
   names what the rows are about in a fraction of their tokens); a unit repeated word for
   word (boilerplate) can only be selected where it first occurs.
3. **Focus**: a unit that mentions a term of ``focus`` (the topics, crudely stemmed) scores
   3 times as much, one under a header that mentions one 1.5 times, so the summary is
   about the focus while the redundancy rule still varies it; a focus term also weighs as
   much as the heaviest word.  For ``kind="extraction"`` named things weigh more, and 3
   times more in the categories a schema hint names ("dates", "exceptions", "numbers",
   "NPCs", ...); such category words pick what to extract, they do not mark units as
   on-topic.
4. **Greedy with redundancy, lazily**: when a unit is taken, the weights of its terms are
   multiplied by 0.3 (0.1 for a named thing: once it is in, repeating it adds little), so
   the next pick covers something else: SumBasic's update, which spreads the budget over
   the document's topics.  Weights only go down, so a score in the priority queue is an
   upper bound: pop the top, re-score it, and take it if no queued bound beats it (lazy
   greedy; the re-scoring per pick is capped, because a few very common terms make long
   chains of stale bounds).  Scores use a size estimate (4 characters a token); a unit is
   tokenized only when it is about to be taken, so tokenizing costs in proportion to the
   summary, not the input.  Header lines and table headers are charged once.
5. **Exact budget**: the chosen units are rendered (sentences of one paragraph on one line,
   list items and rows as lines, blank lines between blocks) and the result is counted.
   Over budget, the lowest-scoring units are dropped until it fits; with room left, the
   greedy goes on in that room (a few rounds).  Text that fits is returned unchanged; the
   whole input is only tokenized when it might fit (an exact count of a prefix cut at a
   line start, which encodes as in the whole text, rules that out first).
6. **Never empty**: text over the budget always gets some of its own text back.  When no
   unit fits with its headers (a tiny budget, or nothing but code blocks too large for
   their share), the best unit alone is cut to the budget: prose at a word or character
   boundary, code to its first lines, still fenced (not ending on a signature); with no
   unit at all (only rules, say), the text's start.  Only whitespace gives "" (or a budget
   too small for one character).

7. **A clean first impression**: the summary opens where a block of the source opens (the
   first sentence of a paragraph or list item, a row, a code block), never with a sentence
   from inside a paragraph nor with a paragraph that continues one (it starts lowercase,
   after a code block); the greedy does not take a unit that would open the summary unless
   it can, and what is left at the edges after the budget is met goes.  It never ends on a
   header or on a lead-in ending with ":".  A line made only of links, images or an HTML
   comment is never selected: navigation, badges and markup say nothing of the text.
   A summary that asks for nothing in particular (no focus, not for extraction) opens with
   the text's lead, before the greedy: its first paragraph of prose, if it comes before
   any heading below the title's and fits in two thirds of the budget (else its first
   sentences that do).  It says what the text is, which salience alone rarely picks.

Speed (bench/extractive.py): one regex search per paragraph for its end, one scan for
sentence ends, one for terms (words and named things in a single alternation; each distinct
match is classified once and cached), Counter-based weights, a heap: a few tokenizer passes
over the same text at any size.  Large budgets cost more, since every pick is re-scored lazily
and tokenized.
Linear on any input: no regex retries a run of characters from each of its positions
(test_hostile_text.py times runs of every markup character against a tokenizer pass), and
no single step holds the GIL long, so the service keeps answering while it works: C-level
loops over all units go in batches, and units are plain tuples, which the garbage collector
stops tracking (a full collection would otherwise walk every unit while holding the GIL).
Deterministic: no randomness, ties broken by position, and every iteration that reaches
the output goes over lists or insertion-ordered dicts, never over a set of strings (whose
order depends on the hash seed).
"""

from __future__ import annotations

import heapq
import math
import threading

from mcp_summarizer.summarize import traits
from mcp_summarizer.summarize.salience import ENTITY_WEIGHT, boosts, weights
from mcp_summarizer.summarize.traits import LEAD_IN_END, NOTHING_TO_READ, code_head, estimate, lead
from mcp_summarizer.text import tokens
from mcp_summarizer.text.code import is_imports
from mcp_summarizer.text.lexicon import Lexicon
from mcp_summarizer.text.units import (
    BLOCK,
    CODE,
    GROUP,
    HEADER,
    KIND,
    PATH,
    SENTENCE,
    TABLE,
    TEXT,
    Doc,
    Step,
)

__all__ = ["ENTITY_WEIGHT", "Selector"]

# --- tuning (see the module docstring; bench/extractive.py judges a change) --------------------------

LENGTH_EXPONENT = 0.7  # score = gain / size**LENGTH_EXPONENT
CODE_BUDGET_SHARE = 3  # a code block over budget / 3 tokens is not selectable
SIZE_FLOOR = 10.0  # scores divide by at least this size: a fragment scores as a short sentence
MIN_TERMS = 2  # units with fewer distinct terms ("Note", "---") are not selectable
LAZY_CANDIDATES = 128  # at most this many re-scorings per pick
MAX_REJECTIONS = 400  # stop the greedy after this many units in a row did not fit
FILL_ROUNDS = 2
LEAD_SHARE = 2 / 3  # the text's lead is taken first if it fits in this share of the budget


class Selector:
    """One selection: built over a parsed text, ``run()`` once gives the summary."""

    def __init__(
        self,
        doc: Doc,
        budget: int,
        focus: str,
        kind: str,
        lexicon: Lexicon,
        halt: threading.Event | None = None,
        step: Step | None = None,
    ) -> None:
        self.doc = doc
        self.budget = budget
        self.step = step  # hears how far weighing ("weigh", units) and choosing ("select", tokens) are
        self.plain = kind == "general" and not focus.strip()  # a summary that asks for nothing in particular
        units = doc.units
        self.size = size = [estimate(u[TEXT]) for u in units]
        # Units far over what they may take (the budget; a third of it for code) can never
        # be selected: their terms are not even read.  Read in batches, so that a selection
        # nobody waits for any more (``halt`` set) stops between them: this is most of its time.
        limit, code_limit = 2 * budget + 8, 2 * (budget // CODE_BUDGET_SHARE) + 8
        self.terms = unit_terms = traits.read_terms(doc, size, (limit, code_limit), lexicon, halt, step)
        self.weight, self.decay, topical = weights(unit_terms, len(units), focus, kind)
        # Scores use a size estimate, so that a unit is tokenized only when it is about to
        # be taken; the budget is charged exact counts.
        # score = gain * norm: the boosts and the length normalization, computed once.
        self.norm: list[float] = [
            b / max(s, SIZE_FLOOR) ** LENGTH_EXPONENT
            for b, s in zip(boosts(doc, unit_terms, topical), self.size, strict=True)
        ]
        get, norm = self.weight.__getitem__, self.norm
        # A unit repeated word for word (boilerplate: "Return value: New reference.") is
        # only selectable where it first occurs.
        first = {units[i][TEXT]: i for i in range(len(units) - 1, -1, -1)}
        self.heap = [
            (-sum(map(get, terms)) * norm[i], i)
            for i, terms in enumerate(unit_terms)
            if len(terms) >= MIN_TERMS
            and first[units[i][TEXT]] == i
            and not NOTHING_TO_READ.fullmatch(units[i][TEXT])
            and not (units[i][KIND] == CODE and is_imports(units[i][TEXT]))
        ]
        self.opens = self._openers()
        self.first = len(units)  # the first unit selected (len: none yet)
        heapq.heapify(self.heap)
        self.rejected: list[tuple[float, int]] = []
        self.costs: dict[int, int] = {}
        self.header_cost: dict[int, int] = {}
        self.table_cost: dict[int, int] = {}
        self.selected: dict[int, float] = {}  # unit -> score when taken
        self.charged_blocks: set[int] = set()
        self.charged_headers: set[int] = set()
        self.charged_tables: set[int] = set()
        # A table's outline (its first column, `text.units`) and its rows exclude each other:
        # taking one blocks the others.
        self.outline_of = {i: t for t, i in doc.outlines.items()}
        self.rows_of = traits.outline_rows(doc)
        self.blocked: set[int] = set()

    def _openers(self) -> list[bool]:
        """Whether each unit can open a summary: it starts a line of the source (a block, or
        a sentence on a line of its own), and does not continue a sentence (a paragraph
        starting lowercase after a code block; a list item may)."""
        units, prefixes, mid_line = self.doc.units, self.doc.prefixes, self.doc.mid_line
        return [
            i not in mid_line
            and not (u[KIND] == SENTENCE and u[TEXT][:1].islower() and not prefixes[u[BLOCK]].strip())
            for i, u in enumerate(units)
        ]

    def _dangles(self, i: int) -> bool:
        """Whether unit ``i`` cannot end a summary: a header, or a lead-in ending with ":"."""
        u = self.doc.units[i]
        return u[KIND] == HEADER or bool(LEAD_IN_END.search(u[TEXT]))

    def _may_take(self, i: int) -> bool:
        """A unit before every one taken so far would open the summary: only if it can."""
        return i > self.first or self.opens[i]

    def _score(self, i: int) -> float:
        return sum(map(self.weight.__getitem__, self.terms[i])) * self.norm[i]

    def _text(self, i: int) -> str:
        u = self.doc.units[i]
        return self.doc.prefixes[u[BLOCK]] + u[TEXT] if u[KIND] == SENTENCE else u[TEXT]

    def _cost(self, i: int) -> int:
        """Exact tokens of unit ``i`` (with its list marker)."""
        cost = self.costs.get(i)
        if cost is None:
            # A header unit is printed as a header of its path: _extra_cost charges it.
            header = self.doc.units[i][KIND] == HEADER
            cost = self.costs[i] = 0 if header else tokens.count(self._text(i))
        return cost

    def _extra_cost(self, i: int) -> int:
        """Tokens of the header lines and table head unit ``i`` would bring, and of its
        separator: none after a sentence of the same paragraph (the space joins the next
        word's token), one otherwise (a line break)."""
        u = self.doc.units[i]
        extra = 0 if u[KIND] == SENTENCE and u[BLOCK] in self.charged_blocks else 1
        for h in u[PATH]:
            if h not in self.charged_headers:
                if h not in self.header_cost:
                    self.header_cost[h] = tokens.count(self.doc.headers[h]) + 1
                extra += self.header_cost[h]
        if u[TABLE] >= 0 and u[TABLE] not in self.charged_tables:
            if u[TABLE] not in self.table_cost:
                self.table_cost[u[TABLE]] = tokens.count(self.doc.table_heads[u[TABLE]]) + 1
            extra += self.table_cost[u[TABLE]]
        return extra

    def _greedy(self, room: int) -> int:
        """Take units into ``room`` tokens; returns the tokens charged."""
        used = misses = 0
        heap, units, size, terms, norm = self.heap, self.doc.units, self.size, self.terms, self.norm
        get = self.weight.__getitem__
        while heap and misses < MAX_REJECTIONS and room - used > 1:
            # Lazy step: re-score the top of the queue until no queued bound beats the best
            # re-scored unit, or LAZY_CANDIDATES were re-scored (then the best of those).
            best, best_score = -1, 0.0
            held: list[tuple[float, int]] = []
            while heap and len(held) < LAZY_CANDIDATES:
                if best >= 0 and -heap[0][0] <= best_score:
                    break
                bound, j = heapq.heappop(heap)
                if size[j] > 2 * (room - used) + 8:  # clearly too big for what is left
                    self.rejected.append((bound, j))
                    misses += 1
                    if misses >= MAX_REJECTIONS:
                        break
                    continue
                score = sum(map(get, terms[j])) * norm[j]
                if best < 0 or score > best_score:
                    if best >= 0:
                        held.append((-best_score, best))
                    best, best_score = j, score
                else:
                    held.append((-score, j))
            for item in held:
                heapq.heappush(heap, item)
            if best < 0:
                break
            if best in self.blocked:
                continue
            cost = self._cost(best)
            if cost > self.budget or (units[best][KIND] == CODE and cost > self.budget // CODE_BUDGET_SHARE):
                continue  # never selectable
            need = cost + self._extra_cost(best)
            if used + need > room or not self._may_take(best):
                self.rejected.append((-best_score, best))
                misses += 1
                continue
            misses = 0
            used += need
            self._take(best, best_score)
            if self.step is not None:  # the tokens charged in all: this greedy's room is what was left
                self.step("select", self.budget - room + used, self.budget)
        return used

    def _take(self, i: int, score: float) -> None:
        u = self.doc.units[i]
        self.selected[i] = score
        self.first = min(self.first, i)
        self.charged_blocks.add(u[BLOCK])
        self.charged_headers.update(u[PATH])
        if u[TABLE] >= 0:
            self.charged_tables.add(u[TABLE])
            outline = self.doc.outlines.get(u[TABLE])
            if outline is not None:
                self.blocked.add(outline)
        elif i in self.outline_of:
            self.blocked.update(self.rows_of.get(self.outline_of[i], ()))
        weight, decay = self.weight, self.decay
        for t in self.terms[i]:
            weight[t] *= decay[t]

    def _render(self) -> str:
        doc = self.doc
        parts: list[str] = []
        printed: set[int] = set()
        lines: list[str] = []
        group = block = -1
        for i in sorted(self.selected):
            u = doc.units[i]
            if u[GROUP] != group:
                if lines:
                    parts.append("\n".join(lines))
                for h in u[PATH]:
                    if h not in printed:
                        printed.add(h)
                        parts.append(doc.headers[h])
                lines = [doc.table_heads[u[TABLE]]] if u[TABLE] >= 0 else []
                group = u[GROUP]
            if u[KIND] == SENTENCE and u[BLOCK] == block:
                lines[-1] += " " + u[TEXT]
            elif u[KIND] != HEADER:  # a header unit was printed with its path
                lines.append(self._text(i))
            block = u[BLOCK]
        if lines:
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    def _take_lead(self) -> int:
        """Open with the text's lead (`traits.lead`): its sentences from the first, those that fit
        in LEAD_SHARE of the budget.  A reader first needs to know what the text is, and
        salience alone rarely picks the sentence that says it (it names the topic once).
        Taken lead units are dropped last when the budget is met.  Returns the tokens
        charged."""
        if not self.plain:
            return 0  # asked for a focus or for extraction: what it asks comes first
        room, used, taken = int(self.budget * LEAD_SHARE), 0, set()
        for i in lead(self.doc, self.opens):
            need = self._cost(i) + self._extra_cost(i)
            if used + need > room:
                break
            used += need
            self._take(i, math.inf)
            taken.add(i)
        if taken:
            self.heap = [entry for entry in self.heap if entry[1] not in taken]
            heapq.heapify(self.heap)
        return used

    def run(self) -> str:
        self._greedy(self.budget - self._take_lead())
        out = self._render()
        n = tokens.count(out)
        for _ in range(FILL_ROUNDS):
            if n > self.budget or self.budget - n < 3:
                break
            before = dict(self.selected)
            if not self._fill(self.budget - n):
                break
            candidate = self._render()
            m = tokens.count(candidate)
            if m > self.budget:  # the estimate was off: keep the previous, fitting selection
                self.selected = before
                break
            out, n = candidate, m
        while n > self.budget and self.selected:
            # Drop the lowest-scoring units whose tokens cover the excess, then re-count.
            excess = n - self.budget
            for i in sorted(self.selected, key=lambda k: (self.selected[k], -k)):
                del self.selected[i]
                excess -= self.costs[i]
                if excess <= 0:
                    break
            out = self._render()
            n = tokens.count(out)
        if self._trim_edges():
            out = self._render()
        return out if self.selected else self._fallback()

    def _trim_edges(self) -> bool:
        """Drop what may not open or end the summary (left by the budget's drops); True if
        anything went.  Dropping only shortens: the budget still holds."""
        dropped = False
        if all(map(self._dangles, self.selected)):
            return False  # an outline: headers are all there is
        while self.selected:
            first, last = min(self.selected), max(self.selected)
            if not self.opens[first]:
                del self.selected[first]
            elif self._dangles(last):
                del self.selected[last]
            else:
                break
            dropped = True
        self.first = min(self.selected, default=len(self.doc.units))
        return dropped

    def _fill(self, room: int) -> int:
        """Use ``room`` tokens left after a render: first the best units that were set
        aside as too big (those that now fit), then the greedy goes on.  Returns tokens
        charged."""
        used = 0
        keep: list[tuple[float, int]] = []
        for bound, i in sorted(self.rejected):
            if i in self.blocked:
                continue
            left = room - used
            if left > 1 and self.size[i] <= left * 1.5 + 4:
                cost = self._cost(i)
                need = cost + self._extra_cost(i)
                if (
                    need <= left
                    and self._may_take(i)
                    and not (self.doc.units[i][KIND] == CODE and cost > self.budget // CODE_BUDGET_SHARE)
                ):
                    used += need
                    self._take(i, -bound)
                    continue
            keep.append((bound, i))
        self.rejected = keep
        if room - used > 1:
            used += self._greedy(room - used)
        return used

    def _fallback(self) -> str:
        """Nothing fits with its headers (a tiny budget, or only code blocks too large to
        select): the best unit alone, prose if there is any, cut to the budget: prose at a
        word or character boundary, code to its first lines (still fenced)."""
        units = self.doc.units
        prose = [i for i, u in enumerate(units) if u[KIND] != CODE] or list(range(len(units)))
        candidates = [i for i in prose if self.opens[i] and not self._dangles(i)] or prose
        if not candidates:
            return ""
        best = max(candidates, key=lambda i: (self._score(i), -i))
        if units[best][KIND] == CODE:
            return code_head(units[best][TEXT], self.budget)
        return tokens.truncate(self._text(best), self.budget)
