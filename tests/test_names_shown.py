"""What the player reads names things as the story does (issue 25): talents by name, the people met and no others,
items, money and quests by name in ``slots show``, a transcript that opens with the story's introduction."""

from __future__ import annotations

import re

import pytest

from game.cli import main as cli_main
from game.engine.pipeline import TurnPipeline, TurnResult
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.slots import SlotStore
from game.saves.transcript import transcript
from game.tui.play import event_lines
from game.tui.widgets import sidebar_text
from game.world.loader import content_root, load_pack
from game.world.rules import AppliedEffect
from game.world.state import new_game


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def session(pack, root=None) -> GameSession:
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    return GameSession(TurnPipeline(pack, new_game(pack, seed=1), narrator, memory), SlotStore(root) if root else None)


def test_a_talent_is_announced_by_its_name_not_its_id(fantasy):
    game = session(fantasy)
    state = game.engine.state
    result = TurnResult(1, "rest", "", [], state, applied=[AppliedEffect("talent", "mist_walker")])
    [line] = event_lines(result, game)
    talent = next(t for t in fantasy.talents if t.id == "mist_walker")
    assert line.plain.startswith(f"✦ Talent: {talent.name}") and "mist_walker" not in line.plain


def test_the_sidebar_lists_the_people_met_not_everyone_the_quests_touched(fantasy):
    state = new_game(fantasy, seed=1)
    state.affinity.update({"silas": -10, "thief_leader": -10, "old_hunter": 10})  # as a quest's start does
    shown = sidebar_text(state, fantasy).plain
    assert "People" not in shown and fantasy.npcs["silas"].name not in shown  # met nobody yet: no spoiler
    state.add_flag("talked:old_hunter")
    shown = sidebar_text(state, fantasy).plain
    assert f"{fantasy.npcs['old_hunter'].name} +10" in shown
    assert fantasy.npcs["silas"].name not in shown and fantasy.npcs["thief_leader"].name not in shown


def test_slots_show_and_the_transcript_name_things_as_the_story_does(fantasy, tmp_path, capsys):
    game = session(fantasy, tmp_path)
    for action in ("go east", "talk to garrick", "take the tonic"):
        assert game.play(action).ok
    game.save("named")
    assert cli_main(["slots", "show", "named", "--data-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    inventory = next(line for line in shown.splitlines() if line.startswith("inventory:"))
    names = [fantasy.items[i].name for i in game.engine.state.inventory]
    assert all(name in inventory for name in names) and not any(i in inventory for i in game.engine.state.inventory)
    assert f"{game.engine.state.gold} {fantasy.story.currency}" in shown and "money" not in shown
    assert fantasy.quests.main[0].title in shown

    text = transcript(SlotStore(tmp_path).read("named").save, markdown=False, pack=fantasy)
    body = text.split("\n", 2)[2]
    assert body.startswith(fantasy.story.intro) and body.index(fantasy.story.intro) < body.index("Turn 1")


def test_the_saves_list_shows_a_short_time_that_does_not_wrap(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    assert game.play("look").ok
    game.save("short")
    listed = game.play("saves").narration
    line = next(line for line in listed.splitlines() if "short" in line)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d$", line) and "+00:00" not in line  # not ISO 8601 with seconds
    assert len(line) <= 100


def test_an_undo_offers_choices_where_the_game_now_stands(fantasy):
    game = session(fantasy)
    assert game.play("go east").ok
    undone = game.play("undo")
    assert undone.ok and undone.choices and any("go" in c for c in undone.choices)


async def test_a_new_game_and_a_continued_one_open_with_choices(tmp_path):
    from game.tui.app import StoryEchoApp
    from tests.tui.test_app import SIZE, new_game, settings_for

    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot, 0)
        await pilot.pause()
        assert screen._choices and any(c.startswith("go ") for c in screen._choices)
