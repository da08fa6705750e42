"""The save and load screens read the slot list off their thread (issue 33, item 5): usable at once, rows when
they come, damaged saves shown as damaged."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest
from textual.widgets import DataTable, Input

from game.saves.format import SaveError
from game.saves.slots import SlotInfo, SlotStore
from game.tui.confirm import ConfirmScreen
from game.tui.slots import SlotScreen
from tests.test_saves import save_bytes
from tests.tui.test_screens import SIZE, Harness, make_saves, settle, status, table_rows, widget_text

GATE_S = 5.0
"""How long a gated list waits at most (a screen that lists on its own thread waits that long)."""


class GatedStore(SlotStore):
    """Fault injection: a slot store whose list waits until the test opens its gate, as a slow disk or a folder of
    long games would keep it; ``returned`` is set once a list has been handed back."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gate = threading.Event()
        self.returned = threading.Event()

    def list(self) -> list[SlotInfo]:
        self.gate.wait(timeout=GATE_S)
        try:
            return super().list()
        finally:
            self.returned.set()


def gated(pack, root: Path) -> GatedStore:
    make_saves(pack, root)
    return GatedStore(root)


async def until_listed(pilot, screen: SlotScreen) -> None:
    await pilot.app.workers.wait_for_complete()
    await settle(pilot)
    assert screen.listed


async def test_the_load_screen_takes_keys_before_the_list_arrives(tmp_path, mini_pack):
    store = gated(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SlotScreen)
        assert table_rows(app)[0][0] == "reading the saves..." and not store.returned.is_set()
        assert f"Reading the saves in {tmp_path}" in widget_text(screen) and not screen.listed
        await pilot.press("enter", "d")  # nothing to load or delete yet: nothing happens
        await pilot.pause()
        assert app.screen is screen and app.results == []
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]
        assert not store.returned.is_set()  # closed while the list was still being read
        store.gate.set()
        await app.workers.wait_for_complete()  # the list comes back to a closed screen: dropped, no error
        await settle(pilot)
    assert app.results == [None] and store.returned.is_set()


async def test_the_rows_replace_the_reading_row_when_they_come(tmp_path, mini_pack):
    store = gated(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SlotScreen)
        store.gate.set()
        await until_listed(pilot, screen)
        assert [row[0] for row in table_rows(app)] == ["start", "bridge"]
        assert "start: Mini Vale, turn 0, at Quiet Camp" in widget_text(screen)
        assert "Reading the saves" not in widget_text(screen)
        await pilot.press("down", "enter")
        await settle(pilot)
    assert app.results == ["bridge"]


async def test_a_name_typed_before_the_list_arrives_still_asks_what_it_overwrites(tmp_path, mini_pack):
    store = gated(mini_pack, tmp_path)
    app = Harness(lambda: SlotScreen(store, "save", story_id="mini"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await pilot.press(*"bridge", "enter")
        for _ in range(50):  # the slot's header is read off the thread too
            await pilot.pause(0.02)
            if isinstance(app.screen, ConfirmScreen):
                break
        assert isinstance(app.screen, ConfirmScreen)
        assert "turn 7, at Troll Bridge" in widget_text(app.screen)
        assert not store.returned.is_set()
        await pilot.press("y")
        await pilot.pause()
        store.gate.set()
        await app.workers.wait_for_complete()
        await settle(pilot)
    assert app.results == ["bridge"]


async def test_a_save_cut_short_is_listed_as_unreadable_with_the_loads_reason(tmp_path, mini_pack):
    store = make_saves(mini_pack, tmp_path)
    data = save_bytes(mini_pack, turns=1)
    (tmp_path / "cut.json").write_bytes(data[: len(data) // 2])
    with pytest.raises(SaveError) as load:
        store.read("cut")
    reason = str(load.value)
    assert reason.startswith("slot 'cut' cannot be loaded: not a save file")
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SlotScreen)
        await until_listed(pilot, screen)
        rows = {row[0]: row for row in table_rows(app)}
        assert rows["cut"][1] == "unreadable" and rows["bridge"][1] == "Mini Vale"
        table = screen.query_one("#slots-table", DataTable)
        table.move_cursor(row=[row[0] for row in table_rows(app)].index("cut"))
        await settle(pilot)
        assert f"cut: {reason}" in widget_text(screen)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and "cannot be loaded" in status(app)
    assert app.results == []


async def test_a_save_damaged_past_its_header_is_checked_when_picked_and_refused(tmp_path, mini_pack):
    """The list shows what the header says; Enter checks the whole save before the screen answers with it."""
    store = make_saves(mini_pack, tmp_path)
    document = orjson.loads(store.path("start").read_bytes())
    document["game"]["hp"] = "NaN"
    store.path("start").write_bytes(orjson.dumps(document))
    os.utime(tmp_path / "start.json", (1_800_000_000, 1_800_000_000))
    with pytest.raises(SaveError) as load:
        store.read("start")
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SlotScreen)
        await until_listed(pilot, screen)
        assert table_rows(app)[0][:3] == ["start", "Mini Vale", "0"]  # its header reads
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and app.results == []
        assert status(app) == f"Slot 'start' cannot be loaded: {load.value}"
        assert table_rows(app)[0][:2] == ["start", "unreadable"]
        await pilot.press("down", "enter")  # a sound save is checked, then picked
        await settle(pilot)
    assert app.results == ["bridge"]


async def test_many_saves_come_a_screenful_at_a_time_and_a_list_read_again_replaces_them(tmp_path, mini_pack):
    from game.tui.slots import ROWS_AT_ONCE

    data = save_bytes(mini_pack, turns=1)
    count = 2 * ROWS_AT_ONCE + 10
    for i in range(count):
        (tmp_path / f"game {i:03d}.json").write_bytes(data)
        os.utime(tmp_path / f"game {i:03d}.json", (1_700_000_000 + i, 1_700_000_000 + i))
    store = GatedStore(tmp_path)
    store.gate.set()
    app = Harness(lambda: SlotScreen(store, "load"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, SlotScreen)
        await until_listed(pilot, screen)
        assert len(table_rows(app)) == count
        table = screen.query_one("#slots-table", DataTable)
        screen._show_slots(store.list(), None)  # as the list's worker hands it over: a screenful at once
        assert table.row_count == ROWS_AT_ONCE and not screen.listed
        (tmp_path / "game 000.json").unlink()
        store.gate.clear()  # the list read again waits
        screen.refresh_slots()  # the rows still to come belong to the old list: never added to the new one
        await pilot.pause(0.1)
        assert [row[0] for row in table_rows(app)] == ["reading the saves..."] and not screen.listed
        store.gate.set()
        await until_listed(pilot, screen)
        names = [row[0] for row in table_rows(app)]
        assert names == [f"game {i:03d}" for i in range(count - 1, 0, -1)]
