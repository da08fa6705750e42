"""A game played by a model through the relay (``../shared/tools/model_relay.py``), kept to be played again.

Issue 42: a person playing a careful model answered every request of a Misty Forest game by hand, reading only
the requests. The recording keeps each answer with what it answered (the kind of request, and for a turn the
player's action), so that the game can be played again against a changed engine: the answers are matched to the
requests by kind and action, not by position, so a summary that comes a request earlier or later still finds its
answer. The requests themselves are kept too (gzipped), as the record of what the model was shown.

Build a recording from a relay folder (``req-K.json`` and ``resp-K.txt``)::

    python -m tests.relay_recording /path/to/relay/rec tests/data/relay/misty_forest

The server that plays the answers back is :class:`tests.fake_openai_server.FakeOpenAIServer` with
:meth:`Recording.respond` as its responder: a fake on purpose, since no model on this machine can answer as the
recorded one did; its answers are the recorded model's own, byte for byte.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_openai_server import Behaviour, ok, status

ANSWERS = "answers.jsonl"
REQUESTS = "requests.jsonl.gz"
_ACTION = re.compile(r"## Player action\n(?P<action>[^\n]*)")


def kind_of(body: dict[str, Any]) -> str:
    """What a request asks for: ``turn``, ``reask`` (a turn asked again), ``summary``, ``facts`` or ``other``."""
    messages = body.get("messages") or []
    system = str(messages[0].get("content", "")) if messages else ""
    if system.startswith("You summarize passages"):
        return "summary"
    if system.startswith("You keep the Story Bible"):
        return "facts"
    if "## Player action" in json.dumps(messages):
        return (
            "reask"
            if messages[-1].get("role") == "user" and "## Player action" not in messages[-1]["content"]
            else "turn"
        )
    return "other"


def key_of(body: dict[str, Any]) -> str:
    """The player's action a turn (or a turn asked again) is for; "" for the other kinds."""
    for message in reversed(body.get("messages") or []):
        found = _ACTION.search(str(message.get("content", "")))
        if found and message.get("role") == "user":
            return found.group("action").strip()
    return ""


@dataclass
class Recording:
    """The recorded answers, by (kind, key), each list in the order they were given."""

    answers: dict[tuple[str, str], list[str]]
    served: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    missing: list[tuple[str, str]] = field(default_factory=list)
    """Turns asked that the model was never asked (the engine's game went another way)."""
    beyond: list[tuple[str, int]] = field(default_factory=list)
    """Memory calls past the recorded ones, each with the turns served before it: the recording stopped when the
    game's last turn was told, so the last consolidation's calls may come after it and go unanswered."""

    @classmethod
    def load(cls, folder: Path) -> Recording:
        answers: dict[tuple[str, str], list[str]] = defaultdict(list)
        for line in (folder / ANSWERS).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            answers[(row["kind"], row["key"])].append(row["answer"])
        return cls(dict(answers))

    def respond(self, body: dict[str, Any]) -> Behaviour:
        """The next recorded answer to a request like ``body``; a 500 (and a note in :attr:`missing`) when the
        recording has none left: the engine asked something the model was never asked."""
        where = (kind_of(body), key_of(body))
        given = self.answers.get(where, [])
        n = self.served[where]
        if n >= len(given):
            if where[0] in ("turn", "reask"):
                self.missing.append(where)
            else:
                self.beyond.append((where[0], sum(v for (kind, _), v in self.served.items() if kind == "turn")))
            return status(500, message=f"the recording holds no answer {n + 1} to {where}")
        self.served[where] = n + 1
        return ok(given[n], usage=None)


def build(relay: Path, out: Path) -> int:
    """Write the recording of a relay folder into ``out``; returns the number of requests kept."""
    out.mkdir(parents=True, exist_ok=True)
    rows, requests = [], []
    k = 1
    while (relay / f"req-{k}.json").exists() and (relay / f"resp-{k}.txt").exists():
        body = json.loads((relay / f"req-{k}.json").read_text(encoding="utf-8"))
        answer = (relay / f"resp-{k}.txt").read_text(encoding="utf-8")
        rows.append({"n": k, "kind": kind_of(body), "key": key_of(body), "answer": answer})
        requests.append(body)
        k += 1
    (out / ANSWERS).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with gzip.open(out / REQUESTS, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in requests)
    return len(rows)


def requests(folder: Path) -> list[dict[str, Any]]:
    """The recorded requests, in the order the model was asked them."""
    with gzip.open(folder / REQUESTS, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


if __name__ == "__main__":
    print(f"{build(Path(sys.argv[1]), Path(sys.argv[2]))} requests kept")
