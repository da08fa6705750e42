"""Undo, redo, retry and the timeline's branches in the Textual game, driven by Pilot over the real engine."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.timeline import TimelineScreen
from tests.tui.test_app import SIZE, log_text, new_game, play, settings_for, until

TOLD = 'You tell Old Garrick: "My name is Zebulon."'
RETOLD = "Old Garrick nods slowly"
"""How the scripted narrator's second telling goes on after the player's words (``game.llm.tellings``: ``heard``)."""


async def test_ctrl_z_takes_a_turn_back_ctrl_y_plays_it_again_and_ctrl_r_tells_it_anew(tmp_path):
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot, 0)
        for action in ("go east", "talk to garrick", "say my name is Zebulon"):
            await play(pilot, action)
        assert TOLD in log_text(app)

        await pilot.press("ctrl+z")
        await until(pilot, lambda: app.session.engine.state.turn == 2 and not screen.busy.is_set(), what="undo")
        await pilot.pause(0.1)
        shown = log_text(app)
        assert TOLD not in shown and "Undone: turn 3" in shown  # the log is the game as it now stands
        assert "Old Garrick" in shown  # the turns before it are still there

        await pilot.press("ctrl+y")
        await until(pilot, lambda: app.session.engine.state.turn == 3 and not screen.busy.is_set(), what="redo")
        await pilot.pause(0.1)
        assert TOLD in log_text(app)

        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: RETOLD in " ".join(log_text(app).split()) and not screen.busy.is_set(),  # lines wrap
            what="retry",
        )
        shown = " ".join(log_text(app).split())
        assert shown.count(TOLD) == 1 and "Old Garrick listens" not in shown  # the first telling is gone from the log
        assert app.session.engine.state.turn == 3
        assert RETOLD in app.session.engine.memory.state.log[-1].narration


async def test_the_timeline_lists_the_turns_and_branches_from_the_one_picked(tmp_path):
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        for action in ("go east", "talk to garrick", "say my name is Zebulon"):
            await play(pilot, action)
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
        timeline = app.screen
        table = timeline.query_one("#timeline-table", DataTable)
        assert table.row_count == 4  # where the game began, then three turns
        assert "Old Hunter's Lodge" in str(table.get_row_at(1)[1])
        await pilot.press("up", "up")  # from the last turn to turn 1
        assert timeline.query_one("#branch-name", Input).value == "fantasy_001-branch-1"
        await pilot.press("enter")
        slots = SlotStore(tmp_path / "saves")
        await until(pilot, lambda: slots.exists("fantasy_001-branch-1"), what="the branch's slot")
        branch = slots.read("fantasy_001-branch-1").save
        assert branch.turn == 1 and branch.game.node == "hunter_cabin"
        assert [e.action for e in branch.memory.log] == ["go east"]
        assert app.session.engine.state.turn == 3  # the game being played goes on
        await until(pilot, lambda: not isinstance(app.screen, TimelineScreen), what="the timeline to close")

        await pilot.press("f4")  # the same name again: told in the dialog, which stays open
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
        await pilot.press("up", "up", "enter")
        status = app.screen.query_one("#timeline-status", Static)
        await until(pilot, lambda: "already a save" in str(status.render()), what="the refusal")
        assert isinstance(app.screen, TimelineScreen)
