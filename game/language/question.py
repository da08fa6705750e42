"""The grammar of a question: about the past or about now, asked of whom, about what, which event, which order.

"What did Garrick tell me about Hal?" names two people: Garrick is the *speaker* (whose words are wanted) and Hal
the *topic*. "What did I give to Garrick?", "who did I fight on the Fogbound Path?" and "what did I do first?" ask
about events (the kinds of :data:`game.language.lexicon.EVENT_KINDS`: the verb's lexicon entry says which).
:func:`parts` reads those parts as words; memory resolves the names (``game.memory.search.question``).

:func:`status_question` reads a question about the player's own state ("how much gold do I have?", "am I
hurt?"), which the rules answer, never memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from game.language.lexicon import IRREGULAR, event_kind, known_verbs, senses

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
class Parts:
    """The parts of a question, as words (names unresolved)."""

    clause: str
    """The question's clause, lower case."""
    addressed: bool
    """Asked of someone ("tell me what you know", "what did you see?"): they answer, not memory."""
    about_past: bool
    speaker: str
    """The words naming whose words are asked for ("garrick"), or ""."""
    topic: str
    event: str | None
    order: str | None
    anchor: str
    wants: str
    rest: str
    """The clause without its topic and order words (where places and people are looked for)."""


def parts(clause: str, *, remind: bool = False) -> Parts:
    """The parts of the question ``clause`` (see :class:`Parts`); ``remind``: the line asked to be reminded."""
    addressed = _ADDRESSED.search(clause) is not None
    about_past = not addressed and bool(_PAST.search(clause) or _MEMORY.search(clause) or remind)
    found = _SPEAKER.search(clause)
    speaker = ((found.group("who") or found.group("who2") or "").strip() if found else "") or ""
    speaker = "" if speaker in _ME else speaker
    about = _ABOUT.search(clause)
    topic = about.group("topic").strip() if about else ""
    order, anchor = _order(clause)
    rest = _ABOUT.sub(" ", clause) if about else clause
    rest = _ORDER.sub(lambda m: " " if m.group("rel") else m.group(0), rest)
    wants = "where" if _WHERE.match(clause) else "who" if _WHO.match(clause) else ""
    return Parts(clause, addressed, about_past, speaker, topic, _event(clause, speaker), order, anchor, wants, rest)


def reminded(text: str) -> tuple[bool, str]:
    """Whether ``text`` asks to be reminded ("remind me where Hal is"), and the question without those words."""
    remind = bool(_REMIND.match(text))
    return remind, _REMIND.sub("", text).strip() if remind else text


def _event(clause: str, speaker: str) -> str | None:
    if speaker:
        return None  # "what did Garrick tell me": their words, not an event of the player's
    when = _WHEN.search(clause)  # "where was I when I fought the wolf?": the fight, told with its place
    if when is not None and event_kind(when.group("verb")):
        return event_kind(when.group("verb"))
    found = _EVENT.search(clause)
    if found is None:
        return None
    if found.group("where") is not None:
        return "go"
    if found.group("quest") is not None or re.search(r"\bquests?\b", clause):
        return "quest_done" if _DONE.search(clause) else "quest"
    return event_kind(found.group("verb") or found.group("verb2") or "")


def _order(clause: str) -> tuple[str | None, str]:
    found = _ORDER.search(clause)
    if found is None:
        return None, ""
    if found.group("rel"):
        return found.group("rel"), found.group("anchor").strip()
    return ("first" if found.group("first") else "last"), ""


def event_words() -> frozenset[str]:
    """Every word that names an event a question may ask about (a verb of the lexicon, in any form): not a name
    ("before I met Alicia": only "alicia" names the event)."""
    forms = {w for w in [*known_verbs(), *IRREGULAR] if event_kind(w)}
    return frozenset(forms | {"do", "did", "done", "happen", "happened", "learn", "learned", "learnt"})


_STATUS = (
    (
        "gold",
        re.compile(
            r"\bhow\s+(?:much|many)\s+(?:gold|money|coins?|cash|credits?|shillings?|silver|eddies|yen)\b"
            r"|\bwhat(?:'s|\s+is)\s+in\s+my\s+purse\b|\bhow\s+rich\s+am\s+i\b|\bhow\s+much\s+do\s+i\s+have\b"
        ),
    ),
    (
        "health",
        re.compile(
            r"^(?:am\s+i\s+(?:hurt|wounded|injured|ok|okay|alright|all\s+right|dying|bleeding|healthy|well)"
            r"|how\s+(?:hurt|badly\s+hurt|wounded)\s+am\s+i|how(?:'s|\s+is)\s+my\s+(?:health|hp)"
            r"|what(?:'s|\s+is)\s+my\s+(?:health|hp)|how\s+much\s+(?:health|hp)\s+do\s+i\s+have"
            r"|how\s+am\s+i\s+doing)\b"
        ),
    ),
    (
        "inventory",
        re.compile(
            r"^(?:what\s+(?:do|am)\s+i\s+(?:have|carry|carrying|holding|hold)(?:\s+(?:on\s+me|with\s+me))?"
            r"|what(?:'s|\s+is)\s+in\s+my\s+(?:bag|pack|pockets?|backpack|satchel|inventory))\s*[?.!]*$"
        ),
    ),
)


def status_question(text: str) -> str:
    """Which of the player's own figures a question asks for: "gold", "health", "inventory" or ""."""
    lowered = " ".join(text.lower().replace("’", "'").split()).strip()
    if not lowered.endswith("?") and not re.match(r"^(?:how|what|am)\b", lowered):
        return ""
    for kind, pattern in _STATUS:
        if pattern.search(lowered):
            return kind
    return ""


__all__ = ["Parts", "event_words", "parts", "reminded", "senses", "status_question"]
