"""A realistic set of documents for summarize_documents: 40 wiki pages on 8 subjects, each
with a dozen sections on six aspects (several excerpts a page at a 600-token chunk size)."""

from __future__ import annotations

from typing import Any

__all__ = ["SUBJECTS", "forty_documents", "page"]

SUBJECTS = {
    "wolves": "packs of grey wolves hunt deer in the forest at night, howling under the moon",
    "mines": "dwarven miners dig copper ore and tin from deep tunnels lit by lanterns",
    "harbor": "merchant ships unload spices and silk at the harbor while gulls circle the docks",
    "library": "scholars copy old scrolls by candlelight in the quiet halls of the great library",
    "farms": "farmers harvest wheat and barley in golden fields before the autumn rains arrive",
    "forge": "blacksmiths hammer steel blades at the forge, quenching them in barrels of oil",
    "temple": "priests light incense at the temple altar and chant prayers at dawn and dusk",
    "market": "traders haggle over prices of cloth, fruit and pottery in the crowded market square",
}
ASPECTS = {
    "history": "the old chronicles record wars and treaties",
    "economy": "coins, taxes and guild fees decide the trade",
    "dangers": "bandits and storms threaten travellers on the roads",
    "customs": "festivals, songs and weddings follow old rites",
    "geography": "rivers, hills and valleys shape the land",
    "people": "families, elders and apprentices live side by side",
}


def page(name: str, subject: str, sections: int = 12) -> str:
    parts = [f"# {name}"]
    for s in range(sections):
        aspect = list(ASPECTS)[s % len(ASPECTS)]
        parts.append(f"## {subject.title()} {aspect}")
        for p in range(4):
            parts.append(
                f"In {name} ({s}.{p}) {SUBJECTS[subject]}. About {aspect}: {ASPECTS[aspect]}; "
                f"Marshal Dughan counts {s * 7 + p} {subject} in year {600 + s}. " * 3
            )
    return "\n\n".join(parts)


def forty_documents() -> list[dict[str, Any]]:
    """As a client sends them: text, title and url."""
    return [
        {
            "text": page(f"{subject.title()} {i}", subject),
            "title": f"{subject.title()} page {i}",
            "url": f"https://wiki.example/{subject}/{i}",
        }
        for subject in SUBJECTS
        for i in range(5)
    ]
