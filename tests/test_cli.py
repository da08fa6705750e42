"""The headless CLI and its --json contract."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from game import __version__
from game.cli import main, read_actions
from game.text import DEFAULT_PROMPT_BUDGET
from tests.conftest import SHIPPED


def run_cli(*args: str, stdin: str = "", data_dir=None) -> subprocess.CompletedProcess[str]:
    extra = ["--data-dir", str(data_dir)] if data_dir is not None else []
    return subprocess.run(
        [sys.executable, "-m", "game", *args, *extra], input=stdin, capture_output=True, text=True, timeout=300
    )


def test_version():
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"storyecho {__version__}"


def test_read_actions_skips_blanks_and_comments():
    assert list(read_actions(["# intro", "", "  go north  ", "#look", "look\n"])) == ["go north", "look"]


def test_json_contract_from_stdin(tmp_path):
    out = run_cli(
        "run",
        "--story",
        "fantasy_001",
        "--llm",
        "scripted",
        "--json",
        "--actions",
        "-",
        stdin="# c\nlook\n\nnorth\ninventory\n",
        data_dir=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["action"] for line in lines] == ["look", "north", "inventory"]
    first = lines[0]
    for key in (
        "turn",
        "action",
        "narration",
        "choices",
        "state",
        "applied",
        "rejected",
        "prompt",
        "memory_blocks",
        "retrieval_meta",
        "timings_ms",
    ):
        assert key in first, key
    for key in ("node", "hp", "max_hp", "gold", "inventory", "quests", "affinity", "ending"):
        assert key in first["state"], key
    assert set(first["prompt"]) >= {"system", "user", "tokens", "budget_tokens", "cut"}
    assert first["dropped_notes"] == [] and first["prompt"]["budget_tokens"] == DEFAULT_PROMPT_BUDGET
    assert {"strategy", "fallback", "summaries", "pending_vectors", "vector_lag_turns", "wait_ms"} <= set(
        first["retrieval_meta"]
    )
    assert first["prompt"]["tokens"] > 0 and "## Player action" in first["prompt"]["user"]
    assert 2 <= len(first["choices"]) <= 4
    assert {"recall", "compose", "narrate", "adjudicate", "record"} <= set(first["timings_ms"])
    assert lines[1]["turn"] == 2 and lines[1]["applied"][0]["effect"] == "move_to"
    assert lines[2]["turn"] == 2  # meta commands take no turn
    for block in lines[1]["memory_blocks"]:
        assert {"name", "layer", "tokens", "items"} <= set(block)
        for item in block["items"]:
            assert {"text", "score", "source"} <= set(item)
    assert lines[1]["retrieval_meta"]["strategy"] == "hybrid:chroma"
    assert (tmp_path / ".index").is_dir()


def test_rejected_effects_are_reported_in_json(tmp_path):
    out = run_cli(
        "run",
        "--story",
        "fantasy_001",
        "--json",
        "--no-embeddings",
        "--actions",
        "-",
        stdin="go to the shadow throne\n",
    )
    line = json.loads(out.stdout.splitlines()[-1])
    assert line["rejected"][0]["effect"] == "move_to"
    assert "not reachable" in line["rejected"][0]["reason"]
    assert line["state"]["node"] == "forest_edge"


def test_seed_changes_nothing_but_dice(tmp_path):
    """Same seed, same game; another seed changes the rolls of a fight and nothing before it."""
    actions = tmp_path / "a.txt"
    actions.write_text("look\ngo north\ngo south\ngo west\n" + "attack\n" * 5)
    runs = {
        seed: run_cli(
            "run", "--story", "fantasy_001", "--json", "--no-embeddings", "--seed", str(seed), "--actions", str(actions)
        )
        for seed in (5, 5, 6)
    }

    def strip(out):
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        for line in lines:
            # the game, not what memory recalled: turns 6-9 may or may not see the turn-5 summary yet,
            # depending on how fast the background consolidation runs on a busy machine
            for key in ("timings_ms", "retrieval_meta", "memory_blocks", "prompt"):
                line.pop(key)
        return lines

    five = strip(runs[5])
    assert five == strip(
        run_cli("run", "--story", "fantasy_001", "--json", "--no-embeddings", "--seed", "5", "--actions", str(actions))
    )
    six = strip(runs[6])
    fight = next(n for n, line in enumerate(five) if any(a["effect"] == "combat_action" for a in line["applied"]))
    assert five[:fight] == six[:fight]  # nothing before the first roll depends on the seed
    assert [line["narration"] for line in five[fight:]] != [line["narration"] for line in six[fight:]]
    assert all(
        line["state"]["node"] == other["state"]["node"] for line, other in zip(five[:fight], six[:fight], strict=True)
    )


def test_bad_config_value_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setenv("STORYECHO_MEMORY__WINDOW_MESSAGES", "4")
    monkeypatch.setenv("STORYECHO_MEMORY__SUMMARY_INTERVAL_TURNS", "5")
    assert main(["run", "--story", "fantasy_001", "--actions", "-"]) == 2
    err = capsys.readouterr().err
    assert "summary_interval_turns (5) exceeds" in err
    monkeypatch.setenv("STORYECHO_MEMORY__WINDOW_MESSAGES", "many")
    assert main(["run", "--story", "fantasy_001", "--actions", "-"]) == 2
    assert "window_messages" in capsys.readouterr().err


def test_unknown_story_is_a_clear_error(capsys):
    assert main(["run", "--story", "nope", "--actions", "-"]) == 2
    assert "no story 'nope'; the stories there are: " + ", ".join(SHIPPED) in capsys.readouterr().err


def test_missing_actions_file_is_a_clear_error(capsys, tmp_path):
    assert main(["run", "--story", "fantasy_001", "--actions", str(tmp_path / "none.txt")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_settings_file_env_and_flags_in_order(tmp_path, monkeypatch):
    from game.config import load_settings

    config = tmp_path / "storyecho.toml"
    config.write_text('seed = 3\n[memory]\nrecency_half_life_turns = 80\nchroma_url = "http://127.0.0.1:8000"\n')
    settings = load_settings(config)
    assert settings.seed == 3 and settings.memory.recency_half_life_turns == 80
    assert settings.memory.chroma_url == "http://127.0.0.1:8000" and settings.memory.window_messages == 10
    monkeypatch.setenv("STORYECHO_SEED", "4")
    monkeypatch.setenv("STORYECHO_MEMORY__RECENCY_HALF_LIFE_TURNS", "90")
    settings = load_settings(config)
    assert settings.seed == 4 and settings.memory.recency_half_life_turns == 90  # env beats the file
    settings = load_settings(config, seed=5, memory={"embeddings": False})
    assert settings.seed == 5 and settings.memory.embeddings is False  # flags beat both
    assert settings.memory.chroma_url == "http://127.0.0.1:8000"  # and the rest of [memory] stays


def test_a_section_from_the_environment_as_json_and_names_in_any_case(tmp_path, monkeypatch):
    from game.config import ConfigError, load_settings

    monkeypatch.setenv("STORYECHO_MEMORY", '{"embeddings": false, "window_messages": 12}')
    monkeypatch.setenv("storyecho_memory__recency_half_life_turns", "70")
    settings = load_settings(None, data_dir=tmp_path)
    assert settings.memory.embeddings is False and settings.memory.window_messages == 12
    assert settings.memory.recency_half_life_turns == 70
    monkeypatch.setenv("STORYECHO_MEMORY", "embeddings=false")
    with pytest.raises(ConfigError, match="STORYECHO_MEMORY: memory is a section"):
        load_settings(None, data_dir=tmp_path)


def test_bad_settings_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[memory]\nvector_store = 'postgres'\n")
    assert main(["run", "--story", "fantasy_001", "--config", str(bad), "--actions", "-"]) == 2
    err = capsys.readouterr().err
    assert "memory.vector_store" in err and str(bad) in err
    bad.write_text("seed = = 3")
    assert main(["run", "--story", "fantasy_001", "--config", str(bad), "--actions", "-"]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["run", "--story", "fantasy_001", "--config", str(tmp_path / "none.toml"), "--actions", "-"]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_play_autosaves_per_story_and_offers_to_continue(tmp_path):
    first = run_cli(
        "play", "--story", "fantasy_001", "--no-embeddings", stdin="go east\ntalk to garrick\nquit\n", data_dir=tmp_path
    )
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "autosave-fantasy_001.json").is_file()  # saved on quit, in the story's own autosave slot
    other = run_cli("play", "--story", "scifi_001", "--no-embeddings", stdin="look\nquit\n", data_dir=tmp_path)
    assert other.returncode == 0 and (tmp_path / "autosave-scifi_001.json").is_file()
    again = run_cli("play", "--story", "fantasy_001", "--no-embeddings", stdin="status\nquit\n", data_dir=tmp_path)
    assert "Continuing from turn 2." in again.stdout  # a script (no terminal) continues without asking
    assert "turn 2." in again.stdout.split("Continuing", 1)[1]
