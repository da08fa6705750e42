"""The memories that answer a question about the past, found by its parts, best first.

Recall's hybrid search ranks by meaning and words, which cannot tell "what Garrick said about Hal" from "what
Garrick said about the elves": both are Garrick's words. A question read into its parts (``question.py``) is
answered here directly, before the search:

- an event question ("what did I give to Garrick?", "who did I fight on the Fogbound Path?", "what did I do
  first?") from the rules' record (``events.py``), filtered by kind, place and person, in the order asked;
- a topic question ("what did Garrick tell me about Hal?") from the Story Bible's facts and the played turns that
  match the topic, those that match the speaker too first.

What is found here goes first in the relevant-memories block, above any score the search gives
(:data:`ANSWER_SCORE`), so the prompt budget keeps it before anything else of the block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from game.language.question import event_words
from game.memory.events import Event, record_of
from game.memory.records import BibleEntry, Episode
from game.memory.search.question import Question
from game.memory.search.recall import ScoredMemory
from game.text import keywords
from game.world.content import ContentPack

ANSWER_SCORE = 1.3
"""Above the search's best (0.5 semantic + 0.3 importance + 0.2 recency + bonuses, at most 1.15)."""
ANSWERS = 3


def answers(
    question: Question,
    pack: ContentPack | None,
    log: Sequence[Episode],
    bible: Iterable[BibleEntry],
    *,
    turn: int | None = None,
    record: list[Event] | None = None,
) -> list[ScoredMemory]:
    """The memories that answer ``question`` (best first, at most :data:`ANSWERS`): ``log`` is the memory's log,
    of which the entries up to ``turn`` (all of them when None) count, ``bible`` the Story Bible entries active
    then, ``record`` the log's events when the caller keeps them (``events.EventRecord``)."""
    last = turn if turn is not None else max((e.turn for e in log), default=0)
    if question.event is not None or (question.order is not None and question.speaker is None and not question.topic):
        events = [e for e in (record if record is not None else record_of(pack, log)) if e.turn <= last]
        found = event_answers(question, pack, events)
        return [_scored(e.id, e.text(), e.turn, "event", i) for i, e in enumerate(found)]
    if question.topic or question.speaker:
        return topic_answers(question, pack, [e for e in log if e.turn <= last], bible)
    return []


def _scored(memory_id: str, text: str, turn: int, kind: str, rank: int) -> ScoredMemory:
    score = round(ANSWER_SCORE - 0.01 * rank, 3)
    return ScoredMemory(memory_id, text, score, 1.0, turn, kind, {"question": score})


def _names(pack: ContentPack, ids: Iterable[str]) -> set[str]:
    return {pack.npcs[i].name for i in ids if i in pack.npcs}


def event_answers(question: Question, pack: ContentPack | None, events: list[Event]) -> list[Event]:
    """The events (of the rules' record) that answer an event or order question, in the order the answer tells
    them."""
    if pack is None:
        return []
    kind = question.event or "any"
    if question.order in ("before", "after"):
        return _around(question, events, kind)
    chosen = [e for e in events if e.matches(kind)]
    if question.places:
        chosen = [e for e in chosen if e.place in question.places or (e.kind == "go" and e.what in question.places)]
    people = _names(pack, question.people)
    if people:
        chosen = [e for e in chosen if e.whom in people or e.what in people]
    named = [e for e in chosen if question.words & set(keywords(e.names()))]
    if named and kind != "any":
        chosen = named
    chosen = _once(chosen, latest=question.order != "first")
    if question.order == "first":
        return chosen[:ANSWERS]
    return list(reversed(chosen))[:ANSWERS] if question.order == "last" or kind == "any" else chosen[-ANSWERS:]


def _once(events: list[Event], *, latest: bool) -> list[Event]:
    """Each thing done once ("talked to Old Garrick" four times is one answer): its first or its latest time."""
    seen: dict[tuple[str, str, str], Event] = {}
    for event in events:
        key = ("fight" if event.kind == "defeat" else event.kind, event.what, event.whom)
        if latest or key not in seen or event.kind == "defeat":  # a fight won is told as won
            seen.pop(key, None)
            seen[key] = event
    return sorted(seen.values(), key=lambda e: e.turn)


def _around(question: Question, events: list[Event], kind: str) -> list[Event]:
    """Events just before or just after the first one the anchor names ("where was I before the lodge?")."""
    anchor = set(keywords(question.anchor)) - _NOT_NAMES
    places = set(question.anchor_places)
    at = next(
        (
            n
            for n, e in enumerate(events)
            if (places and (e.what in places if e.kind == "go" else e.place in places))
            or (not places and anchor and anchor <= set(keywords(e.names())))
        ),
        None,
    )
    if at is None:
        return []
    if question.order == "before":
        if kind == "go" and events[at].kind == "go" and events[at].origin:
            return [events[at]]  # "where was I before the lodge?": where the move there came from
        earlier = [e for e in events[:at] if e.matches(kind)]
        return list(reversed(earlier))[:ANSWERS]
    later = [e for e in events[at + 1 :] if e.matches(kind)]
    return later[:ANSWERS]


def topic_answers(
    question: Question, pack: ContentPack | None, log: Sequence[Episode], bible: Iterable[BibleEntry]
) -> list[ScoredMemory]:
    """Facts and turns about the topic, those the speaker said first; without a topic, what the speaker said."""
    topic = question.topic_words
    speaker = pack.npcs[question.speaker].name if pack and question.speaker in pack.npcs else ""
    candidates: list[tuple[float, int, str, str, str]] = []
    for entry in bible:
        text = entry.text()
        said = bool(speaker) and (text.startswith(f"{speaker} said") or f"{speaker} told the player" in text)
        weight = _weight(topic, text, said, bool(speaker))
        if weight:
            candidates.append((weight + 0.1, entry.source_turn, entry.id, text, "bible"))
    for episode in log:
        if not episode.action or episode.recalled:
            continue
        narration = episode.narration.lstrip()
        talked = {e.removeprefix(_TALKED) for e in episode.events if e.startswith(_TALKED)}  # the rules' record
        if not talked and not _SPEECH.match(narration):
            continue  # nobody spoke (someone was not there, or it was scenery): the search finds mentions
        narration = _OFFERED.sub("", narration)
        said = bool(speaker) and (
            question.speaker in talked or narration.startswith((f"{speaker}:", f"{speaker} answers:"))
        )  # a model's own prose of the talk counts as the built-in narrator's "Name: ..." does
        weight = _weight(topic, f"{episode.action} {narration}", said, bool(speaker))
        if weight:
            candidates.append((weight, episode.turn, episode.id, episode.text(), "turn"))
    if topic:  # what was said or asked *about* the topic before what only mentions it
        candidates = [(c[0] + 0.5 * _about(topic, c[3]), c[1], c[2], c[3], c[4]) for c in candidates]
    candidates.sort(key=lambda c: (-c[0], -c[1]))
    out: list[ScoredMemory] = []
    for _, turn, memory_id, text, kind in candidates:
        if len(out) == ANSWERS:
            break
        if all(m.id != memory_id for m in out):
            out.append(_scored(memory_id, text, turn, kind, len(out)))
    return out


_NOT_NAMES = frozenset(keywords(" ".join(event_words()) + " i we me"))
"""Words of an anchor that are not names ("before I met Alicia": only "alicia" names the event)."""
_OFFERED = re.compile(r"\(You could ask [^)]*\)")
"""The topics a greeting offers ("(You could ask about: elves, hal, ...)"): named, not told."""
_TALKED = "talk_to "
"""The event of a talk the rules applied (``talk_to <person id>``): someone spoke, whatever the telling's words."""
_SPEECH = re.compile(r"^[^:\"\n]{1,60}?(?: answers)?: \"")
"""A narration that is someone's words ("Old Garrick: \"...")."""
_ABOUT_PHRASE = re.compile(r"\babout ([^:|.]+)")


def _about(topic: frozenset[str], text: str) -> bool:
    return any(topic <= set(keywords(m.group(1))) for m in _ABOUT_PHRASE.finditer(text))


def _weight(topic: frozenset[str], text: str, said: bool, asked_speaker: bool) -> float:
    """How well a memory answers: the topic's words all in it (2), said by the speaker asked about (1); a memory
    that does not match the topic (when there is one) or the speaker (when there is no topic) answers nothing."""
    lowered = text.lower()  # a stem is a prefix of its words ("stori" of "stories"): most texts are ruled out unread
    prefixes = (w[:-1] if w.endswith("y") else w for w in topic)
    about = bool(topic) and all(p in lowered for p in prefixes) and topic <= set(keywords(text))
    if topic and not about:
        return 0.0
    if not topic and not said:
        return 0.0
    if asked_speaker and topic and not said:
        return 1.0  # about the topic, from someone else: still worth reading, below the speaker's words
    return 2.0 * about + 1.0 * said
