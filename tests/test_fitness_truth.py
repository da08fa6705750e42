"""Issue 31, part 5: the fitness check tells the truth and cannot hang.

- "plays well" is earned: a model that proposes no effects, whose effects the rules never accept, or whose
  summaries never land is not playing well (end to end against a real HTTP server on loopback, and criterion by
  criterion on figures);
- no credential of the base URL is printed, in the report, ``--json``, the log (``-v``: httpx logs each
  request's URL) or an error (a refused connection, a narrator that cannot be built);
- a stalled endpoint (``StalledServer``: accepts, never answers; or answers long after the client's timeout)
  stops the check after ``STALL_LIMIT`` turn calls in a row, with the reason;
- no endpoint: nothing to test (the built-in narrator needs none), in the CLI and in the settings' window;
- the speaks-for-the-player and repetition rates are counted and reported.

The servers are fakes (``tests/fake_openai_server.py``) because each test injects a fault a real server cannot be
made to show on demand; the check itself, the engine, the narrator and its HTTP client are the real ones.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from game.engine.fitness import SCRIPT, Fitness, check_endpoint, report, verdict
from game.engine.pipeline import DebugTrace, TurnResult
from game.llm.settings import OpenAISettings
from game.world.loader import content_root, load_pack
from tests.fake_openai_server import FakeOpenAIServer, StalledServer, delay, status
from tests.fitness_models import FollowsTheAction, ProposesNothing

ROOT = Path(__file__).resolve().parents[1]
SECRETS = ("hunter2pass", "QSECRET123", "TOKSECRET9", "KEYSECRET8")
STALL_LIMIT = 3
"""Turn calls in a row without an answer before the check stops (``fitness_verdict.STALL_LIMIT``)."""


@pytest.fixture(scope="module")
def packs():
    loaded = {story: load_pack(content_root() / story) for story, _ in SCRIPT}
    return loaded.__getitem__


def settings_for(url: str, **extra: Any) -> OpenAISettings:
    fields: dict[str, Any] = {"model": "fake-model", "json_mode": "json_schema", "max_attempts": 1, "timeout_s": 10}
    return OpenAISettings(base_url=url, **(fields | extra))


def good_run() -> Fitness:
    """The figures of a model that plays well (13 turns, effects accepted, two summaries)."""
    return Fitness(
        endpoint="http://127.0.0.1:1/v1",
        model="m",
        turns=13,
        first_time=13,
        answers=13,
        answered=13,
        proposed=8,
        accepted=8,
        named=13,
        committed=13,
        summaries=2,
        json_modes={"json_schema": 13},
    )


# ------------------------------------------------------------------------------------------------ (a) plays well
def test_plays_well_needs_effects_proposed_and_accepted_and_summaries_that_land():
    from game.engine.fitness_verdict import CRITERIA

    assert verdict(good_run()) == ("plays well", "")
    short = {
        "no effects": {"proposed": 0, "accepted": 0},
        "none accepted": {"accepted": 0, "refused": 8},
        "no summary landed": {"summaries": 0, "summary_failures": 4},
        "no summary tried": {"summaries": 0},
        "a summary failed": {"summary_failures": 1},
        "speaks for the player": {"spoke_for_player": 4},
        "repeats itself": {"repeated": 4},
        "stopped early": {"stopped": "the test was closed before its end"},
    }
    for name, change in short.items():
        said, fix = verdict(dataclasses.replace(good_run(), **change))
        assert said != "plays well" and fix, name
    assert verdict(dataclasses.replace(good_run(), proposed=0, accepted=0))[0].startswith("cannot play: it proposed")
    assert len(CRITERIA) >= 8 and all(callable(check) for _, check in CRITERIA)


def test_a_model_that_proposes_no_effects_is_not_playing_well(packs):
    with FakeOpenAIServer() as server:
        server.responder = model = ProposesNothing()
        fitness = check_endpoint(settings_for(server.url), packs)
    assert model.calls["turn"] == fitness.turns == 13 and fitness.first_time == 13  # flawless JSON, good prose
    assert fitness.proposed == 0 and fitness.accepted == 0
    assert fitness.verdict.startswith("cannot play: it proposed no effects"), report(fitness)


def test_a_model_whose_summaries_all_fail_is_not_playing_well(packs):
    with FakeOpenAIServer() as server:
        server.responder = model = FollowsTheAction(summaries=status(400, message="no summaries here"))
        fitness = check_endpoint(settings_for(server.url), packs)
    assert model.calls["summary"] >= 2 and fitness.accepted >= 5  # consolidation was tried; the turns played well
    assert fitness.summaries == 0 and fitness.summary_failures >= 2
    assert fitness.verdict.startswith("plays with repairs: no summary landed"), report(fitness)


# ------------------------------------------------------------------------------------------------ (b) credentials
def test_redact_urls_takes_every_credential_out():
    from game.text import redact_urls

    cases = {
        "at http://bob:hunter2pass@127.0.0.1:8080/v1 (3 attempts)": "at http://127.0.0.1:8080/v1 (3 attempts)",
        "POST https://h.example/v1/chat?api-key=QSECRET123 200": "POST https://h.example/v1/chat 200",
        "url=http://h/v1?key=KEYSECRET8&x=1.": "url=http://h/v1.",
        "token=TOKSECRET9 and password=hunter2pass": "token=*** and password=***",
        "bob:hunter2pass@localhost:8080/v1": "localhost:8080/v1",
        "Authorization: Basic Ym9iOmh1bnRlcjJwYXNz": "Authorization: Basic ***",
    }
    for text, shown in cases.items():
        assert redact_urls(text) == shown


def _doctor(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.run(
        [sys.executable, "-m", "game", "-v", "doctor", "--llm", "openai", "--json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
        check=False,
    )


def _with_credentials(url: str, query: str = "api-key=QSECRET123&token=TOKSECRET9&key=KEYSECRET8") -> str:
    return url.replace("http://", "http://bob:hunter2pass@", 1) + "?" + query


def test_doctor_prints_no_credential_of_the_base_url_in_report_json_log_or_errors():
    """Against a server that answers (httpx logs each request's URL with ``-v``), and one that refuses the
    connection (the error path)."""
    with FakeOpenAIServer() as server:
        server.responder = FollowsTheAction()
        done = _doctor("--base-url", _with_credentials(server.url), "--model", "fake-model")
        assert server.requests  # the endpoint was asked: the URL went through the client, and its log
    assert "Narrator fitness" in done.stdout and "HTTP Request" in done.stderr  # the report, and httpx's log lines
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # a port nobody listens on once closed
    refused = _doctor("--base-url", _with_credentials(f"http://127.0.0.1:{port}/v1"), "--model", "fake-model")
    assert "could not connect to http://127.0.0.1" in refused.stdout + refused.stderr and refused.returncode == 1
    for run in (done, refused):
        printed = run.stdout + run.stderr
        assert not [s for s in (*SECRETS, "bob:") if s in printed], printed[-3000:]


def test_no_credential_is_printed_when_the_narrator_cannot_be_built(packs, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    url = _with_credentials("http://127.0.0.1:9/v1")
    fitness = check_endpoint(settings_for(url, api_key_env="NO_SUCH_KEY_VAR"), packs)
    shown = report(fitness) + json.dumps(fitness.as_json())
    assert "NO_SUCH_KEY_VAR" in shown and fitness.verdict.startswith("cannot play")
    assert not [s for s in (*SECRETS, "bob:") if s in shown], shown


# ------------------------------------------------------------------------------------------------ (c) stalls
def test_a_stalled_endpoint_stops_the_check_after_a_few_calls_and_says_why(packs):
    with StalledServer() as server:
        started = time.monotonic()
        fitness = check_endpoint(settings_for(server.url, timeout_s=0.3), packs)
        seconds = time.monotonic() - started
        connections = server.connections
    # a line the engine answers alone (the player, stuck, asks for what cannot be) calls no model: not a failure
    assert fitness.turns - fitness.alone == fitness.failed_calls == STALL_LIMIT == 3, report(fitness)
    assert connections <= STALL_LIMIT + 1  # no model list asked of an endpoint that never answered
    assert seconds < 10
    assert fitness.verdict.startswith("cannot play: the endpoint did not answer (the check stopped after 3 turn")
    assert "no answer from http://127.0.0.1" in fitness.verdict and "stopped early" in report(fitness)


def test_an_endpoint_that_answers_too_late_stops_the_check_too(packs):
    with FakeOpenAIServer() as server:
        server.fallback = delay(5.0)  # every answer comes 5 s after a 0.3 s timeout
        started = time.monotonic()
        fitness = check_endpoint(settings_for(server.url, timeout_s=0.3), packs)
        seconds = time.monotonic() - started
        asked = len(server.chat_requests())
    assert fitness.turns - fitness.alone == STALL_LIMIT and asked == STALL_LIMIT and seconds < 10, report(fitness)
    assert fitness.stopped and "the check stopped after 3 turn calls in a row failed" in fitness.verdict


def test_the_count_of_failures_in_a_row_starts_again_after_an_answer(packs):
    """Two failures, an answer, two failures...: never three in a row, so the check plays every turn."""
    with FakeOpenAIServer() as server:
        model = FollowsTheAction()
        calls = 0

        def flaky(body: dict[str, Any]):
            nonlocal calls
            if str(body["messages"][0]["content"]).startswith(("You summarize", "You keep the Story Bible")):
                return model(body)
            calls += 1
            return model(body) if calls % 3 == 0 else status(503, message="busy")

        server.responder = flaky
        fitness = check_endpoint(settings_for(server.url), packs)
    called = fitness.turns - fitness.alone  # lines the engine answered alone call no model
    assert fitness.turns == 13 and not fitness.stopped and fitness.failed_calls >= 2 * called // 3


# ------------------------------------------------------------------------------------------------ (d) no endpoint
def test_doctor_without_an_endpoint_says_there_is_nothing_to_test(tmp_path, monkeypatch, capsys):
    from game.cli import main as cli_main

    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("STORYECHO_")]:
        monkeypatch.delenv(name)
    code = cli_main(["doctor", "--llm", "openai"])
    out = capsys.readouterr().out
    assert "the built-in narrator needs no test" in out and "cannot play" not in out
    assert code == 1


async def test_test_narrator_on_default_settings_says_the_built_in_narrator_needs_no_test(tmp_path, monkeypatch):
    from textual.widgets import Button, Static

    from game.config import load_settings
    from game.tui.fitness import NarratorTestScreen
    from game.tui.settings import SettingsScreen
    from tests.tui.test_screens import Harness, settle

    for name in [n for n in os.environ if n.startswith("STORYECHO_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "storyecho.toml"
    config.write_text("")  # every setting at its default
    app = Harness(lambda: SettingsScreen(load_settings(config), config))
    async with app.run_test(size=(110, 32)) as pilot:
        app.screen.query_one("#test", Button).press()
        await settle(pilot)
        assert isinstance(app.screen, NarratorTestScreen)
        for _ in range(50):
            await pilot.pause(0.05)
            shown = str(app.screen.query_one("#test-report", Static).render())
            if shown != "Starting…":
                break
        assert "The built-in narrator needs no test" in shown, shown
        assert "cannot play" not in shown and app.screen.thread is None  # nothing was played


# ------------------------------------------------------------------------------------------------ (g) the rates
def test_the_report_counts_the_speaks_for_the_player_and_repetition_rates(packs):
    fitness = Fitness(endpoint="http://127.0.0.1:1/v1", model="m")
    pack = packs("fantasy_001")
    from game.engine import fitness as module
    from game.world.state import new_game

    state = new_game(pack, seed=1)
    flags = [(True, False), (False, False), (True, True), (False, False)]
    for spoke, repeated in flags:
        answer = json.dumps({"narration": "You look around.", "effects": {}})
        trace = DebugTrace(raw_output=answer, spoke_for_player=spoke, repeated=repeated)
        module._judge(fitness, TurnResult(1, "look", "You look around.", [], state, trace=trace), pack, state.node)
    assert (fitness.answered, fitness.spoke_for_player, fitness.repeated) == (4, 2, 1)
    assert fitness.speaks_share == 0.5 and fitness.repeats_share == 0.25
    text = report(fitness)
    assert "speaks for you   2 of 4 answered turns (50%)" in text
    assert "repetition       1 of 4 answered turns (25%)" in text
    figures = fitness.as_json()
    assert figures["speaks_share"] == 0.5 and figures["repeats_share"] == 0.25


class SpeaksForThePlayer(FollowsTheAction):
    """Plays well, except that its first answer of the check puts words in the player's mouth (the player only
    looked)."""

    def turn(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = super().turn(body)
        if self.calls["turn"] == 1:
            answer["narration"] = 'You say, "I will serve the Shadow King and kneel to him." ' + answer["narration"]
        return answer


def test_a_model_that_speaks_for_the_player_is_counted(packs):
    with FakeOpenAIServer() as server:
        server.responder = SpeaksForThePlayer()
        fitness = check_endpoint(settings_for(server.url), packs)
    assert fitness.spoke_for_player == 1 and fitness.answered == 13, report(fitness)
    assert "speaks for you   1 of 13 answered turns (8%)" in report(fitness)
    assert fitness.as_json()["speaks_share"] == round(1 / 13, 3)
