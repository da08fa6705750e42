"""The title screen's story list holds the player's own stories beside the shipped ones (issue 34 item 1)."""

from __future__ import annotations

from game.checker.scaffold import new_story
from game.tui.app import StoryEchoApp
from game.tui.title import StoryScreen
from tests.conftest import SHIPPED
from tests.tui.test_app import SIZE, log_text, new_game, play, settings_for, until


async def test_a_story_of_the_players_folder_is_picked_and_played_on_the_title_screen(tmp_path):
    settings = settings_for(tmp_path, stories_dir=tmp_path / "mine")
    new_story(settings.stories_folder, "lighthouse", title="The Lighthouse", genre="gothic")
    broken = new_story(settings.stories_folder, "broken")
    (broken / "map.json").write_text("{")
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.__class__.__name__ == "TitleScreen", what="title")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, StoryScreen), what="story choice")
        assert [pack.story.id for pack in app.screen.packs] == [*SHIPPED, "lighthouse"]
        assert any("'broken' cannot be played" in str(n.message) for n in app._notifications)
        await pilot.press("escape")
        await new_game(pilot, len(SHIPPED))
        assert app.session.engine.pack.story.id == "lighthouse"
        assert "The Lighthouse" in log_text(app)
        await play(pilot, "go north")
        assert app.session.engine.state.node == "road"


async def test_a_story_of_the_longest_id_the_checker_accepts_saves_and_sets_its_game_aside(tmp_path):
    """Issue 43, item 6: story ids of 45 to 64 characters were legal, but their games never saved, and from 56 New
    game crashed the Textual game (WorkerFailed) setting the last game aside as ``autosave-<id>-previous-<n>``."""
    story_id = "a" + "_long" * 12 + "_id"  # 64 characters, the longest the checker accepts
    settings = settings_for(tmp_path, stories_dir=tmp_path / "mine")
    new_story(settings.stories_folder, story_id, title="The Long Name")
    for _ in range(2):  # the second New game sets the first game aside
        await _played_and_quit(StoryEchoApp(settings), story_id)
    saves = settings.data_dir
    assert (saves / f"autosave-{story_id}.json").exists()
    assert (saves / f"autosave-{story_id}-previous-1.json").exists()


async def _played_and_quit(app: StoryEchoApp, story_id: str) -> None:
    """A New game of the last story in the list, a turn, then ctrl+q and yes (it saves)."""
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, len(SHIPPED))
        assert app.session.engine.pack.story.id == story_id
        await play(pilot, "go north")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="confirm")
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, what="quit")
