"""What happened with each person in a run of turns: the "last time with" facts consolidation writes.

A person was with the player in a turn when the rules had the player speak or give to them (``talk_to``,
``give_item``), or when they stood where the turn was played and the action named them or the narration opens
with their words. A turn that only passed where they stand (arriving, a fight, an item picked up) is not time with
them, nor is a recollection (a turn that answered a question about the past: ``recalled``).

Each person's text is built from the turns with them, whoever narrated (the rules' effects and the player's words
say what happened; a narration in the scripted form ``Name: "..."`` also says what they answered): what they told
the player about (one short quote at most: the first answer, or the player's own words), what the player asked,
told or gave them, the quests they gave or saw done. Nothing that happened elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from game.language.parser import parse
from game.memory.records import Episode
from game.world.content import ContentPack

QUOTE_WORDS = 12
"""Most words of the one quote a person's text keeps."""
RECOLLECTION = re.compile(r"^(?:You recall\b|You cannot recall\b|You can't recall\b|You search your memory\b)")
"""A narration that answers a question about the past (never evidence of what happened)."""
_SPOKE = re.compile(r'^(?P<who>[^:"\n]{1,60}?)(?: answers| says)?: "(?P<said>[^"\n]*)')
_TOLD = re.compile(r'^You tell (?P<who>[^:"\n]+?): "(?P<said>[^"\n]+)"')
_SAID = re.compile(r'^You say aloud: "(?P<said>[^"\n]+)"')


def evidence(episode: Episode) -> bool:
    """Whether a logged entry is a played turn that may be summarised (not a recollection, flagged or narrated)."""
    return bool(episode.action) and not episode.recalled and not RECOLLECTION.match(episode.narration)


@dataclass
class _Time:
    """What the player did with one person over the turns with them."""

    first: int
    last: int
    place: str
    answered: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    quote: str = ""
    words: str = ""
    """The player's own words to them (a quote)."""
    spoke: bool = False
    deeds: list[str] = field(default_factory=list)


def _events(episode: Episode) -> Iterable[tuple[str, str]]:
    for event in episode.events:
        effect, _, detail = event.partition(" ")
        yield effect, detail


def with_whom(pack: ContentPack, episode: Episode) -> set[str]:
    """The people the player was with in ``episode`` (see the module docstring)."""
    if not evidence(episode):
        return set()
    found: set[str] = set()
    for effect, detail in _events(episode):
        if effect == "talk_to":
            found.add(detail)
        elif effect == "give_item":
            found.add(detail.partition("->")[2])
    node = next((n for n in pack.nodes.values() if n.name == episode.node), None)
    if node is not None:
        speaker = _speaker(episode)
        found.update(npc for npc in node.npcs if npc in episode.npcs or pack.npcs[npc].name == speaker)
    return found & set(pack.npcs)


def _speaker(episode: Episode) -> str:
    spoke = _SPOKE.match(episode.narration)
    return spoke.group("who").strip() if spoke else ""


def _quote(said: str) -> str:
    words = said.split()
    return '"' + " ".join(words[:QUOTE_WORDS]) + ("…" if len(words) > QUOTE_WORDS else "") + '"'


def _add(time: _Time, pack: ContentPack, npc: str, episode: Episode) -> None:
    """What ``episode`` adds to the time with ``npc``."""
    name = pack.npcs[npc].name
    command = parse(episode.action)
    spoke = _SPOKE.match(episode.narration)
    answered = spoke is not None and spoke.group("who").strip() == name
    told = _TOLD.match(episode.narration) or _SAID.match(episode.narration)
    if told is not None and not time.words:
        time.words = _quote(told.group("said"))
    topic = " ".join(command.topic.split())
    if topic:
        (time.answered if answered else time.asked).append(topic)
        if answered and spoke is not None and not time.quote:
            time.quote = _quote(spoke.group("said"))
    time.spoke = time.spoke or answered or told is not None or any(e == "talk_to" for e, _ in _events(episode))
    for effect, detail in _events(episode):
        deed = _deed(pack, npc, effect, detail)
        if deed and deed not in time.deeds:
            time.deeds.append(deed)


def _deed(pack: ContentPack, npc: str, effect: str, detail: str) -> str:
    """A change the rules applied that concerns ``npc`` ('' for none)."""
    name = pack.npcs[npc].name
    if effect in ("quest_started", "quest_completed"):
        quest = pack.quest(detail)
        if quest is None or quest.giver != npc:
            return ""
        if effect == "quest_started":
            return f"{name} gave the player the quest {quest.title}."
        return f"The player completed {name}'s quest {quest.title}."
    if effect == "give_item":
        item_id, _, to = detail.partition("->")
        item = pack.items.get(item_id)
        return f"The player gave {name} the {item.name}." if to == npc and item else ""
    if effect == "affinity_threshold":
        who, _, label = detail.partition(":")
        if who == npc and label:
            lost = label.startswith("-")
            return (
                f"{name} no longer sees the player as {label[1:]}." if lost else f"{name} sees the player as {label}."
            )
    return ""


def _listed(items: list[str]) -> str:
    unique = list(dict.fromkeys(items))
    return unique[0] if len(unique) == 1 else f"{', '.join(unique[:-1])} and {unique[-1]}"


def _told(time: _Time, name: str) -> str:
    """The text of the time with one person, within no limit yet (see :func:`people`)."""
    out: list[str] = []
    if time.answered:
        first, rest = time.answered[0], [t for t in time.answered[1:] if t != time.answered[0]]
        quoted = f"{first} ({time.quote})" if time.quote and not time.words else first
        out.append(f"{name} told the player about {_listed([quoted, *rest])}.")
    if time.asked:
        out.append(f"The player asked {name} about {_listed(time.asked)}.")
    if time.words:
        out.append(f"The player told {name}: {time.words}")
    if time.spoke and not out:
        out.append(f"The player spoke with {name}.")
    out += time.deeds
    if not out:
        out.append(f"The player was with {name}.")
    text = " ".join(out)
    if not time.place:
        return text
    return f"At {time.place}, {text[:1].lower() + text[1:] if text.startswith('The player') else text}"


def people(pack: ContentPack, episodes: list[Episode], max_words: int) -> dict[str, tuple[int, int, str]]:
    """For each person the player was with in ``episodes``: the first and last turn with them and what happened
    with them, in at most ``max_words`` words."""
    times: dict[str, _Time] = {}
    for episode in episodes:
        for npc in sorted(with_whom(pack, episode)):
            time = times.setdefault(npc, _Time(episode.turn, episode.turn, episode.node))
            time.last = episode.turn
            _add(time, pack, npc, episode)
    out: dict[str, tuple[int, int, str]] = {}
    for npc, time in times.items():
        words = _told(time, pack.npcs[npc].name).split()
        out[npc] = (time.first, time.last, " ".join(words[:max_words]) + ("…" if len(words) > max_words else ""))
    return out
