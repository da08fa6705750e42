"""Cards speak in their voice (issue 44, item 4's rest): a card's ``mes_example`` is its person's voice in the
prompt when the player talks to them, its macros resolved and ``<START>`` separators taken out, bounded with a
record; its tags are the person's, its creator notes and other greetings are in the report.

Found on real cards: ``mes_example``, the card's voice, was dropped (listed as kept but unused). Each test fails
on the code before it.
"""

from __future__ import annotations

import json
from pathlib import Path

from game.checker.exports import card as card_out
from game.checker.imports import import_file
from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.world.content import VOICE_CHARS
from game.world.library import StoryLibrary
from game.world.loader import load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

EXAMPLES = (
    "<START>\n{{user}}: Any news of the Gull?\n{{char}}: Only the sea's, and the sea never tells.\n"
    "<START>\n<USER>: Is the lamp lit tonight?\n<BOT>: *trims the wick* Every night since Tomas. Every night, {{user}}."
)


def card(tmp_path: Path, mes_example: str = EXAMPLES) -> Path:
    """A small V2 card of the shapes real ones have."""
    path = tmp_path / "wren.json"
    data = {
        "name": "Wren Harrow",
        "description": "{{char}} is the keeper of the Saltmere lamp. She speaks little and dryly.",
        "personality": "Gruff, patient, dry.",
        "scenario": "{{char}} trims the lamp as the fog comes in.",
        "first_mes": 'Wren looks up from the lamp. "You came, {{user}}."',
        "mes_example": mes_example,
        "creator_notes": "Best with a slow mystery. Ask her about the lamp.",
        "tags": ["keeper", "coast"],
        "alternate_greetings": ['Wren is asleep by the lamp. "Who is there?"'],
    }
    path.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}), encoding="utf-8")
    return path


def test_talking_to_an_imported_person_puts_their_voice_in_the_prompt(tmp_path):
    stories = tmp_path / "s"
    report = import_file(card(tmp_path), StoryLibrary.of(stories), stories, "lamp", new=True)
    person = next(n for n in json.loads((stories / "lamp" / "npcs.json").read_text()) if n["name"] == "Wren Harrow")
    assert person["voice"] == [
        "Traveller: Any news of the Gull?\nWren Harrow: Only the sea's, and the sea never tells.",
        "Traveller: Is the lamp lit tonight?\nWren Harrow: *trims the wick* Every night since Tomas. Every night, "
        "Traveller.",
    ]
    assert person["tags"] == ["keeper", "coast"]
    assert any("creator notes: Best with a slow mystery" in note for note in report.notes)
    assert any(note.startswith("--greeting 1 opens with: 'Wren is asleep") for note in report.notes)
    assert not any("mes_example" in line or "tags" in line for line in report.unused)
    pack = load_pack(stories / "lamp")
    memory = keyword_memory(pack)
    engine = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), memory)
    try:
        talk, look, ask = engine.play("talk to wren"), engine.play("look"), engine.play("ask wren about the lamp")
    finally:
        memory.close()
    for result in (talk, ask):
        user = result.trace.prompt.user
        assert "## How Wren Harrow speaks" in user and "Wren Harrow: Only the sea's, and the sea never tells." in user
        assert not any(raw in user for raw in ("{{char}}", "{{user}}", "<START>", "<BOT>", "<USER>"))
        assert "voice" in [block.name for block in result.trace.prompt.blocks]
    assert "How Wren Harrow speaks" not in look.trace.prompt.user  # only when the player talks to her
    wren = next(n for n in pack.npcs if pack.npcs[n].name == "Wren Harrow")
    exported = card_out(pack, wren)["data"]["mes_example"]  # and back out as a card's examples (item 7)
    assert exported.startswith("<START>\n{{user}}: Any news of the Gull?\n{{char}}: Only the sea's")
    assert exported.count("<START>") == 2 and "Every night, Traveller." in exported


def test_a_long_example_dialogue_is_bounded_and_the_report_says_what_was_left_out(tmp_path):
    long = "".join(
        f"<START>\n{{{{user}}}}: Question {n}?\n{{{{char}}}}: {'The fog comes and goes. ' * 8}\n" for n in range(6)
    )
    stories = tmp_path / "s"
    report = import_file(card(tmp_path, long), StoryLibrary.of(stories), stories, "lamp", new=True)
    person = next(n for n in json.loads((stories / "lamp" / "npcs.json").read_text()) if n["name"] == "Wren Harrow")
    assert 1 <= len(person["voice"]) < 6 and sum(len(v) for v in person["voice"]) <= VOICE_CHARS
    left_out = [line for line in report.skipped if line.startswith("data.mes_example exchange")]
    assert len(left_out) == 6 - len(person["voice"]) and f"the {VOICE_CHARS} a voice may hold" in left_out[0]
