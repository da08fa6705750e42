"""`storyecho content replay`: an approved transcript is played again and the first difference shown (issue 34)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from game.checker.scaffold import new_story
from game.engine.replay import play as replay_play
from game.engine.replay import read_transcript, replay, write_transcript
from game.world.loader import load_pack

WALK = ["talk to the keeper", "go north", "go down", "take the lantern", "go up", "go north"]


def test_an_approved_transcript_replays_and_a_change_shows_its_first_difference(tmp_path):
    folder = new_story(tmp_path, "lamp")
    approved = replay_play(load_pack(folder), WALK)
    assert len(approved) == 6 and "The Beacon Burns" in "\n".join(approved[-1].told)
    transcript = read_transcript(write_transcript(approved))
    assert [s.action for s in transcript] == WALK and transcript[1].told == approved[1].told
    assert replay(load_pack(folder), transcript).ok
    game_map = json.loads((folder / "map.json").read_text())
    game_map["nodes"][1]["description"] = "A worn road between mossy walls. A stair goes down to a cellar."
    (folder / "map.json").write_text(json.dumps(game_map))
    found = replay(load_pack(folder), transcript)
    assert not found.ok and found.matched == 1 and found.total == 6
    assert found.difference[0] == "turn 2 differs: > go north"
    assert any(line.startswith("-") and "low stone walls" in line for line in found.difference)
    assert any(line.startswith("+") and "mossy walls" in line for line in found.difference)


def test_a_transcript_that_outlives_the_story_says_where_it_ended(tmp_path):
    folder = new_story(tmp_path, "lamp")
    approved = replay_play(load_pack(folder), WALK)
    longer = read_transcript(write_transcript(approved) + "\n> look\nYou look around.\n")
    found = replay(load_pack(folder), longer)
    assert not found.ok and found.difference[0] == "the story ended at turn 6; the transcript goes on to turn 7"


def test_the_cli_approves_then_replays_as_run_prints(tmp_path):
    stories = tmp_path / "stories"
    new_story(stories, "lamp")
    env = dict(os.environ, STORYECHO_STORIES_DIR=str(stories), STORYECHO_DATA_DIR=str(tmp_path / "data"))
    actions = tmp_path / "lamp.txt"
    actions.write_text("\n".join(WALK) + "\n")

    def storyecho(*args):
        return subprocess.run([sys.executable, "-m", "game", *args], capture_output=True, text=True, env=env)

    approved = storyecho("content", "replay", "lamp", str(actions), "--approve")
    assert approved.returncode == 0 and "approved 6 turns" in approved.stdout, approved.stderr
    (tmp_path / "run.txt").write_text("\n".join(WALK) + "\n")
    run = storyecho(
        "run", "--story", "lamp", "--llm", "scripted", "--no-embeddings", "--actions", str(tmp_path / "run.txt")
    )
    assert read_transcript(run.stdout) == read_transcript(actions.read_text())  # the format is run's output
    same = storyecho("content", "replay", "lamp", str(actions))
    assert same.returncode == 0 and "all 6 turns told as approved" in same.stdout
