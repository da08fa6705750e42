"""Command line: argument parsing, and the one place objects are built and wired.

storyecho                       play interactively (headless until the TUI lands)
storyecho play --story ID       same, for one story
storyecho run --story ID ...    play actions from a file or stdin (scripts, tests)
storyecho slots list|show|delete|export   the save slots
storyecho content validate      check content packs
storyecho content check         explore a story's states for soft-locks
storyecho index [--list|--prune]  index every story's knowledge base now (the game then embeds nothing)
storyecho --version
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import orjson

from game.args import NARRATOR_ORDER, build_parser, game_args, settings_for
from game.checker.analysis import check_pack
from game.checker.bounds import DEFAULT_FIGHT_SEEDS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LOSSES, DEFAULT_MAX_STATES
from game.config import ConfigError, Settings
from game.engine.pipeline import TurnPipeline, TurnResult
from game.engine.report import turn_json
from game.engine.session import AUTOSAVE_SLOT, GameSession, start_fresh
from game.llm.base import FactExtractingNarrator, Narrator, NarratorError
from game.llm.local import LocalNarrator
from game.llm.local_model import find_bundled_model
from game.llm.openai_compat import OpenAINarrator
from game.llm.scripted import ScriptedNarrator
from game.memory.chroma import ChromaVectorStore, IndexBusy, open_chroma
from game.memory.embedders import Embedder, EmbedderUnavailable, SentenceTransformerEmbedder, space_of
from game.memory.knowledge import KnowledgeBase, index_stories
from game.memory.manager import GameMemory, Summarizer
from game.memory.mirror import MirroredStore
from game.memory.onnx_embedder import OnnxEmbedder, onnx_available
from game.memory.settings import MemoryConfig
from game.memory.stores import InProcessVectorStore, StoreUnavailable, VectorStore
from game.saves.format import SaveError
from game.saves.slots import Loaded, SlotStore
from game.saves.transcript import transcript
from game.text import shown_url, visible
from game.world.content import ContentError, ContentPack
from game.world.describe import node_text
from game.world.loader import available_stories, content_root, load_pack
from game.world.state import new_game

log = logging.getLogger("storyecho.cli")

DEFAULT_STORY = "fantasy_001"
Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``: how far loading has come ("Indexing lore", 31, 58)."""


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
    path = cfg.model_path or (find_bundled_model(cfg.bundled) if bundled else None)
    return path is not None and Path(path).is_file()


def _start(name: str, settings: Settings, pack: ContentPack) -> Narrator:
    if name == "scripted":
        return ScriptedNarrator(pack)
    if name == "openai":
        cfg = settings.openai
        if cfg.preset is None and cfg.base_url is None:
            cfg = cfg.model_copy(update={"preset": "openai"})
        extractor: FactExtractingNarrator = OpenAINarrator(cfg, pack)  # memory asks it for Story Bible facts too
        return extractor
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
    queued behind to Chroma, which opens only when needed (see ``mirror.py``). A Chroma server is never
    mirrored: other processes share it.
    """
    if lasting_store(settings):
        index = settings.data_dir / ".index"
        try:
            if mirrored and not settings.memory.chroma_url:
                return MirroredStore.open_local(index, say=say)  # says itself when it finds the index damaged
            chroma = open_chroma(index, settings.memory.chroma_url)
        except IndexBusy as exc:
            say(f"{exc}; this game keeps its memory index in memory instead" if fallback else str(exc))
        except StoreUnavailable as exc:
            log.warning("%s%s", exc, "; using the in-process vector index" if fallback else "")
        else:
            if chroma.rebuilt_from:
                say(f"the memory index was damaged ({chroma.rebuilt_from}); it is being rebuilt from your saves")
            return chroma
    return InProcessVectorStore() if fallback else None


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
    root = content_dir or content_root()
    packs = [load_pack(root / story) for story in (stories or available_stories())]
    store = make_store(settings, say, fallback=False, mirrored=True)  # an unchanged index: Chroma is not even opened
    if store is None:
        return None
    try:
        return index_stories(store, embedder, packs, progress)
    finally:
        store.close()


def make_memory(
    settings: Settings,
    pack: ContentPack,
    summarizer: Summarizer,
    *,
    embedder: Embedder | bool | None = True,
    progress: Progress | None = None,
    say: Say = _stderr,
) -> GameMemory:
    """Memory with the best parts that start here: embeddings + Chroma, else fallbacks.

    ``embedder``: an embedder already loaded (the TUI loads it once, in the
    background, for every game), None for keyword recall, True to load one.
    ``progress(label, done, total)`` follows the knowledge-base indexing.
    """
    model: Embedder | None = make_embedder(settings) if embedder is True else (embedder or None)
    store = make_store(settings, say, mirrored=True) if model is not None else None
    if isinstance(store, MirroredStore) and model is not None:
        model = store.remember_embeddings(model)  # a new game's seeded Story Bible: embedded by an earlier game
    config = MemoryConfig(
        window_messages=settings.memory.window_messages,
        summary_interval_turns=settings.memory.summary_interval_turns,
        recency_half_life_turns=settings.memory.recency_half_life_turns,
    )
    memory = GameMemory(pack, summarizer, store=store, embedder=model, config=config)
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
) -> TurnPipeline:
    """Build a ready-to-play pipeline for ``story_id`` (``on_text``: the narration as a model streams it)."""
    pack = load_pack((content_dir or content_root()) / story_id)
    state = new_game(pack, seed=settings.seed)
    narrator, chosen = make_narrator(settings, pack)
    say(chosen)
    if on_text is not None:
        narrator.on_text = on_text
    memory = make_memory(settings, pack, narrator, embedder=embedder, progress=progress, say=say)
    return TurnPipeline(pack, state, narrator, memory, prompt_budget_tokens=settings.prompt_budget_tokens)


def read_actions(lines: Iterable[str]) -> Iterator[str]:
    """Actions from a script: one per line; blank lines and ``#`` comments skipped."""
    for line in lines:
        text = line.strip()
        if text and not text.startswith("#"):
            yield text


def _print_turn(result: TurnResult, out: TextIO, *, echo: bool = True) -> None:
    """One turn as text: what the player and the narrator wrote, control characters made visible (an OSC 52 in a
    model's narration must not reach the terminal)."""
    text = (f"\n> {result.action}\n" if echo else "") + f"{result.narration}\n"  # refusals are told in it
    if result.choices:
        text += "  Choices: " + " | ".join(result.choices) + "\n"
    out.write(visible(text))


def make_session(
    story: str | None, settings: Settings, slot: str | None = None, **engine: Any
) -> tuple[GameSession, list[str]]:
    """A game session of ``story``, resumed from ``slot`` when that slot exists (``engine``: see :func:`make_engine`).

    Returns:
        The session and notices for the player (a save loaded from its backup, changed content).

    Raises:
        SaveError: the slot cannot be loaded, or belongs to another story than ``story``.
    """
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


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    session, notices = make_session(args.story, settings, args.slot)
    if args.slot is None:  # a scripted run saves nothing unless asked: no "autosave" slot for Continue to pick
        session.autosave_every = 0
    for notice in notices:
        print(f"storyecho: {notice}", file=sys.stderr)
    engine = session.engine
    source: TextIO = sys.stdin if args.actions in (None, "-") else open(args.actions, encoding="utf-8")  # noqa: SIM115
    with source:
        for action in read_actions(source):
            result = session.play(action)
            if args.json:
                sys.stdout.write(orjson.dumps(turn_json(result)).decode() + "\n")
            else:
                _print_turn(result, sys.stdout)
            sys.stdout.flush()
            if engine.state.ending:
                break
    closing = session.close(save=args.slot is not None)
    if closing:
        print(f"storyecho: {closing}", file=sys.stderr)
    return 0


def cmd_play(args: argparse.Namespace, settings: Settings) -> int:
    story = args.story or _pick_story()
    if story is None:
        return 0
    autosave = f"{AUTOSAVE_SLOT}-{story}"  # one per story: a new game of one story never overwrites the other's
    session, notices = make_session(story, settings, slot=None)
    session.slot = autosave
    engine = session.engine
    pack = engine.pack
    last = _autosave_info(session.slots, autosave)
    if last is not None:
        if _ask(f"Continue your last game of {pack.story.title} ({last})? [Y/n] "):
            try:
                notices = [*session.load(autosave), f"Continuing from turn {engine.state.turn}."]
            except SaveError as exc:
                notices = [f"Could not continue: {exc}. A new game starts."]
        else:
            notices += start_fresh(session, autosave, f"'load {autosave}-previous'")
    region = pack.region(pack.nodes[engine.state.node].region)
    if region:
        print(region.banner)
    print(f"{pack.story.title}\n\n{pack.story.intro}\n")
    print(node_text(engine.state, pack))
    print(
        "(Headless mode: 'storyecho' alone opens the terminal UI. Type 'help' for commands, 'saves' for your saves, "
        "'quit' to leave.)"
    )
    for notice in notices:
        print(notice)
    while True:
        try:
            action = input("\n> ")
        except (EOFError, KeyboardInterrupt):
            print()
            break
        result = session.play(action)
        if result.meta == "quit":
            break
        _print_turn(result, sys.stdout, echo=False)
        for notice in result.notices:
            print(f"  ({notice})")
        if engine.state.ending and result.meta is None:
            print("\nThe End. Type 'load NAME' to go back to a save, or 'quit'.")
    closing = session.close()
    if closing:
        print(closing)
    return 0


def _autosave_info(slots: SlotStore | None, name: str) -> str | None:
    """A line about the autosave in ``name`` ("turn 12 at Fogbound Path"), or None when there is none."""
    if slots is None or not slots.exists(name):
        return None
    try:
        save = slots.read(name).save
    except SaveError:
        return None
    return f"turn {save.turn} at {save.place}, saved {save.saved_at}"


def _ask(question: str) -> bool:
    """Yes unless the player says no; without a terminal (scripts), yes."""
    if not sys.stdin.isatty():
        return True
    try:
        return input(question).strip().lower() not in ("n", "no")
    except EOFError:
        return True


def _pick_story() -> str | None:
    """The story the player picks by number (Enter: the first); None when they leave (Ctrl-D, Ctrl-C)."""
    stories = available_stories()
    if not sys.stdin.isatty() or len(stories) < 2:
        return DEFAULT_STORY if DEFAULT_STORY in stories else stories[0]
    for index, story in enumerate(stories, 1):
        print(f"{index}. {load_pack(content_root() / story).story.title} ({story})")
    while True:
        try:
            answer = input(f"Choose a story [1-{len(stories)}, Enter for 1]: ").strip() or "1"
        except (EOFError, KeyboardInterrupt):
            print()
            return None
        if answer.isdigit() and 0 < int(answer) <= len(stories):
            return stories[int(answer) - 1]
        print(f"Type a number from 1 to {len(stories)}.")


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    """Check that the installed llama.cpp build runs here and report its speed (run it after install)."""
    from game.llm.doctor import check_llamacpp

    cfg = settings.local
    model = args.model or cfg.model_path or find_bundled_model(cfg.bundled)
    if model is None or not Path(model).is_file():
        print("storyecho doctor: no local model (install the 'local' extra, or set local.model_path)", file=sys.stderr)
        return 1
    result = check_llamacpp(Path(model), args.threads or cfg.n_threads)
    if args.json:
        print(orjson.dumps(result.__dict__).decode())
    print(("" if result.ok else "storyecho doctor: ") + result.message, file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


def cmd_validate(args: argparse.Namespace, settings: Settings) -> int:
    stories = [args.story] if args.story else available_stories()
    failed = 0
    for story in stories:
        try:
            pack = load_pack(content_root() / story)
        except ContentError as exc:
            failed += 1
            print(f"{story}: INVALID\n" + "\n".join(f"  {line}" for line in str(exc).splitlines()))
        else:
            print(
                f"{story}: OK - {len(pack.nodes)} nodes, {len(pack.npcs)} NPCs, {len(pack.quests.main)} main + "
                f"{len(pack.quests.side)} side quests, {len(pack.enemies)} enemies, {len(pack.endings)} endings"
            )
    return 1 if failed else 0


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    """``content check``: explore each story's states for soft-locks and dangling content; 1 when defects are found."""
    targets: list[tuple[str, Path, bool]] = [(str(args.pack), args.pack, False)] if args.pack else []
    if not targets:
        stories = [args.story] if args.story else available_stories()
        targets = [(story, content_root() / story, True) for story in stories]
    found = 0
    reports: list[dict[str, Any]] = []
    for name, root, full in targets:
        try:
            pack = load_pack(root, require_full_story=full)
        except ContentError as exc:
            found += 1
            problems = str(exc).splitlines()
            reports.append({"story": name, "invalid": problems, "defects": len(problems)})
            if not args.json:
                print(f"{name}: INVALID (the loader rejects it)\n" + "\n".join(f"  {line}" for line in problems))
            continue
        report = check_pack(
            pack,
            max_states=DEFAULT_MAX_STATES if args.max_states is None else args.max_states,
            max_depth=DEFAULT_MAX_DEPTH if args.max_depth is None else args.max_depth,
            max_losses=DEFAULT_MAX_LOSSES if args.max_losses is None else args.max_losses,
            fight_seeds=DEFAULT_FIGHT_SEEDS if args.fight_seeds is None else args.fight_seeds,
        )
        found += report.defects
        reports.append(report.to_dict())
        if not args.json:
            print(report.text() + "\n")
    if args.json:
        print(orjson.dumps({"reports": reports, "defects": found}, option=orjson.OPT_INDENT_2).decode())
    return 1 if found else 0


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    """``index``: embed every story's knowledge base now; ``--list`` the index's collections; ``--prune`` others'."""
    if not lasting_store(settings):
        print("storyecho index: the vector store is in-process (memory.vector_store); there is no index to fill")
        return 1
    embedder = make_embedder(settings)
    if embedder is None:
        print("storyecho index: embeddings are off or cannot load; games use keyword recall", file=sys.stderr)
        return 1
    space = space_of(embedder)
    if args.list or args.prune:
        store = make_store(settings, fallback=False)
        if not isinstance(store, ChromaVectorStore):
            print("storyecho index: the vector index cannot be opened", file=sys.stderr)
            return 1
        try:
            for name, meta in sorted(store.collections().items()):
                own = name.endswith(f"__{space.slug}")
                if args.prune and not own:
                    store.drop(name)
                model = f"{meta.get('storyecho_model_name', '?')} ({meta.get('storyecho_model_version', '?')})"
                mark = "current" if own else "dropped" if args.prune else "other model"
                print(f"{name:<52} {meta.get('count', 0):>6} vectors  {model}  [{mark}]")
        finally:
            store.close()
        return 0
    tty = sys.stderr.isatty()

    def progress(label: str, done: int, total: int) -> None:
        if tty:
            print(f"\r{label} {done}/{total}", end="\n" if done == total else "", file=sys.stderr, flush=True)

    started = time.perf_counter()
    bases = index_knowledge(settings, embedder, stories=[args.story] if args.story else None, progress=progress)
    if bases is None:
        print("storyecho index: the vector index cannot be opened", file=sys.stderr)
        return 1
    for base in bases:
        stats = base.stats
        assert stats is not None
        print(
            f"{base.pack.id}: {stats.documents} documents, {stats.embedded} embedded, "
            f"{stats.unchanged} already indexed, {stats.removed} stale vectors removed"
        )
    where = settings.memory.chroma_url or settings.data_dir / ".index"
    print(f"index {where}, model {space.label()}, {time.perf_counter() - started:.1f} s")
    return 0


def cmd_slots(args: argparse.Namespace, settings: Settings) -> int:
    slots = SlotStore(settings.data_dir)
    if args.slots_command == "list":
        infos = slots.list()
        if not infos:
            print(f"no saves in {settings.data_dir}")
        width = max((len(info.name) for info in infos), default=0)
        for info in infos:  # what a file holds is shown, never obeyed by the terminal (game.text.visible)
            if info.error:
                print(visible(f"{info.name:<{width}}  DAMAGED: {info.error}"))
            else:
                title = info.story_title or info.story_id
                line = f"{info.name:<{width}}  {title:<22} turn {info.turn:<5} {info.place:<26} {info.saved_at}"
                print(visible(line))
        return 0
    if args.slots_command == "delete":
        slots.delete(args.name)
        print(f"deleted {args.name!r}")
        return 0
    loaded = slots.read(args.name)
    for notice in loaded.notices:
        print(f"storyecho: {notice}", file=sys.stderr)
    save = loaded.save
    if args.slots_command == "show":
        memory = save.memory
        print(
            visible(
                f"slot:      {args.name}\nstory:     {save.story_title} ({save.story_id})\nturn:      {save.turn}\n"
                f"place:     {save.place}\nsaved at:  {save.saved_at} ({save.kind})\nsession:   {save.session_id}\n"
                f"hp:        {save.game.hp}/{save.game.max_hp}, money {save.game.gold}, level {save.game.level}\n"
                f"inventory: {', '.join(save.game.inventory) or 'nothing'}\n"
                f"quests:    {', '.join(f'{q} ({p.status})' for q, p in save.game.quests.items()) or 'none'}\n"
                f"ending:    {save.game.ending or '-'}\n"
                f"memory:    {len(memory.log)} turns logged, {len(memory.summaries)} summaries, "
                f"{sum(e.status == 'active' for e in memory.bible)} active Story Bible facts"
            )
        )
        return 0
    text = visible(transcript(save, markdown=args.markdown))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


Front = Callable[[argparse.Namespace, Settings], int]
"""A full-screen front end (the Textual game, ``game.tui``), given by ``game.main``: the CLI never imports it."""


def main(argv: list[str] | None = None, *, tui: Front | None = None) -> int:
    """``storyecho``: with ``tui``, no command (or ``play`` without ``--headless``) in a terminal starts it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        settings = settings_for(args)
        if args.command == "content":
            return cmd_check(args, settings) if args.content_command == "check" else cmd_validate(args, settings)
        if args.command == "index":
            return cmd_index(args, settings)
        if args.command == "doctor":
            return cmd_doctor(args, settings)
        if args.command == "slots":
            return cmd_slots(args, settings)
        if args.command == "run":
            if not args.story and not args.slot:
                parser.error("run needs --story, or --slot naming an existing save")
            return cmd_run(args, settings)
        play_args = game_args(args)
        if tui is not None and play_args is not None:
            return tui(play_args, settings)
        return cmd_play(args if args.command == "play" else argparse.Namespace(story=None, headless=True), settings)
    except (ConfigError, ContentError, SaveError) as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
