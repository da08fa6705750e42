"""The player's own stories (issue 34): a stories folder beside the shipped ones, ``content new``, and a story's
size being its author's choice. The CLI runs as a player runs it, in a subprocess, with ``STORYECHO_STORIES_DIR``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from game.checker.analysis import check_pack
from game.checker.scaffold import ScaffoldError, new_story, pack_files
from game.config import load_settings
from game.world.content import ContentError
from game.world.library import StoryLibrary
from game.world.loader import content_root, load_pack
from tests.conftest import SHIPPED

WALK = ["talk to the keeper", "go north", "go down", "take the lantern", "go up", "go north"]


def storyecho(stories: Path, data: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, STORYECHO_STORIES_DIR=str(stories), STORYECHO_DATA_DIR=str(data), HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "game", *args], capture_output=True, text=True, env=env, input=stdin, timeout=120
    )


def play(stories: Path, data: Path, story: str, actions: list[str]) -> subprocess.CompletedProcess[str]:
    walk = data.parent / "actions.txt"
    walk.write_text("\n".join(actions) + "\n")
    return storyecho(
        stories, data, "run", "--story", story, "--llm", "scripted", "--no-embeddings", "--actions", str(walk)
    )


def test_content_new_checks_clean_and_plays_to_its_ending(tmp_path):
    stories, data = tmp_path / "stories", tmp_path / "data"
    made = storyecho(stories, data, "content", "new", "lighthouse", "--title", "The Lighthouse", "--genre", "gothic")
    assert made.returncode == 0, made.stderr
    assert (stories / "lighthouse" / "README.md").is_file() and "knowledge.json" in (
        stories / "lighthouse" / "README.md"
    ).read_text()
    checked = storyecho(stories, data, "content", "check", "--story", "lighthouse")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "The Lighthouse (lighthouse): no defects found" in checked.stdout
    validated = storyecho(stories, data, "content", "validate")
    assert validated.returncode == 0 and "lighthouse: OK" in validated.stdout and "fantasy_001: OK" in validated.stdout
    played = play(stories, data, "lighthouse", WALK)
    assert played.returncode == 0, played.stderr
    assert "*** The Beacon Burns ***" in played.stdout


def test_a_three_place_story_validates_and_plays(tmp_path):
    stories, data = tmp_path / "stories", tmp_path / "data"
    folder = new_story(stories, "tiny")
    game_map = json.loads((folder / "map.json").read_text())
    cellar = next(n for n in game_map["nodes"] if n["id"] == "cellar")
    game_map["nodes"].remove(cellar)
    road = next(n for n in game_map["nodes"] if n["id"] == "road")
    road["exits"].pop("down")
    road["items"] = ["lantern"]
    road["description"] = "A worn road between low stone walls; something glints in the grass."
    (folder / "map.json").write_text(json.dumps(game_map))
    pack = load_pack(folder)
    assert len(pack.nodes) == 3 and len(pack.endings) == 1 and not pack.enemies
    assert check_pack(pack).defects == 0
    played = play(stories, data, "tiny", ["go north", "take the lantern", "go north"])
    assert played.returncode == 0, played.stderr
    assert "*** The Beacon Burns ***" in played.stdout


def test_a_user_story_with_a_shipped_id_is_refused_clearly(tmp_path):
    stories, data = tmp_path / "stories", tmp_path / "data"
    (stories / "fantasy_001").mkdir(parents=True)
    for name, text in pack_files("fantasy_001", "Impostor", "farce").items():
        (stories / "fantasy_001" / name).write_text(text)
    library = StoryLibrary.of(stories)
    assert library.ids().count("fantasy_001") == 1 and library.path("fantasy_001") == content_root() / "fantasy_001"
    assert library.refused and "shipped with the game" in library.refused[0]
    validated = storyecho(stories, data, "content", "validate")
    assert "a story shipped with the game has the id 'fantasy_001'" in validated.stderr
    made = storyecho(stories, data, "content", "new", "scifi_001")
    assert made.returncode == 1 and "shipped with the game" in made.stderr


def test_an_unknown_story_names_the_stories_there_are(tmp_path):
    stories, data = tmp_path / "stories", tmp_path / "data"
    new_story(stories, "lighthouse")
    with pytest.raises(ContentError, match="no story 'nowhere'.*" + ", ".join([*SHIPPED, "lighthouse"])):
        StoryLibrary.of(stories).path("nowhere")
    played = play(stories, data, "nowhere", ["look"])
    assert played.returncode != 0 and "no story 'nowhere'" in played.stderr


def test_the_stories_folder_defaults_beside_the_saves_and_may_be_missing(tmp_path):
    settings = load_settings(data_dir=tmp_path / "saves")
    assert settings.stories_folder == tmp_path / "saves" / "stories"
    assert settings.library().ids() == StoryLibrary(content_root()).ids()  # no folder yet: the shipped ones
    assert load_settings(data_dir=tmp_path, stories_dir=tmp_path / "mine").stories_folder == tmp_path / "mine"


def test_content_new_never_overwrites_and_explains_the_id_rule(tmp_path):
    folder = new_story(tmp_path, "lighthouse")
    (folder / "story.json").write_text("my edits")
    with pytest.raises(ScaffoldError, match="already exists; nothing was written"):
        new_story(tmp_path, "lighthouse")
    assert (folder / "story.json").read_text() == "my edits"
    with pytest.raises(ScaffoldError, match="lowercase letters, digits and _, starting with a letter"):
        new_story(tmp_path, "Light-House")
    assert not (tmp_path / "Light-House").exists()
