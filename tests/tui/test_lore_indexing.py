"""A first start plays at once: the lore indexes while the player plays, searched by keyword until its vectors land.

The real app over the real engine, the real ONNX embedder and a real Chroma index in a fresh data folder (a first
start). The one fake is a fault injection, :class:`LoreGate`: the real embedder behind a gate that holds every batch
of lore documents (never a query, a memory or the Story Bible) until the test opens it, so "the lore is still
indexing" is a state the test sets, not a race it hopes to win. On the code before (the warm-up indexed every
story's lore before a game could start) the gate keeps the game from ever starting: every test here fails.
"""

from __future__ import annotations

import threading

import game.wiring as wiring
from game.memory.search.knowledge import build_documents
from game.tui.app import StoryEchoApp
from game.tui.play import PlayScreen
from game.world.loader import content_root, load_pack
from tests.tui.test_app import SIZE, new_game, play, settings_for, until

HARP = ":The Moonlight Harp"
"""How the knowledge block names the harp's documents (``kb:<category>:<name>``: its lore entry and the item)."""
QUESTION = "who shaped the moonlight harp"


class LoreGate:
    """FAULT INJECTION: the real embedder, except that a batch holding a lore document waits for :attr:`gate`."""

    def __init__(self, real, lore: set[str]) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.lore = lore
        self.gate = threading.Event()
        self.held = threading.Event()
        """Set once a batch of lore waits at the gate: the indexing is under way."""

    def embed(self, texts):
        if self.lore.intersection(texts):
            self.held.set()
            assert self.gate.wait(120), "the test never opened the gate"
        return self.real.embed(texts)


def gated_app(tmp_path, monkeypatch) -> tuple[StoryEchoApp, list[LoreGate], list, list[tuple[str, str]]]:
    """The default configuration (embeddings, the local Chroma index) on a fresh data folder, its embedder gated;
    the turns' results and the notifications are recorded."""
    lore = {doc.text for doc in build_documents(load_pack(content_root() / "fantasy_001"))}
    gates: list[LoreGate] = []
    make = wiring.make_embedder

    def gated(settings):
        gates.append(LoreGate(make(settings), lore))
        return gates[-1]

    monkeypatch.setattr(wiring, "make_embedder", gated)
    app = StoryEchoApp(settings_for(tmp_path, memory={"embeddings": True}))
    results: list = []
    notices: list[tuple[str, str]] = []
    turn_played, notify = app.turn_played, app.notify

    def played(result) -> None:
        results.append(result)
        turn_played(result)

    def told(message: str, *, title: str = "", **kwargs) -> None:
        notices.append((title, message))
        notify(message, title=title, **kwargs)

    app.turn_played = played  # type: ignore[method-assign]
    app.notify = told  # type: ignore[method-assign]
    return app, gates, results, notices


def lore_line(app) -> str:
    """What the play screen's lore line says ("" while hidden, or before the screen is composed)."""
    lines = app.screen.query("#lore")
    return str(lines.first().render()) if lines and lines.first().display else ""


async def test_a_first_start_plays_while_the_lore_indexes_then_says_ready_and_recalls_by_meaning(tmp_path, monkeypatch):
    """Was: a first start showed the title at once, then kept the game from starting until every story's lore was
    embedded (11.4 s on a loaded 2-core machine), and the loading bar just vanished. Now the game plays while its
    lore indexes: a lore question is answered from keyword lore, the play screen says the lore is keyword only and
    indexing, then "Lore ready" once the vectors land, and the next turn's lore is ranked by meaning too."""
    app, gates, results, notices = gated_app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await new_game(pilot, 0)
            screen = app.screen
            assert isinstance(screen, PlayScreen)
            await until(pilot, gates[0].held.is_set, what="the lore's indexing under way")
            await until(pilot, lambda: "keyword only, indexing" in lore_line(app), what="the lore line")
            knowledge = app.session.engine.memory.knowledge

            await play(pilot, QUESTION)  # played while the indexing waits at the gate
            assert not knowledge.vectors_ready.is_set() and "keyword only, indexing" in lore_line(app)
            early = results[-1].trace.memory
            assert early.retrieval_meta["knowledge_strategy"] == "bm25"
            assert "lore still indexing" in early.retrieval_meta["fallback"]
            assert early.block("knowledge").items[0].source.endswith(HARP)

            gates[0].gate.set()
            await until(pilot, lambda: "Lore ready" in lore_line(app), what="lore ready")
            assert knowledge.vectors_ready.is_set() and knowledge.stats.embedded == len(knowledge.docs)
            assert f"Lore ready: {len(knowledge.docs)} entries indexed." in lore_line(app)
            assert [title for title, _ in notices].count("Lore ready") == 1

            await play(pilot, QUESTION)
            late = results[-1].trace.memory
            assert late.retrieval_meta["knowledge_strategy"] == "hybrid:chroma"
            assert late.block("knowledge").items[0].source.endswith(HARP)
            # the turn played before the vectors landed is kept, and recalled by meaning now
            assert [e.action for e in app.session.engine.memory.last_episodes(2)] == [QUESTION, QUESTION]
            assert app.session.engine.state.turn == 2
        finally:
            for gate in gates:
                gate.gate.set()


async def test_a_new_game_while_the_lore_indexes_stops_it_and_the_next_game_finishes_it(tmp_path, monkeypatch):
    """Leaving a game while its lore indexes (a new game, a load, quitting) stops the indexing after the batch under
    way, before the game's index closes: nothing says "ready" for that game, and the next game indexes what is
    still missing and says so."""
    app, gates, _, notices = gated_app(tmp_path, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await new_game(pilot, 0)
            first = app.session
            await until(pilot, gates[0].held.is_set, what="the lore's indexing under way")
            await play(pilot, "look")
            app.start_game("fantasy_001")
            # the first game is closing: it waits for the batch held at the gate, which may now finish
            await until(pilot, lambda: app.session is not first, what="the first game closing")
            gates[0].gate.set()
            await until(pilot, lambda: app.session not in (None, first) and isinstance(app.screen, PlayScreen))
            await until(pilot, lambda: "Lore ready" in lore_line(app), what="the second game's lore ready")
            assert [title for title, _ in notices].count("Lore ready") == 1
            assert not first.engine.memory.knowledge.vectors_ready.is_set()  # stopped, never "ready"
            second = app.session.engine.memory.knowledge
            assert second.vectors_ready.is_set() and second.stats.unchanged > 0  # the first game's batch was kept
        finally:
            for gate in gates:
                gate.gate.set()
