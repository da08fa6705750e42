"""Small things a new player hit (issue 22, item 5), each a test that failed before."""

from __future__ import annotations

import builtins
import sys

import pytest

from game.cli import _pick_story, main
from game.saves.slots import SlotStore
from game.world.content import ContentError
from game.world.library import StoryLibrary
from game.world.loader import content_root, load_pack
from tests.test_cli import run_cli


def test_the_headless_picker_asks_again_until_a_story_is_chosen(monkeypatch, capsys):
    """Was: any answer ("banana", "3") started Misty Forest."""
    count = len(StoryLibrary.of(None).ids())
    answers = iter(["banana", str(count + 1), "2"])
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(answers))
    assert _pick_story(StoryLibrary.of(None)) == "scifi_001"
    assert capsys.readouterr().out.count(f"Type a number from 1 to {count}.") == 2


@pytest.mark.parametrize("leave", [EOFError, KeyboardInterrupt])
def test_leaving_the_headless_picker_ends_quietly(monkeypatch, tmp_path, leave):
    """Was: Ctrl-D and Ctrl-C at the picker printed tracebacks."""

    def interrupted(prompt=""):
        raise leave

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(builtins, "input", interrupted)
    assert main(["play", "--headless", "--data-dir", str(tmp_path)]) == 0


def test_a_bad_story_id_lists_the_stories_there_are():
    """Was: "content pack folder not found", and nothing about which stories exist."""
    with pytest.raises(ContentError, match="the stories there: fantasy_001, scifi_001"):
        load_pack(content_root() / "fantasy_01")


def test_a_run_without_a_slot_leaves_no_autosave_for_continue(tmp_path):
    """Was: `storyecho run` without --slot wrote a slot named `autosave`, which Continue then picked over the player's
    real game."""
    out = run_cli("run", "--story", "fantasy_001", "--no-embeddings", stdin="look\n" * 6, data_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    assert SlotStore(tmp_path).list() == []


def test_the_headless_banner_does_not_say_the_terminal_ui_is_coming(tmp_path):
    out = run_cli("play", "--headless", "--story", "fantasy_001", "--no-embeddings", stdin="quit\n", data_dir=tmp_path)
    assert out.returncode == 0 and "is coming" not in out.stdout and "terminal UI" in out.stdout


async def test_a_long_paste_is_not_echoed_whole_before_it_is_refused(tmp_path):
    """Was: a 10,000-character paste was echoed whole (115 lines) before "That is too long..."."""
    from game.tui.app import StoryEchoApp
    from tests.tui.test_app import SIZE, log_text, settings_for, until
    from tests.tui.test_app import new_game as start_new_game

    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_new_game(pilot, 0)
        screen.query_one("#action").value = "x" * 10_000
        await pilot.press("enter")
        await until(pilot, lambda: "too long" in log_text(app), what="the refusal")
        assert log_text(app).count("x") < 400
