"""The frame around a clause's verb phrase: what mood it puts the clause in, and the verb phrase inside it.

"I'd like to head east" is a command whose verb phrase is "head east"; "maybe I should rest" a wish; "if I join him"
a supposition; "Garrick gives me the bow" a report; "may I pass through the gate?" a request asked as a question;
"I'm patching myself up with it" an act told as under way. The frames are the lexicon's
(:data:`~game.language.lexicon.COMMAND_FRAMES`, :data:`~game.language.lexicon.WISH_FRAMES`, ...); this module
only says in what order they are tried. :mod:`game.language.reading` reads each clause with it.
"""

from __future__ import annotations

import re

from game.language import frames, spelling
from game.language.lexicon import (
    AUXILIARIES,
    COMMAND_FRAMES,
    DEFERRALS,
    DIRECTIONS,
    FILLERS,
    HYPOTHETICAL_FRAMES,
    INTENSIFIERS,
    IRREGULAR,
    MANNER,
    NEGATION_FRAMES,
    NOT_HYPOTHETICAL,
    NOT_SUBJECTS,
    OPENERS,
    PAST,
    POLITE_FRAMES,
    POLITE_OPENERS,
    QUESTION_SUBJECTS,
    REPORT_SUBJECTS,
    REPORTING,
    WH_WORDS,
    WISH_FRAMES,
    known_verbs,
    leading,
    lemma,
    phrasal,
    progressive,
    senses,
    skip,
)

_DEFERRED = re.compile(
    rf"(?<!until )(?<!till )(?<!til )\b(?:{'|'.join(sorted(DEFERRALS, key=len, reverse=True))})[.!]?$"
)
"""An act put off ("..., later", "some other time"): a wish for then, nothing asked now (not "wait until later")."""


def mood_of(text: str) -> str:
    """The mood of a clause by the frame it opens with (see :data:`~game.language.reading.MOODS`)."""
    text = _unintensified(text)
    if _DEFERRED.search(text):
        return "wish"  # "i kind of want to poke around the crypt later": not now
    if polite_frame(text):
        return "command"
    words = text.split()
    first = words[0] if words else ""
    if first.removesuffix("'s").removesuffix("'re") in WH_WORDS:
        return "question"
    offered = first == "have" and words[1:2] and words[1] in _THINGS  # "have my ramen": a thing offered
    done_in = first == "do" and words[-1] == "in" and "?" not in text  # "do the rat in": kill it, no question
    if first in AUXILIARIES and len(words) > 1 and words[1] in QUESTION_SUBJECTS and not offered and not done_in:
        return "question"  # "is the lodge to the east?"
    opened = skip(text, OPENERS)
    framed = leading(skip(opened, FILLERS), COMMAND_FRAMES)
    if (wish := leading(opened, WISH_FRAMES)) and len(wish) >= len(framed):  # not "i should like to"
        return "wish"
    if leading(opened, HYPOTHETICAL_FRAMES) and not leading(opened, NOT_HYPOTHETICAL):
        return "hypothetical"
    if framed or frames.plainer(skip(opened, FILLERS))[1]:
        return "command"  # "ok lets take on the troll", "make tracks for the village"
    if opened.split()[:1] and opened.split()[0] in REPORT_SUBJECTS:
        return "report"
    if len(words) > 1 and first in ("i", "we") and words[1] in PAST:
        return "report"
    if len(words) > 1 and first in ("i've", "we've") and words[1] not in ("to", "got"):
        return "report"  # "i've come from the lights board"
    if len(words) > 2 and first in ("the", "a", "an") and (_third_person(words[2]) or _acted(words[2])):
        return "report"  # "the guard takes the key", "the princess told me you sell waybread"
    if first not in ("i", "you", "we") and not senses(first) and set(words[1:6]) & REPORTING:
        return "report"  # "some guy in the alley said okabe'll buy anything shiny"
    if len(words) > 1 and not senses(first) and first not in NOT_SUBJECTS and _acted(words[1]) and not _typed(first):
        return "report"  # "garrick gives me the bow", "kage wants me to ...", "silas knelt"
    return "command"


_THINGS = frozenset({"the", "my", "your", "this", "that", "these", "those", "it", "them", "some", "one"})


def polite_frame(text: str) -> str:
    """The frame of a request asked as a question ("may i", "would you mind if i"), or ""."""
    words = skip(text, POLITE_OPENERS).split()
    plain = _unadorned(words)  # "would you mind terribly if i", "i should be most grateful if i"
    frame = leading(plain, POLITE_FRAMES)
    if frame in ("would you", "could you", "can you", "will you") and plain.split()[2:3] == ["mind"]:
        doing = plain.split()[3:4]  # "would you mind selling me a herb": a request; "would you mind?": a question
        return f"{frame} mind" if doing and _act_of(doing[0], "") is not None else ""
    return frame


def _unintensified(text: str) -> str:
    """``text`` without an intensifier among its first three words ("i'd quite like to", "i'd be much obliged")."""
    words = text.split()
    return " ".join(w for i, w in enumerate(words) if i > 2 or w not in INTENSIFIERS)


def _unadorned(words: list[str]) -> str:
    """Words without the adverbs and intensifiers that only adorn a frame ("terribly", "most", "very")."""
    return " ".join(w for w in words if not (len(w) > 4 and w.endswith("ly")) and w not in INTENSIFIERS)


def _typed(word: str) -> bool:
    """Whether ``word`` is a verb mistyped ("grabthe glvoes", "goign downstairs"), not a name before its verb."""
    if spelling.split_run(word, phrasal(), known_verbs()):
        return True
    near = [*spelling.candidates(word, known_verbs()), *spelling.candidates(word, progressive())]
    return any(sorted(c) == sorted(word) for c in near)  # two letters swapped: never a name ("kage wants")


def _acted(word: str) -> bool:
    """Whether ``word``, second in a clause after a name, is its verb in the third person or the past."""
    if word in DIRECTIONS:
        return False  # "goign downstairs": a way, not a verb
    if word in PAST or word in IRREGULAR or word in REPORTING:
        return True
    if len(word) > 4 and word.endswith("ed") and lemma(word) != word:
        return True  # "the hunter warned me", "garrick hired you"
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word[:-1].isalpha()


def _third_person(word: str) -> bool:
    """Whether ``word`` is a verb in the third person ("takes", "goes", "gives")."""
    if not word.endswith("s") or word.endswith("ss"):
        return False
    return bool(senses(word[:-1])) or (word.endswith("es") and bool(senses(word[:-2])))


def verb_phrase(text: str) -> str:
    """The verb phrase of a clause, without the frame around it ("i'd like to head east": head east)."""
    text = _unintensified(text)
    text = " ".join(text.replace("«", " ").split())
    if frame := polite_frame(text):
        plain = _unadorned(skip(text, POLITE_OPENERS).split())
        text = plain[len(frame) :].strip()
    if frame := leading(text, NEGATION_FRAMES):
        text = skip(text[len(frame) :].strip(), frozenset({"ever"}))
    text = skip(text, FILLERS)
    if frame := leading(text, COMMAND_FRAMES):
        text = text[len(frame) :].strip()
    text = _progressive(skip(skip(text, frozenset({"i", "we"})), FILLERS | MANNER))
    for frame in ("try to", "go and"):
        text = text[len(frame) :].strip() if leading(text, (frame,)) else text
    return skip(text, MANNER)


_PROGRESSIVE = re.compile(r"^(?:i'm|i am|im|we're|we are|am|are)\s+(?P<verb>[a-z]+ing)\b(?P<rest>.*)$")


def _progressive(text: str) -> str:
    """An act told as under way, as the act: "i'm patching myself up with it" -> "patch myself up with it"; other
    words after "i'm" stay ("i'm hungry", "i'm the new keeper")."""
    told = _PROGRESSIVE.match(text) or re.match(r"^(?P<verb>[a-z]+ing)\b(?P<rest>.*)$", text)
    if told is None:
        return text
    verb = _act_of(told["verb"], told["rest"])
    return text if verb is None else verb + told["rest"]


def _act_of(doing: str, rest: str) -> str | None:
    """The verb an -ing form is of, when the lexicon knows it or an idiom it opens ("patching ... up with")."""
    if not doing.endswith("ing"):
        return None
    stem = doing[:-3]
    doubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem  # "running": run
    for verb in (lemma(doing), stem, stem + "e", doubled):
        if senses(verb) or senses(" ".join([verb, *rest.split()[:1]])) or frames.plainer(verb + rest)[1]:
            return verb  # "i'm legging it": leg it
    return None
