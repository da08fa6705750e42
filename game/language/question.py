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

from game.language.lexicon import (
    DONE_WORDS,
    IRREGULAR,
    MEMORY_PHRASES,
    MEMORY_WORDS,
    PAST_MARKERS,
    REMIND_FRAMES,
    STATUS_MONEY,
    STATUS_PAST,
    STATUS_PHRASES,
    STATUS_WORDS,
    WH_WORDS,
    event_kind,
    known_verbs,
    leading,
    senses,
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
    words = _words(clause)
    addressed = bool(words & {"you", "your", "yours", "yourself"})
    remembers = words & MEMORY_WORDS or any(_holds(clause, p) for p in MEMORY_PHRASES)
    about_past = not addressed and bool(words & PAST_MARKERS or remembers or remind)
    found = _SPEAKER.search(clause)
    speaker = ((found.group("who") or found.group("who2") or "").strip() if found else "") or ""
    speaker = "" if speaker in _ME else speaker
    about = _ABOUT.search(clause)
    topic = about.group("topic").strip() if about else ""
    order, anchor = _order(clause)
    rest = _ABOUT.sub(" ", clause) if about else clause
    rest = _ORDER.sub(lambda m: " " if m.group("rel") else m.group(0), rest)
    first = clause.split()[0] if clause.split() else ""
    wants = "where" if first == "where" else "who" if first in ("who", "whom") else ""
    return Parts(clause, addressed, about_past, speaker, topic, _event(clause, speaker), order, anchor, wants, rest)


def reminded(text: str) -> tuple[bool, str]:
    """Whether ``text`` asks to be reminded ("remind me where Hal is"), and the question without those words."""
    frame = leading(text, REMIND_FRAMES)
    if not frame and leading(text, ("tell me",)) and text.split()[2:3] and text.split()[2] in WH_WORDS:
        frame = "tell me"  # "tell me where Hal is"
    return bool(frame), text[len(frame) :].strip() if frame else text


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text))


def _holds(text: str, phrase: str) -> bool:
    said = " ".join(re.findall(r"[a-z']+", text))
    return f" {phrase} " in f" {said} "


def _event(clause: str, speaker: str) -> str | None:
    if speaker:
        return None  # "what did Garrick tell me": their words, not an event of the player's
    words = clause.split()
    for i, word in enumerate(words[:-2]):  # "where was I when I fought the wolf?": the fight, told with its place
        if word == "when" and words[i + 1] in ("i", "we") and event_kind(words[i + 2]):
            return event_kind(words[i + 2])
    found = _EVENT.search(clause)
    if found is None:
        return None
    if found.group("where") is not None:
        return "go"
    if found.group("quest") is not None or re.search(r"\bquests?\b", clause):
        return "quest_done" if _words(clause) & DONE_WORDS else "quest"
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


def status_question(text: str) -> str:
    """Which of the player's own figures a question asks for: "gold", "health", "inventory" or ""."""
    lowered = " ".join(re.findall(r"[a-z']+", text.lower().replace("’", "'")))
    words = lowered.split()
    if text.rstrip().endswith("?") or words[:1] in (["how"], ["what"], ["am"]):
        if leading(lowered, ("how much", "how many")) and set(words[2:3]) & STATUS_MONEY:
            return "gold"
        for kind, phrases in STATUS_PHRASES.items():
            if any(lowered == p or lowered.startswith(p + " ") for p in phrases):
                return kind
    for sentence in re.split(r"[?.!;]+", text.lower().replace("’", "'")):
        said = set(re.findall(r"[a-z']+", sentence))
        asks = said & {"how", "what", "what's", "whats", "hows", "how's", "am"}
        if asks and said & {"i", "my", "me", "i'm", "im"} and not said & STATUS_PAST:
            kinds = [kind for kind, known in STATUS_WORDS.items() if said & known]
            if len(kinds) == 1:  # "how banged up am I", "hows my purse looking", "what have I got in my pockets"
                return kinds[0]
    return ""


__all__ = ["Parts", "event_words", "parts", "reminded", "senses", "status_question"]
