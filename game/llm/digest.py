"""The offline summary: a short digest of played turns, in the third person, as a model would write it.

Memory consolidates every few turns by asking the narrator for a summary of the turns since the last one, then
for a new synopsis from the old one and that summary (``GameMemory.consolidate``). A model gets instructions
(``SUMMARY_SYSTEM``); the scripted narrator, which cannot write, digests the turns instead:

- each turn comes as ``Turn N at PLACE: player: ACTION | NARRATION`` (the narration may go on over several lines:
  the story, then the rules' messages);
- what happened is kept as events in the third person: items taken and left, quests and objectives, choices,
  fights won, levels, and what people said that matters (``Old Garrick told the player about hal: "..."``) or what
  the player told them, with the place once for each new place;
- left out: the player's commands as typed, recollections (``You recall: ...``, an answer from memory is not an
  event), looks, rests and attempts that came to nothing, and any sentence already said;
- within ``max_words``, the events first, then what was said, then where the player went, told in the order
  they happened.

A text that holds no turn (a synopsis made of the last synopsis and a new summary) is digested by sentence:
duplicates dropped, events kept first, the newest before the oldest when words run short.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from game.language.parser import parse
from game.llm.tellings import SPOKEN, moved_to
from game.text import keywords

_TURN_START = re.compile(r"^Turn (?P<turn>\d+)(?: at (?P<place>[^:\n]+))?: player: ", re.M)
_EXTRACT = re.compile(r"(?<=[.!?|])\s+|\s*\|\s*|\n+")
"""Sentence ends for :func:`extractive_summary` (a logged turn's ``|`` too)."""
_BOUNDARY = re.compile(r"(?<=[.!?\"…])\s+(?=[A-Z\"])")
_SPEECH = re.compile(rf'^(?P<who>[A-Z][\w\'.-]*(?: [A-Z0-9][\w\'.-]*)*){SPOKEN}: "(?P<said>[^"]+)"?')
_TOLD = re.compile(r'^You tell (?P<who>[^:"]+?): "(?P<said>[^"]+)"')
_SAID_ALOUD = re.compile(r'^You say aloud: "(?P<said>[^"]+)"')
_NOTHING = re.compile(
    r"^(?:You recall|You cannot recall|You can't recall|You search your memory|You study |You try to "
    r"|You glance around|You find a quiet corner"
    r"|You cannot go|There is no|You have no|You are not carrying|You call out|Whom do you mean)"
)
_EVENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^You take the (?P<x>[^.]+)\."), "The player took the {x}."),
    (re.compile(r"^You leave the (?P<x>[^.]+) here\."), "The player left the {x} at {place}."),
    (re.compile(r"^You choose: (?P<x>[^.]+)\."), "The player chose: {x}."),
    (re.compile(r"^Level up! You are now level (?P<x>\d+)\."), "The player reached level {x}."),
    (re.compile(r"^Talent learned: (?P<x>[^-]+?) - "), "The player learned {x}."),
    (re.compile(r"^(?P<x>.+?) (?:is|are) defeated!"), "The player defeated {x}."),
    (re.compile(r"^You collapse\.\.\. and wake at (?P<x>[^,]+),"), "The player was knocked out and woke at {x}."),
    (re.compile(r"^(?P<x>(?:New quest|Objective complete|Achievement unlocked): [^\n]+?\.)$"), "{x}"),
    (re.compile(r"^Quest complete: (?P<x>[^(\n]+?)(?: \(.*\))?\.$"), "Quest complete: {x}."),
    (re.compile(r"^\*\*\* (?P<x>.+) \*\*\*$"), "The story ended: {x}."),
)
SPOKEN_WORDS = 16
"""Most words of one line of speech a digest keeps (its first sentences)."""
MILESTONE, EVENT, ANSWER, SPEECH, MOVE = 5, 4, 3, 2, 1
"""How much a digest line matters when words run short: a quest done, a choice, a fight won, the end; any
other change (a quest begun, an item, a level, an objective); what someone said when asked about something;
any other speech (a greeting); where the player went. An achievement counts as speech."""
_MILESTONES = ("Quest complete:", "The player chose", "The player defeated", "The story ended")
_WENT = "The player went to "


@dataclass(frozen=True)
class _Line:
    text: str
    """The line, lower-case first when it is told at a place ("the player told Nyssa: ...")."""
    weight: int
    order: int
    place: str = ""
    """Where it was said: told once before the first line said there ("At the Lodge, ...")."""
    who: str = ""
    """Who spoke (someone's words to the player): told as :func:`_spoken` tells them."""
    topic: str = ""
    said: str = ""


def digest(text: str, max_words: int = 60) -> str:
    """A third-person digest of ``text`` in at most ``max_words`` words (see the module docstring)."""
    turns = list(_TURN_START.finditer(text))
    if not turns:
        lines = [_Line(s, _weight(s), n) for n, s in enumerate(_sentences(text))]
    else:
        lines = []
        for n, match in enumerate(turns):
            end = turns[n + 1].start() if n + 1 < len(turns) else len(text)
            action, _, narration = text[match.end() : end].partition(" | ")
            lines += _turn_lines(action.strip(), narration.strip(), (match.group("place") or "").strip(), len(lines))
        place = (turns[-1].group("place") or "").strip()
        if not lines and place:  # quiet turns are a summary too: there is nothing to wait for or retry
            return f"The player spent the time at {place}; nothing of note happened."
    return _fit(lines, max_words)


def _turn_lines(action: str, narration: str, place: str, order: int) -> list[_Line]:
    """What one turn adds to the digest (nothing for a look, a rest, a question answered from memory)."""
    out: list[str] = []
    weights: list[int] = []
    spoken: tuple[str, str, str] = ("", "", "")
    parts = [p.strip() for p in narration.split("\n") if p.strip()]
    command = parse(action)
    for n, part in enumerate(parts):
        event = next((e for s in [part, *_sentences(part)] if (e := _event(s, place)) is not None), None)
        if event is not None:
            out.append(event)
            weights.append(_weight(event))
        elif n == 0 and not _NOTHING.match(part):  # the story's first line: who spoke, or where the player went
            said = _speech(part, command.topic, place)
            moved = moved_to(part)
            words = _SPEECH.match(part)
            if said is not None and words is not None and not words.group("who").startswith("You"):
                spoken = (words.group("who"), command.topic, _words(words.group("said")))
            if said is not None:
                out.append(said)
                weights.append(ANSWER if command.topic and " about " in said.split(":")[0] else SPEECH)
            elif moved is not None:
                out.append(f"{_WENT}{moved}.")
                weights.append(MOVE)
    return [
        _line(text, weight, order + n, place if weight in (ANSWER, SPEECH) else "", spoken)
        for n, (text, weight) in enumerate(zip(out, weights, strict=True))
    ]


def _line(text: str, weight: int, order: int, place: str, spoken: tuple[str, str, str]) -> _Line:
    """A digest line; someone's answer about a topic reads without their words until told (:func:`_spoken`)."""
    who, topic, said = spoken
    if not who or not text.startswith(f"{who} told the player"):
        return _Line(text, weight, order, place)
    if topic:
        text = f"{who} told the player about {topic}."
    return _Line(text, weight, order, place, who, topic, said)


def _speech(story: str, topic: str, place: str) -> str | None:
    """Who said what in the turn's story, in the third person, or None."""
    told = _TOLD.match(story)
    if told:
        return f'the player told {told.group("who")}: "{_words(told.group("said"))}"'
    aloud = _SAID_ALOUD.match(story)
    if aloud:
        return f'the player said: "{_words(aloud.group("said"))}"'
    spoken = _SPEECH.match(story)
    if spoken is None or spoken.group("who").startswith("You"):
        return None
    about = f" about {topic}" if topic else ""
    return f'{spoken.group("who")} told the player{about}: "{_words(spoken.group("said"))}"'


def _event(sentence: str, place: str) -> str | None:
    for pattern, template in _EVENTS:
        found = pattern.match(sentence)
        if found:
            x = found.group("x").strip()
            if not template.startswith("{x}") and x.startswith("The "):
                x = "the " + x[4:]  # "The player defeated the Granite Troll."
            return template.format(x=x, place=place or "a place")
    return None


def _words(said: str) -> str:
    """The first sentences of a line of speech, within ``SPOKEN_WORDS`` words."""
    kept: list[str] = []
    for sentence in _sentences(said):
        if kept and len(" ".join(kept).split()) + len(sentence.split()) > SPOKEN_WORDS:
            break
        kept.append(sentence)
    words = " ".join(kept).split()
    return " ".join(words[:SPOKEN_WORDS]) + ("…" if len(words) > SPOKEN_WORDS else "")


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, a quotation kept whole (no sentence ends inside double quotes)."""
    text = " ".join(text.split())
    out: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        if text.count('"', start, boundary.start()) % 2 == 0:
            out.append(text[start : boundary.start()])
            start = boundary.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def _weight(sentence: str) -> int:
    """How much a line of a digest matters (a synopsis keeps the milestones first)."""
    if sentence.startswith(_MILESTONES):
        return MILESTONE
    if sentence.startswith("Achievement unlocked:"):
        return SPEECH
    if any(pattern.match(sentence) for pattern, _ in _EVENTS) or sentence.startswith(
        ("The player took", "The player left", "The player reached", "The player learned", "The player was")
    ):
        return EVENT
    if '"' in sentence:
        return ANSWER if " about " in sentence.split(":")[0] else SPEECH
    return MOVE if sentence.startswith(_WENT) else SPEECH


def _fit(lines: list[_Line], max_words: int) -> str:
    """The lines that fit ``max_words`` (each once, at its first place; the weightiest, then the newest,
    first), in the order they happened. Consecutive moves are told as the last one."""
    unique: list[_Line] = []
    seen: set[str] = set()
    for n, line in enumerate(lines):
        key = " ".join(line.text.lower().split())
        following = lines[n + 1] if n + 1 < len(lines) else None
        moving = line.text.startswith(_WENT) and following is not None and following.text.startswith(_WENT)
        if key in seen or moving:
            continue
        seen.add(key)
        unique.append(line)
    chosen: list[_Line] = []
    words = min(SPOKEN_WORDS, max_words // 3) if any(line.topic for line in unique) else 0  # the quote's room
    for line in sorted(unique, key=lambda x: (-x.weight, -x.order)):
        length = len(line.text.split())
        if words + length <= max_words:
            chosen.append(line)
            words += length
    if not chosen and unique:  # one line longer than the budget: its first words
        return " ".join(_told(unique[-1], "").split()[:max_words])
    return " ".join(_spoken(sorted(chosen, key=lambda x: x.order)))


def _spoken(lines: list[_Line]) -> list[str]:
    """The lines as the digest tells them. What someone told the player is told as the topics they spoke of, the
    answers they gave in a row as one line, with one short quote at most (the first answer's; with no answer,
    the first words someone said); a greeting as "the player spoke with" them, or not at all when they answered."""
    answered = {line.who for line in lines if line.who and line.topic}
    quote_left = True
    told: list[str] = []
    here = ""
    n = 0
    while n < len(lines):
        line = lines[n]
        group = [line]
        while line.who and line.topic and n + len(group) < len(lines):
            after = lines[n + len(group)]
            if (after.who, after.place) != (line.who, line.place) or not after.topic:
                break
            group.append(after)
        n += len(group)
        if line.who and line.topic:
            topics = list(dict.fromkeys(g.topic for g in group))
            text = f"{line.who} told the player about {_listed(topics)}."
            if quote_left:
                more = f" {line.who} also told the player about {_listed(topics[1:])}." if topics[1:] else ""
                text = f'{line.who} told the player about {topics[0]}: "{line.said}"{more}'
                quote_left = False
            line = replace(line, text=text)
        elif line.who in answered:
            continue
        elif line.who and quote_left and not answered:
            quote_left = False
        elif line.who:
            line = replace(line, text=f"the player spoke with {line.who}.")
        told.append(_told(line, here))
        here = line.place or here
    return told


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _told(line: _Line, here: str) -> str:
    """The line as the digest tells it: with its place when the line before was said elsewhere."""
    if line.place and line.place != here:
        return f"At {line.place}, {line.text}"
    return line.text[:1].upper() + line.text[1:]


def extractive_summary(text: str, max_words: int = 60) -> str:
    """The most content-rich sentences of ``text``, in their order, within ``max_words``."""
    sentences = [s.strip() for s in _EXTRACT.split(text) if s.strip()]
    if not sentences:
        return ""
    freq = Counter(keywords(text))
    scored = sorted(
        range(len(sentences)),
        key=lambda i: -sum(freq[w] for w in set(keywords(sentences[i]))) / (1 + len(sentences[i].split()) ** 0.5),
    )
    chosen: list[int] = []
    words = 0
    for index in scored:
        length = len(sentences[index].split())
        if words + length > max_words and chosen:
            continue
        chosen.append(index)
        words += length
        if words >= max_words:
            break
    summary = " ".join(sentences[i] for i in sorted(chosen))
    return " ".join(summary.split()[:max_words])


class ExtractiveSummarizer:
    """The scripted narrator's summary call on its own (no story needed)."""

    def summarize(self, text: str, max_words: int = 60) -> str:
        return extractive_summary(text, max_words)
