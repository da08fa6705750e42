"""The one place a game's objects are built and wired: narrator, embedder, vector store, memory, engine, session.

The CLI's commands (``game.cli``), the Textual game (``game.tui``) and the
benchmarks build their games here, so starting a game needs none of the
CLI's commands. It sits below ``game.cli`` and above ``game.args`` (its
narrator order) in the import layers.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from game.args import NARRATOR_ORDER
from game.config import ConfigError, Settings
from game.engine.autopilot import Autopilot
from game.engine.pipeline import TurnPipeline
from game.engine.session import AUTOSAVE_SLOT, GameSession
from game.language.meaning import VerbMeanings
from game.llm.base import FactExtractingNarrator, Narrator, NarratorError
from game.memory.consolidation import Summarizer
from game.memory.manager import GameMemory
from game.memory.search.embedding import Progress
from game.memory.search.knowledge import BackgroundIndexing, IndexStats, KnowledgeBase, index_stories
from game.memory.settings import ROOMY, ROOMY_BUDGET, MemoryConfig
from game.memory.vectors.chroma import IndexBusy, open_chroma
from game.memory.vectors.embedders import Embedder, EmbedderUnavailable, SentenceTransformerEmbedder
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.mirror import MirroredStore
from game.memory.vectors.onnx_embedder import OnnxEmbedder, onnx_available
from game.memory.vectors.remote import RemoteStore
from game.memory.vectors.stores import StoreUnavailable, VectorStore
from game.saves.format import SaveError
from game.saves.slots import Loaded, SlotStore
from game.text import shown_url
from game.world.content import ContentError, ContentPack
from game.world.library import StoryLibrary
from game.world.loader import load_pack
from game.world.state import new_game

log = logging.getLogger("storyecho.wiring")


def openai_configured(settings: Settings) -> bool:
    """Whether an OpenAI-compatible endpoint is configured: a preset, a base URL or a key."""
    cfg = settings.openai
    key_env = cfg.api_key_env or "OPENAI_API_KEY"
    return bool(cfg.preset or cfg.base_url or cfg.api_key or os.environ.get(key_env))


def make_narrator(settings: Settings, pack: ContentPack) -> tuple[Narrator, str]:
    """The narrator the settings ask for, and a line saying which one plays and why.

    ``auto`` takes an OpenAI-compatible endpoint when one is configured, else
    the local model when llama.cpp and a model file are present, else the
    scripted narrator. One that fails to start gives way to the next, and the
    line says why.
    """
    if settings.llm == "auto":
        wanted = [n for n in NARRATOR_ORDER if n == "scripted" or _available(n, settings)]
        why = "auto: " + (
            "an OpenAI-compatible endpoint is configured"
            if wanted[0] == "openai"
            else "a local model file is configured and llama.cpp is installed"
            if wanted[0] == "local"
            else "no endpoint or local model configured"
        )
    else:
        wanted = list(NARRATOR_ORDER[NARRATOR_ORDER.index(settings.llm) :])
        why = f"--llm {settings.llm}"
    failures: list[str] = []
    for name in wanted:
        try:
            narrator = _start(name, settings, pack)
        except NarratorError as exc:
            failures.append(f"{name} could not start ({exc})")
            continue
        said = f"Narrator: {_label(name, settings)} ({why})"
        return narrator, "; ".join([*failures, said]) if failures else said
    raise ConfigError("no narrator could start: " + "; ".join(failures))  # pragma: no cover - scripted always starts


def narrator_kind(narrator: Narrator) -> str:
    """``scripted``, ``local`` or ``openai`` (any other name: an endpoint's preset): which kind a narrator is, for
    the prompt budget and the memory it gets (:meth:`Settings.budget_for`)."""
    return narrator.name if narrator.name in ("scripted", "local") else "openai"


def _available(name: str, settings: Settings) -> bool:
    if name == "openai":
        return openai_configured(settings)
    if name == "local":
        # auto never takes the bundled 135M/270M models: bench/narrators.py measured both playing worse than the
        # scripted narrator (full mode) or no better and slower (prose mode); only a model the player names counts
        return local_available(settings, bundled=False)
    return True


def local_available(settings: Settings, *, bundled: bool = True) -> bool:
    """Whether llama.cpp is installed and a model file is on disk.

    The configured ``local.model_path``, or with ``bundled`` also the bundled model.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    cfg = settings.local
    from game.llm.local_model import find_bundled_model

    path = cfg.model_path or (find_bundled_model(cfg.bundled) if bundled else None)
    return path is not None and Path(path).is_file()


def _start(name: str, settings: Settings, pack: ContentPack) -> Narrator:
    """Start narrator ``name``; only its own modules are imported (a game never loads the other two's)."""
    if name == "scripted":
        from game.llm.scripted import ScriptedNarrator

        return ScriptedNarrator(pack)
    if name == "openai":
        from game.llm.openai_compat import OpenAINarrator

        cfg = settings.openai
        if cfg.preset is None and cfg.base_url is None:
            cfg = cfg.model_copy(update={"preset": "openai"})
        extractor: FactExtractingNarrator = OpenAINarrator(cfg, pack)  # memory asks it for Story Bible facts too
        return extractor
    from game.llm.local import LocalNarrator

    return LocalNarrator(settings.local, pack)


def _label(name: str, settings: Settings) -> str:
    if name == "openai":
        cfg = settings.openai
        where = cfg.preset or (shown_url(cfg.base_url) if cfg.base_url else "openai")
        return f"openai ({where}{', ' + cfg.model if cfg.model else ''})"
    if name == "local":
        cfg_local = settings.local
        model = cfg_local.model_path.name if cfg_local.model_path else cfg_local.bundled
        return f"local ({model}, {cfg_local.mode} mode)"
    return name


Say = Callable[[str], None]
"""Where a factory tells the player something (stderr for the CLI, a notification in the TUI)."""


def _stderr(message: str) -> None:
    print(f"storyecho: {message}", file=sys.stderr)


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder, loaded, or None (keyword recall) when embeddings are off or cannot load.

    ``memory.embedder``: ``onnx`` (ONNX Runtime, never imports torch), ``torch``
    (sentence-transformers) or ``auto``: onnx when its packages are installed,
    and torch when they are not or the ONNX model cannot load.
    """
    if not settings.memory.embeddings:
        return None
    choice = settings.memory.embedder
    backends = [choice] if choice != "auto" else (["onnx", "torch"] if onnx_available() else ["torch"])
    for backend in backends:
        embedder: OnnxEmbedder | SentenceTransformerEmbedder = (
            OnnxEmbedder() if backend == "onnx" else SentenceTransformerEmbedder()
        )
        try:
            embedder.load()
        except EmbedderUnavailable as exc:
            log.warning("the %s embedder is unavailable: %s", backend, exc)
            continue
        return embedder
    log.warning("embeddings unavailable, using keyword recall")
    return None


def lasting_store(settings: Settings) -> bool:
    """Whether the configured vector store outlives a game (Chroma, local or a server)."""
    return settings.memory.vector_store == "chroma" or bool(settings.memory.chroma_url)


def make_store(
    settings: Settings, say: Say = _stderr, *, fallback: bool = True, mirrored: bool = False
) -> VectorStore | None:
    """The configured vector store: Chroma when it starts, else (with ``fallback``) the in-process index, else None.

    With ``mirrored``, a local index is a :class:`MirroredStore`: reads from an in-memory copy (the index is
    this process's alone), loaded from the snapshot a clean exit left without importing Chroma, and writes
    queued behind to Chroma, which opens only when needed (see ``mirror.py``); when another process holds
    the index, a reader of its snapshot that never waits for it (``MirroredStore.open_reader``). A Chroma
    server is never mirrored: other processes share it.
    """
    if lasting_store(settings):
        index = settings.data_dir / ".index"
        try:
            if mirrored and not settings.memory.chroma_url:
                return MirroredStore.open_local(index, say=say)  # says itself when it finds the index damaged
            chroma = open_chroma(index, settings.memory.chroma_url)
        except IndexBusy as exc:
            if mirrored and fallback and not settings.memory.chroma_url:  # read it, never wait for it (mirror.py)
                say(f"{exc}; this game reads it and keeps its own new memories in memory")
                return MirroredStore.open_reader(index, say=say)
            say(f"{exc}; this game keeps its memory index in memory instead" if fallback else str(exc))
        except StoreUnavailable as exc:
            log.warning("%s%s", exc, "; using the in-process vector index" if fallback else "")
            if settings.memory.chroma_url and fallback:  # the player chose the server: they are told
                say(
                    f"the memory server {shown_url(settings.memory.chroma_url)} cannot be reached; this game keeps "
                    "its memory index in memory instead"
                )
        else:
            if chroma.rebuilt_from:
                say(f"the memory index was damaged ({chroma.rebuilt_from}); it is being rebuilt from your saves")
            if settings.memory.chroma_url:  # said once when it goes, backed off from, caught up with (remote.py)
                return RemoteStore(chroma, shown_url(settings.memory.chroma_url), say)
            return chroma
    return InProcessVectorStore() if fallback else None


def library_of(settings: Settings, content_dir: Path | None = None) -> StoryLibrary:
    """The stories ``settings`` can play, the shipped ones from ``content_dir`` when given (tests, benchmarks)."""
    return StoryLibrary.of(settings.stories_folder, content_dir)


def preload_store(settings: Settings) -> None:
    """Import Chroma now (call it on a thread of its own) when the game's vector index will need it as it opens: a
    Chroma server, or a local index not created yet (a first start: no snapshot to read instead, ``mirror.py``).

    A game built meanwhile waits for this import rather than doing it again (Python's import lock), so on a
    first start the import runs beside the embedder's load instead of after it.
    """
    if not (settings.memory.embeddings and lasting_store(settings)):
        return
    if settings.memory.chroma_url or not (settings.data_dir / ".index").exists():
        try:
            import chromadb  # noqa: F401 - only loaded
        except Exception as exc:  # noqa: BLE001 - the store says why when it opens
            log.info("Chroma could not be preloaded: %s", exc)


def index_knowledge(
    settings: Settings,
    embedder: Embedder,
    *,
    content_dir: Path | None = None,
    stories: Iterable[str] | None = None,
    progress: Progress | None = None,
    say: Say = _stderr,
) -> list[KnowledgeBase] | None:
    """Index the knowledge base of every story (or ``stories``) in one pass into the lasting store, then close it.

    What the store holds for ``embedder``'s model is kept; only new or changed
    documents are embedded, so a game started later embeds no lore. None when
    there is no lasting store to fill (the in-process index lives as long as
    one game) or it cannot be opened.
    """
    if not lasting_store(settings):
        return None
    library = library_of(settings, content_dir)
    packs = []
    for story in stories or library.ids():
        try:
            packs.append(load_pack(library.path(story)))
        except ContentError as exc:  # a broken story of the player's: the others' lore is still indexed
            say(f"story {story!r} not indexed: {str(exc).splitlines()[0]}")
    store = make_store(settings, say, fallback=False, mirrored=True)  # an unchanged index: Chroma is not even opened
    if store is None:
        return None
    try:
        return index_stories(store, embedder, packs, progress)
    finally:
        store.close()


def lore_indexing(
    session: GameSession,
    progress: Callable[[int, int], None] | None = None,
    finished: Callable[[IndexStats], None] | None = None,
    *,
    start: bool = True,
) -> BackgroundIndexing | None:
    """The embedding of the lore a game built with ``lore_later`` lacks, on a thread of its own, started unless
    ``start`` is false (stop it before the game closes); None when there is nothing to embed (every vector in the
    store, or keyword recall).

    ``progress(done, total)`` follows the documents from the start; ``finished(stats)`` once the vectors landed.
    """
    memory = session.engine.memory
    knowledge = memory.knowledge if isinstance(memory, GameMemory) else None
    if knowledge is None or knowledge.vectors_ready.is_set():
        return None
    job = BackgroundIndexing(knowledge, progress, finished)
    return job.start() if start else job


def make_memory(
    settings: Settings,
    pack: ContentPack,
    summarizer: Summarizer,
    *,
    embedder: Embedder | bool | None = True,
    progress: Progress | None = None,
    say: Say = _stderr,
    lore_later: bool = False,
    kind: str = "scripted",
) -> GameMemory:
    """Memory with the best parts that start here: embeddings + Chroma, else fallbacks.

    ``embedder``: an embedder already loaded (the TUI loads it once, in the
    background, for every game), None for keyword recall, True to load one.
    ``progress(label, done, total)`` follows the knowledge-base indexing.
    ``lore_later``: the knowledge base is only staged (searchable by keyword at
    once); the caller embeds what it lacks while the game plays
    (``KnowledgeBase.embed_missing``, ``BackgroundIndexing``). ``kind``: the narrator's (:func:`narrator_kind`):
    one with a roomy prompt budget is offered longer window messages and more recalled items (``ROOMY``).
    """
    model: Embedder | None = make_embedder(settings) if embedder is True else (embedder or None)
    store = make_store(settings, say, mirrored=True) if model is not None else None
    if isinstance(store, MirroredStore) and model is not None:
        model = store.remember_embeddings(model)  # a new game's seeded Story Bible: embedded by an earlier game
    roomy = settings.budget_for(kind) >= ROOMY_BUDGET
    config = MemoryConfig(
        window_messages=settings.memory.window_messages,
        summary_interval_turns=settings.memory.summary_interval_turns,
        recency_half_life_turns=settings.memory.recency_half_life_turns,
        **(ROOMY if roomy else {}),
    )
    knowledge = KnowledgeBase(pack, store, model) if lore_later else None
    if knowledge is not None:
        knowledge.stage()
    memory = GameMemory(pack, summarizer, store=store, embedder=model, config=config, knowledge=knowledge)
    memory.prepare(progress=progress)
    return memory


def make_engine(
    story_id: str,
    settings: Settings,
    content_dir: Path | None = None,
    *,
    embedder: Embedder | bool | None = True,
    progress: Progress | None = None,
    say: Say = _stderr,
    on_text: Callable[[str], None] | None = None,
    lore_later: bool = False,
) -> TurnPipeline:
    """Build a ready-to-play pipeline for ``story_id`` (``on_text``: the narration as a model streams it;
    ``lore_later``: see :func:`make_memory`)."""
    pack = load_pack(library_of(settings, content_dir).path(story_id))
    state = new_game(pack, seed=settings.seed)
    narrator, chosen = make_narrator(settings, pack)
    say(chosen)
    if on_text is not None:
        narrator.on_text = on_text
    kind = narrator_kind(narrator)
    memory = make_memory(
        settings, pack, narrator, embedder=embedder, progress=progress, say=say, lore_later=lore_later, kind=kind
    )
    budget, target = settings.budget_for(kind), settings.turn_time_target_s
    autopilot = Autopilot(target, budget) if target is not None else None
    meaning = VerbMeanings(memory.embedder.embed).guess if memory.embedder is not None else None
    return TurnPipeline(
        pack, state, narrator, memory, prompt_budget_tokens=budget, autopilot=autopilot, meaning=meaning
    )


def make_session(
    story: str | None, settings: Settings, slot: str | None = None, **engine: Any
) -> tuple[GameSession, list[str]]:
    """A game session of ``story``, resumed from ``slot`` when that slot exists (``engine``: see :func:`make_engine`).

    Returns:
        The session and notices for the player (a save loaded from its backup, changed content).

    Raises:
        SaveError: the slot cannot be loaded, or belongs to another story than ``story``.
    """
    story = library_of(settings, engine.get("content_dir")).resolve(story) if story else story  # "Cyber": its id
    slots = SlotStore(settings.data_dir)
    loaded: Loaded | None = slots.read(slot) if slot and slots.exists(slot) else None
    if loaded is not None:
        if story and story != loaded.save.story_id:
            raise SaveError(f"slot {slot!r} is a save of {loaded.save.story_id!r}, not of {story!r}")
        story = loaded.save.story_id
    if not story:
        raise SaveError(f"no save named {slot!r}; give --story to start a new game in it")
    session = GameSession(make_engine(story, settings, **engine), slots, slot=slot or AUTOSAVE_SLOT)
    notices = session.resume(loaded) if loaded is not None else []
    return session, notices
