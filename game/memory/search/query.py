"""Query rewriting: the characters and places a query names.

A name matches everything that character ever said or every turn spent in that
place, which drowns the rest of the question. So names are taken out of the
query text and handed back separately: a character joins the focus of the
search, a place becomes a prior on what happened there (see ``retrieval.py``
for what each was measured to be worth).
"""

from __future__ import annotations

from collections.abc import Iterable

from game.text import mentions, whole_words
from game.world.content import ContentPack


class QueryRewriter:
    """Finds character and place names in queries.

    Args:
        pack: the story; its NPCs (names, aliases, ids) and places are known
            from the start. None for memory outside a story.
    """

    def __init__(self, pack: ContentPack | None) -> None:
        self.pack = pack
        self.entities: dict[str, list[str]] = {}
        for npc in pack.npcs.values() if pack else ():
            self.register(npc.id, npc.names)
        self.place_names = self._place_table()
        self._longest_first = sorted(self.place_names, key=len, reverse=True)

    def register(self, entity_id: str, names: Iterable[str]) -> None:
        self.entities[entity_id] = [n for n in names if n]

    def _place_table(self) -> dict[str, str]:
        """Lower-case place names and their tails of two or more words ("hunter's lodge") -> full name."""
        table: dict[str, str] = {}
        for node in self.pack.nodes.values() if self.pack else ():
            words = node.name.split()
            for i in range(len(words) - 1):
                table.setdefault(" ".join(words[i:]).lower(), node.name)
            table[node.name.lower()] = node.name
        return table

    def places(self, query: str) -> tuple[list[str], str]:
        """Places (full names) the query names, and the query without them."""
        table = self.place_names
        found: list[str] = []
        for name in self._longest_first:
            pattern = whole_words(name)
            if pattern.search(query):
                if table[name] not in found:
                    found.append(table[name])
                query = pattern.sub(" ", query)
        return found, " ".join(query.split())

    def characters(self, query: str) -> tuple[list[str], str]:
        """Entities the query names, and the query without their names.

        Place names are set aside first, so "the hunter's lodge" does not name
        the hunter.
        """
        return mentions(query, self.entities.items(), masked=self.place_names)
