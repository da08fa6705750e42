"""The knowledge base: documents built from a content pack, indexed for RAG.

Documents carry ``category``/``story``/``name`` metadata and a hash of their
text. Vector ids carry a digest of what was embedded (see ``hybrid.py``), so
indexing asks the vector store which documents it already holds: an unchanged
pack embeds nothing and an edited pack re-embeds only the documents that
changed (and deletes the ones that went). The vectors live in the collection
of the embedder's model (``knowledge__<model slug>``): another embedder
indexes into its own collection, and switching back finds the first one whole.

:func:`index_stories` indexes several stories in one pass (``storyecho index``):
every story's documents are staged first, so progress runs over all of them,
and only the missing ones are embedded. The Textual game indexes the story it
plays while the player plays: keyword lore at once, vectors when they land
(:class:`BackgroundIndexing`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from game.memory.search.embedding import Progress
from game.memory.search.fusion import Hit
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import IndexItem
from game.memory.vectors.embedders import Embedder, Vectors
from game.memory.vectors.foreground import FOREGROUND, MAX_WAIT_S
from game.memory.vectors.stores import VectorStore
from game.world.content import Condition, ContentPack, LoreCondition, Stat

log = logging.getLogger("storyecho.memory")

COLLECTION = "knowledge"
SNIPPET_CHARS = 400
"""The most of one lore entry a prompt shows (characters); a longer one is shortened at a word, and the prompt
records what it left out (``PromptBundle.cut``). ``content check`` warns of entries over it."""
LORE_LABEL = "Indexing lore"
EMBED_BATCH = 16
"""Documents embedded per batch (progress is reported after each)."""
BACKGROUND_BATCH = 4
"""... and while a game plays: a turn typed meanwhile waits for one batch at most before the rest waits for it."""
QUIET_POLL_S = 0.1
"""How often a background batch waiting for the turn looks whether it was stopped."""
STOP_WAIT_S = 10.0
"""The longest :meth:`BackgroundIndexing.stop` waits for the batch under way (one batch: well under a second)."""


@dataclass(frozen=True)
class KnowledgeDoc:
    id: str
    category: str
    name: str
    text: str
    keywords: tuple[str, ...] = ()
    """Words the author gave it (``knowledge.json`` ``keywords``): found by keyword search, not embedded."""
    when: LoreCondition | None = field(default=None, compare=False)
    """The condition over the game's state it is recalled under (``knowledge.json`` ``when``; ``lore_state.py``)."""
    constant: bool = False
    """In every prompt while ``when`` holds: a ``hidden_rule`` entry with a condition (the Story Bible's canon
    cannot be switched by the state, so such an entry is never canon)."""

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
        text += f" Tags: {', '.join(npc.tags)}." if npc.tags else ""
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
        if entry.activation is not None and not entry.activation.vectorized:
            continue  # imported lore its keys call up (activation.py), never found by meaning
        text = f"{entry.title}: {entry.content}"
        constant = entry.category == "hidden_rule" and entry.when is not None
        yield KnowledgeDoc(
            f"{sid}:knowledge:{entry.id}",
            entry.category,
            entry.title,
            text,
            tuple(entry.keywords),
            entry.when,
            constant,
        )


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
    held: list[tuple[KnowledgeDoc, str]] = field(default_factory=list)
    """Documents the search ranked among the chosen but the state held back, with why (``lore_state.py``)."""

    def __iter__(self) -> Iterator[tuple[KnowledgeDoc, Hit]]:
        return iter(self.found)

    def __len__(self) -> int:
        return len(self.found)


class KnowledgeBase:
    """A story's knowledge documents, searchable by meaning and keywords.

    Indexing has two steps. :meth:`stage` indexes every text for keywords and takes the vectors the store
    already holds: it takes milliseconds, and the base answers by keyword (BM25) from then on.
    :meth:`embed_missing` embeds what the store lacks (a first start: every document), which takes seconds;
    until it is done (:attr:`vectors_ready`), :meth:`search` stays keyword-only rather than rank the documents
    that have a vector against those that do not yet. :meth:`build` does both at once; the Textual game runs
    the second step on a thread of its own while the player plays (:class:`BackgroundIndexing`).
    """

    def __init__(self, pack: ContentPack, store: VectorStore | None, embedder: Embedder | None) -> None:
        self.pack = pack
        self.docs = {d.id: d for d in build_documents(pack)}
        self.index = HybridIndex(COLLECTION, store, embedder, namespace="kb")
        self.keywords = HybridIndex(COLLECTION, None, None, namespace="kb")
        """The same documents by keyword alone: what :meth:`search` asks until the vectors have landed."""
        self.stats: IndexStats | None = None
        """Set by :meth:`stage`; ``embedded`` counts up as :meth:`embed_missing` lands vectors."""
        self.vectors_ready = threading.Event()
        """Set once every vector the store lacked was embedded (or tried): search then ranks by meaning too."""

    def build(self, progress: Progress | None = None) -> IndexStats:
        """Index the documents; only new or changed ones are embedded, vanished ones deleted.

        Args:
            progress: called as ``progress("Indexing lore", done, total)`` over the
                documents: at the start (0), once the ones the store already holds
                are counted, after each embedding batch of ``EMBED_BATCH``, and at
                the end (``done == total``, whether or not every embedding worked).
        """
        return build_all([self], progress)[0]

    @property
    def missing(self) -> int:
        """Documents still waiting for their vector (0 when search is keyword-only by configuration)."""
        return len(self.index.pending_ids()) if self.index.dense_ok else 0

    def stage(self) -> IndexStats:
        """Index every document's text for keywords, take the vectors the store holds, delete those of vanished
        documents; :attr:`vectors_ready` is set at once when nothing is left to embed."""
        meta = {
            d.id: {"story": self.pack.id, "category": d.category, "name": d.name, "doc_hash": d.digest}
            for d in self.docs.values()
        }
        items = [
            IndexItem(d.id, d.text, meta[d.id], keyword_text=" ".join([d.text, *d.keywords]) if d.keywords else None)
            for d in self.docs.values()
        ]
        self.keywords.add(items, embed=False)
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
        self.stats = IndexStats(len(self.docs), 0, len(removed), unchanged)
        if not self.missing:
            self.vectors_ready.set()
        return self.stats

    def embed_missing(
        self,
        progress: Callable[[int], None] | None = None,
        stop: threading.Event | None = None,
        *,
        yield_to_turns: bool = False,
    ) -> IndexStats:
        """Embed what :meth:`stage` found missing, in batches of ``EMBED_BATCH``, then set :attr:`vectors_ready`.

        Args:
            progress: called with the number of documents of this base done after each batch.
            stop: set by whoever closes the store: the batch under way ends, and the base stays keyword-only.
            yield_to_turns: each batch (of ``BACKGROUND_BATCH``) waits until no turn is being played (bounded,
                ``foreground.py``).
        """
        if self.stats is None:
            self.stage()
        assert self.stats is not None
        todo = sorted(self.index.pending_ids()) if self.index.dense_ok else []
        done = len(self.docs) - len(todo)
        size = BACKGROUND_BATCH if yield_to_turns else EMBED_BATCH
        for start in range(0, len(todo), size):
            if yield_to_turns:
                _wait_for_quiet(stop)
            if stop is not None and stop.is_set():
                return self.stats
            chunk = todo[start : start + size]
            self.index.embed_pending(chunk)
            left = self.index.pending_ids()
            landed = [doc_id for doc_id in chunk if doc_id not in left]
            self.stats.embedded += len(landed)
            self.stats.embedded_ids += landed
            done += len(chunk)
            if progress is not None:
                progress(done)
        log.info("knowledge base %s (%s): %s", self.pack.id, self.index.collection, self.stats)
        self.vectors_ready.set()
        return self.stats

    def search(
        self,
        query: str,
        k: int = 3,
        query_vector: Vectors | None = None,
        gate: Callable[[KnowledgeDoc], str | None] | None = None,
    ) -> KnowledgeHits:
        """Top ``k`` documents, deduplicated by category and text (by keyword alone until :attr:`vectors_ready`);
        ``gate`` says why a document may not be chosen now (None: it may), and those it holds back are counted
        in ``held``, not in ``k``."""
        out: list[tuple[KnowledgeDoc, Hit]] = []
        held: list[tuple[KnowledgeDoc, str]] = []
        seen: set[tuple[str, str]] = set()
        ready = self.vectors_ready.is_set()
        index = self.index if ready else self.keywords
        ranked = index.search(query, 4 * k, {"story": self.pack.id}, query_vector=query_vector)
        for hit in ranked:
            doc = self.docs.get(hit.id)
            if doc is None:
                continue
            key = (doc.category, doc.text.strip().lower())
            if key in seen:
                continue
            why = gate(doc) if gate is not None else None
            if why is not None:
                held.append((doc, why))
                continue
            seen.add(key)
            out.append((doc, hit))
            if len(out) == k:
                break
        fallback = ranked.fallback if ready else f"lore still indexing ({self.missing} to embed): keyword search"
        return KnowledgeHits(out, ranked.strategy, fallback, held)

    def constants(self) -> list[KnowledgeDoc]:
        """The documents in every prompt while their condition holds (:attr:`KnowledgeDoc.constant`)."""
        return [doc for doc in self.docs.values() if doc.constant]


def _wait_for_quiet(stop: threading.Event | None) -> None:
    """Wait until no turn is being played (at most ``MAX_WAIT_S``), or until ``stop`` is set."""
    deadline = time.monotonic() + MAX_WAIT_S
    while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
        if FOREGROUND.wait_idle(timeout=min(QUIET_POLL_S, max(0.0, deadline - time.monotonic()))):
            return


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
    for base in bases:
        base.stage()
    done = total - sum(base.missing for base in bases)
    report(done)
    for base in bases:
        last = [len(base.docs) - base.missing]

        def advance(now: int, last: list[int] = last) -> None:
            nonlocal done
            done += now - last[0]
            last[0] = now
            report(done)

        base.embed_missing(advance)
    report(total)
    return [base.stats for base in bases if base.stats is not None]


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


class BackgroundIndexing:
    """Embeds what a staged knowledge base lacks on a daemon thread of its own, while the game plays.

    Each batch waits for the turn being played (``foreground.py``), so a turn's recall does not share the
    cores with it. ``progress(done, total)`` follows the documents; ``finished(stats)`` is called on the thread
    once the vectors have landed (not after :meth:`stop`). Stop it before the store closes.
    """

    def __init__(
        self,
        base: KnowledgeBase,
        progress: Callable[[int, int], None] | None = None,
        finished: Callable[[IndexStats], None] | None = None,
    ) -> None:
        self.base = base
        self._progress = progress
        self._finished = finished
        self._stop = threading.Event()
        self._starting = threading.Lock()
        self._started = False
        self._thread = threading.Thread(target=self._run, name="lore-index", daemon=True)

    def start(self) -> BackgroundIndexing:
        """Start the thread (once; never after :meth:`stop`)."""
        with self._starting:
            if not (self._started or self._stop.is_set()):
                self._started = True
                self._thread.start()
        return self

    def _run(self) -> None:
        total = len(self.base.docs)
        report = self._progress
        if report is not None:
            report(total - self.base.missing, total)
        try:
            stats = self.base.embed_missing(
                (lambda done: report(done, total)) if report is not None else None, self._stop, yield_to_turns=True
            )
        except Exception:
            log.exception("indexing the lore of %s failed; it stays searchable by keyword", self.base.pack.id)
            return
        if self._finished is not None and not self._stop.is_set():
            self._finished(stats)

    def stop(self, timeout: float = STOP_WAIT_S) -> bool:
        """End after the batch under way; whether the thread ended within ``timeout`` seconds."""
        with self._starting:
            self._stop.set()
        if self._thread is threading.current_thread():
            return False
        if self._thread.is_alive():
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("indexing the lore of %s did not stop within %.0f s", self.base.pack.id, timeout)
        return not self._thread.is_alive()


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """``text``, or its first ``limit`` characters at most, cut at a word and ending in "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
