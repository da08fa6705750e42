"""The play screen as a player uses it: where typed keys go after a click, and glyphs that keep the layout.

Issue 25: a click in the narration log took the focus from the action line,
so typing went nowhere until the player clicked the action line again; and
the symbols the game put in the log and the sidebar (✔ ⚔ ★ ☑ ⓘ ...) are
ambiguous-width or emoji characters, drawn two cells wide by many terminals
while Rich counts one, which moved the sidebar's border by a column.
"""

from __future__ import annotations

import ast
import inspect
import unicodedata
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual import events
from textual.widgets import Input, RichLog

from game.tui import play as play_screen
from game.tui import text, widgets
from game.tui.app import StoryEchoApp
from game.world.state import new_game as fresh_state
from tests.tui.test_app import SIZE, log_text, new_game, play, settings_for, until

VS16 = "\ufe0f"
"""Variation selector 16: asks for a character's emoji presentation, which Rich counts two cells wide."""


async def test_typing_after_a_click_in_the_log_goes_to_the_action_line(tmp_path):
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot, 0)
        await play(pilot, "go east")
        action = screen.query_one("#action", Input)
        log = screen.query_one("#log", RichLog)
        await pilot.click("#log")
        await pilot.pause()
        assert app.focused is action
        await pilot.press(*"look", "enter")
        await until(pilot, lambda: app.session.engine.state.turn == 2 and not screen.busy.is_set(), what="look")
        assert app.session.history[-1].action == "look"
        assert "> look" in log_text(app)

        await pilot.click("#sidebar")  # the sidebar does not keep the keys either
        await pilot.pause()
        assert app.focused is action

        log.scroll_end(animate=False, immediate=True)  # the log still scrolls: wheel and page keys
        bottom = log.scroll_y
        assert bottom > 0
        await pilot._post_mouse_events([events.MouseScrollUp], "#log")  # Pilot has no public wheel
        await until(pilot, lambda: log.scroll_y < bottom, what="the wheel to scroll the log")
        log.scroll_end(animate=False, immediate=True)
        await pilot.press("pageup")
        await until(pilot, lambda: log.scroll_y < bottom, what="PageUp to scroll the log")
        await pilot.press("ctrl+home")
        await until(pilot, lambda: log.scroll_y == 0, what="Ctrl+Home to scroll to the log's start")
        await pilot.press("ctrl+end")
        await until(pilot, lambda: log.scroll_y == bottom, what="Ctrl+End to scroll to the log's end")
        assert app.focused is action


PLAY_SCREEN_MODULES = (play_screen, widgets, text)
"""What draws the log, the draft and status lines, the scene, the header and the sidebar."""
BOX_AND_BLOCKS = range(0x2500, 0x25A0)
"""Box drawing and block elements: ambiguous in East Asian terms, but Textual draws its own borders with them."""


def _emitted_glyphs() -> dict[str, str]:
    """Every character other than ASCII in the strings of the play screen's modules, with where it is."""
    found = {}
    for module in PLAY_SCREEN_MODULES:
        source = Path(inspect.getfile(module))
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for char in node.value:
                    if not char.isascii():
                        found.setdefault(char, f"{source.name}:{node.lineno}")
    return found


def _why_not_narrow(char: str) -> str | None:
    """Why a terminal may draw ``char`` in another width than Textual counts, or None when all agree on one cell."""
    if cell_len(char) != 1:
        return f"{cell_len(char)} cells"
    if cell_len(char + VS16) != 1:  # it has an emoji presentation, which many terminals draw two cells wide
        return "an emoji"
    width = unicodedata.east_asian_width(char)
    if width in ("W", "F") or (width == "A" and ord(char) not in BOX_AND_BLOCKS):
        return f"East Asian width {width!r} (two cells in a CJK locale and in some fonts)"
    return None


def test_the_glyphs_the_play_screen_draws_are_one_cell_wide_in_every_terminal():
    glyphs = _emitted_glyphs()
    assert "\u2591" in glyphs  # the scan sees the sidebar's HP bar
    wrong = {
        f"{char} U+{ord(char):04X} {unicodedata.name(char, '?')} ({where})": why
        for char, where in sorted(glyphs.items())
        if (why := _why_not_narrow(char)) is not None
    }
    assert not wrong, wrong


@pytest.mark.parametrize("glyph", ["\u2694", "\u2714", "\u2611", "\u2605", "\u24d8", "\u2026", "\U0001f5e1"])
def test_the_symbols_issue_25_saw_are_caught(glyph):
    """Crossed swords, a heavy check mark, a ticked box, a star, circled i, an ellipsis, a dagger."""
    assert _why_not_narrow(glyph) is not None


async def test_an_objective_done_is_said_once_as_its_tag_line(tmp_path):
    """Was: "Objective complete: Talk to Old Garrick at his lodge." in the narration and "✓ Objective: Talk to
    Old Garrick at his lodge." below it: one event, said twice in the log."""
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        await play(pilot, "go east")
        await play(pilot, "talk to garrick")
        shown = log_text(app)
        assert shown.count("Talk to Old Garrick at his lodge") == 1 and "✓ Objective: Talk to Old Garrick" in shown
        assert "✦ New quest: The Hunter's Son" in shown and "New quest: The Hunter's Son." not in shown
        assert 'Old Garrick: "Close the door' in shown  # the narration itself stays
        result = app.session.history[-1]
        assert "Objective complete: Talk to Old Garrick at his lodge." in result.narration  # run and saves keep it


def test_the_scene_marks_only_a_foe_that_strikes_first_as_danger(fantasy):
    """Was: "Danger: Shadow Knight" in the scene while the narration said "Foes here: Shadow Knight (they fight if
    you start it)"; only a foe that attacks when left alone is a danger."""
    state = fresh_state(fantasy, seed=3)
    state.node = "shadow_gate"
    gate = widgets.scene_text(state, fantasy).plain
    assert "Foes: Shadow Knight (if you start it)" in gate and "Danger" not in gate
    state.node = "shadow_swamp"
    swamp = widgets.scene_text(state, fantasy).plain
    assert "Danger: Bog Lurker (may attack)" in swamp and "Foes:" not in swamp
