"""Command line: argument parsing, and the one place objects are built and wired.

storyecho                       play interactively (headless until the TUI lands)
storyecho play --story ID       same, for one story
storyecho run --story ID ...    play actions from a file or stdin (scripts, tests)
storyecho content validate      check content packs
storyecho --version
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

import orjson

from game import __version__
from game.config import ConfigError, Settings, load_settings
from game.engine.pipeline import TurnPipeline, TurnResult
from game.engine.report import turn_json
from game.llm.base import Narrator
from game.llm.scripted import ScriptedNarrator
from game.memory.embedders import EmbedderUnavailable, SentenceTransformerEmbedder
from game.memory.manager import GameMemory, MemoryConfig, Summarizer
from game.memory.stores import InProcessVectorStore, StoreUnavailable, VectorStore, open_chroma
from game.world.content import ContentError, ContentPack
from game.world.describe import node_text
from game.world.loader import available_stories, content_root, load_pack
from game.world.state import new_game

log = logging.getLogger("storyecho.cli")

DEFAULT_STORY = "fantasy_001"


def make_narrator(settings: Settings, pack: ContentPack) -> Narrator:
    if settings.llm == "scripted":
        return ScriptedNarrator(pack)
    raise ConfigError(f"llm: unknown narrator {settings.llm!r}")  # pragma: no cover - Literal guards it


def make_memory(settings: Settings, pack: ContentPack, summarizer: Summarizer) -> GameMemory:
    """Memory with the best parts that start here: embeddings + Chroma, else fallbacks."""
    embedder: SentenceTransformerEmbedder | None = None
    store: VectorStore | None = None
    if settings.memory.embeddings:
        embedder = SentenceTransformerEmbedder()
        try:
            embedder.load()
        except EmbedderUnavailable as exc:
            log.warning("embeddings unavailable, using keyword recall: %s", exc)
            embedder = None
    if embedder is not None:
        if settings.memory.vector_store == "chroma" or settings.memory.chroma_url:
            try:
                store = open_chroma(settings.data_dir / ".index", settings.memory.chroma_url)
            except StoreUnavailable as exc:
                log.warning("%s; using the in-process vector index", exc)
        if store is None:
            store = InProcessVectorStore()
    config = MemoryConfig(
        window_messages=settings.memory.window_messages,
        summary_interval_turns=settings.memory.summary_interval_turns,
        recency_half_life_turns=settings.memory.recency_half_life_turns,
    )
    memory = GameMemory(pack, summarizer, store=store, embedder=embedder, config=config)
    memory.prepare()
    return memory


def make_engine(story_id: str, settings: Settings, content_dir: Path | None = None) -> TurnPipeline:
    """Build a ready-to-play pipeline for ``story_id``."""
    pack = load_pack((content_dir or content_root()) / story_id)
    state = new_game(pack, seed=settings.seed)
    narrator = make_narrator(settings, pack)
    memory = make_memory(settings, pack, narrator)
    return TurnPipeline(pack, state, narrator, memory, prompt_budget_tokens=settings.prompt_budget_tokens)


def read_actions(lines: Iterable[str]) -> Iterator[str]:
    """Actions from a script: one per line; blank lines and ``#`` comments skipped."""
    for line in lines:
        text = line.strip()
        if text and not text.startswith("#"):
            yield text


def _print_turn(result: TurnResult, out: TextIO, *, echo: bool = True) -> None:
    out.write((f"\n> {result.action}\n" if echo else "") + f"{result.narration}\n")
    for reason in result.rejected:
        out.write(f"  (refused: {reason.effect} - {reason.reason})\n")
    if result.choices:
        out.write("  Choices: " + " | ".join(result.choices) + "\n")


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    engine = make_engine(args.story, settings)
    source: TextIO = sys.stdin if args.actions in (None, "-") else open(args.actions, encoding="utf-8")  # noqa: SIM115
    with source:
        for action in read_actions(source):
            result = engine.play(action)
            if args.json:
                sys.stdout.write(orjson.dumps(turn_json(result)).decode() + "\n")
            else:
                _print_turn(result, sys.stdout)
            sys.stdout.flush()
            if engine.state.ending:
                break
    engine.memory.close()
    return 0


def cmd_play(args: argparse.Namespace, settings: Settings) -> int:
    story = args.story or _pick_story()
    engine = make_engine(story, settings)
    pack = engine.pack
    region = pack.region(pack.nodes[engine.state.node].region)
    if region:
        print(region.banner)
    print(f"{pack.story.title}\n\n{pack.story.intro}\n")
    print(node_text(engine.state, pack))
    print("(Headless mode: the terminal UI is coming. Type 'help' for commands, 'quit' to leave.)")
    while not engine.state.ending:
        try:
            action = input("\n> ")
        except (EOFError, KeyboardInterrupt):
            print()
            break
        result = engine.play(action)
        if result.meta == "quit":
            break
        if result.meta in ("save", "load"):
            print("Saving and loading arrive with the save-slot system.")
            continue
        _print_turn(result, sys.stdout, echo=False)
    engine.memory.close()
    return 0


def _pick_story() -> str:
    stories = available_stories()
    if not sys.stdin.isatty() or len(stories) < 2:
        return DEFAULT_STORY if DEFAULT_STORY in stories else stories[0]
    for index, story in enumerate(stories, 1):
        print(f"{index}. {load_pack(content_root() / story).story.title} ({story})")
    answer = input("Choose a story [1]: ").strip() or "1"
    return stories[int(answer) - 1] if answer.isdigit() and 0 < int(answer) <= len(stories) else DEFAULT_STORY


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="storyecho", description="StoryEcho: a text adventure that remembers.")
    parser.add_argument("--version", action="version", version=f"storyecho {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = parser.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--llm", choices=["scripted"], default=None, help="narrator backend")
        p.add_argument("--seed", type=int, default=None, help="seed for combat and loot dice")
        p.add_argument("--data-dir", type=Path, default=None, help="saves and index folder")
        p.add_argument(
            "--no-embeddings",
            dest="embeddings",
            action="store_const",
            const=False,
            default=None,
            help="keyword recall only (fast start, no torch)",
        )
        p.add_argument("--chroma-url", default=None, help="use a Chroma server instead of the local index")
        p.add_argument("--config", type=Path, default=None, help="TOML settings file (default: ./storyecho.toml)")

    play = sub.add_parser("play", help="play interactively")
    play.add_argument("--story", default=None)
    common(play)
    run = sub.add_parser("run", help="play actions from a file or stdin")
    run.add_argument("--story", required=True)
    run.add_argument("--actions", default=None, help="file of actions, one per line ('-' for stdin)")
    run.add_argument("--json", action="store_true", help="print one JSON object per turn")
    common(run)
    content = sub.add_parser("content", help="content pack tools")
    content_sub = content.add_subparsers(dest="content_command", required=True)
    validate = content_sub.add_parser("validate", help="validate content packs")
    validate.add_argument("--story", default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        memory_flags = {
            "embeddings": getattr(args, "embeddings", None),
            "chroma_url": getattr(args, "chroma_url", None),
        }
        settings = load_settings(
            getattr(args, "config", None),
            llm=getattr(args, "llm", None),
            seed=getattr(args, "seed", None),
            data_dir=getattr(args, "data_dir", None),
            memory={k: v for k, v in memory_flags.items() if v is not None},
        )
        if args.command == "content":
            return cmd_validate(args, settings)
        if args.command == "run":
            return cmd_run(args, settings)
        return cmd_play(args if args.command == "play" else argparse.Namespace(story=None), settings)
    except (ConfigError, ContentError) as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"storyecho: {exc}", file=sys.stderr)
        return 2
