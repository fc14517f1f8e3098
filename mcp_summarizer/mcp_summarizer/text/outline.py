"""A table's outline: its first column alone, where that column is names (tools, options,
variables), so that a summary with no room for a table's rows can still list what the table
is about.  Used by `text.units`, which makes the outline a unit of its own."""

from __future__ import annotations

import re

__all__ = ["OUTLINE_CELL_CHARS", "OUTLINE_ROWS", "table_outline"]

OUTLINE_ROWS = 3
OUTLINE_CELL_CHARS = 48
# A table row's first cell, up to its closing pipe: short, not blank, no code span cut open.
_FIRST_CELL = re.compile(r"[ \t]*+\|?+[ \t]*+(?=[^|\s])(?:[^|`\\\n]++|\\.|`[^`|\n]*+`)++\|")


def table_outline(rows: list[str]) -> str:
    """A table's first column (head, delimiter and each row's first cell, as the source has
    them), when the table has OUTLINE_ROWS rows or more, more than one column, and first
    cells that are names (short, distinct, with letters): the keys of a table of tools,
    options or fields, which a summary with no room for whole rows can still list.  "" if
    the table has no such column."""
    if len(rows) < OUTLINE_ROWS + 2:
        return ""
    firsts = []
    for row in rows:
        first = _FIRST_CELL.match(row)
        if first is None or first.end() == len(row.rstrip()) or first.end() > OUTLINE_CELL_CHARS:
            return ""  # one column (the outline would be the table), or cells too long for names
        firsts.append(first.group())
    keys = [cell.strip(" \t|") for cell in firsts[2:]]
    if len(set(keys)) < len(keys) or not all(any(c.isalpha() for c in key) for key in keys):
        return ""  # repeated cells (rows grouped under one) or numbers: no names to list
    return "\n".join(firsts)
