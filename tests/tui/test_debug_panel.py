"""The memory debug panel (F12): what a turn injected and why, step through turns, review the Story Bible.

A real session (fantasy_001, scripted narrator, keyword memory) is played,
then a small harness app pushes :class:`DebugScreen` and a Pilot drives it
with the keyboard, at 120x40 and at 80x24.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App

from game.engine.pipeline import TurnPipeline, TurnResult
from game.engine.prompt import SYSTEM_BLOCKS
from game.engine.session import GameSession
from game.llm.base import PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.saves.slots import SlotStore
from game.text import MESSAGE_TOKENS, REPLY_TOKENS
from game.tui.debug import BibleView, DebugScreen
from game.tui.debug_data import DebugData, block_tokens, shares, tokens_by_turn
from game.tui.debug_render import render_blocks, session_chart, share_bars
from game.tui.text import safe
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

ACTIONS = ["look", "go east", "talk to garrick", "ask garrick about hal"]
EVIL = "[@click=app.quit]Quit[/] and [bold]x[/bold] then \x1b[31mred"


@pytest.fixture(scope="module")
def pack() -> ContentPack:
    return load_pack(content_root() / "fantasy_001")


def make_session(pack: ContentPack, tmp_path: Path, narrator: Any = None, **engine: Any) -> GameSession:
    memory = keyword_memory(pack)
    pipeline = TurnPipeline(pack, new_game(pack, seed=1), narrator or ScriptedNarrator(pack), memory, **engine)
    return GameSession(pipeline, SlotStore(tmp_path / "saves"))


class Played:
    """A session and the results of the turns played in it (``GameSession.history`` when the session has it)."""

    def __init__(self, session: GameSession, actions: list[str]) -> None:
        self.session = session
        self.results: list[TurnResult] = [session.play(action) for action in actions]

    def play(self, action: str) -> TurnResult:
        result = self.session.play(action)
        self.results.append(result)
        return result


@pytest.fixture
def played(pack: ContentPack, tmp_path: Path) -> Played:
    return Played(make_session(pack, tmp_path), ACTIONS)


class Harness(App[None]):
    """Pushes the debug panel over an empty screen and records every notification."""

    def __init__(self, played: Played) -> None:
        super().__init__()
        self.played = played
        self.notes: list[tuple[str, str]] = []

    def on_mount(self) -> None:
        self.push_screen(DebugScreen(self.played.session))

    def notify(self, message: str, *, title: str = "", severity: Any = "information", **kw: Any) -> None:
        self.notes.append((message, severity))
        super().notify(message, title=title, severity=severity, **kw)


def title(app: App[Any]) -> str:
    return str(app.screen.query_one("#debug-title").content)


def entries(memory: Any) -> list[Any]:
    return memory.bible_entries()


# ------------------------------------------------------------------ the rows
def test_debug_data_reads_blocks_items_and_token_shares(played: Played) -> None:
    result = played.results[-1]
    data = DebugData.from_result(result)
    assert data.turn == 4 and data.action == "ask garrick about hal" and data.has_prompt
    memory = result.trace.memory
    assert memory is not None
    names = [b.name for b in data.blocks]
    # the recalled blocks in prompt order, then the L1 window
    assert names[: len(memory.blocks)] == [b.name for b in memory.blocks]
    assert "bible_core" in names and names[len(memory.blocks)] == "window"
    core = data.block("bible_core")
    assert core is not None
    source = memory.block("bible_core")
    assert source is not None
    assert [(i.text, i.source, i.score) for i in core.items] == [(i.text, i.source, i.score) for i in source.items]
    assert core.items[0].parts == source.items[0].parts and core.items[0].parts, "why a character is in"
    assert core.items[0].score_text() == f"{source.items[0].score:.3f} = " + " + ".join(
        f"{name} {value:.3f}" for name, value in source.items[0].parts.items()
    )
    knowledge = data.block("knowledge")
    assert knowledge is not None and "semantic" in knowledge.items[0].score_text()
    # the window holds the three turns before this one, unscored
    window = data.block("window")
    assert window is not None and [i.text for i in window.items if i.source == "user"] == ACTIONS[:3]
    assert not window.items[0].scored and window.items[0].score_text() == ""
    # shares: one row per prompt part, the user-prompt blocks as composed, summing to the whole
    prompt = result.trace.prompt
    assert prompt is not None
    share_names = [s.name for s in data.shares]
    # the system prompt's blocks, then the window sent after it, then the user prompt's blocks
    system = [b.name for b in prompt.blocks if b.name in SYSTEM_BLOCKS]
    assert system[:2] == ["persona", "json_instruction"] and "bible_core" not in system  # the user prompt's
    assert share_names == [*system, "window", *[b.name for b in prompt.blocks if b.name not in system]]
    by_name = {s.name: s for s in data.shares}
    assert by_name["bible_core"].tokens == next(b.tokens for b in prompt.blocks if b.name == "bible_core")
    assert sum(s.share for s in data.shares) == pytest.approx(1.0)
    assert by_name["node_info"].share == pytest.approx(by_name["node_info"].tokens / data.estimated_tokens)
    # the estimate of the parts is the prompt's own size but for what joins them: the blank lines between blocks
    # and each chat message's markup, which the prompt's size counts (game.text.estimate_messages)
    markup = REPLY_TOKENS + MESSAGE_TOKENS * len(prompt.messages) + 2 * len(prompt.blocks)
    assert data.estimated_tokens <= prompt.tokens <= data.estimated_tokens + markup
    assert block_tokens(result) == {s.name: s.tokens for s in data.shares}
    # the chart's rows: the session's per-block counts, with the system prompt and the window added
    series = tokens_by_turn(played.session, played.results)
    assert series == [(r.turn, block_tokens(r)) for r in played.results]
    last = list(series[-1][1])
    assert last[:2] == ["persona", "json_instruction"] and last[-2:] == ["player_action", "answer_reminder"]
    assert last.index("window") == last.index("current_context") - 1  # between the system and the user prompt


def test_cut_items_say_why_they_were_cut(pack: ContentPack, tmp_path: Path) -> None:
    played = Played(make_session(pack, tmp_path, prompt_budget_tokens=1500), ACTIONS)
    result = played.results[-1]
    prompt = result.trace.prompt
    assert prompt is not None and prompt.cut, "a tight budget cuts memory"
    data = DebugData.from_result(result)
    cut = [(b.name, i.source, i.cut_by) for b in data.blocks for i in b.cut]
    assert sorted(cut) == sorted((c.block, c.source, c.reason) for c in prompt.cut)
    assert all(why.startswith("prompt budget: worth ") for _, _, why in cut)  # what it was worth, for how much
    assert data.prompt_cut == [(c.block, c.source, c.text, c.tokens, c.reason) for c in prompt.cut]
    assert f"✂ cut: {prompt.cut[0].reason}" in render_blocks(data).plain


def test_bars_and_chart_are_proportional() -> None:
    rows = shares({"system": 300, "knowledge": 100, "empty": 0})
    assert [round(r.share, 2) for r in rows] == [0.75, 0.25, 0.0]
    bars = share_bars(rows, width=20).plain.splitlines()
    assert bars[0].count("█") == 15 and bars[1].count("█") == 5 and bars[2].count("█") == 0
    chart = session_chart([(1, {"system": 100, "knowledge": 100}), (2, {"system": 400})], current=1).plain
    lines = chart.splitlines()
    assert lines[0].startswith(" T1") and lines[1].startswith("▶T2")
    # turn 2's bar is the longest (400 tokens); turn 1 is half of it, in two runs of different fill
    assert lines[1].count("█") == 40 and lines[0].count("█") + lines[0].count("▓") == 20
    assert lines[0].count("▓") == 10
    assert "system" in lines[-1] and "knowledge" in lines[-1]


def test_safe_makes_control_characters_visible() -> None:
    assert safe("a\x1b[31mb\x07\nc\td") == "a\\x1b[31mb\\x07\nc\td"
    assert "\x1b" not in safe(EVIL) and "[@click=app.quit]" in safe(EVIL)


# ------------------------------------------------------------------ the panel
@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_panel_shows_blocks_scores_and_steps_through_turns(played: Played, size: tuple[int, int]) -> None:
    app = Harness(played)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        assert "Turn 4 of 4" in title(app) and "ask garrick about hal" in title(app)
        blocks = screen.body_text("blocks")
        data = DebugData.from_result(played.results[-1])
        core = data.block("bible_core")
        assert core is not None
        assert "bible_core" in blocks and "Story Bible: characters" in blocks
        assert f"{core.items[0].score_text()}  {core.items[0].source}" in blocks
        assert core.items[0].text in blocks

        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert "Turn 1 of 4" in title(app) and "> look" in title(app)
        assert screen.data is not None and screen.data.action == "look"
        await pilot.press("left_square_bracket")  # already the first: stays
        assert "Turn 1 of 4" in title(app)
        await pilot.press("right_square_bracket")
        assert "Turn 2 of 4" in title(app) and "go east" in title(app)
        assert "go east" in screen.body_text("prompt")

        await pilot.press("2")  # the tokens tab
        assert screen.query_one("TabbedContent").active == "tokens"  # type: ignore[attr-defined]
        tokens = screen.body_text("tokens")
        assert "bible_core" in tokens and " T4" in tokens
        marked = next(line for line in tokens.splitlines() if line.startswith("▶"))
        assert marked.startswith("▶T2") and marked.endswith(f" {sum(block_tokens(played.results[1]).values())}")
        await pilot.press("5")
        timings = screen.body_text("timings")
        assert "recall" in timings and "strategy: bm25" in timings
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DebugScreen)


async def test_panel_without_turns_says_so(pack: ContentPack, tmp_path: Path) -> None:
    played = Played(make_session(pack, tmp_path), ["inventory"])  # a meta command composes no prompt
    app = Harness(played)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        assert "no turns played yet" in title(app)
        assert "No turn yet" in screen.body_text("blocks")
        await pilot.press("left_square_bracket", "right_square_bracket", "f12")
        await pilot.pause()
        assert not isinstance(app.screen, DebugScreen)


async def test_panel_follows_new_turns_when_reloaded(played: Played) -> None:
    app = Harness(played)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        played.play("go west")
        screen.reload()
        await pilot.pause()
        assert "Turn 5 of 5" in title(app) and "go west" in title(app)


# ------------------------------------------------------------------ the Bible
async def test_bible_filter_and_refusal_notified(played: Played, monkeypatch: pytest.MonkeyPatch) -> None:
    memory: Any = played.session.engine.memory
    calls: list[tuple[str, str, int]] = []

    def refuse(entry_id: str, action: str, turn: int) -> Any:
        calls.append((entry_id, action, turn))
        raise ValueError("[bold]Refused[/bold]: that entry is already active.")

    monkeypatch.setattr(memory, "review_bible", refuse, raising=False)
    app = Harness(played)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("6")
        await pilot.pause()
        view = app.screen.query_one(BibleView)
        assert view.table.has_focus
        everything = entries(memory)
        assert view.table.row_count == len(everything)
        await pilot.press("down", "down")
        selected = view.selected_entry()
        assert selected is not None and selected.id == everything[2].id
        await pilot.press("a")
        await pilot.pause()
        assert calls == [(everything[2].id, "accept", played.session.engine.state.turn)]
        assert ("[bold]Refused[/bold]: that entry is already active.", "warning") in app.notes
        await pilot.pause()
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("[bold]Refused[/bold]: that entry is already active." in t for t in toasts), toasts
        assert [e.status for e in entries(memory)] == [e.status for e in everything]
        # filters: f cycles all -> candidate -> active
        await pilot.press("f")
        assert view.status_filter == "candidate"
        assert view.table.row_count == sum(e.status == "candidate" for e in everything)
        await pilot.press("f")
        assert view.status_filter == "active"
        assert view.table.row_count == sum(e.status == "active" for e in everything)
        assert app.is_running


async def test_bible_archive_and_pin_through_the_view(played: Played, pack: ContentPack, tmp_path: Path) -> None:
    memory: Any = played.session.engine.memory
    # the same game, unpinned: which active entries its next turn leaves out
    control = Played(make_session(pack, tmp_path / "control"), [*ACTIONS, "look"])
    control_prompt = control.results[-1].trace.prompt
    assert control_prompt is not None
    left_out = control_prompt.system + control_prompt.user
    everything = entries(memory)
    target = next(e for e in everything if e.status == "active" and e.text() not in left_out)
    other = next(e for e in everything if e.status == "active" and e.id != target.id)
    app = Harness(played)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("6")
        await pilot.pause()
        view = app.screen.query_one(BibleView)
        await pilot.press(*["down"] * [e.id for e in view.visible_entries()].index(target.id))
        assert view.selected_entry() is not None and view.selected_entry().id == target.id  # type: ignore[union-attr]
        await pilot.press("p")
        await pilot.pause()
        assert next(e for e in entries(memory) if e.id == target.id).pinned
        assert "●" in str(view.table.get_row(target.id)[1])
        await pilot.press("p")  # a second p unpins, the cursor stays on the entry
        assert not next(e for e in entries(memory) if e.id == target.id).pinned
        assert str(view.table.get_row(target.id)[1]) == ""
        await pilot.press("p")
        assert next(e for e in entries(memory) if e.id == target.id).pinned
        # the real refusal: accepting what is already active
        await pilot.press("a")
        await pilot.pause()
        assert any("already active" in message and severity == "warning" for message, severity in app.notes)
        view.table.move_cursor(row=[e.id for e in view.visible_entries()].index(other.id))
        await pilot.press("x")
        await pilot.pause()
        assert next(e for e in entries(memory) if e.id == other.id).status == "archived"
        assert str(view.table.get_row(other.id)[0]) == "archived"
        # the next turn holds the pinned entry, and the panel shows it in its own block
        result = played.play("look")
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        screen.reload()
        await pilot.pause()
        assert "Turn 5 of 5" in title(app)
        blocks = screen.body_text("blocks")
        assert "■ pinned" in blocks and target.text() in blocks
    prompt = result.trace.prompt
    assert prompt is not None
    assert target.text() in prompt.system + prompt.user


class GreedyNarrator(ScriptedNarrator):
    """On turn 2: first an answer that is not JSON, then one that grants gold the rules refuse."""

    def narrate(self, bundle: PromptBundle) -> str:
        if bundle.state.turn == 1 and bundle.repair_error is None and not bundle.refused:
            return "Here you go: [bold]{not json"
        answer = json.loads(super().narrate(bundle))
        if bundle.state.turn == 1:
            answer["effects"]["gold_delta"] = 500
        return json.dumps(answer)


async def test_output_and_prompt_tabs_show_repairs_refusals_and_messages(pack: ContentPack, tmp_path: Path) -> None:
    played = Played(make_session(pack, tmp_path, GreedyNarrator(pack)), ["look", "go east"])
    result = played.results[-1]
    assert result.ok and result.trace.repaired and result.trace.reasked and result.rejected
    data = DebugData.from_result(result)
    assert data.rejected == [("gold_delta", "500", "gold comes only from loot and quest rewards")]
    assert data.first_rejected == data.rejected and data.validation_errors == result.trace.validation_errors
    app = Harness(played)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        await pilot.press("4")
        output = screen.body_text("output")
        assert "Answer: repaired, asked again, narration replaced by the rules' account" in output
        assert "Raw model output\nHere you go: [bold]{not json" in output
        assert f" • {result.trace.validation_errors[0]}" in output
        assert "✗ gold_delta 500: gold comes only from loot and quest rewards" in output
        assert "Refused in the first answer (then asked again)" in output
        assert result.trace.repair_output[:60] in output
        await pilot.press("3")
        prompt = result.trace.prompt
        assert prompt is not None
        text = screen.body_text("prompt")
        assert prompt.system in text and prompt.user in text
        assert "Message 1: L1 window, user" in text and "user prompt (composed)" in text
        # the repair and the second asking are messages of the same prompt, after the composed one
        assert text.index("user prompt (composed)") < text.index("assistant, asked again")
        assert "The game rules refused: gold_delta 500" in text


# ------------------------------------------------------------------ plain text only
class EvilNarrator(ScriptedNarrator):
    """The scripted narrator, its narration and a memory note carrying markup and an ANSI escape."""

    def narrate(self, bundle: PromptBundle) -> str:
        answer = json.loads(super().narrate(bundle))
        answer["narration"] = f"{EVIL} {answer['narration']}"
        answer["memory_notes"] = [f"{EVIL}, said Garrick"]
        return json.dumps(answer) + " [@click=app.quit]trailing[/]"


async def test_model_text_shows_literally_and_does_nothing(pack: ContentPack, tmp_path: Path) -> None:
    played = Played(make_session(pack, tmp_path, EvilNarrator(pack)), ["look", "go east"])
    assert played.results[-1].ok and EVIL in played.results[-1].narration
    app = Harness(played)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DebugScreen)
        await pilot.press("4")
        output = screen.body_text("output")
        assert "[@click=app.quit]Quit[/] and [bold]x[/bold] then \\x1b[31mred" in output
        assert "[@click=app.quit]trailing[/]" in output and "\x1b" not in output
        body = screen.query_one("#output-body").content  # type: ignore[attr-defined]
        assert isinstance(body, Text)
        start = body.plain.index("[bold]x[/bold]")
        # no style the text asked for: the only spans are the panel's own headings
        assert not any(s.start <= start < s.end and "bold" in str(s.style) for s in body.spans)
        assert "[@click=app.quit]Quit[/]" in app.export_screenshot()
        # the window of the turn shows the first turn's narration, literally
        assert "[bold]x[/bold] then \\x1b[31mred" in screen.body_text("blocks")
        for y in range(2, 12):
            await pilot.click("#output-body", offset=(2, y))
            await pilot.click("#output-body", offset=(20, y))
        await pilot.press("1")
        for y in range(0, 20, 2):
            await pilot.click("#blocks-body", offset=(8, y))
        await pilot.press("3", "tab", "enter", "space", "left_square_bracket", "6", "enter")
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert isinstance(app.screen, DebugScreen)
        # the Bible keeps the note as written; its row and detail show it literally too
        said = next(e for e in entries(played.session.engine.memory) if e.content.endswith("said Garrick"))
        view = screen.query_one(BibleView)
        view.table.move_cursor(row=[e.id for e in view.visible_entries()].index(said.id))
        await pilot.pause()
        detail = view.query_one("#bible-detail").content  # type: ignore[attr-defined]
        assert isinstance(detail, Text)
        assert f"{safe(EVIL)}, said Garrick" in detail.plain and "\x1b" not in detail.plain
        assert str(view.table.get_row(said.id)[3]).startswith("[@click=app.quit]Quit[/] and")
        await pilot.press("enter", "f", "down", "escape")
        await pilot.pause()
        assert app.is_running and app.return_code is None
