"""Details a player trips on in the Textual game (issue 46), driven by Pilot over the real app and engine.

Each test failed on main before the fix (03de82a); the docstring says what the player met.
"""

from __future__ import annotations

from game.tui.app import StoryEchoApp
from game.tui.confirm import ConfirmScreen
from game.tui.title import TitleScreen
from game.world.state import QuestProgress
from tests.tui.test_app import SIZE, log_text, new_game, play, playing, settings_for, until


async def test_play_with_a_story_goes_straight_into_that_story(tmp_path):
    """Was: `storyecho play --story victorian_001` stopped at the title, whose Continue offered another story's
    autosave; the README says it plays the story directly."""
    app = StoryEchoApp(settings_for(tmp_path), story="victorian_001")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: playing(app), timeout=30, what="the story, with no key pressed")
        assert app.session is not None and app.session.engine.pack.story.id == "victorian_001"
        assert not isinstance(app.screen, TitleScreen)


async def test_the_keys_pick_a_choice_after_a_save(tmp_path):
    """Was: in a new Misty Forest game, `save x1` left no choices on screen, and the keys 1-4 did nothing until the
    next turn."""
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot)
        screen.query_one("#action").value = "save x1"
        await pilot.press("enter")
        await until(pilot, lambda: "Saved to 'x1'" in log_text(app), what="the save")
        await until(pilot, lambda: not screen.busy.is_set(), what="the save's end")
        assert screen._choices, "no choices after the save"
        await play(pilot, "1")  # the first choice, by its key: a turn is played
        assert app.session.engine.state.turn == 1


async def test_a_quest_begun_and_done_in_one_turn_is_told_in_order(tmp_path):
    """Was: "Quest complete: A Summer in Kyoto" in the narration above "✦ New quest: A Summer in Kyoto"."""
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, story_index=1)
        state = app.session.engine.state
        assert app.session.engine.pack.story.id == "scifi_001"
        state.quests["restore_power"] = QuestProgress(status="completed")
        state.node, state.intelligence = "lab_pod_bay", 20  # the shard given, and given with the mind it takes
        for flag in ("quest_done:restore_power", "talked:dr_senda", "gave:memory_shard:the_voice"):
            state.add_flag(flag)
        await play(pilot, "talk to the voice")
        text = log_text(app)
        started, done = text.index("New quest: A Summer in Kyoto"), text.index("Quest completed: A Summer in Kyoto")
        assert started < done, text
        assert "Quest complete: A Summer in Kyoto" not in text, text  # said once, as the tag
        assert "(+50 exp, intelligence +1" in text[done:], text  # with its rewards


async def test_the_load_question_after_an_undo_says_where_the_game_is(tmp_path):
    """Was: "Your The Lantern Keeper game has progress since turn 8" at turn 7 (a turn undone after a save)."""
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot)
        await play(pilot, "look")
        await play(pilot, "look around")
        screen.query_one("#action").value = "save x1"
        await pilot.press("enter")
        await until(pilot, lambda: "Saved to 'x1'" in log_text(app), what="the save")
        await until(pilot, lambda: app.saved_turn == 2, what="the save noted")
        screen.query_one("#action").value = "undo"
        await pilot.press("enter")
        await until(pilot, lambda: app.session.engine.state.turn == 1, what="the undo")
        await until(pilot, lambda: not screen.busy.is_set(), what="the undo's end")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        message = str(app.screen.message)
        assert "progress since turn 2" not in message, message
        assert "back at turn 1" in message and "turn 2" in message, message
