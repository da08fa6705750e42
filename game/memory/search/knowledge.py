"""The knowledge base: documents built from a content pack, indexed for RAG.

Documents carry ``category``/``story``/``name`` metadata and a hash of their
text. Vector ids carry a digest of what was embedded (see ``hybrid.py``), so
indexing asks the vector store which documents it already holds: an unchanged
pack embeds nothing and an edited pack re-embeds only the documents that
changed (and deletes the ones that went). The vectors live in the collection
of the embedder's model (``knowledge__<model slug>``): another embedder
indexes into its own collection, and switching back finds the first one whole.

:func:`index_stories` indexes several stories in one pass (``storyecho index``,
and the game's warm-up, so that a new game embeds nothing): every story's
documents are staged first, so progress runs over all of them, and only the
missing ones are embedded.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from game.memory.search.embedding import Progress
from game.memory.search.fusion import Hit
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import IndexItem
from game.memory.vectors.embedders import Embedder, Vectors
from game.memory.vectors.stores import VectorStore
from game.world.content import Condition, ContentPack, Stat

log = logging.getLogger("storyecho.memory")

COLLECTION = "knowledge"
SNIPPET_CHARS = 300
LORE_LABEL = "Indexing lore"
EMBED_BATCH = 16
"""Documents embedded per batch (progress is reported after each)."""


@dataclass(frozen=True)
class KnowledgeDoc:
    id: str
    category: str
    name: str
    text: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def _needs(requires: Mapping[Stat, int]) -> str:
    return ", ".join(f"{stat} >= {n}" for stat, n in requires.items())


def _condition(cond: Condition) -> str:
    return cond.describe()


def build_documents(pack: ContentPack) -> list[KnowledgeDoc]:
    """Every document of the story's knowledge base."""
    return [*_story_documents(pack), *_world_documents(pack)]


def _story_documents(pack: ContentPack) -> Iterator[KnowledgeDoc]:
    """The worldview, the people, the quests and the endings."""
    sid, story = pack.id, pack.story
    yield KnowledgeDoc(f"{sid}:worldview:intro", "worldview", story.title, f"{story.title}: {story.intro}")
    for title, body in _sections(pack.worldview):
        yield KnowledgeDoc(f"{sid}:worldview:{_slug(title)}", "worldview", title, f"{title}. {body}")
    for npc in pack.npcs.values():
        likes = ", ".join(npc.likes) or "nothing in particular"
        dislikes = ", ".join(npc.dislikes) or "nothing in particular"
        text = f"{npc.name} ({npc.role}) at {pack.nodes[npc.location].name}. {npc.trait} "
        text += f"Likes: {likes}. Dislikes: {dislikes}. Speaks: {npc.dialogue_style}"
        yield KnowledgeDoc(f"{sid}:npc:{npc.id}", "npc", npc.name, text)
    for kind, quests in (("main_quest", pack.quests.main), ("side_quest", pack.quests.side)):
        for quest in quests:
            steps = "; ".join(
                o.description + (f" (needs {_needs(o.requires)})" if o.requires else "") for o in quest.objectives
            )
            trigger = ""
            if quest.trigger:
                condition = quest.trigger.condition
                offered = f" when {_condition(condition)}" if condition != Condition() else ""
                trigger = f" Offered by {pack.npcs[quest.trigger.npc].name}{offered}."
            text = f"{quest.title}: {quest.description}{trigger} Steps: {steps}."
            yield KnowledgeDoc(f"{sid}:{kind}:{quest.id}", kind, quest.title, text)
    for ending in pack.endings:
        # a hidden ending's conditions are the player's to discover, not the narrator's to hint at
        requires = "Its conditions are secret." if ending.hidden else f"Requires: {_condition(ending.condition)}."
        hidden = " (hidden ending)" if ending.hidden else ""
        text = f"{ending.title}{hidden}: {ending.description} {requires}"
        yield KnowledgeDoc(f"{sid}:ending:{ending.id}", "ending", ending.title, text)


def _world_documents(pack: ContentPack) -> Iterator[KnowledgeDoc]:
    """The enemies, the items, the talents and achievements, and the story's own knowledge entries."""
    sid = pack.id
    for enemy in pack.enemies.values():
        loot = ", ".join(f"{pack.items[lt.item].name} ({round(lt.chance * 100)}%)" for lt in enemy.loot) or "nothing"
        where = ", ".join(pack.nodes[n].name for n in enemy.nodes)
        text = f"{enemy.name}, a tier {enemy.tier} {enemy.category} (HP {enemy.hp}, attack {enemy.attack}) "
        text += f"found at {where}. {enemy.encounter} Loot: {loot}."
        yield KnowledgeDoc(f"{sid}:enemy:{enemy.id}", "enemy", enemy.name, text)
    for item in pack.items.values():
        yield KnowledgeDoc(f"{sid}:item:{item.id}", "item", item.name, f"{item.name} ({item.kind}): {item.description}")
    for talent in pack.talents:
        text = f"Talent {talent.name}: {talent.description} Unlocks when {_condition(talent.condition)}."
        yield KnowledgeDoc(f"{sid}:talent:{talent.id}", "talent", talent.name, text)
    for ach in pack.achievements:
        text = f"Achievement {ach.name}: {ach.description}"
        yield KnowledgeDoc(f"{sid}:achievement:{ach.id}", "achievement", ach.name, text)
    for entry in pack.knowledge:
        text = f"{entry.title}: {entry.content}"
        yield KnowledgeDoc(f"{sid}:knowledge:{entry.id}", entry.category, entry.title, text)


def _sections(markdown: str) -> list[tuple[str, str]]:
    out = []
    for chunk in re.split(r"^##\s+", markdown, flags=re.M)[1:]:
        title, _, body = chunk.partition("\n")
        body = " ".join(body.split())
        if body:
            out.append((title.strip(), body))
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


@dataclass
class IndexStats:
    """What indexing a story did.

    Attributes:
        documents: the story's documents.
        embedded: how many were embedded now (new or changed; 0 when all were in the store).
        removed: vectors of documents that are gone (or changed) deleted from the store.
        unchanged: documents whose vectors the store already held.
        embedded_ids: the ids of the documents embedded now.
    """

    documents: int
    embedded: int
    removed: int
    unchanged: int
    embedded_ids: list[str] = field(default_factory=list)


@dataclass
class KnowledgeHits:
    """Documents found for a query, best first, and how they were found (see :class:`Ranked`)."""

    found: list[tuple[KnowledgeDoc, Hit]]
    strategy: str
    fallback: str | None = None

    def __iter__(self) -> Iterator[tuple[KnowledgeDoc, Hit]]:
        return iter(self.found)

    def __len__(self) -> int:
        return len(self.found)


class KnowledgeBase:
    """A story's knowledge documents, searchable by meaning and keywords."""

    def __init__(self, pack: ContentPack, store: VectorStore | None, embedder: Embedder | None) -> None:
        self.pack = pack
        self.docs = {d.id: d for d in build_documents(pack)}
        self.index = HybridIndex(COLLECTION, store, embedder, namespace="kb")
        self.stats: IndexStats | None = None

    def build(self, progress: Progress | None = None) -> IndexStats:
        """Index the documents; only new or changed ones are embedded, vanished ones deleted.

        Args:
            progress: called as ``progress("Indexing lore", done, total)`` over the
                documents: at the start (0), once the ones the store already holds
                are counted, after each embedding batch of ``EMBED_BATCH``, and at
                the end (``done == total``, whether or not every embedding worked).
        """
        return build_all([self], progress)[0]

    def _stage(self) -> tuple[int, list[str]]:
        """Index every document's text, take the vectors the store holds, delete those of vanished documents.

        Returns:
            How many documents the store already held, and the vector ids deleted.
        """
        meta = {
            d.id: {"story": self.pack.id, "category": d.category, "name": d.name, "doc_hash": d.digest}
            for d in self.docs.values()
        }
        items = [IndexItem(d.id, d.text, meta[d.id]) for d in self.docs.values()]
        self.index.add(items, embed=False)
        unchanged = self.index.adopt_stored()
        removed: list[str] = []
        store = self.index.store
        if self.index.dense_ok and store is not None:
            try:
                current = {self.index.vector_id(item) for item in items}
                stored = store.metadata(self.index.collection, {"story": self.pack.id})
                removed = [i for i in stored if i not in current]
                store.delete(self.index.collection, removed)
            except Exception as exc:  # noqa: BLE001 - stale documents are never returned anyway
                log.warning("cleaning the knowledge index failed: %s", exc)
                removed = []
        return unchanged, removed

    def search(self, query: str, k: int = 3, query_vector: Vectors | None = None) -> KnowledgeHits:
        """Top ``k`` documents, deduplicated by category and text."""
        out: list[tuple[KnowledgeDoc, Hit]] = []
        seen: set[tuple[str, str]] = set()
        ranked = self.index.search(query, 4 * k, {"story": self.pack.id}, query_vector=query_vector)
        for hit in ranked:
            doc = self.docs.get(hit.id)
            if doc is None:
                continue
            key = (doc.category, doc.text.strip().lower())
            if key in seen:
                continue
            seen.add(key)
            out.append((doc, hit))
            if len(out) == k:
                break
        return KnowledgeHits(out, ranked.strategy, ranked.fallback)


def build_all(bases: list[KnowledgeBase], progress: Progress | None = None) -> list[IndexStats]:
    """Index several knowledge bases in one pass; progress runs over all their documents.

    Each base is staged first (texts indexed, stored vectors taken, vanished
    ones deleted), so the first report after the start already counts every
    document the store holds; then what is missing is embedded in batches of
    ``EMBED_BATCH``, with a report after each, and a last one at
    ``(total, total)``. Each base's :attr:`KnowledgeBase.stats` is set.
    """
    total = sum(len(base.docs) for base in bases)
    reported: list[int] = []

    def report(done: int) -> None:
        if progress is not None and (not reported or done > reported[-1]):
            reported.append(done)
            progress(LORE_LABEL, done, total)

    report(0)
    staged = [base._stage() for base in bases]
    pending = [sorted(base.index.pending_ids()) for base in bases]
    done = total - sum(len(ids) for ids in pending)
    report(done)
    out: list[IndexStats] = []
    for base, (unchanged, removed), todo in zip(bases, staged, pending, strict=True):
        embedded: list[str] = []
        if base.index.dense_ok:
            for start in range(0, len(todo), EMBED_BATCH):
                chunk = todo[start : start + EMBED_BATCH]
                base.index.embed_pending(chunk)
                left = base.index.pending_ids()
                embedded += [doc_id for doc_id in chunk if doc_id not in left]
                done += len(chunk)
                report(done)
        base.stats = IndexStats(len(base.docs), len(embedded), len(removed), unchanged, embedded)
        log.info("knowledge base %s (%s): %s", base.pack.id, base.index.collection, base.stats)
        out.append(base.stats)
    report(total)
    return out


def index_stories(
    store: VectorStore | None,
    embedder: Embedder | None,
    packs: Iterable[ContentPack],
    progress: Progress | None = None,
) -> list[KnowledgeBase]:
    """The knowledge bases of ``packs``, indexed in one pass (see :func:`build_all`); each carries its ``stats``."""
    bases = [KnowledgeBase(pack, store, embedder) for pack in packs]
    build_all(bases, progress)
    return bases


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
