from __future__ import annotations

import os
from pathlib import Path

import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.saves.slots import SlotStore
from game.world.content import ContentPack
from game.world.library import story_ids
from game.world.loader import content_root, load_pack
from game.world.rules import Rules
from game.world.state import GameState, new_game

DATA = Path(__file__).parent / "data"
SHIPPED = story_ids(content_root())
"""The stories in ``content/``, sorted as the library lists them. Tests over every shipped story take them from
here, so a new story needs no test edits; tests/test_content.py asserts the three the game ships with are here."""
MISTY_OPENING = [
    "go east",
    "talk to garrick",
    "ask garrick about hal",
    "ask garrick about silas",
    "look",
    "go west",
    "go north",
    "go north",
    "talk to alicia",
    "ask alicia about the circlet",
    "what did garrick tell me?",
    "rest",
    "look",
    "where is hal?",
    "what did garrick tell me?",
    "go south",
    "go east",
    "talk to nyssa",
    "what did garrick tell me?",
    "look",
    "say my name is Ren",
    "what is my name?",
    "heal me",
    "go west",
    "go north",
    "talk to alicia",
    "what did alicia tell me?",
    "look",
    "what did garrick tell me?",
    "rest",
]
"""A new player's Misty Forest opening (issue 21): Garrick, Alicia, Nyssa, and questions about what they said."""

# The suite installs llama.cpp and a model, so `--llm auto` (the default) would pick the local narrator: the
# tests play with the deterministic scripted one unless they choose otherwise (tests/test_narrator_choice.py
# unsets this to test auto). Set before any test module builds its subprocess environment.
os.environ.setdefault("STORYECHO_LLM", "scripted")


@pytest.fixture(scope="session")
def fantasy() -> ContentPack:
    """Misty Forest, loaded once (a test module may load its own)."""
    return load_pack(content_root() / "fantasy_001")


@pytest.fixture(scope="session")
def scifi() -> ContentPack:
    """Cyber, loaded once."""
    return load_pack(content_root() / "scifi_001")


@pytest.fixture(scope="session")
def mini_pack() -> ContentPack:
    return load_pack(DATA / "mini")


@pytest.fixture
def state(mini_pack: ContentPack) -> GameState:
    return new_game(mini_pack, seed=1)


@pytest.fixture
def rules(mini_pack: ContentPack) -> Rules:
    return Rules(mini_pack)


def scripted_session(pack: ContentPack, root: Path, *, seed: int = 5) -> GameSession:
    """A game of ``pack`` with the scripted narrator and keyword memory, saving to ``root`` only when asked."""
    engine = TurnPipeline(pack, new_game(pack, seed=seed), ScriptedNarrator(pack), keyword_memory(pack))
    return GameSession(engine, SlotStore(root), autosave_every=0)


def keyword_memory(pack: ContentPack, **config: object) -> GameMemory:
    """Memory without embeddings or a vector store (the keyword fallback), run inline."""
    return GameMemory(pack, ScriptedNarrator(pack), config=MemoryConfig(**config), background=False)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 embedder, loaded once for the test session."""
    from game.memory.vectors.embedders import SentenceTransformerEmbedder

    real = SentenceTransformerEmbedder(device="cpu")
    real.load()
    return real


@pytest.fixture
def chroma_store(tmp_path):
    """A real Chroma store persisted in a temporary folder."""
    from game.memory.vectors.chroma import open_chroma

    return open_chroma(tmp_path / "index")
