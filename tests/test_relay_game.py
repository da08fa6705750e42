"""Issue 42: a game of Misty Forest played by a model through the relay, kept in the repo and played again.

A person playing a careful model answered every request of a 45-turn game by hand, reading only the requests
(``tests/data/relay/misty_forest``: the answers, the requests gzipped, and the notes the model kept on what the
prompts lacked). Here ``storyecho run`` plays the same actions against an endpoint that gives the recorded
answers back (``tests.relay_recording``: a fake on purpose, since no model here can answer as that one did),
and the game it makes is checked: no plain act refused, no update refused for an id the prompt did not give, no
telling shown that the rules contradict, every question about the past answered from what the prompt held, and
the same game, turn by turn, as the built-in narrator makes of the same actions.

Re-record when the answer format changes (the answers then no longer fit): run the relay as the module docstring
of ``tests/relay_recording.py`` says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai_server import FakeOpenAIServer
from tests.relay_recording import Recording, requests

RECORDED = Path(__file__).parent / "data" / "relay" / "misty_forest"
ACTIONS = RECORDED / "actions.txt"
QUESTIONS = {  # the questions about the past, and words of the answer the prompt must have held
    "what did garrick tell me about hal?": ("white stag", "Shadow Swamp"),
    "what did elvin say about peace?": ("Moonmirror Spring", "charmed thieves"),
}
SAME = ("node", "hp", "max_hp", "gold", "level", "exp", "strength", "agility", "intelligence", "inventory", "quests")
SAME += ("combat", "affinity", "talents", "achievements", "ending")


def play(data: Path, *llm: str) -> list[dict]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    command = [sys.executable, "-m", "game", "run", "--story", "fantasy_001", "--actions", str(ACTIONS)]
    command += ["--json", "--no-embeddings", "--data-dir", str(data), "--seed", "7", *llm]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> tuple[list[dict], list[dict], Recording]:
    recording = Recording.load(RECORDED)
    with FakeOpenAIServer() as server:
        server.responder = recording.respond
        model = play(tmp_path_factory.mktemp("model"), "--llm", "openai", "--base-url", server.url, "--model", "relay")
    built_in = play(tmp_path_factory.mktemp("built_in"))
    return model, built_in, recording


def test_the_recording_is_a_game_of_forty_turns_or_more_with_its_memory_calls():
    kinds = [json.loads(line)["kind"] for line in (RECORDED / "answers.jsonl").read_text().splitlines()]
    actions = [line for line in ACTIONS.read_text().splitlines() if line.strip()]
    assert len(actions) >= 40 and kinds.count("turn") >= len(actions)
    assert kinds.count("summary") >= 5 and kinds.count("facts") >= 5  # summaries, synopses, Story Bible
    sent = requests(RECORDED)
    assert len(sent) == len(kinds) and all(r["messages"][0]["role"] == "system" for r in sent)


def test_every_turn_the_model_played_is_carried_out_as_told(games):
    model, _, recording = games
    assert len(model) == len(ACTIONS.read_text().split("\n")) - 1
    assert not recording.missing, f"the engine asked what the model was never asked: {recording.missing}"
    assert all(turns == len(model) for _, turns in recording.beyond), recording.beyond  # only after the last turn
    refused = [(t["action"], t["rejected"]) for t in model if t["rejected"] or t["asked_again"]["first_rejected"]]
    assert all(t["ok"] for t in model) and not refused  # no plain act refused, no update for an unknown id
    unfounded = [(t["action"], t["asked_again"]["unfounded"]) for t in model if t["asked_again"]["unfounded"]]
    replaced = [t["action"] for t in model if t["asked_again"]["narration_replaced"] or t["asked_again"]["asked"]]
    assert not unfounded and not replaced  # no telling contradicted by the rules, none sent back
    said = [t["narration"] for t in model]
    assert all(a.split("\n", 1)[0] in b for a, b in zip(recorded_narrations(recording), said, strict=False))


def recorded_narrations(recording: Recording) -> list[str]:
    """The narration of each turn's recorded answer, in the order of the actions."""
    out = []
    seen: dict[str, int] = {}
    for action in (line for line in ACTIONS.read_text().splitlines() if line.strip()):
        n = seen.get(action, 0)
        seen[action] = n + 1
        out.append(json.loads(recording.answers[("turn", action)][n])["narration"])
    return out


def test_every_question_about_the_past_is_answered_from_what_the_prompt_held(games):
    model, _, _ = games
    asked = [t for t in model if t["action"] in QUESTIONS]
    assert len(asked) == 3
    for turn in asked:
        prompt = turn["prompt"]["user"]
        for words in QUESTIONS[turn["action"]]:
            assert words in prompt, (turn["action"], words)
            assert words in turn["narration"]
        assert not turn["applied"]  # a recollection changes nothing


def test_the_model_and_the_built_in_narrator_make_the_same_game_of_the_same_actions(games):
    model, built_in, _ = games
    assert [t["action"] for t in model] == [t["action"] for t in built_in]
    for told, scripted in zip(model, built_in, strict=True):
        ours = {k: told["state"][k] for k in SAME}
        theirs = {k: scripted["state"][k] for k in SAME}
        assert ours == theirs, (told["turn"], told["action"])
    assert model[-1]["state"]["quests"] == built_in[-1]["state"]["quests"]
