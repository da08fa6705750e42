"""An ending can be taken back: undo, retry and the timeline on the ending screen, and the turn before an ending
still within reach once the ending is autosaved. Pilot over the real engine (scripted narrator, keyword memory).

Each game is played headless to the turn before the Eternal Night (the shortest walkthrough, 16 actions), saved,
loaded in the app, and ended there by its last action.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Footer, Static

from game.engine.session import GameSession
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.play import PlayScreen
from game.tui.timeline import TimelineScreen
from game.tui.title import EndingScreen, TitleScreen
from game.wiring import make_engine
from tests.tui.test_app import SIZE, log_text, play, playing, settings_for, until

WALKTHROUGH = Path(__file__).parents[1] / "walkthroughs" / "fantasy_001__eternal_night.txt"
ACTIONS = [line.strip() for line in WALKTHROUGH.read_text().splitlines() if line.strip() and line[0] != "#"]
EVE = len(ACTIONS) - 1
"""The turn before the ending (the save the app starts from)."""
AUTOSAVE = "autosave-fantasy_001"
WAIT = 30.0


def eve_of_the_ending(tmp_path: Path):
    """Settings whose data folder holds ``last step``: the game at the turn before the ending."""
    settings = settings_for(tmp_path)
    engine = make_engine("fantasy_001", settings, embedder=None, say=lambda _: None)
    session = GameSession(engine, SlotStore(settings.data_dir), autosave_every=0)
    for action in ACTIONS[:-1]:
        assert session.play(action).ok, action
    assert session.engine.state.turn == EVE and not session.engine.state.ending
    session.save("last step")
    session.close(save=False)
    return settings


async def end_the_game(pilot) -> EndingScreen:
    """From the title: load ``last step``, play the last action, and wait for the ending screen."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
    app.start_game(None, slot="last step")
    await until(pilot, lambda: playing(app), what="play")
    app.screen.query_one("#action").value = ACTIONS[-1]
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, EndingScreen), WAIT, "ending screen")
    assert app.session.engine.state.ending == "eternal_night" and app.session.engine.state.turn == EVE + 1
    return app.screen


def where(screen) -> str:
    return str(screen.query_one("#ending-where", Static).render())


async def undo_back_to_the_eve(pilot) -> PlayScreen:
    """Ctrl+Z on the ending screen: the play screen at the turn before the ending, the turn done."""
    app = pilot.app
    await pilot.press("ctrl+z")
    await until(
        pilot,
        lambda: playing(app) and app.session.engine.state.turn == EVE and not app.screen.busy.is_set(),
        WAIT,
        "the play screen at the turn before the ending",
    )
    await pilot.pause(0.1)
    return app.screen


async def test_ctrl_z_on_the_ending_screen_returns_to_the_turn_before_and_the_game_goes_on(tmp_path):
    app = StoryEchoApp(eve_of_the_ending(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        ending = await end_the_game(pilot)
        shown_keys = {key for key, active in ending.active_bindings.items() if active.binding.show}
        assert {"ctrl+z", "ctrl+r", "f4"} <= shown_keys  # in the footer
        assert ending.query_one(Footer).display
        assert f"Ctrl+Z takes it back: the game (and the autosave) returns to turn {EVE}" in where(ending)
        ending_told = app.session.engine.memory.state.log[-1].narration.split("\n")[0]

        screen = await undo_back_to_the_eve(pilot)
        state = app.session.engine.state
        assert state.ending is None and state.node == "shadow_throne"
        assert not any(isinstance(s, EndingScreen) for s in app.screen_stack)
        shown = log_text(app)
        assert f"Undone: turn {EVE + 1} ({ACTIONS[-1]})" in shown and ending_told not in shown
        assert f"Turn {EVE}" in str(screen.query_one("#header").render())
        assert "Throne of Shadows" in str(screen.query_one("#scene").render())

        await pilot.press("ctrl+y")  # redo: the ending again, and its screen
        await until(pilot, lambda: isinstance(app.screen, EndingScreen), WAIT, "the ending screen after a redo")
        assert app.session.engine.state.ending == "eternal_night"
        screen = await undo_back_to_the_eve(pilot)
        await play(pilot, "look")  # the game goes on from the turn before the ending
        assert app.session.engine.state.turn == EVE + 1 and app.session.history[-1].ok
        assert app.session.engine.state.ending is None and isinstance(app.screen, PlayScreen)
        assert "> look" in log_text(app) and "Throne of Shadows" in log_text(app)
        saved = SlotStore(tmp_path / "saves")
        await until(pilot, lambda: saved.read(AUTOSAVE).save.turn == EVE, WAIT, "the undo's autosave")


async def test_ctrl_r_on_the_ending_screen_tells_the_ending_turn_again_and_shows_the_ending_again(tmp_path):
    app = StoryEchoApp(eve_of_the_ending(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        first = await end_the_game(pilot)
        memory = app.session.engine.memory
        told = memory.state.log[-1].narration
        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: isinstance(app.screen, EndingScreen) and app.screen is not first,
            WAIT,
            "the ending screen again",
        )
        state = app.session.engine.state
        assert state.turn == EVE + 1 and state.ending == "eternal_night"
        assert memory.state.log[-1].narration not in ("", told)  # the retold turn, not the first telling
        assert [e.turn for e in memory.state.log if e.action].count(EVE + 1) == 1
        assert sum(isinstance(s, EndingScreen) for s in app.screen_stack) == 1


async def test_f4_on_the_ending_screen_opens_the_timeline_and_escape_comes_back(tmp_path):
    app = StoryEchoApp(eve_of_the_ending(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        ending = await end_the_game(pilot)
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), WAIT, "timeline")
        table = app.screen.query_one("#timeline-table", DataTable)
        turns = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert turns == [str(EVE), str(EVE + 1)]  # where this session began (the load), then the ending turn
        assert ACTIONS[-1] in str(table.get_row_at(1)[2])
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is ending, WAIT, "the ending screen")


async def test_the_turn_before_an_ending_can_be_reached_after_the_ending_is_autosaved(tmp_path):
    """Was: the ending was autosaved (and saved again on quit), and loading it started the session there, so
    undo had nothing to take back; only a hidden backup or ``storyecho slots branch`` held an earlier turn."""
    settings = eve_of_the_ending(tmp_path)
    slots = SlotStore(settings.data_dir)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await end_the_game(pilot)
        await until(pilot, lambda: app.saved_turn == EVE + 1, WAIT, "the ending's autosave")
        await pilot.press("ctrl+q")  # quit from the ending screen: the ending is saved again on close
        await until(pilot, lambda: not app.is_running, WAIT, "exit")
    assert slots.read(AUTOSAVE).save.game.ending == "eternal_night"

    fresh = StoryEchoApp(settings)
    async with fresh.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(fresh.screen, TitleScreen), what="title")
        fresh.start_game(None, slot=AUTOSAVE)
        shown = lambda: isinstance(fresh.screen, EndingScreen) and bool(fresh.screen.query("#ending-where"))  # noqa: E731
        await until(pilot, shown, WAIT, "the loaded ending, composed")
        assert f"returns to turn {EVE}" in where(fresh.screen)
        await undo_back_to_the_eve(pilot)
        state = fresh.session.engine.state
        assert state.ending is None and state.node == "shadow_throne"
        assert f"Undone: turn {EVE + 1} ({ACTIONS[-1]})" in log_text(fresh)
        await play(pilot, "look")
        assert fresh.session.engine.state.turn == EVE + 1 and fresh.session.engine.state.ending is None


async def test_the_ending_screen_opens_at_its_title_when_the_summary_is_taller_than_the_screen(tmp_path):
    """Issue 35: a thorough run's summary (every quest and achievement) overflowed 120x40, and focusing the choices
    below it scrolled the ending's title away. The victory walkthrough's summary overflows 120x30 the same way."""
    settings = settings_for(tmp_path)
    engine = make_engine("fantasy_001", settings, embedder=None, say=lambda _: None)
    session = GameSession(engine, SlotStore(settings.data_dir), autosave_every=0)
    walkthrough = WALKTHROUGH.with_name("fantasy_001__victory.txt").read_text().splitlines()
    for action in [line.strip() for line in walkthrough if line.strip() and line[0] != "#"]:
        session.play(action)
    assert session.engine.state.ending == "victory"
    session.save("the end")
    session.close(save=False)
    app = StoryEchoApp(settings)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
        app.start_game(None, slot="the end")
        await until(pilot, lambda: isinstance(app.screen, EndingScreen), WAIT, "ending screen")
        await pilot.pause(0.2)
        ending = app.screen
        box = ending.query_one("#ending-box")
        summary = ending.query_one("#ending-summary", Static)
        assert box.max_scroll_y > 0, "the summary fits: this screen cannot show the fault"
        assert box.scroll_y == 0
        assert summary.region.y >= box.region.y  # the summary's first line, the ending's title, is on screen
        assert ending.focused is ending.query_one("OptionList")  # the choices still take the keys


async def test_letters_typed_on_an_ending_choose_nothing(tmp_path):
    """Was (issue 43): on an ending screen, typing ``inventory`` + Enter started a new game (``n``, then Enter)
    with no question, ``look`` opened Load and ``quests`` quit: the screen's one-letter keys fired while the
    player typed. Letters now only say how the choices are made; Enter chooses nothing until an arrow picks."""
    settings = eve_of_the_ending(tmp_path)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        ending = await end_the_game(pilot)
        session = app.session
        for word in ("inventory", "look", "quests"):
            await pilot.press(*word, "enter")
            await pilot.pause()
            assert app.is_running and app.screen is ending and app.session is session
        assert session.engine.state.ending == "eternal_night"
        await pilot.press("down", "enter")  # an arrow picks the first choice: undo the ending
        await until(pilot, lambda: not isinstance(app.screen, EndingScreen), WAIT, "the choice made")
