"""``storyecho doctor --llm openai``: the fitness check against endpoints whose faults are known.

The fault-injecting fake server (``tests/fake_openai_server.py``) is the only way to have an endpoint answer
broken JSON at a known rate: its responder breaks a random half of the turn answers and counts them, and the
report must give that share within 10 points. Against a real server (llama.cpp with SmolLM2) the check runs in
``tests/test_llamacpp_server.py``.
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import pytest

from game.cli import main as cli_main
from game.engine.fitness import SCRIPT, check_endpoint, report
from game.llm.settings import OpenAISettings
from game.world.loader import content_root, load_pack
from tests.fake_openai_server import Behaviour, FakeOpenAIServer, invalid_json, ok, status
from tests.fitness_models import FollowsTheAction

KEY = "sk-fitness-SECRET-0123456789abcdef"


@pytest.fixture(scope="module")
def packs():
    loaded = {story: load_pack(content_root() / story) for story, _ in SCRIPT}
    return loaded.__getitem__


class HalfBroken:
    """Answers every turn call with valid JSON that plays the action or, at random half the time, broken JSON;
    counts what it sent.

    Summaries and facts are answered well, so the consolidation is tried and only the turn answers are judged."""

    def __init__(self, share: float = 0.5, seed: int = 7) -> None:
        self.share = share
        self.random = random.Random(seed)
        self.turns = 0
        self.broken = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Behaviour:
        system = str(body["messages"][0]["content"])
        if system.startswith("You summarize passages"):
            return ok(json.dumps({"summary": "The traveller looked around and spoke with those met."}))
        if system.startswith("You keep the Story Bible"):
            return ok(json.dumps({"new_facts": [], "updates": []}))
        with self.lock:
            self.turns += 1
            if self.random.random() < self.share:
                self.broken += 1
                return invalid_json()
        return ok(json.dumps(FollowsTheAction().turn(body)))  # a valid answer plays the action, as a model would


def settings_for(server: FakeOpenAIServer, **extra: Any) -> OpenAISettings:
    return OpenAISettings(
        base_url=server.url, model="fake-model", json_mode="json_schema", max_attempts=1, timeout_s=10, **extra
    )


def test_an_endpoint_that_breaks_half_its_json_is_reported_with_the_share(packs):
    with FakeOpenAIServer() as server:
        server.responder = responder = HalfBroken()
        fitness = check_endpoint(settings_for(server), packs)
    truth = responder.broken / responder.turns
    assert 0.3 < truth < 0.7  # the fault this test is about did happen
    assert fitness.answers == responder.turns  # every answer to a turn call was judged
    assert abs(fitness.broken_share - truth) <= 0.10
    assert fitness.turns == sum(len(actions) for _, actions in SCRIPT) >= 12
    assert fitness.repaired + fitness.never > 0 and fitness.verdict != "plays well"
    text = report(fitness)
    assert (
        f"broken JSON      {fitness.broken_answers} of {fitness.answers} answers ({fitness.broken_share:.0%})" in text
    )
    assert fitness.summaries >= 1  # a story reached turn 5: the consolidation was asked of the endpoint


def test_an_endpoint_that_answers_well_plays_well_and_one_that_is_down_cannot_play(packs):
    with FakeOpenAIServer() as server:
        server.responder = FollowsTheAction()
        fitness = check_endpoint(settings_for(server), packs)
    assert fitness.broken_answers == 0 and fitness.first_time == fitness.turns
    assert fitness.verdict == "plays well", report(fitness)
    assert fitness.named >= 1  # "the Mistwood Trailhead" is named while the player stands there
    assert fitness.ttft_ms and fitness.tokens_per_s and fitness.json_modes == {"json_schema": fitness.turns}

    with FakeOpenAIServer() as server:
        server.fallback = status(503, message="overloaded")
        down = check_endpoint(settings_for(server), packs)
    assert down.verdict.startswith("cannot play: the endpoint did not answer")
    assert "base-url" in down.fix


def test_doctor_prints_the_report_and_never_writes_the_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FITNESS_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "storyecho.toml").write_text('[openai]\napi_key_env = "FITNESS_KEY"\n')
    data = tmp_path / "data"
    with FakeOpenAIServer() as server:
        server.responder = HalfBroken()
        code = cli_main(["doctor", "--llm", "openai", "--base-url", server.url, "--model", "fake-model", "--json"])
        sent = [r.headers.get("authorization", "") for r in server.chat_requests()]
    out, err = capsys.readouterr()
    assert "Narrator fitness: fake-model" in out and "Verdict:" in out
    figures = json.loads(out.splitlines()[0])
    assert figures["turns"] >= 12 and 0.3 < figures["broken_share"] < 0.7
    assert code in (0, 1)
    assert all(h == f"Bearer {KEY}" for h in sent)  # the key was used...
    assert KEY not in out + err  # ...and never shown
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "storyecho.toml"]
    assert not data.exists() and all(KEY not in p.read_text(errors="ignore") for p in written)


async def test_the_settings_test_narrator_button_plays_the_check_and_shows_the_report(tmp_path):
    from textual.widgets import Button, Static

    from game.config import load_settings
    from game.tui.fitness import NarratorTestScreen
    from game.tui.settings import SettingsScreen
    from tests.tui.test_screens import Harness, set_field, settle

    config = tmp_path / "storyecho.toml"
    config.write_text('llm = "scripted"\n')
    before = config.read_bytes()
    with FakeOpenAIServer() as server:
        server.responder = FollowsTheAction()
        app = Harness(lambda: SettingsScreen(load_settings(config), config))
        async with app.run_test(size=(110, 32)) as pilot:
            await set_field(pilot, app, "base-url", server.url)
            await set_field(pilot, app, "model", "fake-model")
            app.screen.query_one("#test", Button).press()
            await settle(pilot)
            assert isinstance(app.screen, NarratorTestScreen)
            screen = app.screen
            deadline = 60
            while not screen.report and deadline > 0:
                await pilot.pause(0.1)
                deadline -= 0.1
            await settle(pilot)
            shown = str(screen.query_one("#test-report", Static).render())
            assert "Verdict: plays well" in shown and "Narrator fitness: fake-model" in shown
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, SettingsScreen)  # back to the form, which saved nothing
    assert config.read_bytes() == before
    assert len(server.chat_requests()) >= 13
