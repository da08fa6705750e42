"""The modal screens, driven by the keyboard at 80x24: slots, confirm, settings, help."""

from __future__ import annotations

import io
import os
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console
from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, Static

from game.config import ConfigError, Settings, load_settings
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.language.parser import parse
from game.llm.scripted import ScriptedNarrator
from game.saves.format import SaveError
from game.saves.slots import SlotStore, check_name
from game.tui.confirm import ConfirmScreen
from game.tui.help import VERBS, HelpScreen, story_examples
from game.tui.settings import SettingsScreen, dump_toml, save_settings
from game.tui.slots import SlotScreen
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

SIZE = (80, 24)
WALK = ["take sword", "talk to sage", "north", "look", "look", "east", "look"]
"""Seven turns on the mini pack, ending at the Troll Bridge."""


class Harness(App[None]):
    """Pushes one screen on start and records what it is dismissed with."""

    def __init__(self, make: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self.make = make
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.make(), self.results.append)


async def settle(pilot: Pilot[Any]) -> None:
    """Let the screen stack, the workers (the slot list is read on one), layout and painting catch up."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def visible_text(app: App[Any]) -> str:
    """What the terminal shows, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def shows(pilot: Pilot[Any], text: str, timeout: float = 30.0) -> None:
    """Let the app run until the terminal shows ``text``: a loaded machine may paint a row a frame late."""
    deadline = time.monotonic() + timeout
    while text not in visible_text(pilot.app):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never shown; the screen: {visible_text(pilot.app)}")
        await pilot.pause(0.05)


def widget_text(screen: Screen[Any]) -> str:
    """Every text the screen's widgets hold, scrolled into view or not (labels, statics, inputs)."""
    parts = []
    for widget in screen.walk_children(with_self=False):
        if isinstance(widget, Static):
            content = widget.content
            if isinstance(content, str | Text):
                parts.append(str(content))
            else:  # a Rich renderable (a table): as a wide console would print it
                console = Console(width=200, record=True, file=io.StringIO())
                console.print(content)
                parts.append(console.export_text())
        elif isinstance(widget, Input):
            parts += [widget.value, str(widget.placeholder)]
    return "\n".join(parts)


def status(app: App[Any]) -> str:
    return getattr(app.screen.query_one("#slots-status", Static).visual, "plain", "")


# --------------------------------------------------------------------- saves
def engine(pack: ContentPack, seed: int = 3) -> TurnPipeline:
    return TurnPipeline(pack, new_game(pack, seed=seed), ScriptedNarrator(pack), keyword_memory(pack))


def make_saves(pack: ContentPack, root: Path) -> SlotStore:
    """``bridge`` (turn 7 at the Troll Bridge, older) and ``start`` (turn 0, newer), made by the engine."""
    store = SlotStore(root)
    game = GameSession(engine(pack), store, autosave_every=0)
    for action in WALK:
        assert game.play(action).ok, action
    game.save("bridge")
    fresh = GameSession(engine(pack), store, autosave_every=0)
    fresh.save("start")
    os.utime(root / "bridge.json", (1_700_000_000, 1_700_000_000))
    os.utime(root / "start.json", (1_800_000_000, 1_800_000_000))
    return store


def table_rows(app: App[Any]) -> list[list[str]]:
    table = app.screen.query_one("#slots-table", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_load_picks_a_slot_by_keyboard_from_a_table_newest_first(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = table_rows(app)
        assert [row[0] for row in rows] == ["start", "bridge"]
        assert rows[1][:5] == ["bridge", "Mini Vale", "7", "Troll Bridge", "manual"]
        assert rows[0][2:4] == ["0", "Quiet Camp"]
        await shows(pilot, "Troll Bridge")
        await pilot.press("down", "enter")
        await settle(pilot)
    assert app.results == ["bridge"]


async def test_escape_closes_the_slot_screen_with_none(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await settle(pilot)
    assert app.results == [None]


async def test_save_to_a_new_name_dismisses_with_it_and_writes_nothing(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, Input)
        await pilot.press(*"before boss", "enter")
        await settle(pilot)
    assert app.results == ["before boss"]
    assert not store.exists("before boss")  # the app does the saving


async def test_an_invalid_slot_name_shows_the_stores_error_and_stays(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    with pytest.raises(SaveError) as refused:
        check_name("../x")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"../x", "enter")
        await settle(pilot)
        assert status(app) == str(refused.value)
        assert isinstance(app.screen, SlotScreen)
        assert app.results == []
        await pilot.press("backspace")  # typing again clears the error
        await settle(pilot)
        assert status(app) == ""
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["bridge.json", "start.json"]


async def test_overwriting_a_slot_asks_and_no_keeps_the_screen_open(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"bridge", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "turn 7, at Troll Bridge" in widget_text(app.screen)
        await shows(pilot, "Overwrite")
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, SlotScreen)
        assert app.results == []
        assert "kept" in status(app)
        await pilot.press("shift+tab")  # back to the table; Enter on its first row (the newest: start)
        assert isinstance(app.focused, DataTable)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # No has the focus: Enter alone never overwrites
        await settle(pilot)
        assert app.results == []
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
    assert app.results == ["start"]


async def test_overwriting_another_storys_save_says_so(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="scifi_001"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"start", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "a save of another story, Mini Vale (turn 0, at Quiet Camp)" in widget_text(app.screen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SlotScreen) and app.results == []


async def test_delete_asks_then_removes_the_slot_and_its_backup(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    store.write("start", store.path("start").read_bytes())  # now start has a backup too
    os.utime(tmp_path / "start.json", (1_800_000_000, 1_800_000_000))
    assert store.backup_path("start").exists()
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        while not app.screen.listed:  # the list is read on a worker: "d" deletes the highlighted row, once listed
            await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert store.exists("start")
        await pilot.press("delete")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert not store.path("start").exists() and not store.backup_path("start").exists()
        assert [row[0] for row in table_rows(app)] == ["bridge"]
        assert "deleted" in status(app)
        assert app.results == []
    assert [info.name for info in store.list()] == ["bridge"]


async def test_a_corrupt_slot_is_listed_as_unreadable_and_cannot_be_picked_to_load(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    (tmp_path / "broken.json").write_bytes(b'{"schema_version": 1, "story_id": ')
    (tmp_path / "pickled.json").write_bytes(b"\x80\x04\x95 not json")
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = {row[0]: row for row in table_rows(app)}
        assert set(rows) == {"broken", "pickled", "start", "bridge"}
        assert rows["broken"][1] == rows["pickled"][1] == "unreadable"
        assert [row[0] for row in table_rows(app)][2:] == ["broken", "pickled"]  # unreadable: no date, listed last
        await pilot.press("down", "down")
        await settle(pilot)
        assert "broken: slot 'broken' cannot be loaded: not a save file" in widget_text(app.screen)  # its reason
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SlotScreen) and app.results == []
        assert "cannot be loaded" in status(app)
        await pilot.press("escape")
        await settle(pilot)
    assert app.results == [None]


async def test_markup_in_a_save_and_in_a_typed_name_shows_literally(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    document = orjson.loads(GameSession(engine(mini_pack), store).snapshot())
    document["place"] = "[bold]Vault[/bold]"
    document["story_title"] = "[@click=app.quit]X[/]"
    store.write("odd", orjson.dumps(document))
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert table_rows(app)[0][:4] == ["odd", "[@click=app.quit]X[/]", "0", "[bold]Vault[/bold]"]
        await shows(pilot, "manual")
        await shows(pilot, "at [bold]Vault[/bold]")  # the highlighted slot's line below the table
        [row] = [line for line in visible_text(app).splitlines() if "manual" in line]  # the table's row
        assert "[@click=app.quit]X[/]" in row and "[bold]Vault[/bold]" in row
        await pilot.press(*"[bold]", "enter")
        await settle(pilot)
        assert "'[bold]' is not a slot name" in status(app)
        await shows(pilot, "'[bold]' is not a slot name")
        assert app.is_running and app.results == []


async def test_confirm_shows_its_message_literally_and_defaults_to_no(tmp_path):
    app = Harness(lambda: ConfirmScreen("Quit [bold]now[/bold]?", yes="Quit", no="Stay"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await shows(pilot, "Quit [bold]now[/bold]?")
        await pilot.press("enter")
        await settle(pilot)
    assert app.results == [False]
    app = Harness(lambda: ConfirmScreen("Sure?"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("left", "enter")
        await settle(pilot)
    assert app.results == [True]


# ------------------------------------------------------------------ settings
CONFIG = """\
llm = "auto"
seed = 7

[memory]
embeddings = false
window_messages = 10

[openai]
preset = "deepseek"
api_key_env = "MY_NARRATOR_KEY"

[local]
n_threads = 2
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("STORYECHO_LLM", raising=False)  # the file decides, not the suite's default
    path = tmp_path / "storyecho.toml"
    path.write_text(CONFIG)
    return path


async def set_field(pilot: Pilot[Any], app: App[Any], field_id: str, text: str) -> None:
    field = app.screen.query_one(f"#{field_id}", Input)
    field.focus()
    await settle(pilot)
    await pilot.press("end", *["backspace"] * len(field.value), *text)


def settings_error(app: App[Any]) -> str:
    return getattr(app.screen.query_one("#settings-error", Static).visual, "plain", "")


async def test_an_invalid_window_shows_configs_own_error_and_writes_nothing(config, tmp_path):
    before = config.read_bytes()
    bad = tmp_path / "bad" / "storyecho.toml"
    bad.parent.mkdir()
    bad.write_text(CONFIG.replace("window_messages = 10", "window_messages = 1"))
    with pytest.raises(ConfigError) as expected:
        load_settings(bad)
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await set_field(pilot, app, "window", "1")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert settings_error(app) == str(expected.value).replace(str(bad), str(config))
        assert "memory.window_messages: Input should be greater than or equal to 2" in settings_error(app)
        assert isinstance(app.screen, SettingsScreen) and app.results == []
    assert config.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "storyecho.toml"]  # no temporary file left


async def test_a_valid_change_is_merged_into_the_file_and_reloads(config, monkeypatch):
    monkeypatch.setenv("MY_NARRATOR_KEY", "sk-from-env-0000")
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, Select) and app.focused.id == "llm"
        await pilot.press("enter", "down", "enter")  # the narrator list: auto -> openai
        await settle(pilot)
        assert app.screen.query_one("#llm", Select).value == "openai"
        await set_field(pilot, app, "window", "20")
        await set_field(pilot, app, "interval", "4")
        await set_field(pilot, app, "model", "deepseek-reasoner")
        await pilot.press("enter")  # Enter in a field saves
        await settle(pilot)
    [saved] = app.results
    written = tomllib.loads(config.read_text())
    assert written == {
        "llm": "openai",
        "seed": 7,
        "memory": {"embeddings": False, "window_messages": 20, "summary_interval_turns": 4},
        "openai": {"preset": "deepseek", "api_key_env": "MY_NARRATOR_KEY", "model": "deepseek-reasoner"},
        "local": {"n_threads": 2},
    }
    assert "sk-from-env" not in config.read_text()
    again = load_settings(config)
    for settings in (saved, again):
        assert settings.llm == "openai" and settings.seed == 7 and settings.local.n_threads == 2
        assert (settings.memory.window_messages, settings.memory.summary_interval_turns) == (20, 4)
        assert settings.memory.embeddings is False
        assert (settings.openai.preset, settings.openai.model) == ("deepseek", "deepseek-reasoner")


async def test_the_key_variable_is_named_and_no_key_value_is_ever_shown_or_written(config, monkeypatch):
    monkeypatch.setenv("MY_NARRATOR_KEY", "sk-planted-env-1111")
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await shows(pilot, "MY_NARRATOR_KEY")
        shown = visible_text(app) + widget_text(app.screen)
        assert "(set)" in shown
        assert "sk-planted" not in shown

    monkeypatch.setenv("STORYECHO_OPENAI__API_KEY", "sk-planted-env-2222")  # openai.api_key from the environment
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert load_settings(config).openai.api_key is not None
        shown = visible_text(app) + widget_text(app.screen)
        assert "STORYECHO_OPENAI__API_KEY" in shown and "sk-planted" not in shown
        await set_field(pilot, app, "window", "12")
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert app.results and app.results[0].memory.window_messages == 12
    assert "sk-planted" not in config.read_text() and "api_key =" not in config.read_text()

    config.write_text(CONFIG.replace('api_key_env = "MY_NARRATOR_KEY"', 'api_key = "sk-planted-file-3333"'))
    monkeypatch.delenv("STORYECHO_OPENAI__API_KEY")
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await shows(pilot, "(set in config file)")
        shown = visible_text(app) + widget_text(app.screen)
        assert "sk-planted" not in shown
        await set_field(pilot, app, "window", "14")
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert tomllib.loads(config.read_text())["openai"]["api_key"] == "sk-planted-file-3333"  # the file's own key stays


async def test_settings_escape_changes_nothing(config):
    before = config.read_bytes()
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=SIZE) as pilot:
        await set_field(pilot, app, "window", "30")
        await pilot.press("escape")
        await settle(pilot)
    assert app.results == [None]
    assert config.read_bytes() == before


async def test_a_config_file_that_is_not_toml_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "storyecho.toml"
    path.write_text("llm = \n[memory\n")
    app = Harness(lambda: SettingsScreen(Settings(), path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert settings_error(app).startswith(f"{path}: not valid TOML")
        await set_field(pilot, app, "window", "20")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert settings_error(app).startswith(f"{path}: not valid TOML")
        assert isinstance(app.screen, SettingsScreen) and app.results == []
    assert path.read_text() == "llm = \n[memory\n"


def test_save_settings_creates_a_missing_file_and_clears_emptied_keys(tmp_path, monkeypatch):
    monkeypatch.delenv("STORYECHO_LLM", raising=False)
    path = tmp_path / "new.toml"
    settings = save_settings(path, {"llm": "scripted", "openai": {"model": "m1"}})
    assert settings.llm == "scripted" and settings.openai.model == "m1"
    settings = save_settings(path, {"openai": {"model": None}})
    assert settings.openai.model is None
    assert tomllib.loads(path.read_text()) == {"llm": "scripted", "openai": {}}


def test_the_toml_writer_round_trips_what_tomllib_reads():
    import datetime as dt

    document = {
        "title": 'say "hi"\n\ttab \\ back\x01 é ✓',
        "n": -3,
        "x": 1.5e-7,
        "big": float("inf"),
        "flag": True,
        "when": dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC),
        "day": dt.date(2024, 5, 1),
        "list": [1, 2, 3],
        "mixed": [[1, 2], ["a"], {"inline": True}, "s"],
        "odd key.with dots": "v",
        "empty": {},
        "memory": {"window_messages": 10, "nested": {"deep": {"k": "v"}}},
        "only": {"sub": {"a": 1}},
        "stories": [{"id": "a", "meta": {"x": 1}}, {"id": "b", "tags": [{"t": 1}, {"t": 2}]}],
    }
    assert tomllib.loads(dump_toml(document)) == document


# ---------------------------------------------------------------------- help
def fantasy_words() -> set[str]:
    fantasy = load_pack(content_root() / "fantasy_001")
    cyber = load_pack(content_root() / "scifi_001")
    cyber_names = {n.lower() for n in [*(x.name for x in cyber.npcs.values()), *(x.name for x in cyber.items.values())]}
    names = {x.name for x in [*fantasy.npcs.values(), *fantasy.items.values(), *fantasy.enemies.values()]}
    return {n.lower() for n in names if n.lower() not in cyber_names} | {"hunter", "harp", "wolf", "potion", "forest"}


async def test_help_shows_cyber_examples_and_nothing_from_the_forest():
    cyber = load_pack(content_root() / "scifi_001")
    app = Harness(lambda: HelpScreen(cyber))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = widget_text(app.screen)
        await shows(pilot, "How to play Cyber")
        for example in ("go east", "talk to The Voice", "attack Lab Crawler"):
            assert example in text
        for key in ("F1", "F2", "F3", "F5", "F9", "F12", "ctrl+p", "1-4", "ctrl+q", "tab"):
            assert key in text
        lowered = text.lower()
        assert not [word for word in fantasy_words() if word in lowered]
        body = app.screen.query_one("#help-body")
        assert body.max_scroll_y > 0 and body.has_focus  # taller than 24 lines: scrolls by keyboard
        await pilot.press("end")
        await settle(pilot)
        assert body.scroll_y == body.max_scroll_y
        await shows(pilot, "ctrl+q")
        await pilot.press("escape")
        await settle(pilot)
    assert app.results == [None]


async def test_help_without_a_story_and_for_the_forest():
    app = Harness(lambda: HelpScreen(None))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await shows(pilot, "How to play")
        assert "Try, in" not in widget_text(app.screen)
        await pilot.press("f1")
        await settle(pilot)
    assert app.results == [None]
    forest = load_pack(content_root() / "fantasy_001")
    examples = story_examples(forest)
    assert "talk to Old Garrick" in examples and "go north" in examples


@pytest.mark.parametrize("story", ["fantasy_001", "scifi_001"])
def test_every_help_example_is_a_line_the_parser_understands(story):
    for verb, _form, _words, sample in VERBS:
        assert parse(sample).verb == verb, sample
    examples = story_examples(load_pack(content_root() / story))
    assert len(examples) >= 5
    for example in examples:
        assert parse(example).verb not in ("other", "ask"), example
