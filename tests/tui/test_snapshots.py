"""SVG snapshots of the title, the play screen of each story, the debug panel and the save screen.

``pytest --snapshot-update tests/tui/test_snapshots.py`` rewrites them after an
intended change (look at the SVGs in ``tests/tui/__snapshots__`` first). What
varies between runs is fixed before the picture is taken: keyword memory, the
scripted narrator, a fixed seed, no notifications, no blinking cursor, and
save times written as a fixed date.
"""

from __future__ import annotations

import orjson

from game.engine.session import GameSession
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.title import TitleScreen
from game.wiring import make_engine
from tests.tui.test_app import play, settings_for, until

SIZE = (100, 32)


def still(app) -> None:
    """No toasts, no blinking cursor: the picture is the same on every run."""
    app.clear_notifications()
    for widget in app.screen.query("Input"):
        widget.cursor_blink = False
    for log in app.screen.query("RichLog"):
        log.scroll_end(animate=False, immediate=True)


def test_title(snap_compare, tmp_path):
    app = StoryEchoApp(settings_for(tmp_path))

    async def ready(pilot):
        await until(pilot, lambda: app.ready.is_set() and isinstance(app.screen, TitleScreen), what="ready")
        app.show_loading()
        await pilot.pause()
        still(app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def _play_snapshot(snap_compare, tmp_path, story_index: int, actions: list[str], **kwargs):
    app = StoryEchoApp(settings_for(tmp_path))

    async def played(pilot):
        from tests.tui.test_app import new_game

        await new_game(pilot, story_index)
        for action in actions:
            await play(pilot, action)
        for key in kwargs.get("press", []):
            await pilot.press(key)
        await pilot.pause(0.3)
        still(app)
        await pilot.pause()

    return snap_compare(app, terminal_size=kwargs.get("size", SIZE), run_before=played)


def test_play_misty_forest(snap_compare, tmp_path):
    assert _play_snapshot(snap_compare, tmp_path, 0, ["go east", "talk to garrick"])


def test_play_cyber(snap_compare, tmp_path):
    assert _play_snapshot(snap_compare, tmp_path, 1, ["look"])


def test_play_at_80x24(snap_compare, tmp_path):
    assert _play_snapshot(snap_compare, tmp_path, 0, ["go east"], size=(80, 24))


def test_debug_panel(snap_compare, tmp_path):
    assert _play_snapshot(snap_compare, tmp_path, 0, ["go east", "ask garrick about hal"], press=["f12"])


def test_save_screen(snap_compare, tmp_path):
    settings = settings_for(tmp_path)
    slots = SlotStore(settings.data_dir)
    for name, actions in (("at the lodge", ["go east"]), ("first steps", ["look"])):
        session = GameSession(make_engine("fantasy_001", settings, embedder=None, say=lambda _: None), slots)
        for action in actions:
            session.play(action)
        data = orjson.loads(session.snapshot())
        data["saved_at"] = "2026-11-30T12:00:00+00:00" if name == "first steps" else "2026-11-30T12:30:00+00:00"
        slots.write(name, orjson.dumps(data))
        session.close(save=False)
    app = StoryEchoApp(settings)

    async def saving(pilot):
        from tests.tui.test_app import new_game

        await new_game(pilot, 0)
        await pilot.press("f2")
        await until(pilot, lambda: type(app.screen).__name__ == "SlotScreen", what="save screen")
        await until(pilot, lambda: app.screen.listed, what="the saves listed")  # read on the screen's worker
        await pilot.pause(0.3)
        still(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=saving)
