"""The Textual game beside a first window (issue 43, item 2): Continue on a game that another StoryEcho process plays
asks on screen, Cancel leaves everything as it was, and the branch plays and saves in a slot of its own.

Was: Continue loaded the game at once, said nothing, and its autosaves and its save on quit went to the slot the
other window was playing in.
"""

from __future__ import annotations

from game.engine.window import OPEN_ELSEWHERE
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.confirm import ConfirmScreen
from game.tui.title import TitleScreen
from tests.reliability.test_open_windows import Window, actions, game_in
from tests.tui.test_app import SIZE, log_text, play, playing, settings_for, until

AUTOSAVE = "autosave-fantasy_001"


async def test_continue_on_a_game_open_in_another_window_asks_and_cancel_changes_nothing(tmp_path):
    settings = settings_for(tmp_path)
    data = settings.data_dir
    game_in(data, AUTOSAVE, ["go east", "look"])
    first = Window(data, AUTOSAVE)
    try:
        first.play("look")  # the first window plays the game in the autosave
        before = sorted((p.name, p.read_bytes()) for p in data.glob("*.json"))
        app = StoryEchoApp(settings)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
            await until(pilot, lambda: app.screen.continue_label is not None, what="the Continue label")
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
            assert app.screen.message.startswith(OPEN_ELSEWHERE) and "branch" in app.screen.message
            await pilot.press("n")  # Cancel
            await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="back at the title")
            assert app.session is None
            assert sorted((p.name, p.read_bytes()) for p in data.glob("*.json")) == before  # nothing written

            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
            await pilot.press("y")  # Play a branch
            await until(pilot, lambda: playing(app), what="the branch in play")
            await until(pilot, lambda: f"slot '{AUTOSAVE}-1'" in log_text(app), what="where it goes on, told")
            assert app.session is not None and app.session.slot == f"{AUTOSAVE}-1"
            await play(pilot, "talk to garrick")
            app._quit()
            await until(pilot, lambda: not app.is_running, what="exit")
        assert dict(before)[f"{AUTOSAVE}.json"] == (data / f"{AUTOSAVE}.json").read_bytes()  # the first's slot
        assert SlotStore(data).read(f"{AUTOSAVE}-1").save.turn == 3
        assert actions(data, f"{AUTOSAVE}-1") == ["go east", "look", "talk to garrick"]
        first.play("look")
        first.quit()
    finally:
        first.process.kill()
    assert actions(data, AUTOSAVE) == ["go east", "look", "look", "look"]  # the first window's, every moment
