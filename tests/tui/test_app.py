"""The Textual game driven by Pilot: title, new games, turns, choices, saves, endings, quitting, plain text.

The app is the real one over the real engine (scripted narrator; keyword
memory where a test says so, real embeddings in the default-configuration
test). A model's narration comes from the fault-injecting fake OpenAI server
(tests/fake_openai_server.py), the only way to make a model answer markup on
demand.
"""

from __future__ import annotations

import gc
import json
import time
import weakref
from pathlib import Path

from textual.widgets import OptionList, RichLog

import game.engine.session as session_module
from game.config import load_settings
from game.engine.pipeline import TurnResult
from game.engine.session import GameSession
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.tui.play import PlayScreen
from game.tui.title import EndingScreen, StoryScreen, TitleScreen
from tests.fake_openai_server import FakeOpenAIServer, ok

SIZE = (100, 32)


def settings_for(tmp_path: Path, **extra):
    memory = {"embeddings": False} | extra.pop("memory", {})
    return load_settings(None, llm=extra.pop("llm", "scripted"), data_dir=tmp_path / "saves", memory=memory, **extra)


async def until(pilot, condition, timeout: float = 60.0, what: str = "") -> None:
    """Let the app run until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}; screen: {pilot.app.screen!r}")
        await pilot.pause(0.05)


def log_text(app) -> str:
    log = app.screen.query_one("#log", RichLog)
    return "\n".join(strip.text for strip in log.lines)


async def new_game(pilot, story_index: int = 0) -> PlayScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
    await pilot.press("n")  # New game
    await until(pilot, lambda: isinstance(app.screen, StoryScreen), what="story choice")
    for _ in range(story_index):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: playing(app), what="play screen")
    return app.screen


def playing(app) -> bool:
    """The play screen is up and composed (it loads its own stylesheet, play.tcss, before it composes)."""
    return isinstance(app.screen, PlayScreen) and len(app.screen.query("#action")) > 0


async def play(pilot, text: str) -> None:
    app = pilot.app
    screen = app.screen
    turn = app.session.engine.state.turn
    if text.isdigit():
        await pilot.press(text)  # a suggested choice, by its number
    else:
        screen.query_one("#action").value = text
        await pilot.press("enter")
    await until(pilot, lambda: not screen.busy.is_set() and app.session.engine.state.turn != turn, what=text)


async def test_a_new_game_in_each_story_plays_turns_and_choices(tmp_path):
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await new_game(pilot, 0)
        assert app.session.engine.pack.story.id == "fantasy_001" and app.theme == "misty-forest"
        assert "Misty Forest" in log_text(app)
        await play(pilot, "go east")
        assert app.session.engine.state.turn == 1
        assert "Old Hunter's Lodge" in str(screen.query_one("#header").render())
        choices = list(screen._choices)
        assert choices, "suggested choices after a turn"
        await play(pilot, "1")  # the first suggested choice, by key
        assert app.session.history[-1].action == choices[0]
        assert f"> {choices[0]}" in log_text(app)
        assert app.session.engine.state.turn == 2
    cyber = StoryEchoApp(settings_for(tmp_path / "cyber"))
    async with cyber.run_test(size=SIZE) as pilot:
        await new_game(pilot, 1)
        assert cyber.session.engine.pack.story.id == "scifi_001" and cyber.theme == "cyber-neon"
        await play(pilot, "look")
        assert cyber.session.engine.state.turn == 1


async def test_the_default_configuration_loads_embeddings_with_progress_then_plays(tmp_path):
    """Real embeddings and Chroma: the title shows at once, the loading bar moves, the game plays, and its lore,
    indexed meanwhile on a first start (tests/tui/test_lore_indexing.py), is ready soon after."""
    settings = settings_for(tmp_path, memory={"embeddings": True})
    app = StoryEchoApp(settings)
    seen: list[tuple[str, int, int]] = []
    original = app.progress

    def record(label, done, total):
        seen.append((label, done, total))
        original(label, done, total)

    app.progress = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
        assert not app.ready.is_set() or seen  # the title is up before (or while) the engine loads
        await new_game(pilot, 0)
        assert app.session.engine.memory.embedder is not None
        await play(pilot, "go east")  # (Garrick is at his lodge: talking to him from the trailhead costs no turn)
        await play(pilot, "talk to garrick")
        assert app.session.engine.state.turn == 2
        lore = app.session.engine.memory.knowledge
        await until(pilot, lore.vectors_ready.is_set, what="the lore indexed")
        assert lore.stats is not None and lore.stats.embedded == lore.stats.documents  # a first start: all of it
    labels = [label for label, _, _ in seen]
    assert "Loading the memory model" in labels and "Ready" in labels


async def test_save_to_a_slot_and_load_it_in_a_fresh_app(tmp_path):
    settings = settings_for(tmp_path)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        for action in ("go east", "talk to garrick", "take the tonic"):  # (the longbow is refused: no turn)
            await play(pilot, action)
        expected = app.session.engine.state.model_copy(deep=True)
        await pilot.press("f2")
        await until(pilot, lambda: type(app.screen).__name__ == "SlotScreen", what="save screen")
        app.screen.query_one("Input").value = "before the swamp"
        await pilot.press("enter")
        await until(pilot, lambda: SlotStore(settings.data_dir).exists("before the swamp"), what="saved")
    fresh = StoryEchoApp(settings)
    async with fresh.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(fresh.screen, TitleScreen), what="title")
        await pilot.press("f3")
        await until(pilot, lambda: type(fresh.screen).__name__ == "SlotScreen", what="load screen")
        await until(pilot, lambda: fresh.screen.listed, what="the saves listed")  # read off the screen's thread
        table = fresh.screen.query_one("DataTable")
        names = [table.get_row_at(i)[0] for i in range(table.row_count)]
        table.move_cursor(row=[str(n) for n in names].index("before the swamp"))
        await pilot.press("enter")
        await until(pilot, lambda: playing(fresh), what="play screen")
        state = fresh.session.engine.state
        assert state.model_dump(exclude={"clock_minutes"}) == expected.model_dump(exclude={"clock_minutes"})
        assert "take the tonic" in log_text(fresh)  # the last turns are shown again


async def test_markup_and_escapes_from_a_model_and_a_player_show_literally(tmp_path):
    narration = "[bold]Bold?[/bold] [@click=app.quit]Click me[/] \x1b[31mred\x1b[0m"
    turn = {"narration": narration, "choices": ["[@click=app.quit]"], "effects": {}, "memory_notes": []}
    with FakeOpenAIServer() as server:
        server.fallback = ok(json.dumps(turn))
        settings = settings_for(tmp_path, llm="openai", openai={"base_url": server.url, "model": "m"})
        app = StoryEchoApp(settings)
        async with app.run_test(size=SIZE) as pilot:
            screen = await new_game(pilot, 0)
            await play(pilot, "say [@click=app.quit] hello [bold]")
            text = log_text(app)
            assert "[bold]Bold?[/bold] [@click=app.quit]Click me[/]" in text
            assert "\\x1b[31mred" in text  # the escape is shown, not obeyed
            assert "> say [@click=app.quit] hello [bold]" in text
            choice = screen.query(".choice").first()
            await pilot.click(choice)  # a click on the model's "choice" plays it as text; it does not quit
            await until(pilot, lambda: app.session.engine.state.turn == 2, what="choice played")
            assert app.is_running and isinstance(app.screen, PlayScreen)


async def test_reaching_an_ending_shows_its_screen_and_offers_a_new_game(tmp_path):
    settings = settings_for(tmp_path)
    walkthrough = Path(__file__).parents[1] / "walkthroughs" / "fantasy_001__eternal_night.txt"
    actions = [line.strip() for line in walkthrough.read_text().splitlines() if line.strip() and line[0] != "#"]
    # play all but the last action headless and save it, then finish in the app
    from game.wiring import make_engine

    engine = make_engine("fantasy_001", settings, embedder=None, say=lambda _: None)
    session = GameSession(engine, SlotStore(settings.data_dir))
    for action in actions[:-1]:
        session.play(action)
    assert not engine.state.ending
    session.save("last step")
    session.close(save=False)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
        app.start_game(None, slot="last step")
        await until(pilot, lambda: playing(app), what="play")
        screen = app.screen
        screen.query_one("#action").value = actions[-1]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, EndingScreen), what="ending screen")
        summary = str(app.screen.query_one("#ending-summary").render())
        assert "Eternal Night" in summary and f"Turns played: {app.session.engine.state.turn}" in summary
        choices = app.screen.query_one(OptionList)  # no letter keys on an ending (issue 43): the list's choice
        choices.highlighted = choices.get_option_index("new")
        await pilot.press("enter")  # a new game, not an exit
        await until(pilot, lambda: isinstance(app.screen, StoryScreen), what="story choice")
        assert app.is_running


async def test_loading_another_game_keeps_the_game_in_the_autosave(tmp_path):
    """Was: a game loaded with F3 or Continue saved to its story's autosave, over the game there (issue 33's
    review: the same loss as a new game's, by another door). Now that game is kept in a slot of its own first."""
    settings = settings_for(tmp_path)
    from game.wiring import make_engine

    games = {}
    for slot, turns in (("mine", 2), ("autosave-fantasy_001", 3)):
        session = GameSession(make_engine("fantasy_001", settings, embedder=None, say=lambda _: None), None)
        for _ in range(turns):
            assert session.play("look").ok
        session.slots, session.slot = SlotStore(settings.data_dir), slot
        assert session.close() is None
        games[slot] = session.game_id
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
        app.start_game(None, slot="mine")
        await until(pilot, lambda: playing(app), what="play")
        await until(pilot, lambda: "autosave-fantasy_001-previous-1" in log_text(app), what="the notice")
        await play(pilot, "look")
        app._quit()
        await until(pilot, lambda: not app.is_running, what="exit")
    store = SlotStore(settings.data_dir)
    kept = store.read("autosave-fantasy_001-previous-1").save
    assert (kept.session_id, kept.turn) == (games["autosave-fantasy_001"], 3)
    now = store.read("autosave-fantasy_001").save
    assert (now.session_id, now.turn) == (games["mine"], 3)


async def test_loading_an_older_moment_goes_on_as_a_new_line_and_says_so(tmp_path):
    """Issue 43, item 1: a moment older than its game's latest, loaded with F3, goes on as a new line, told in one
    sentence; the later turns stay in the autosave."""
    from game.engine.lines import AS_A_NEW_LINE
    from game.wiring import make_engine

    settings = settings_for(tmp_path)
    session = GameSession(make_engine("fantasy_001", settings, embedder=None, say=lambda _: None), None)
    session.slots, session.slot = SlotStore(settings.data_dir), "autosave-fantasy_001"
    for action in ("look", "go east", "save mine", "look", "look"):
        assert session.play(action).ok
    assert session.close() is None
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), what="title")
        app.start_game(None, slot="mine")
        await until(pilot, lambda: playing(app), what="play")
        await until(pilot, lambda: AS_A_NEW_LINE in log_text(app), what="the sentence")
        assert "went on to turn 4" in log_text(app)
        await play(pilot, "look")
        app._quit()
        await until(pilot, lambda: not app.is_running, what="exit")
    store = SlotStore(settings.data_dir)
    assert store.moment_of("autosave-fantasy_001") == (session.line, 4)


async def test_quit_asks_when_there_is_unsaved_progress_and_autosaves(tmp_path):
    settings = settings_for(tmp_path)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        await play(pilot, "go east")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="confirm")
        await pilot.press("n")  # keep playing
        await until(pilot, lambda: playing(app), what="back to play")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="confirm")
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, what="exit")
    saved = SlotStore(settings.data_dir).read("autosave-fantasy_001").save
    assert saved.game.turn == 1 and saved.game.node != "forest_edge"


async def test_an_autosave_is_told_once_it_is_written_after_its_turn(tmp_path):
    """The fifth turn's autosave is written on its own thread after the turn (GameSession.autosave); the
    game tells the player when it lands, and that turn no longer counts as unsaved progress."""
    settings = settings_for(tmp_path)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        for _ in range(5):
            await play(pilot, "look")
        await until(pilot, lambda: app.saved_turn == 5, what="the autosave told")
        await until(
            pilot, lambda: any("Autosaved at turn 5" in n.message for n in app._notifications), what="the toast"
        )
        assert SlotStore(settings.data_dir).read("autosave-fantasy_001").save.turn == 5


async def test_the_app_holds_no_turn_results_beyond_the_sessions_bounded_history(tmp_path, monkeypatch):
    """Issue 33: the app kept every turn's result in a list nothing read (about 51 MB per 1,000 turns). The
    results of the turns played stay alive only while ``GameSession.history`` (at most HISTORY_LIMIT) keeps them."""
    monkeypatch.setattr(session_module, "HISTORY_LIMIT", 2)
    told: list[weakref.ref[TurnResult]] = []
    turn_played = StoryEchoApp.turn_played

    def spy(app: StoryEchoApp, result: TurnResult) -> None:
        told.append(weakref.ref(result))
        turn_played(app, result)

    monkeypatch.setattr(StoryEchoApp, "turn_played", spy)
    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await new_game(pilot, 0)
        for _ in range(6):
            await play(pilot, "look")
        await pilot.pause(0.1)
        gc.collect()
        kept = {id(result) for result in app.session.history}
        alive = [result for ref in told if (result := ref()) is not None and id(result) not in kept]
        assert len(told) == 6 and len(app.session.history) == 2
        assert alive == [], f"{len(alive)} results of turns the session's history let go are still held"


async def test_a_failed_narrator_shows_a_message_and_the_game_goes_on(tmp_path):
    with FakeOpenAIServer() as server:
        settings = settings_for(
            tmp_path, llm="openai", openai={"base_url": server.url, "model": "m", "max_attempts": 1, "timeout_s": 2}
        )
        app = StoryEchoApp(settings)
        async with app.run_test(size=SIZE) as pilot:
            screen = await new_game(pilot, 0)
            screen.query_one("#action").value = "look"
            await pilot.press("enter")
            await until(pilot, lambda: not screen.busy.is_set() and "Nothing changed" in log_text(app), what="error")
            assert app.session.engine.state.turn == 0 and app.is_running
            server.fallback = ok(json.dumps({"narration": "The fog lifts.", "choices": [], "effects": {}}))
            await play(pilot, "look")  # the next turn works
            assert "The fog lifts." in log_text(app)


async def test_a_models_narration_streams_onto_the_screen_as_it_is_written(tmp_path):
    narration = "The fog parts slowly, and a lantern swings somewhere ahead of you on the trail."
    content = json.dumps({"narration": narration, "choices": ["look"], "effects": {}, "memory_notes": []})
    pieces = [content[i : i + 6] for i in range(0, len(content), 6)]
    with FakeOpenAIServer() as server:
        server.fallback = ok(content, chunks=pieces, chunk_delay=0.15)  # about 4 s: seen mid-way even under load
        settings = settings_for(tmp_path, llm="openai", openai={"base_url": server.url, "model": "m"})
        app = StoryEchoApp(settings)
        async with app.run_test(size=SIZE) as pilot:
            screen = await new_game(pilot, 0)
            screen.query_one("#action").value = "look"
            await pilot.press("enter")
            stream = screen.query_one("#stream")
            await until(pilot, lambda: "The fog parts" in str(stream.render()), what="streamed narration")
            shown = str(stream.render())
            assert screen.busy.is_set() and "narration" not in shown and "{" not in shown  # prose, not JSON
            assert narration not in shown  # part of it, while the rest is still coming
            await until(pilot, lambda: not screen.busy.is_set(), what="turn end")
            assert narration in " ".join(log_text(app).split()) and not stream.display


HEAVY = ("torch", "sentence_transformers", "chromadb", "llama_cpp", "openai")
STARTUP_PROBE = """
import argparse, asyncio, json, sys
import game.args, game.main
import game.tui.app

class Probe(game.tui.app.StoryEchoApp):
    def _after_first_frame(self):  # called once the title has been drawn
        self.title_drawn = type(self.screen).__name__ == "TitleScreen"
        late = ("game.cli", "game.wiring", "game.config", "pydantic")  # what builds a game; the settings, read later
        self.at_first_frame = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY or m in late)
        return super()._after_first_frame()

HEAVY = {heavy}

async def drive(app):
    async with app.run_test() as pilot:
        while not app.ready.is_set():
            await pilot.pause(0.1)
        app.later = sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in HEAVY}})

def run_app(settings, **kwargs):  # the storyecho command's own path, headless
    app = Probe(settings)
    asyncio.run(drive(app))
    embedder = type(app.embedder).__name__ if app.embedder else None
    figures = {{"first": app.at_first_frame, "title": app.title_drawn, "later": app.later, "embedder": embedder}}
    print(json.dumps(figures))
    return 0

game.tui.app.run_app = run_app
game.main.game_args = lambda args: argparse.Namespace(story=None, headless=False, config=None)  # "in a terminal"
game.main.main(["play", "--llm", "openai", "--base-url", "http://127.0.0.1:9/v1", "--data-dir", sys.argv[1]])
"""


def test_no_heavy_library_is_imported_before_the_first_frame(tmp_path):
    """Through the storyecho command's own path, the title is drawn before torch, chromadb, openai, llama.cpp or
    the CLI's commands load (the warm-up worker loads what a game needs, after the first frame)."""
    import subprocess
    import sys

    script = STARTUP_PROBE.format(heavy=repr(set(HEAVY)))
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
        env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["title"] and figures["first"] == []  # nor the CLI's commands (game.cli), nor pydantic
    # the warm-up loaded the default memory model (ONNX: no torch); on a first start it may be importing Chroma for
    # the game's new index beside it (wiring.preload_store)
    assert figures["embedder"] == "OnnxEmbedder" and set(figures["later"]) <= {"chromadb"}


def test_bad_settings_read_after_the_first_frame_close_the_game_with_the_clis_message(tmp_path, monkeypatch, capsys):
    """``storyecho``'s own path reads the settings once the title is drawn: a bad value closes the game with
    exit status 2 and the message the CLI gives, and no game starts."""
    from textual.app import App

    import game.main
    import game.tui.app

    bad = tmp_path / "storyecho.toml"
    bad.write_text('[memory]\nwindow_messages = "many"\n', encoding="utf-8")
    ran: list[StoryEchoApp] = []

    def headless(self):
        ran.append(self)
        return App.run(self, headless=True, size=SIZE)

    monkeypatch.setattr(game.tui.app.StoryEchoApp, "run", headless)
    monkeypatch.setattr(game.main, "game_args", lambda args: args)  # "in a terminal"
    code = game.main.main(["play", "--config", str(bad), "--data-dir", str(tmp_path / "saves")])
    assert code == 2 and ran and ran[0].session is None
    assert "window_messages" in (ran[0].settings_error or "")
    assert f"storyecho: {ran[0].settings_error}" in capsys.readouterr().err


async def test_the_loading_bar_leaves_the_title_once_the_game_is_ready(tmp_path):
    """The title's loading bar shows what loads, then goes: a ready game does not keep a full 'Ready' bar."""
    from game.tui.title import LoadingBar

    app = StoryEchoApp(settings_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TitleScreen) and app.ready.is_set(), what="ready")
        await pilot.pause(0.2)
        assert not app.screen.query_one(LoadingBar).display


async def test_streamed_narration_is_a_draft_until_the_rules_decide_and_a_refused_one_is_replaced(tmp_path):
    """Was: the player read, as it streamed, what the rules then refused ("...seize the Crown of Night."), and the
    log showed the rules' account with nothing to say the streamed text did not happen."""
    claim = "You stride north, past the mist, and seize the Crown of Night from its cushion."
    content = json.dumps(
        {"narration": claim, "choices": ["look"], "effects": {"items_gained": ["elowen_circlet"]}, "memory_notes": []}
    )
    pieces = [content[i : i + 8] for i in range(0, len(content), 8)]
    with FakeOpenAIServer() as server:
        server.fallback = ok(content, chunks=pieces, chunk_delay=0.08)
        settings = settings_for(tmp_path, llm="openai", openai={"base_url": server.url, "model": "m"})
        app = StoryEchoApp(settings)
        async with app.run_test(size=SIZE) as pilot:
            screen = await new_game(pilot, 0)
            screen.query_one("#action").value = "look around"  # "take the crown" is refused before any narrator
            await pilot.press("enter")
            stream = screen.query_one("#stream")
            await until(pilot, lambda: "You stride" in str(stream.render()), what="streamed narration")
            assert str(stream.render()).startswith("✎ draft")  # provisional while the rules have not run
            await until(pilot, lambda: not screen.busy.is_set(), what="turn end")
            log = " ".join(log_text(app).split())
            assert "refused part of the narrator's draft" in log and "seize the Crown" not in log
            assert not stream.display and "elowen_circlet" not in app.session.engine.state.inventory
