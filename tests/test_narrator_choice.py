"""Choosing a narrator: ``--llm auto`` (the default) says which one plays and why; one that cannot start gives way.

The OpenAI-compatible endpoint here is the fault-injecting fake server of
``tests/fake_openai_server.py`` (it must answer 429s and echo keys on demand);
the real llama.cpp server plays in ``tests/test_llamacpp_server.py``.
"""

from __future__ import annotations

import json

import orjson

from game.cli import main
from tests.fake_openai_server import FakeOpenAIServer, ok, status

PLANTED = "sk-test-PLANTED-4f1c9e"


def turn(narration: str, **effects) -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects, "memory_notes": []})


def test_auto_without_an_endpoint_or_a_model_plays_scripted_and_says_why(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("STORYECHO_LLM", raising=False)  # the default: auto
    monkeypatch.setattr("game.wiring._available", lambda name, settings: name == "scripted")
    actions = tmp_path / "a.txt"
    actions.write_text("look\n")
    code = main(
        ["run", "--story", "fantasy_001", "--no-embeddings", "--actions", str(actions), "--data-dir", str(tmp_path)]
    )
    assert code == 0
    assert "Narrator: scripted (auto: no endpoint or local model configured)" in capsys.readouterr().err


def test_a_narrator_that_cannot_start_gives_way_with_a_visible_message(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    actions = tmp_path / "a.txt"
    actions.write_text("look\n")
    argv = ["run", "--story", "fantasy_001", "--no-embeddings", "--llm", "openai", "--actions", str(actions)]
    assert main([*argv, "--data-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "openai could not start" in err and "OPENAI_API_KEY" in err and "Narrator: " in err


def test_auto_picks_a_configured_endpoint_and_the_trace_has_its_usage(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.delenv("STORYECHO_LLM", raising=False)
    with FakeOpenAIServer() as server:
        server.script(ok(turn("You walk east to the lodge.", move_to="hunter_cabin"), usage=(900, 50, 512)))
        actions = tmp_path / "a.txt"
        actions.write_text("go east\n")
        argv = ["run", "--story", "fantasy_001", "--no-embeddings", "--json", "--actions", str(actions)]
        code = main(
            [*argv, "--preset", "openai", "--base-url", server.url, "--model", "fake", "--data-dir", str(tmp_path)]
        )
        assert code == 0
        out, err = capsys.readouterr()
        assert "Narrator: openai (openai, fake) (auto: an OpenAI-compatible endpoint is configured)" in err
        line = orjson.loads(out.splitlines()[-1])
        assert line["state"]["node"] == "hunter_cabin" and line["narration"].startswith("You walk east")
        assert line["prompt"]["tokens"] == 900 and line["prompt"]["token_source"] == "model"
        assert line["usage"][0]["cached_tokens"] == 512
        assert server.chat_requests()[0].headers["authorization"] == f"Bearer {PLANTED}"


def test_a_planted_key_appears_in_no_save_log_or_json_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.delenv("STORYECHO_LLM", raising=False)
    with FakeOpenAIServer() as server:
        server.script(
            ok(turn("You look around the trailhead.")),
            status(401, echo_key=True),  # a server that quotes the key back in its error
            status(500, echo_key=True),
            status(500, echo_key=True),
            status(500, echo_key=True),
            ok(turn("You walk east.", move_to="hunter_cabin")),
        )
        actions = tmp_path / "a.txt"
        actions.write_text("look\nlook again\nlook once more\ngo east\nsave keyed\n")
        argv = ["-v", "run", "--story", "fantasy_001", "--no-embeddings", "--json", "--slot", "keyed"]
        argv += ["--actions", str(actions), "--preset", "openai", "--base-url", server.url, "--model", "fake"]
        assert main([*argv, "--data-dir", str(tmp_path)]) == 0
        out, err = capsys.readouterr()
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert any(not line["ok"] for line in lines) and lines[-2]["state"]["node"] == "hunter_cabin"
    assert any("401" in (line["error"] or "") or "rejected" in (line["error"] or "").lower() for line in lines)
    saved = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert saved and (tmp_path / "keyed.json").is_file()
    for where, text in (("stdout", out), ("stderr and logs", err), ("saves", saved.decode("utf-8", "replace"))):
        assert PLANTED not in text, where
        assert PLANTED[-10:] not in text, where


def test_auto_never_picks_the_bundled_small_model_but_takes_a_configured_one(monkeypatch, tmp_path):
    """bench/narrators.py: the bundled models play worse than (full) or no better than (prose) scripted."""
    from game.config import load_settings
    from game.llm.local_model import find_bundled_model
    from game.wiring import local_available, make_narrator
    from game.world.loader import content_root, load_pack

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("STORYECHO_LLM", raising=False)
    pack = load_pack(content_root() / "fantasy_001")
    settings = load_settings()
    assert settings.llm == "auto" and local_available(settings)  # the test install has llama.cpp and SmolLM2
    narrator, said = make_narrator(settings, pack)
    assert narrator.name == "scripted" and "no endpoint or local model configured" in said
    monkeypatch.setenv("STORYECHO_LOCAL__MODEL_PATH", str(find_bundled_model("smollm2")))
    narrator, said = make_narrator(load_settings(), pack)
    assert "Narrator: local (SmolLM2-135M-Instruct.Q4_1.gguf, prose mode)" in said
    assert "(auto: a local model file is configured and llama.cpp is installed)" in said


def test_run_with_the_local_narrator_plays_an_action_list_to_its_end(tmp_path, capsys):
    """``storyecho run --llm local``: the bundled SmolLM2 through llama.cpp (prose mode, its default), valid turns."""
    # every one costs a turn (the longbow over the hearth cannot be taken: a refusal is free, issue 35)
    actions = ["look", "go east", "talk to garrick", "ask garrick about hal", "take the tonic", "go west", "go north"]
    path = tmp_path / "a.txt"
    path.write_text("\n".join(actions) + "\n")
    argv = ["run", "--story", "fantasy_001", "--no-embeddings", "--json", "--llm", "local", "--actions", str(path)]
    assert main([*argv, "--data-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "Narrator: local (smollm2, prose mode) (--llm local)" in err
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert [line["action"] for line in lines] == actions  # to the end of the list
    assert all(line["ok"] and line["narration"].strip() for line in lines)
    assert [line["turn"] for line in lines] == list(range(1, len(actions) + 1))
    assert lines[1]["state"]["node"] != lines[0]["state"]["node"]  # "go east" moved the player
    calls = [call for line in lines for call in line["usage"] if not call["note"].startswith("skipped")]
    assert calls and all(call["prompt_tokens"] > 0 for call in calls)  # the model ran, and counted its tokens
