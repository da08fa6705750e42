"""Reading a question about the past: who is asked about, what about, which event, which order, which place.

"What did Garrick tell me about Hal?" names two people: Garrick is the *speaker* (whose words are wanted) and Hal
the *topic*. Taken as two names, the speaker's many lines outweigh the topic (issue 32), so recall needs the parts
apart: the speaker joins the search's focus, the topic stays in the searched text, and a memory that matches the
topic *and* the speaker ranks above one that matches only the speaker. "What did I give to Garrick?", "who did I
fight on the Fogbound Path?" and "what did I do first?" ask about events, and the rules' record answers them
(``events.py``).

The reading of the sentence (``game.world.reading``) says whether it is a question at all; this module reads the
question's parts with a few patterns of game English. :attr:`Question.about_past` is what keeps a narrator's
answer out of memory: an answer to a question about the past (a recollection, or a denial) is never evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from game.memory.search.query import QueryRewriter
from game.text import keywords
from game.world.reading import Reading

_PAST = re.compile(
    r"\b(?:did|didn't|had|have|has|was|were|told|said|gave|took|went|met|fought|killed|defeated|learned|learnt"
    r"|bought|sold|paid|found|visited|talked|spoke|asked|happened|ago|earlier|before|after|first|last)\b"
)
_MEMORY = re.compile(
    r"\b(?:remember|recall|remind|memory|memories)\b|\bwhat(?:'s| is| was) my name\b|\bwho am i\b|\bmy name\b"
    r"|\b(?:do|did) (?:i|we) know\b|\bwho (?:told|said|mentioned)\b"
)
_SPEAKER = re.compile(
    r"\b(?:did|has|had|does)\s+(?P<who>[\w' .-]+?)\s+(?:tell|say|mention|teach|explain|ask|warn|promise)\b"
    r"|^(?:what|which|anything)\s+(?P<who2>[\w' .-]+?)\s+(?:told|said|mentioned|taught|explained)\b"
)
_ABOUT = re.compile(
    r"(?:\babout|\bregarding|\bconcerning|\b(?:tell|told|say|said|speak|spoke|mention|mentioned)\s+(?:me\s+)?of)"
    r"\s+(?P<topic>.+?)\s*[?.!]*$"
)
_ME = frozenset({"i", "me", "you", "we", "they", "he", "she", "it", "anyone", "someone", "people", "everyone"})
EVENT_VERBS: dict[str, tuple[str, ...]] = {
    "take": ("take", "took", "taken", "pick", "picked", "get", "got", "grab", "grabbed", "find", "found", "loot"),
    "give": ("give", "gave", "given", "hand", "handed", "offer", "offered"),
    "fight": ("fight", "fought", "kill", "killed", "defeat", "defeated", "slay", "slew", "attack", "attacked", "beat"),
    "go": ("go", "went", "gone", "visit", "visited", "travel", "travelled", "traveled", "walk", "walked", "come"),
    "talk": ("talk", "talked", "speak", "spoke", "spoken", "meet", "met", "ask", "asked"),
    "trade": ("buy", "bought", "pay", "paid", "sell", "sold", "trade", "traded", "spend", "spent"),
    "learn": ("learn", "learned", "learnt"),
    "quest_done": ("finish", "finished", "complete", "completed", "solve", "solved"),
    "use": ("use", "used", "drink", "drank", "eat", "ate"),
    "drop": ("drop", "dropped", "leave", "left"),
    "any": ("do", "did", "done", "happen", "happened"),
}
_VERB_KIND = {verb: kind for kind, verbs in EVENT_VERBS.items() for verb in verbs}
_EVENT = re.compile(
    r"\b(?:did|have|had)\s+(?:i|we)\s+(?:first\s+|last\s+|just\s+|ever\s+)?(?P<verb>\w+)"
    r"|\b(?:i|we)\s+(?:first\s+|last\s+)?(?P<verb2>took|gave|fought|killed|defeated|went|met|talked|spoke|bought"
    r"|sold|paid|learned|learnt|used|visited|found|got)\b"
    r"|^(?:where|which places?)\s+(?:was|were)\s+(?:i|we)\b(?P<where>)"
    r"|^what\s+quests?\b(?P<quest>)"
)
_ORDER = re.compile(
    r"\b(?P<first>first|earliest|start(?:ed)?|begin(?:ning)?)\b|\b(?P<last>last|latest|most recent(?:ly)?|just now)\b"
    r"|\b(?P<rel>before|after)\s+(?P<anchor>.+?)\s*[?.!]*$"
)
_WHERE = re.compile(r"^where\b")
_REMIND = re.compile(r"^(?:remind me|recall|remember|tell me again|tell me (?=(?:what|who|whom|where|when|which)\b))\b")
_WHEN = re.compile(r"\bwhen\s+(?:i|we)\s+(?P<verb>\w+)")
_DONE = re.compile(r"\b(?:finish|finished|complete|completed|done|solved|fulfilled)\b")
_WHO = re.compile(r"^(?:who|whom)\b")
_ADDRESSED = re.compile(r"\b(?:you|your|yours|yourself)\b")


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
    text = " ".join(reading.text.lower().split())
    remind = bool(_REMIND.match(text))
    if not asked and not remind:
        return None
    clause = asked[0].text if asked else _REMIND.sub("", text).strip()
    # asked of someone ("tell me what you know about Hal", "garrick, what did you see?"): they answer, not memory
    addressed = _ADDRESSED.search(clause) is not None
    about_past = not addressed and bool(_PAST.search(clause) or _MEMORY.search(clause) or remind)
    speaker = _speaker(clause, query)
    about = _ABOUT.search(clause)
    topic = about.group("topic").strip() if about else ""
    topic_ids = tuple(query.characters(topic)[0]) if topic else ()
    event = _event(clause, speaker)
    order, anchor = _order(clause)
    anchor_places = tuple(query.places(anchor)[0]) if anchor else ()
    rest = _ABOUT.sub(" ", clause) if about else clause
    rest = _ORDER.sub(lambda m: " " if m.group("rel") else m.group(0), rest)
    places, rest = query.places(rest)
    if not places and (head := _place_head(rest, query)):
        places = [head]
    named, rest = query.characters(rest)
    people = tuple(n for n in named if n != speaker and n not in topic_ids)
    wants = "where" if _WHERE.match(clause) else "who" if _WHO.match(clause) else ""
    return Question(
        text=reading.text,
        about_past=about_past or (not addressed and bool(speaker or event)),
        speaker=speaker,
        topic=topic,
        topic_ids=topic_ids,
        event=event,
        order=order,
        anchor=anchor,
        anchor_places=anchor_places,
        places=tuple(places),
        people=people,
        wants=wants,
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


def _speaker(clause: str, query: QueryRewriter) -> str | None:
    found = _SPEAKER.search(clause)
    if found is None:
        return None
    who = (found.group("who") or found.group("who2") or "").strip()
    if not who or who in _ME:
        return None
    named = query.characters(who)[0]
    return named[0] if named else None


def _event(clause: str, speaker: str | None) -> str | None:
    if speaker is not None:
        return None  # "what did Garrick tell me": their words, not an event of the player's
    when = _WHEN.search(clause)  # "where was I when I fought the wolf?": the fight, told with its place
    if when is not None and when.group("verb") in _VERB_KIND:
        return _VERB_KIND[when.group("verb")]
    found = _EVENT.search(clause)
    if found is None:
        return None
    if found.group("where") is not None:
        return "go"
    if found.group("quest") is not None or re.search(r"\bquests?\b", clause):
        return "quest_done" if _DONE.search(clause) else "quest"
    verb = found.group("verb") or found.group("verb2") or ""
    return _VERB_KIND.get(verb)


def _order(clause: str) -> tuple[str | None, str]:
    found = _ORDER.search(clause)
    if found is None:
        return None, ""
    if found.group("rel"):
        return found.group("rel"), found.group("anchor").strip()
    return ("first" if found.group("first") else "last"), ""


def asked_characters(asked: Question | None, action: str, query: QueryRewriter) -> tuple[list[str], str]:
    """``query.characters(action)`` for recall's search, except that a topic that names someone stays in the
    searched text ("what did Garrick tell me about Hal?": Garrick is the focus, "hal" is searched for)."""
    if asked is None or not asked.topic:
        return query.characters(action)
    lowered = action.lower()
    cut = lowered.rfind(asked.topic)
    named, text = query.characters(action[:cut] if cut > 0 else action)
    return named, f"{text} {asked.topic}".strip()
