"""What a player, a model or a file wrote is shown with its control characters made visible (issue 22, item 4):
in `slots list`, `slots show`, the slot screen (F3) and headless play, never obeyed by the terminal."""

from __future__ import annotations

import io
import json

from game.cli import _print_turn, main
from game.engine.pipeline import TurnPipeline, TurnResult
from game.llm.scripted import ScriptedNarrator
from game.saves.format import encode
from game.saves.slots import SlotStore
from game.tui.slots import slot_cells
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

FANTASY = load_pack(content_root() / "fantasy_001")
TITLE = "\x1b]2;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
HIDDEN = "\x1b[8m"  # hides what follows
OSC52 = "\x1b]52;c;SGVsbG8=\x07"  # writes the clipboard


def hostile_slot(root) -> SlotStore:
    engine = TurnPipeline(FANTASY, new_game(FANTASY, seed=1), ScriptedNarrator(FANTASY), keyword_memory(FANTASY))
    engine.play("look")
    doc = json.loads(encode(FANTASY, engine.state, engine.memory.export_state()))
    doc["story_title"] = f"{TITLE}Misty{CLEAR}"
    doc["place"] = f"{HIDDEN}Trailhead"
    store = SlotStore(root)
    store.write(f"x{len(root.parts)}", json.dumps(doc).encode())
    return store


def test_slots_list_and_show_make_control_characters_visible(tmp_path, capsys):
    """Was: a save whose title or place held ESC]2;, ESC[2J or ESC[8m printed them raw."""
    store = hostile_slot(tmp_path)
    name = store.list()[0].name
    assert main(["slots", "list", "--data-dir", str(tmp_path)]) == 0
    assert main(["slots", "show", name, "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]2;pwned\\x07Misty\\x1b[2J" in out and "\\x1b[8mTrailhead" in out


def test_the_slot_screen_shows_control_characters_as_text(tmp_path):
    """Was: the F3 screen printed them raw."""
    info = hostile_slot(tmp_path).list()[0]
    cells = "".join(cell.plain for cell in slot_cells(info))
    assert "\x1b" not in cells and "\\x1b]2;pwned" in cells


def test_headless_play_never_sends_a_models_escape_sequences_to_the_terminal():
    """Was: headless play printed a model's narration raw, OSC 52 (write the clipboard) included."""
    result = TurnResult(turn=1, action=f"look{CLEAR}", narration=f"The fog thins.{OSC52}", choices=[f"go{HIDDEN}"],
                        state=new_game(FANTASY))  # fmt: skip
    out = io.StringIO()
    _print_turn(result, out)
    text = out.getvalue()
    assert "\x1b" not in text and "\\x1b]52;c;SGVsbG8=\\x07" in text and "The fog thins." in text
