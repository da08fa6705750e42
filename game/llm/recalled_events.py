"""How the scripted narrator answers a question about what the player did, from the rules' record it was given.

Recall puts the events that answer an event or order question ("what did I give to Garrick?", "who did I talk to
first?") first among the relevant memories (``game/memory/search/answers.py``, ids ``event:...``). Like every scripted
answer, this one is read from the prompt's memory only: it is a probe of what memory delivered. The record is
exact, so when it holds no such event the answer says the player has not done it (not that they forgot).
"""

from __future__ import annotations

import re

from game.llm.base import PromptBundle
from game.llm.recollection import second_person, sentence
from game.memory.search.question import Question
from game.world.content import ContentPack

_EVENT_ITEM = re.compile(r"^Turn (?P<turn>\d+)(?: at (?P<place>[^:]+))?: (?P<what>.+?)\.?$", re.S)
_NOT_DONE = {
    "give": "given anything away",
    "take": "taken anything",
    "fight": "fought anyone",
    "talk": "talked to anyone",
    "go": "gone anywhere else",
    "trade": "paid anyone",
    "learn": "learned anything new",
    "use": "used anything",
    "drop": "left anything behind",
    "quest": "taken on a quest",
}


def told_events(asked: Question, bundle: PromptBundle, pack: ContentPack) -> str:
    """The events the prompt's memory holds for ``asked``, said to the player; that there are none, else."""
    found = [
        (item.score, match)
        for item in bundle.memory.all_items()
        if item.source.startswith("event:") and (match := _EVENT_ITEM.match(item.text.strip()))
    ]
    found.sort(key=lambda f: -f[0])
    if not found:
        return not_done(asked, pack)
    if asked.order in ("first", "last") or asked.wants:
        found = found[:1]
    told = []
    for _, match in found:
        place = match.group("place")
        told.append(sentence(second_person(match.group("what")) + (f" at {place}" if place else "")))
    return "You recall: " + " ".join(told)


def not_done(asked: Question, pack: ContentPack) -> str:
    """The record holds nothing of the kind: "You have not given anything to Old Garrick."."""
    done = _NOT_DONE.get(asked.event or "", "done anything of the kind")
    people = [pack.npcs[p].name for p in asked.people if p in pack.npcs]
    if people and asked.event == "give":
        done = f"given anything to {people[0]}"
    elif people and asked.event == "talk":
        done = f"talked to {people[0]}"
    elif people and asked.event == "fight":
        done = f"fought {people[0]}"
    where = f" at {asked.places[0]}" if asked.places else ""
    when = {"before": f" before {asked.anchor}", "after": f" after {asked.anchor}"}.get(asked.order or "", "")
    return f"You have not {done}{where}{when}."
