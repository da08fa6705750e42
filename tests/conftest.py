from __future__ import annotations

from pathlib import Path

import pytest

from game.world.content import ContentPack, load_pack
from game.world.rules import Rules
from game.world.state import GameState, new_game

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def mini_pack() -> ContentPack:
    return load_pack(DATA / "mini", require_full_story=False)


@pytest.fixture
def state(mini_pack: ContentPack) -> GameState:
    return new_game(mini_pack, seed=1)


@pytest.fixture
def rules(mini_pack: ContentPack) -> Rules:
    return Rules(mini_pack)
