"""The F12 panel says why each imported lore entry fired or did not (issue 44, item 1).

The NovelAI lorebook and Sakana's card of ``tests/data/imports`` are imported into one story, two turns are played
in a real session (scripted narrator, keyword memory), and the real :class:`DebugScreen` is opened over them in a
headless Textual app: its memory tab names the key that fired each entry, and the entry whose secondary key was
missing, with why.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from game.checker.imports import import_file
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.saves.slots import SlotStore
from game.tui.debug import DebugScreen
from game.world.library import StoryLibrary
from game.world.loader import load_pack
from game.world.state import new_game
from tests.conftest import DATA, keyword_memory


class Panel(App[None]):
    def __init__(self, session: GameSession) -> None:
        super().__init__()
        self.session = session

    def on_mount(self) -> None:
        self.push_screen(DebugScreen(self.session))


async def test_the_memory_tab_names_the_key_that_fired_each_entry_and_why_one_did_not(tmp_path: Path) -> None:
    stories = tmp_path / "stories"
    import_file(DATA / "imports" / "keeper.lorebook", StoryLibrary.of(stories), stories, "coast", new=True)
    import_file(DATA / "imports" / "sakana.json", StoryLibrary.of(stories), stories, "coast")
    pack = load_pack(stories / "coast")
    pipeline = TurnPipeline(pack, new_game(pack, seed=1), ScriptedNarrator(pack), keyword_memory(pack))
    session = GameSession(pipeline, SlotStore(tmp_path / "saves"))
    session.play("ask the keeper about christopher")
    session.play("ask sakana about this place")
    app = Panel(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        shown = screen.body_text("blocks")
        assert "why: key 'this place' found" in shown
        assert "holding_hands: key 'place' found, but secondary keys failed (AND ANY 'your hand')" in shown
        await pilot.press("left_square_bracket")  # the turn before
        assert "why: key 'Christopher' found" in screen.body_text("blocks")
