"""Reading a question about the past: who is asked about, what about, which event, which order, which place.

"What did Garrick tell me about Hal?" names two people: Garrick is the *speaker* (whose words are wanted) and Hal
the *topic*. Taken as two names, the speaker's many lines outweigh the topic (issue 32), so recall needs the parts
apart: the speaker joins the search's focus, the topic stays in the searched text, and a memory that matches the
topic *and* the speaker ranks above one that matches only the speaker. "What did I give to Garrick?", "who did I
fight on the Fogbound Path?" and "what did I do first?" ask about events, and the rules' record answers them
(``events.py``).

The reading of the sentence (``game.language.reading``) says whether it is a question at all, and its grammar
(``game.language.question``) reads the parts as words; this module resolves their names.
:attr:`Question.about_past` is what keeps a narrator's answer out of memory: an answer to a question about the
past (a recollection, or a denial) is never evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from game.language.question import parts, reminded
from game.language.reading import Reading
from game.memory.search.query import QueryRewriter
from game.text import keywords


@dataclass(frozen=True)
class Question:
    """A question about the past, read (see the module's docstring)."""

    text: str
    about_past: bool
    speaker: str | None = None
    """The person whose words are asked for ("what did Garrick tell me"), by id."""
    topic: str = ""
    """What it is about, as typed ("hal", "the wolves")."""
    topic_ids: tuple[str, ...] = ()
    """People the topic names (by id): Hal in "... about Hal"."""
    event: str | None = None
    """The kind of event asked about (``events.KINDS``, or "any")."""
    order: str | None = None
    """first, last, before or after."""
    anchor: str = ""
    """What "before" / "after" points at ("the lodge")."""
    anchor_places: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    """Places the question is about ("on the Fogbound Path"), full names."""
    people: tuple[str, ...] = ()
    """People the question names other than the speaker and the topic's (by id): the Garrick of "what did I give
    to Garrick"."""
    wants: str = ""
    """"where" or "who" when the question asks for a place or a person."""
    words: frozenset[str] = field(default_factory=frozenset)
    """The question's content words (names of speaker, places and people left out)."""

    @property
    def topic_words(self) -> frozenset[str]:
        return frozenset(keywords(self.topic))


def read_question(action: str | Reading, query: QueryRewriter) -> Question | None:
    """The question ``action`` asks about the past, None when it asks none (a command, or a question about now:
    "where is Hal?" reads the world, not memory... unless it names the past)."""
    reading = action if isinstance(action, Reading) else Reading.of(action)
    asked = [c for c in reading.clauses if c.mood == "question"]
    remind, bare = reminded(" ".join(reading.text.lower().split()))
    if not asked and not remind:
        return None
    read = parts(asked[0].text if asked else bare, remind=remind)
    named_speaker = query.characters(read.speaker)[0] if read.speaker else []
    speaker = named_speaker[0] if named_speaker else None
    topic_ids = tuple(query.characters(read.topic)[0]) if read.topic else ()
    anchor_places = tuple(query.places(read.anchor)[0]) if read.anchor else ()
    places, rest = query.places(read.rest)
    if not places and (head := _place_head(rest, query)):
        places = [head]
    named, rest = query.characters(rest)
    people = tuple(n for n in named if n != speaker and n not in topic_ids)
    event = None if speaker else read.event
    return Question(
        text=reading.text,
        about_past=read.about_past or (not read.addressed and bool(speaker or event)),
        speaker=speaker,
        topic=read.topic,
        topic_ids=topic_ids,
        event=event,
        order=read.order,
        anchor=read.anchor,
        anchor_places=anchor_places,
        places=tuple(places),
        people=people,
        wants=read.wants,
        words=frozenset(keywords(rest)),
    )


_AT = re.compile(r"\b(?:from|at|in|on|near|inside|by|around)\s+(?:the\s+)?(?P<word>[\w'-]+)")


def _place_head(text: str, query: QueryRewriter) -> str | None:
    """A place named by the last word of its name alone ("from the lodge"), when only one place ends so."""
    heads: dict[str, list[str]] = {}
    for name in set(query.place_names.values()):
        heads.setdefault(name.split()[-1].lower(), []).append(name)
    for found in _AT.finditer(text):
        names = heads.get(found.group("word"), [])
        if len(names) == 1:
            return names[0]
    return None


def asked_characters(asked: Question | None, action: str, query: QueryRewriter) -> tuple[list[str], str]:
    """``query.characters(action)`` for recall's search, except that a topic that names someone stays in the
    searched text ("what did Garrick tell me about Hal?": Garrick is the focus, "hal" is searched for)."""
    if asked is None or not asked.topic:
        return query.characters(action)
    lowered = action.lower()
    cut = lowered.rfind(asked.topic)
    named, text = query.characters(action[:cut] if cut > 0 else action)
    return named, f"{text} {asked.topic}".strip()
