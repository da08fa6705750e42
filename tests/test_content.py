"""Content packs load, and broken packs fail with errors naming file and field."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from game.tui.themes import theme_for
from game.world.content import ContentError
from game.world.loader import available_stories, content_root, load_pack
from tests.conftest import DATA, SHIPPED

STORIES = SHIPPED


def test_the_three_stories_are_bundled():
    assert {"fantasy_001", "scifi_001", "victorian_001"} <= set(STORIES) == set(available_stories())


@pytest.mark.parametrize("story", STORIES)
def test_story_pack_is_complete(story):
    pack = load_pack(content_root() / story)
    assert len(pack.nodes) >= 14 and len(pack.npcs) >= 6 and len(pack.enemies) >= 6
    assert len(pack.quests.main) >= 5 and len(pack.quests.side) >= 4 and len(pack.endings) >= 3
    assert len(pack.talents) >= 4 and len(pack.achievements) >= 6 and len(pack.knowledge) >= 8
    for quest in pack.quests.side:
        assert quest.trigger is not None
        assert any(o.requires for o in quest.objectives), quest.id
    for region in pack.story.regions:
        assert region.banner.isascii()
    assert pack.worldview.strip()


def test_misty_forest_carries_its_lore():
    pack = load_pack(content_root() / "fantasy_001")
    text = (pack.worldview + json.dumps([k.model_dump() for k in pack.knowledge])).lower()
    for phrase in (
        "tree of life",
        "elvin",
        "bruno",
        "silas",
        "shadow lord",
        "abyss demon king",
        "alicia",
        "hal",
        "moonlight harp",
        "moonvine",
        "full moon",
    ):
        assert phrase in text, phrase
    peace = next(e for e in pack.endings if e.id == "peace")
    cond = peace.condition
    assert set(cond.quests_completed) == {"purifying_spring", "free_thieves"}
    assert cond.min_affinity == {"silas": 50}
    assert cond.min_stats == {"intelligence": 34}
    assert "choice:negotiate" in cond.flags
    assert peace.priority == max(e.priority for e in pack.endings)
    assert "shadow_swamp" in pack.nodes and "old_hunter" in pack.npcs


def test_cyber_carries_its_lore():
    pack = load_pack(content_root() / "scifi_001")
    text = (pack.worldview + pack.story.intro + json.dumps([k.model_dump() for k in pack.knowledge])).lower()
    for phrase in ("neo-tokyo", "2077", "subject #7", "life essence vault", "dark code"):
        assert phrase in text, phrase
    assert "echo7" in pack.npcs and pack.npcs["echo7"].name == "ECHO-7"
    endings = {e.id for e in pack.endings}
    assert {"reboot", "purge", "pact"} <= endings


def test_the_drowned_light_carries_its_lore():
    pack = load_pack(content_root() / "victorian_001")
    text = (pack.worldview + pack.story.intro + json.dumps([k.model_dump() for k in pack.knowledge])).lower()
    for phrase in ("saltmoor", "gull rock", "elias crane", "st piran", "wreckers", "colza"):
        assert phrase in text, phrase
    endings = {e.id: e for e in pack.endings}
    assert set(endings) == {"dawn", "tide", "salvage"}
    # each ending follows from its own choice (story.json choices -> choice:<id> flags -> endings.json)
    for choice, ending in (("kindle", "dawn"), ("toll", "tide"), ("bargain", "salvage")):
        assert f"choice:{choice}" in endings[ending].condition.flags
    assert theme_for(pack.story.genre) == "drowned-light"


def broken_copy(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(DATA / "mini", root)
    return root


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_missing_field_names_file_and_field(tmp_path):
    root = broken_copy(tmp_path)
    edit(root / "npcs.json", lambda d: d[1].pop("greeting"))
    with pytest.raises(ContentError) as err:
        load_pack(root)
    assert "npcs.json: [1].greeting: Field required" in str(err.value)


def test_bad_value_names_file_and_field(tmp_path):
    root = broken_copy(tmp_path)
    edit(root / "enemies.json", lambda d: d[0].update(hp=-3))
    edit(root / "story.json", lambda d: d["player"].update(hp="lots"))
    with pytest.raises(ContentError) as err:
        load_pack(root)
    assert "story.json: player.hp" in str(err.value)
    root = broken_copy(tmp_path / "b")
    edit(root / "enemies.json", lambda d: d[0].update(hp=-3))
    with pytest.raises(ContentError, match=r"enemies.json: \[0\].hp"):
        load_pack(root)


def test_an_id_rule_is_said_in_words_not_as_a_pattern(tmp_path):
    root = broken_copy(tmp_path)
    edit(root / "items.json", lambda d: d[0].update(id="Iron Sword"))
    with pytest.raises(ContentError) as err:
        load_pack(root)
    assert "items.json: [0].id: 'Iron Sword' is not an id: an id is lowercase letters, digits and _" in str(err.value)
    assert "^[a-z]" not in str(err.value)


def test_unknown_reference_names_file_and_field(tmp_path):
    root = broken_copy(tmp_path)
    edit(root / "map.json", lambda d: d["nodes"][0]["exits"].update(east="nowhere"))
    with pytest.raises(ContentError, match=r"map.json: nodes\[camp\].exits.east: unknown node 'nowhere'"):
        load_pack(root)


def test_invalid_json_and_missing_file(tmp_path):
    root = broken_copy(tmp_path)
    (root / "items.json").write_text('[{"id": "x",]')
    with pytest.raises(ContentError, match=r"items.json: invalid JSON at line 1, column 13: Expecting"):
        load_pack(root)
    (root / "items.json").unlink()
    with pytest.raises(ContentError, match=r"items.json: file is missing"):
        load_pack(root)


def test_disconnected_map_is_reported_and_size_is_the_authors_choice(tmp_path):
    root = broken_copy(tmp_path)
    assert len(load_pack(root).nodes) == 4  # a 4-place story loads: size is the author's choice (issue 34)
    edit(root / "map.json", lambda d: d["nodes"][1]["exits"].pop("north"))
    with pytest.raises(ContentError) as err:
        load_pack(root)
    message = str(err.value)
    assert "not reachable from 'camp': tower" in message
    assert "found, at least" not in message


def test_cli_validate_exit_codes(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "game", "content", "validate"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "fantasy_001: OK" in ok.stdout and "scifi_001: OK" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "game", "content", "validate", "--story", "no_such_story"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1
    assert "no story 'no_such_story'; the stories there are: " + ", ".join(SHIPPED) in bad.stdout


@pytest.mark.parametrize(
    ("field", "value"), [("hp", 2_000_000_000), ("gold", 10**12), ("strength", 10**6), ("intelligence", 10**9)]
)
def test_a_player_start_the_state_cannot_hold_is_refused_by_the_content_check(tmp_path, field, value):
    """Was (issue 43): player HP and gold above the state's bounds passed ``content validate``, then ``check`` and
    ``run`` crashed. The story's player starts within the bounds the game's state holds, or the story is refused
    with the file and field named."""
    from game.checker.scaffold import new_story
    from game.world.state import new_game

    folder = new_story(tmp_path, "bounded")
    story = json.loads((folder / "story.json").read_text())
    story["player"][field] = value
    (folder / "story.json").write_text(json.dumps(story))
    with pytest.raises(ContentError, match=r"story\.json.*player.*" + field):
        load_pack(folder)
    story["player"][field] = 500  # within every bound: the story loads and a game starts
    (folder / "story.json").write_text(json.dumps(story))
    assert getattr(new_game(load_pack(folder)), field) == 500
