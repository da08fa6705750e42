"""The imported lore a turn fires, as items of the prompt's lore block (issue 44; the firing is ``activation.py``).

The entries fired go first in the ``knowledge`` block, in their prompt order, each with why it fired
(``MemoryItem.why``) and the value :data:`FIRED_SCORE` (the prompt budget weighs them above a meaning hit); the
knowledge base's meaning hits follow. A ``constant`` entry the import made canon (category ``hidden_rule``) is in
every system prompt already (the persona's canon lines and the Story Bible), so it is not repeated: its verdict
says so. Every verdict goes to ``retrieval_meta["lore"]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from game.memory.base import MemoryItem
from game.memory.search.activation import LoreActivation
from game.memory.search.knowledge import KnowledgeDoc, snippet
from game.memory.search.lore_scan import Choice, Verdict

if TYPE_CHECKING:
    from game.memory.records import Episode
    from game.memory.search.fusion import Hit

FIRED_SCORE = 1.0
"""The score of an entry its keys fired: above any meaning hit's value in the prompt budget."""


def played(log: Iterable[Episode], turn: int) -> list[tuple[int, str, str]]:
    """The played turns of ``log`` up to ``turn``, oldest first, as (turn, action, narration)."""
    return [(e.turn, e.action, e.narration) for e in log if e.action and e.turn <= turn]


def doc_id(story: str, entry: str) -> str:
    """The knowledge base's id of a ``knowledge.json`` entry (``knowledge.py``'s ``_world_documents``)."""
    return f"{story}:knowledge:{entry}"


def lore_items(
    choice: Choice, lore: LoreActivation, story: str, hits: Iterable[tuple[KnowledgeDoc, Hit]]
) -> tuple[list[MemoryItem], list[Verdict]]:
    """The knowledge block's items: the fired entries, then the meaning ``hits`` not fired already; and every
    verdict (a vectorized imported entry found by meaning gets one too)."""
    items: list[MemoryItem] = []
    verdicts = list(choice.verdicts)
    fired = set()
    for rule, why in choice.fired:
        entry = rule.entry
        fired.add(doc_id(story, entry.id))
        if entry.category == "hidden_rule" and rule.activation.constant:
            verdict = next(v for v in verdicts if v.entry == entry.id)
            verdict.why += "; canon, in every system prompt already"
            continue
        text = f"{entry.title}: {entry.content}"
        shown = snippet(text)
        left_out = text[len(shown) - 1 :].strip() if shown != text else ""
        source = f"kb:{entry.category}:{entry.title}"
        items.append(MemoryItem(shown, FIRED_SCORE, source, {"fired": FIRED_SCORE}, left_out=left_out, why=why))
    imported = {doc_id(story, r.id): r for r in lore.rules}
    for doc, hit in hits:
        if doc.id in fired:
            continue
        score = round(hit.score, 3)
        shown = snippet(doc.text)
        left_out = doc.text[len(shown) - 1 :].strip() if shown != doc.text else ""
        why = "meaning" + (" (vectorized)" if doc.id in imported else "")
        items.append(
            MemoryItem(shown, score, f"kb:{doc.category}:{doc.name}", {"semantic": score}, left_out=left_out, why=why)
        )
        if doc.id in imported:
            rule = imported[doc.id]
            verdicts = [v for v in verdicts if v.entry != rule.id]
            verdicts.append(Verdict(rule.id, rule.entry.title, True, "recalled by meaning (vectorized)"))
    return items, verdicts
