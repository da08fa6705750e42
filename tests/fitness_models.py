"""Models for the fitness check's tests, as responders of the fake server (``tests/fake_openai_server.py``).

:class:`FollowsTheAction` plays as a good model does: each turn it proposes the effect the action asks for (a move
through a real exit, a talk with the person named) and names the place or the person; summaries and Story Bible
facts are answered well unless told otherwise (``summaries``: a behaviour for every summary call, to inject a
failure or a stall). The check's script is fixed (``game.engine.fitness.SCRIPT``), so its answers are a table.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from tests.fake_openai_server import Behaviour, ok

_FANTASY: dict[str, tuple[dict[str, Any], str]] = {
    "look": ({}, "You look around the Mistwood Trailhead."),
    "go east": ({"move_to": "hunter_cabin"}, "You walk east to the Old Hunter's Lodge."),
    "talk to garrick": ({"talk_to": "old_hunter"}, "Garrick looks up from the fire."),
    "go north": ({}, "There is no way north from the Old Hunter's Lodge."),
    "ask garrick about hal": ({"talk_to": "old_hunter"}, "Garrick speaks of Hal."),
    "go west": ({"move_to": "forest_edge"}, "You walk back west to the Mistwood Trailhead."),
}
_SCIFI: dict[str, tuple[dict[str, Any], str]] = {
    "talk to the voice": ({"talk_to": "the_voice"}, "The Voice hums through the Lab Pod Bay."),
    "ask the voice about memories": ({"talk_to": "the_voice"}, "The Voice speaks of memories in the Lab Pod Bay."),
    "go west": ({}, "There is no way west from the Lab Pod Bay."),
    "go east": ({"move_to": "security_hub"}, "You step east into the Security Hub."),
    "talk to echo7": ({"talk_to": "echo7"}, "ECHO-7 turns to you in the Security Hub."),
    "look": ({}, "You look around the Security Hub."),
}
SUMMARY = "You summarize passages"
FACTS = "You keep the Story Bible"


def action_of(body: dict[str, Any]) -> str:
    """The player's action in a turn request (the prompt's "## Player action" block)."""
    text = str(body["messages"][-1]["content"])
    found = re.search(r"## Player action\n(.+)", text)
    return found.group(1).strip() if found else ""


def is_scifi(body: dict[str, Any]) -> bool:
    return any("Lab Pod Bay" in str(m["content"]) or "Security Hub" in str(m["content"]) for m in body["messages"])


class FollowsTheAction:
    """A model that plays well (see the module docstring); ``turn`` overrides the turn answers."""

    def __init__(self, summaries: Behaviour | None = None) -> None:
        self.summaries = summaries
        self.calls: dict[str, int] = {"turn": 0, "summary": 0, "facts": 0}
        self.lock = threading.Lock()

    def count(self, purpose: str) -> None:
        with self.lock:
            self.calls[purpose] += 1

    def __call__(self, body: dict[str, Any]) -> Behaviour:
        system = str(body["messages"][0]["content"])
        if system.startswith(SUMMARY):
            self.count("summary")
            if self.summaries is not None:
                return self.summaries
            return ok(json.dumps({"summary": "The traveller looked around and spoke with those met."}))
        if system.startswith(FACTS):
            self.count("facts")
            return ok(json.dumps({"new_facts": [], "updates": []}))
        self.count("turn")
        return ok(json.dumps(self.turn(body)))

    def turn(self, body: dict[str, Any]) -> dict[str, Any]:
        effects, narration = (_SCIFI if is_scifi(body) else _FANTASY).get(action_of(body), ({}, "You wait."))
        return {"narration": narration, "choices": ["look"], "effects": effects}


class ProposesNothing(FollowsTheAction):
    """Valid JSON, good prose, and never an effect: the player goes nowhere."""

    def turn(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**super().turn(body), "effects": {}}
