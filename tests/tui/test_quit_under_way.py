"""Quitting while the narrator works (issue 43, item 5): a quit during a retry, a turn or a summary keeps the last told
turn, and asks before it drops the turn under way.

The real Textual app plays against the fault-injecting OpenAI server of ``tests/fake_openai_server.py``: a model that
plays well until the call a test stalls (answered after a minute). A stall is a fault injected on purpose: no real
server stalls on demand. Quitting abandons the stalled call after ``QUIT_WAIT_S`` (``game/tui/leaving.py``).
"""

from __future__ import annotations

from pathlib import Path

from game.config import load_settings
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.confirm import ConfirmScreen
from tests.fake_openai_server import FakeOpenAIServer, delay
from tests.fitness_models import FollowsTheAction
from tests.test_shutdown import ACTIONS, StallsFromTurn
from tests.tui.test_app import new_game, play, until

SIZE = (110, 32)
SLOT = "autosave-fantasy_001"


def _app(url: str, data: Path) -> StoryEchoApp:
    openai = {"base_url": url, "model": "fake-model", "timeout_s": 90, "max_attempts": 1, "json_mode": "json_schema"}
    return StoryEchoApp(load_settings(None, llm="openai", data_dir=data, memory={"embeddings": False}, openai=openai))


async def _five_turns_autosaved(pilot, app: StoryEchoApp) -> None:
    """A new game of Misty Forest, five turns played, the autosave of turn 5 written and noted."""
    await new_game(pilot, 0)
    for action in ACTIONS[:5]:
        await play(pilot, action)
    await until(pilot, lambda: app.saved_turn == 5, what="the autosave of turn 5")


def _question(app: StoryEchoApp) -> str:
    assert isinstance(app.screen, ConfirmScreen)
    return app.screen.message


async def _quit_with_yes(pilot, app: StoryEchoApp) -> None:
    await pilot.press("y")
    await until(pilot, lambda: app.return_code is not None, timeout=30, what="the game saved and the app told to exit")


async def test_a_quit_during_a_stalled_retry_asks_and_keeps_the_last_telling(tmp_path):
    """Was (issue 43): quitting during a stalled retry lost the told turn (fixed since: the autosave held turn 5 of
    6) and asked nothing: the game read as at turn 5, its last save, while turn 6 was told again."""
    with FakeOpenAIServer() as server:
        server.responder = model = StallsFromTurn(stall_at=len(ACTIONS) + 1)  # the retry's call stalls
        app = _app(server.url, tmp_path / "saves")
        async with app.run_test(size=SIZE) as pilot:
            await _five_turns_autosaved(pilot, app)
            await play(pilot, ACTIONS[5])
            told = app.session.history[-1].narration
            await pilot.press("ctrl+r")
            await until(pilot, lambda: model.calls["turn"] > len(ACTIONS), what="the retry's call")
            assert app.session.engine.state.turn == 5  # the game is back before turn 6 while it is told again
            await pilot.press("ctrl+q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=5, what="the quit question")
            question = _question(app)
            assert "telling turn 6 again (look)" in question and "saved at turn 6" in question, question
            await _quit_with_yes(pilot, app)
    save = SlotStore(tmp_path / "saves").read(SLOT).save
    assert save.turn == 6 and save.memory.log[-1].narration.startswith(told.split("\n")[0][:40])


async def test_a_quit_during_a_stalled_turn_asks_even_when_the_last_turn_is_saved(tmp_path):
    """Was: at the turn of the last save, a quit while the next turn was told asked nothing and dropped it."""
    with FakeOpenAIServer() as server:
        server.responder = model = StallsFromTurn(stall_at=6)
        app = _app(server.url, tmp_path / "saves")
        async with app.run_test(size=SIZE) as pilot:
            await _five_turns_autosaved(pilot, app)
            screen = app.screen
            screen.query_one("#action").value = ACTIONS[5]
            await pilot.press("enter")
            await until(pilot, lambda: model.calls["turn"] >= 6, what="the sixth turn's call")
            await pilot.press("ctrl+q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=5, what="the quit question")
            assert "telling turn 6 (look): quitting drops it" in _question(app)
            await pilot.press("n")  # keep playing: nothing is dropped, the turn is still under way
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the question gone")
            assert app.session is not None and screen.busy.is_set()
            await pilot.press("ctrl+q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=5, what="the quit question")
            await _quit_with_yes(pilot, app)
    assert SlotStore(tmp_path / "saves").read(SLOT).save.turn == 5


async def test_a_quit_while_a_summary_is_stalled_keeps_the_last_told_turn(tmp_path):
    """A summary stalled on the endpoint is abandoned on quit: the game is saved at its last told turn, the turns
    marked as not yet summarised (a load queues the summary again)."""
    with FakeOpenAIServer() as server:
        server.responder = model = FollowsTheAction(summaries=delay(120.0))
        app = _app(server.url, tmp_path / "saves")
        async with app.run_test(size=SIZE) as pilot:
            await _five_turns_autosaved(pilot, app)
            await until(pilot, lambda: model.calls["summary"] >= 1, what="the summary call")
            await play(pilot, ACTIONS[5])
            await pilot.press("ctrl+q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=5, what="the quit question")
            assert "saved at turn 6" in _question(app)
            await _quit_with_yes(pilot, app)
    save = SlotStore(tmp_path / "saves").read(SLOT).save
    assert save.turn == 6 and save.memory.summaries == []
