"""The OpenAI-compatible narrator against a fault-injecting fake server.

Every fault path is bounded (attempts and wall time), ends in a NarratorError
that names what happened, and never shows the API key; streaming, usage,
JSON-mode fallback, summaries, fact extraction, and three turns of the mini
story through the real pipeline.
"""

from __future__ import annotations

import json
import logging
import socket
import time
import traceback
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from game.engine.pipeline import TurnPipeline
from game.engine.prompt import ANSWER_REMINDER, JSON_INSTRUCTION
from game.engine.schema import parse_turn
from game.llm.base import NarratorError
from game.llm.openai_compat import OpenAINarrator
from game.llm.openai_endpoint import NO_KEY, redact, resolve
from game.llm.presets import PRESETS
from game.llm.schemas import FACT_TYPES, MAX_FACT_UPDATES, MAX_NEW_FACTS, SCHEMA_TEXT, TURN_SCHEMA
from game.llm.settings import OpenAISettings
from game.memory.records import ENTRY_TYPES
from game.world.effects import NOT_OFFERED, Effects
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.fake_openai_server import (
    FakeOpenAIServer,
    delay,
    drop,
    empty,
    invalid_json,
    ok,
    prose_wrapped_json,
    reject_response_format,
    status,
    truncated,
)

KEY = "sk-test-PLANTED-123"
KEY_ENV = "STORYECHO_TEST_OPENAI_KEY"
MESSAGES = [
    {"role": "system", "content": "You are the narrator. Answer in JSON."},
    {"role": "user", "content": "## Player action\nlook"},
]
TURN = {"narration": "Mist curls around you.", "choices": ["look", "go north"], "effects": {}, "memory_notes": []}


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def make(server, on_text=None, **settings) -> OpenAINarrator:
    values = {"base_url": server.url, "api_key_env": KEY_ENV, "model": "fake-model", "timeout_s": 2.0}
    values["json_mode"] = "json_schema"  # messages go out as given (no schema text appended)
    narrator = OpenAINarrator(OpenAISettings(**(values | settings)), on_text=on_text, environ={KEY_ENV: KEY})
    narrator.backoff_base_s = 0.01
    return narrator


def bundle(messages=None, attempt=0):
    return SimpleNamespace(messages=[dict(m) for m in (messages or MESSAGES)], blocks=[], attempt=attempt)


def fails(narrator, call=None) -> tuple[str, float]:
    start = time.monotonic()
    with pytest.raises(NarratorError) as info:
        (call or (lambda: narrator.narrate(bundle())))()
    return str(info.value), time.monotonic() - start


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------- settings
def test_presets_fill_url_model_key_and_json_mode():
    openai = resolve(OpenAISettings(preset="openai"), {"OPENAI_API_KEY": KEY})
    assert (openai.base_url, openai.model, openai.json_mode) == (
        "https://api.openai.com/v1",
        "gpt-4o-mini",
        "json_schema",
    )
    assert openai.api_key == KEY and openai.key_source == "env OPENAI_API_KEY"
    deepseek = resolve(OpenAISettings(preset="deepseek"), {"DEEPSEEK_API_KEY": KEY})
    assert deepseek.host == "api.deepseek.com" and deepseek.json_mode == "json_object"
    doubao = resolve(OpenAISettings(preset="doubao", model="ep-123"), {"ARK_API_KEY": KEY})
    assert doubao.base_url == "https://ark.cn-beijing.volces.com/api/v3" and doubao.model == "ep-123"
    for local in ("ollama", "llamacpp", "vllm", "lmstudio"):
        endpoint = resolve(OpenAISettings(preset=local), {})
        assert endpoint.api_key == NO_KEY and endpoint.key_source == "none"
        assert endpoint.base_url.startswith("http://127.0.0.1:")
        # llama-cpp-python's server answers json_schema with a 500; its json_object takes the schema as a grammar
        assert endpoint.json_mode == ("json_object" if local == "llamacpp" else "json_schema")
    assert PRESETS["llamacpp"].base_url == "http://127.0.0.1:8080/v1" and PRESETS["llamacpp"].object_schema
    forced = resolve(OpenAISettings(preset="openai", json_mode="prompt", api_key_env="MY_KEY"), {"MY_KEY": KEY})
    assert forced.json_mode == "prompt" and not forced.auto and forced.key_source == "env MY_KEY"


def test_missing_key_names_the_variable_and_bad_settings_are_refused():
    with pytest.raises(NarratorError, match="set the DEEPSEEK_API_KEY environment variable"):
        resolve(OpenAISettings(preset="deepseek"), {})
    with pytest.raises(NarratorError, match="no endpoint"):
        resolve(OpenAISettings(), {})
    with pytest.raises(ValidationError):
        OpenAISettings(preset="openai", apikey="typo")  # extra="forbid"
    with pytest.raises(ValidationError):
        OpenAISettings(preset="mistral")
    with pytest.raises(ValidationError):
        OpenAISettings(json_mode="grammar")


def test_key_from_the_config_file_is_secret():
    settings = OpenAISettings(preset="openai", api_key=KEY)
    endpoint = resolve(settings, {})
    assert endpoint.api_key == KEY and endpoint.key_source == "config"
    for text in (repr(settings), str(settings), settings.model_dump_json(), repr(endpoint)):
        assert KEY not in text


def test_redact_removes_the_key_bearer_tokens_and_key_like_words():
    assert redact(f"bad key {KEY}!", KEY) == "bad key ***!"
    assert KEY not in redact(f"Authorization: Bearer {KEY}")
    assert "sk-proj-abcdef" not in redact("Incorrect API key provided: sk-proj-abcdef****wxyz")
    assert redact("nothing secret here", KEY) == "nothing secret here"


def test_turn_schema_names_every_effect_and_a_schema_valid_turn_validates():
    offered = set(TURN_SCHEMA["properties"]["effects"]["properties"])
    assert offered == set(Effects.model_fields) - NOT_OFFERED
    assert all(f'"{name}"' in JSON_INSTRUCTION for name in offered)  # the prompt's format says the same keys
    assert not any(f'"{name}"' in JSON_INSTRUCTION for name in NOT_OFFERED)
    assert set(FACT_TYPES) <= set(ENTRY_TYPES)
    sample = {
        "narration": "You take the sword.",
        "choices": ["look"],
        "effects": {"items_gained": ["sword"], "give_item": None, "combat_action": None, "quest_updates": []},
        "memory_notes": ["a note", {"entry_type": "event", "canonical_key": "event:x", "content": "It happened."}],
    }
    turn, repaired = parse_turn(json.dumps(sample))
    assert not repaired and turn.effects.items_gained == ["sword"] and len(turn.memory_notes) == 2


# ------------------------------------------------------ streaming, usage
def test_streaming_delivers_chunks_in_order_and_returns_their_concatenation(server):
    content = json.dumps(TURN)
    pieces = [content[i : i + 7] for i in range(0, len(content), 7)]
    server.script(ok(content, chunks=pieces, chunk_delay=0.01, usage=(900, 45, 768)))
    seen: list[str] = []
    narrator = make(server, on_text=seen.append, json_mode="json_schema")
    text = narrator.narrate(bundle())
    assert seen == pieces and "".join(seen) == text == content
    call = narrator.last_call
    assert call is not None and call.attempts == 1 and call.finish_reason == "stop"
    assert (call.prompt_tokens, call.completion_tokens, call.cached_tokens) == (900, 45, 768)
    assert call.model == "fake-model" and call.json_mode == "json_schema" and not call.schema_in_prompt
    assert call.time_to_first_token_ms is not None and 0 < call.time_to_first_token_ms <= call.elapsed_ms
    (request,) = server.chat_requests()
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == MESSAGES and body["max_tokens"] == 600 and body["temperature"] == 0.8
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"] == {"name": "turn", "schema": TURN_SCHEMA, "strict": False}


def test_no_cached_tokens_reported_is_none_and_a_failing_display_does_not_cost_the_turn(server):
    server.script(ok(json.dumps(TURN), usage=(100, 20, None)))

    def broken(_: str) -> None:
        raise RuntimeError("display fell over")

    narrator = make(server, on_text=broken)
    assert json.loads(narrator.narrate(bundle())) == TURN
    assert narrator.last_call.cached_tokens is None and narrator.last_call.prompt_tokens == 100


def test_model_unset_uses_the_first_model_the_server_lists(server):
    server.models = ["qwen2.5-7b-instruct", "other"]
    server.script(ok(json.dumps(TURN)))
    narrator = make(server, model=None)
    narrator.narrate(bundle())
    assert server.chat_requests()[0].body["model"] == "qwen2.5-7b-instruct"
    assert narrator.last_call.model == "qwen2.5-7b-instruct"


# --------------------------------------------------------------- faults
def test_a_retried_turn_asks_for_another_seed_and_a_first_telling_leaves_it_to_the_server(server):
    server.script(ok('{"narration": "One."}'), ok('{"narration": "Two."}'), ok('{"narration": "Three."}'))
    narrator = make(server)
    for attempt in (0, 1, 2):
        narrator.narrate(bundle(attempt=attempt))
    seeds = [r.body.get("seed", "none") for r in server.chat_requests()]
    assert seeds == ["none", 1, 2]


def test_rate_limit_honours_retry_after_and_resends_the_same_messages(server):
    server.script(status(429, retry_after=0.3), ok(json.dumps(TURN)))
    narrator = make(server)
    reasons: list[str] = []
    narrator.on_retry = reasons.append
    start = time.monotonic()
    assert json.loads(narrator.narrate(bundle())) == TURN
    assert time.monotonic() - start >= 0.3
    assert len(reasons) == 1 and reasons[0].startswith("rate limited by")
    first, second = server.chat_requests()
    assert first.body["messages"] == second.body["messages"] == MESSAGES
    assert second.at - first.at >= 0.3
    assert narrator.last_call.attempts == 2


def test_rate_limit_that_never_ends_fails_after_max_attempts(server):
    server.script(*[status(429, retry_after=0.05)] * 5)
    message, elapsed = fails(make(server))
    assert message.startswith(f"rate limited by {server.url.split('/')[2]}") and "(3 attempts)" in message
    assert len(server.chat_requests()) == 3 and elapsed < 2


def test_retry_after_beyond_the_wall_time_gives_up_at_once(server):
    server.script(status(429, retry_after=100))
    message, elapsed = fails(make(server, timeout_s=1.0))
    assert "rate limited" in message and "asked to wait 100s" in message and "(1 attempt)" in message
    assert elapsed < 1 and len(server.chat_requests()) == 1


@pytest.mark.parametrize("code", [500, 502, 503])
def test_server_errors_are_retried_then_named(server, code):
    server.script(*[status(code)] * 3)
    message, elapsed = fails(make(server))
    assert f"server error {code} from 127.0.0.1:" in message and "(3 attempts)" in message
    assert len(server.chat_requests()) == 3 and elapsed < 2


def test_server_error_then_success(server):
    server.script(status(500), drop(), ok(json.dumps(TURN)))
    narrator = make(server)
    assert json.loads(narrator.narrate(bundle())) == TURN
    assert narrator.last_call.attempts == 3
    assert all(r.body["messages"] == MESSAGES for r in server.chat_requests())


def test_timeouts_are_bounded_in_attempts_and_wall_time(server):
    server.script(delay(3), delay(3), delay(3))
    message, elapsed = fails(make(server, timeout_s=0.3, max_attempts=3))
    assert message.startswith(f"no answer from {server.url} within") and "(3 attempts)" in message
    assert 0.8 < elapsed < 0.3 * 3 + 0.6


def test_a_stream_that_drips_past_the_timeout_is_cut(server):
    server.script(ok(json.dumps(TURN), chunks=["x"] * 30, chunk_delay=0.05))
    message, elapsed = fails(make(server, timeout_s=0.4, max_attempts=1))
    assert "no complete answer from" in message and elapsed < 1.0


def test_connection_refused_names_the_url(server):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    narrator = OpenAINarrator(OpenAISettings(base_url=url, model="m", timeout_s=1), environ={})
    narrator.backoff_base_s = 0.01
    message, elapsed = fails(narrator)
    assert message == f"could not connect to {url} (3 attempts)" and elapsed < 2


def test_empty_answer_is_retried_then_named(server):
    server.script(empty(), ok(json.dumps(TURN)))
    narrator = make(server)
    assert json.loads(narrator.narrate(bundle())) == TURN and narrator.last_call.attempts == 2
    server.script(empty(), empty(), empty())
    message, _ = fails(narrator)
    assert message == "the model returned an empty answer (3 attempts)"


def test_cut_off_answer_is_retried_then_named(server):
    server.script(truncated(), truncated(), truncated())
    narrator = make(server)
    message, _ = fails(narrator)
    assert message == "the model's answer was cut off (max_tokens 600) (3 attempts)"
    assert narrator.last_call.finish_reason == "length" and narrator.last_call.error == message


def test_invalid_json_is_returned_for_the_pipeline_to_judge(server):
    server.script(invalid_json())
    narrator = make(server)
    assert narrator.narrate(bundle()).startswith('{"narraton": "You walk')
    assert narrator.last_call.attempts == 1


def test_auth_and_model_errors_are_not_retried(server):
    server.script(status(401, echo_key=True))
    message, _ = fails(make(server))
    assert "refused the API key (401" in message and f"check {KEY_ENV}" in message and KEY not in message
    server.script(status(404, message="The model `nope` does not exist"))
    message, _ = fails(make(server, model="nope"))
    assert "answered 404 for model 'nope'" in message and "(1 attempt)" in message
    assert len(server.chat_requests()) == 2


# ------------------------------------------------------------ JSON mode
def test_auto_falls_back_from_json_schema_to_json_object_once_and_remembers(server):
    server.reject_json_schema = True
    server.script(ok(json.dumps(TURN)), ok(json.dumps(TURN)))
    narrator = make(server, preset="vllm", api_key_env=None, json_mode="auto")
    assert narrator.json_mode == "json_schema"
    assert json.loads(narrator.narrate(bundle())) == TURN
    assert narrator.json_mode == "json_object" and narrator.last_call.json_mode == "json_object"
    assert narrator.last_call.attempts == 2 and narrator.last_call.schema_in_prompt
    narrator.narrate(bundle())
    formats = [r.body.get("response_format", {}).get("type") for r in server.chat_requests()]
    assert formats == ["json_schema", "json_object", "json_object"]
    rejected, fallback, _ = server.chat_requests()
    assert rejected.body["messages"] == MESSAGES  # the schema travels in response_format
    assert fallback.body["messages"][0]["content"].endswith(SCHEMA_TEXT)  # ...or in the system prompt
    assert fallback.body["messages"][1:] == MESSAGES[1:]


def test_scripted_rejection_and_a_fallback_that_fails_for_other_reasons(server):
    server.script(reject_response_format(), ok(json.dumps(TURN)))
    narrator = make(server, json_mode="auto", preset="vllm", api_key_env=None)
    narrator.narrate(bundle())
    assert narrator.json_mode == "json_object"
    # a 400 that no mode cures is reported, and the mode is not changed by it
    server.script(status(400, message="context too long"), status(400), status(400))
    message, _ = fails(narrator)
    assert "rejected the request (400" in message and narrator.json_mode == "json_object"
    assert [r.body.get("response_format", {}).get("type") for r in server.chat_requests()[2:]] == [
        "json_object",
        None,
    ]


def test_an_explicit_json_mode_is_not_changed_behind_your_back(server):
    server.reject_json_schema = True
    narrator = make(server, json_mode="json_schema")
    message, _ = fails(narrator)
    assert "rejected the request (400" in message and "(1 attempt)" in message
    assert narrator.json_mode == "json_schema"
    server.script(ok(json.dumps(TURN)))
    make(server, json_mode="prompt").narrate(bundle())
    assert "response_format" not in server.chat_requests()[-1].body


# ------------------------------------------------- summaries and facts
def test_summarize_is_stateless_trimmed_and_fails_as_narrator_error(server):
    long = "The player met the Old Sage at the Quiet Camp and took the Iron Sword from the rack before dusk."
    server.script(ok(json.dumps({"summary": long})))
    narrator = make(server, json_mode="json_schema")
    assert (
        narrator.summarize("Turn 1: player: take sword | You take it.", max_words=8) == " ".join(long.split()[:8]) + "…"
    )
    body = server.chat_requests()[0].body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "at most 8 words" in body["messages"][0]["content"] and "third person" in body["messages"][0]["content"]
    assert body["response_format"]["json_schema"]["name"] == "summary"
    assert narrator.last_calls["summary"].attempts == 1 and narrator.last_call is None  # turns keep their own
    server.script(ok("I cannot summarize that."))
    message, _ = fails(narrator, lambda: narrator.summarize("text"))
    assert "not a JSON object" in message
    server.script(*[status(503)] * 3)
    message, _ = fails(narrator, lambda: narrator.summarize("text"))
    assert "server error 503" in message


def fact(key, n, **over):
    return {
        "entry_type": "event",
        "canonical_key": key,
        "title": f"Fact {n}",
        "content": f"Something happened, number {n}.",
        "importance": 50,
    } | over


def test_extract_facts_validates_drops_and_caps(mini_pack, server):
    known = [f"event:old_{n}" for n in range(12)]
    answer = {
        "new_facts": [
            fact("character:sage", 0, entry_type="character", content="The sage lives at the camp."),
            fact("event:bad_importance", 1, importance="high"),
            fact("event:too_important", 2, importance=150),
            fact("style:tone", 3, entry_type="style_rule"),
            fact("", 4),
            fact("event:empty", 5, content=""),
            fact("character:sage", 6),  # the same key again
            fact("Event:Mixed Case", 7),  # normalised: event:mixed_case
            *[fact(f"event:new_{n}", n) for n in range(20)],
        ],
        "updates": [fact(key, n) for n, key in enumerate(known)],
    }
    server.script(ok(json.dumps(answer)))
    narrator = OpenAINarrator(
        OpenAISettings(base_url=server.url, model="m", json_mode="json_schema"), pack=mini_pack, environ={}
    )
    facts = narrator.extract_facts("The sage said the troll was once a ferryman.", known)
    new = [f for f in facts if not f["update"]]
    updates = [f for f in facts if f["update"]]
    assert len(new) == MAX_NEW_FACTS and len(updates) == MAX_FACT_UPDATES
    assert new[0]["canonical_key"] == "character:sage" and new[1]["canonical_key"] == "event:mixed_case"
    assert all(set(f) == {"entry_type", "canonical_key", "title", "content", "importance", "update"} for f in facts)
    assert all(f["entry_type"] in FACT_TYPES and 0 <= f["importance"] <= 100 for f in facts)
    dropped = "\n".join(narrator.dropped_facts)
    for reason in ("new_facts[1]: importance", "new_facts[2]: importance", "new_facts[3]: entry_type"):
        assert reason in dropped
    assert "new_facts[4]: canonical_key" in dropped and "new_facts[5]: content" in dropped
    assert "character:sage repeated" in dropped and "more than 12 new facts" in dropped
    assert "more than 8 updates" in dropped
    body = server.chat_requests()[0].body
    system = body["messages"][0]["content"]
    assert "NPC ids: sage, troll_npc" in system and "event:old_0" in system
    assert body["response_format"]["json_schema"]["name"] == "story_bible_facts" and len(body["messages"]) == 2


def test_extract_facts_of_a_non_object_answer_is_a_narrator_error(server):
    server.script(ok("[1, 2, 3]"))
    message, _ = fails(make(server), lambda: make(server).extract_facts("text"))
    assert "not a JSON object" in message


# -------------------------------------------------------------- secrets
def test_the_key_never_leaks_from_any_error_path(server, monkeypatch, caplog):
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    settings = OpenAISettings(base_url=server.url, api_key_env=KEY_ENV, model="m", timeout_s=0.3, max_attempts=2)
    shown: list[str] = []
    narrator = OpenAINarrator(settings, on_text=shown.append)
    narrator.backoff_base_s = 0.01
    dead = OpenAINarrator(settings.model_copy(update={"base_url": f"http://127.0.0.1:{closed_port()}/v1"}))
    dead.backoff_base_s = 0.01
    strict = OpenAINarrator(settings.model_copy(update={"json_mode": "json_schema"}))
    server.reject_json_schema = True
    echo = f"your key {KEY} is wrong"
    paths = [
        (narrator, [status(401, echo_key=True)]),
        (narrator, [status(403, message=echo)]),
        (narrator, [status(429, retry_after=0.01, echo_key=True)] * 2),
        (narrator, [status(500, message=echo)] * 2),
        (narrator, [status(404, echo_key=True)]),
        (narrator, [status(400, message=echo)]),
        (strict, []),
        (narrator, [delay(2), delay(2)]),
        (narrator, [empty(), truncated(KEY)]),
        (narrator, [drop(), drop()]),
        (dead, []),
    ]
    errors: list[NarratorError] = []
    for who, script in paths:
        server.script(*script)
        with pytest.raises(NarratorError) as info:
            who.narrate(bundle())
        errors.append(info.value)
    for call in (lambda: narrator.summarize("x"), lambda: narrator.extract_facts("x", ["k"])):
        server.script(ok(f"not json {KEY}"))
        with pytest.raises(NarratorError) as info:
            call()
        errors.append(info.value)
    wall = json.dumps({"narration": f"The wall reads {KEY}, and sk-test-PLANTED-12 too."})
    server.script(ok(wall, chunks=[wall[i : i + 5] for i in range(0, len(wall), 5)]))  # the key split over chunks
    returned = narrator.narrate(bundle())
    assert "".join(shown).endswith(returned) and returned.count("***") == 1 and "too." in returned
    assert "refused the API key" in str(errors[0]) and "could not connect" in str(errors[-3])
    texts = [
        returned,
        *shown,
        "".join(shown),
        repr(narrator),
        repr(settings),
        repr(narrator.endpoint),
        str(vars(settings)),
    ]
    texts += [repr(c) for c in narrator.last_calls.values()]
    for exc in errors:
        assert exc.__cause__ is None and exc.__context__ is None
        texts += [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    texts += [caplog.text, *(r.getMessage() for r in caplog.records)]
    assert any("Bearer" in r.headers.get("authorization", "") for r in server.chat_requests())
    leaks = [t for t in texts if KEY in t]
    assert not leaks, leaks[:3]


# ------------------------------------------------------ the mini story
def test_three_turns_of_the_mini_story_through_the_pipeline(mini_pack, server):
    take = {
        "narration": "You lift the iron sword from its rack.",
        "choices": ["look", "go north"],
        "effects": {"items_gained": ["sword"]},
        "memory_notes": ["The player armed themselves with the iron sword."],
    }
    greedy = {"narration": "A chest of gold appears!", "choices": ["look"], "effects": {"gold_delta": 1000}}
    honest = {"narration": "The camp is quiet; the fire crackles.", "choices": ["look"], "effects": {}}
    north = {"narration": "You walk north into the dark woods.", "choices": ["look"], "effects": {"move_to": "woods"}}
    narrator = OpenAINarrator(OpenAISettings(preset="vllm", base_url=server.url, model="m"), pack=mini_pack, environ={})
    engine = TurnPipeline(mini_pack, new_game(mini_pack, seed=3), narrator, keyword_memory(mini_pack))

    def play(action, *answers):
        server.queue.clear()
        server.script(*answers)
        before = len(server.chat_requests())
        result = engine.play(action)
        return result, server.chat_requests()[before:]

    first, (request,) = play("take sword", ok(json.dumps(take)))
    assert first.ok and "sword" in engine.state.inventory
    assert [a.effect for a in first.applied][:1] == ["items_gained"]
    assert request.body["messages"][0]["content"].startswith(mini_pack.story.persona)
    # the user prompt ends with the action, what the rules will add by themselves (the sword finishes a quest
    # step and starts the next quest: issue 42) and the reminder of the answer format (in the system prompt)
    user = request.body["messages"][-1]["content"]
    assert user.endswith(f"\n\n{ANSWER_REMINDER}")
    action = user[user.index("## Player action") :]
    assert action.startswith("## Player action\ntake sword\nThe player asks to: take the Iron Sword.\nRules' ")
    assert "New quest: The Bridge." in action
    assert "## Answer format" in request.body["messages"][0]["content"]
    assert request.body["response_format"]["type"] == "json_schema"
    gold = engine.state.gold

    # the honest answer is there in case the pipeline asks again after a refusal
    second, requests = play("look", ok(json.dumps(greedy)), ok(json.dumps(honest)))
    assert second.ok and engine.state.gold == gold
    assert ("gold_delta", 1000) in [(r.effect, r.value) for r in second.rejected]
    asked = requests[0].body["messages"]
    assert all(r.body["messages"][: len(asked)] == asked for r in requests)  # a re-ask reuses the prompt

    third, requests = play("go north", prose_wrapped_json(north))
    assert third.ok and engine.state.node == "woods" and third.trace.repaired
    assert third.narration.startswith(north["narration"])
    assert len(requests) == 1  # the prose-wrapped answer was repaired locally, not re-asked
    told = requests[0].body["messages"][-1]["content"]
    assert told.endswith(f"\n\n{ANSWER_REMINDER}")
    assert "## Player action\ngo north\nThe player asks to: go to the Dark Woods.\nRules' consequences" in told
    assert "arrives at Dark Woods for the first time: " in told  # the place, told at a first arrival
    assert narrator.last_call.attempts == 1 and narrator.last_call.prompt_tokens == 120


def test_pipeline_reasks_once_with_the_error_and_a_dead_server_changes_nothing(mini_pack, server):
    server.script(invalid_json(), ok(json.dumps(TURN)))
    narrator = OpenAINarrator(OpenAISettings(base_url=server.url, model="m", max_attempts=2), environ={})
    narrator.backoff_base_s = 0.01
    engine = TurnPipeline(mini_pack, new_game(mini_pack, seed=3), narrator, keyword_memory(mini_pack))
    result = engine.play("look")
    assert result.ok and result.trace.repaired
    first, second = server.chat_requests()
    assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    assert second.body["messages"][-1]["content"].startswith("That answer was invalid")
    before = engine.state.snapshot()
    server.script(status(500), status(500))
    failed = engine.play("look")
    assert not failed.ok and "server error 500" in failed.error and engine.state == before


@pytest.mark.parametrize("mode", ["prompt", "json_object", "json_schema"])
def test_the_answer_format_is_sent_once_in_every_json_mode(server, mode):
    """Was (issue 42): without constrained decoding the turn schema (756 tokens) rode in the system prompt beside
    the answer format, which says the same: 1,312 of 2,350 tokens the same every turn. Now the prompt's format is
    the only copy in the messages; the schema goes only as response_format. What is sent is the prompt composed."""
    from game.llm.schemas import SCHEMA_TEXT
    from game.text import estimate_tokens
    from game.world.loader import content_root, load_pack

    pack = load_pack(content_root() / "fantasy_001")
    narrator = make(server, json_mode=mode)
    budget = 1250  # below what this story's first prompt holds, so the budget cuts memory
    engine = TurnPipeline(pack, new_game(pack, seed=3), narrator, keyword_memory(pack), prompt_budget_tokens=budget)
    server.script(ok(json.dumps(TURN), usage=None))
    result = engine.play("look around")
    assert result.ok, result.error
    (request,) = server.chat_requests()
    sent = request.body["messages"]
    wire = sum(estimate_tokens(m["content"]) for m in sent)
    assert wire <= budget, f"{wire} tokens sent in {mode} mode"
    assert SCHEMA_TEXT not in sent[0]["content"] and sent[0]["content"].count("## Answer format") == 1
    assert sent == result.trace.prompt.messages  # the debug panel's prompt is the bytes sent
    assert result.trace.prompt.overhead_tokens == 0
    assert result.trace.prompt.cut  # the budget was binding: what it left out is listed


def test_a_stream_of_keep_alive_comments_ends_at_the_wall_clock_deadline(server):
    """Was: an endpoint streaming only `: keep-alive` kept narrate() running past 30 s with timeout_s=3 (every
    comment reset the read timeout), and quitting hung behind it."""
    from tests.fake_openai_server import keep_alive

    server.script(keep_alive(30))
    narrator = make(server, timeout_s=1.0, max_attempts=1)
    message, elapsed = fails(narrator)
    assert elapsed < 5 and "within 1s" in message


def test_a_base_url_shows_no_user_info_and_no_query_anywhere():
    """Was: `--base-url http://bob:PASSWORD@host/v1?api-key=KEY` showed the password and the key in the error, the
    trace, `--json`, stderr and the TUI's narrator line."""
    from game.config import load_settings
    from game.wiring import _label

    url = f"http://bob:PASSWORD@127.0.0.1:{closed_port()}/v1?api-key=KEY-123-SECRET"
    narrator = OpenAINarrator(
        OpenAISettings(base_url=url, api_key_env=KEY_ENV, model="m", timeout_s=1.0, max_attempts=1),
        environ={KEY_ENV: KEY},
    )
    narrator.backoff_base_s = 0.01
    message, _ = fails(narrator)
    shown = [message, repr(narrator), str(narrator.last_call), _label("openai", load_settings(None, llm="openai",
             openai={"base_url": url}))]  # fmt: skip
    for text in shown:
        assert "PASSWORD" not in text and "KEY-123-SECRET" not in text and "bob" not in text, text
    assert "127.0.0.1" in message and "127.0.0.1" in shown[-1]


@pytest.mark.parametrize("mode", ["prompt", "json_schema"])
def test_the_debug_panel_shows_the_response_format_the_model_received(mini_pack, server, mode):
    """Was (issue 42): the debug panel's prompt omitted the schema sent beside the messages as response_format."""
    from game.tui.debug_data import DebugData
    from game.tui.debug_render import render_prompt, render_timings

    engine = TurnPipeline(
        mini_pack, new_game(mini_pack, seed=3), make(server, json_mode=mode), keyword_memory(mini_pack)
    )
    server.script(ok(json.dumps(TURN)))
    result = engine.play("look")
    assert result.ok, result.error
    (request,) = server.chat_requests()
    shown = render_prompt(DebugData.from_result(result)).plain
    sent = request.body.get("response_format")
    if sent is None:
        assert "response_format" not in shown
    else:
        assert "Sent beside the messages: response_format" in shown
        assert json.dumps(sent, ensure_ascii=False) in shown.replace("\n", "")  # the very bytes, in full
        assert '"response_format' not in render_timings(DebugData.from_result(result)).plain  # not in the call row


def test_a_summary_over_its_words_is_cut_at_a_sentence_end_and_a_little_over_is_kept_whole(server):
    """Was (relay game, issue 42): a 61-word summary for 60 was cut mid-sentence ("...The player took"), and the
    synopsis made from it lost what the player took."""
    narrator = make(server, json_mode="json_schema")
    two = "Garrick told the player of Hal. " + " ".join(["word"] * 20) + ". The player took the tonic and left."
    server.script(ok(json.dumps({"summary": two})))
    assert narrator.summarize("text", max_words=20) == "Garrick told the player of Hal."
    server.script(ok(json.dumps({"summary": two})))
    assert narrator.summarize("text", max_words=len(two.split()) - 2) == two  # two words over: kept whole
