"""The verb parser: player text -> :class:`Command`.

Purely syntactic: it knows verbs, not the story. Names are resolved against the
content by whoever reads the command (the scripted narrator, the engine's meta
handling). Meta commands (help, save, load, quit, inventory, quests, status)
are marked so the engine can answer them without a narrator call.

Players type the way quest objectives are written ("pour the dewdrop into the
spring", "take the elevator up to Research Floor 88", "defeat the corrupted
sentinel guarding the core"), so the parser knows many verbs for each action
(its vocabulary: :mod:`game.language.lexicon`), reads the words that only say
where or when ("... on the stair", "... from the storage shelves", ", north of
the Sanctuary") as no part of the name, and keeps only the first step of "do
this and then that". :func:`clauses` splits a sentence into the steps a
narrator can match against objectives, and :func:`verb_key` says which verbs
mean the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from game.language.lexicon import (
    ARTICLE,
    DIRECTION_WORDS,
    DIRECTIONS,
    PRONOUNS,
    QUESTION_WORDS,
    SELF_STATEMENT,
    SIMPLE_GO,
    is_verb,
    verb_key,
)
from game.language.verbs import META_VERBS, PATTERNS, SIMPLE

__all__ = ["DIRECTIONS", "PRONOUNS", "Command", "clauses", "parse", "place", "thing", "verb_key"]
"""The parser's interface, with the vocabulary its readers share (directions, pronouns, verb meanings)."""


GLANCE = re.compile(
    r"^(?:(?:look|peer|glance|gaze|stare|peek)(?:\s+out)?(?:\s+(?:to|towards?))?|what(?:'s|\s+is|\s+lies))"
    r"(?:\s+to)?\s+(?:the\s+)?(?P<way>[a-z]+)(?:\s+(?:of|from)\s+here|\s+(?:toward|towards|into|through|along|at|the)\b.*)?$"
)
"""A glance one way: examined as that direction (what lies there), never a move."""


def glance_way(glance: re.Match[str]) -> str | None:
    """The direction a :data:`GLANCE` match looks, or None: "look in the chest" looks into a thing, not a way."""
    way = DIRECTIONS.get(glance.group("way"))
    if way in ("in", "out") and glance.end("way") < len(glance.string):
        return None
    return way


@dataclass(frozen=True)
class Command:
    """A parsed player action.

    Attributes:
        verb: the name of one of :data:`~game.language.verbs.VERBS`, or ``other``
            for free text the parser does not know.
        target: the direct object ("north", "old hunter", "moonlight harp");
            for ``say``, the words said, as typed ("my name is Kael").
        obj: the indirect object (whom to give to, whom to talk or say it to,
            what to use a thing on).
        topic: what the player asks about.
        text: the original text, stripped.
    """

    verb: str
    target: str = ""
    obj: str = ""
    topic: str = ""
    text: str = ""

    @property
    def is_meta(self) -> bool:
        return self.verb in META_VERBS


def _clean(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"\s+", " ", text)
    return text.rstrip(".!")


def _cased(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip()).rstrip(".!")


# ------------------------------------------------------------- phrases
_QUALIFIER = re.compile(
    # not a list: "the fuse, the gloves and the baton", "the branch, then the vine"
    r"(?:\s*,(?!.*\sand\s)(?!\s*then\s).*"
    r"|(?<!\band)(?<!\bplus)\s+that\b.*"  # "the man that ...", not a list's "and that bead of sap"
    r"|\s+(?:(?:" + DIRECTION_WORDS + r")\s+of|which|who|whom|guarding|before|after|while|until"
    r"|on|in|at|near|by|from|beneath|behind|beyond|below|above|beside|inside|within|next\s+to|off|out\s+of"
    r"|among|amid|with|again|once\s+more|now|please|for\s+me|right\s+away|right\s+now|at\s+once"
    r"|straight\s+away|straight\s+off|immediately)\b.*)$"
)
_PLACE_LEAD = re.compile(
    r"^(?:(?:back|out|over|on|onward|onwards|along|across|through|past|before|toward|towards|to|into|in\s+to|onto"
    r"|inside|up\s+to|down\s+to|up|down|in|for|at|around)\s+)+"
)


def _strip_article(text: str) -> str:
    return re.sub(rf"^{ARTICLE}+", "", text).strip()


def thing(text: str) -> str:
    """The name in a phrase, without its article and what only says where or why.

    "a dewdrop of living sap from the roots of the Tree" -> "dewdrop of living
    sap"; "the corrupted sentinel guarding the core" -> "corrupted sentinel".
    """
    text = _strip_article(re.sub(r"^(?:on|up|out|down|in|off)\s+(?=(?:the|a|an|my|your)\s)", "", text.strip()))
    head = _QUALIFIER.sub("", text).strip()
    head = re.sub(r"\s+(?:(?:right|straight|all)\s+)?(?:up|out|free|loose|away|down|over)$", "", head)
    return _strip_article(head) or text


def place(text: str) -> str:
    """Where a movement leads: a direction, or a place name without the route.

    "east from the maintenance corridor into the distribution room" ->
    "distribution room"; "up to Research Floor 88" -> "research floor 88";
    "before the Tree of Life, north of the Sanctuary" -> "tree of life".
    """
    text = text.strip()
    if text in DIRECTIONS:
        return DIRECTIONS[text]
    route = re.match(
        rf"^(?:(?P<dir>{DIRECTION_WORDS}|up|down|in|out)\s+)?(?:from\s+.+?\s+)?"
        r"(?:to|into|in\s+to|onto|towards?|through|toward)\s+(?P<place>.+)$",
        text,
    )
    if route:
        text = route.group("place")
    text = _PLACE_LEAD.sub("", text) or text
    text = _strip_article(text)
    text = re.sub(r"(?:\s*,.*|\s+(?:(?:" + DIRECTION_WORDS + r")\s+of|from|again|slipping|past)\b.*)$", "", text)
    text = _strip_article(text.strip())
    return DIRECTIONS.get(text, text)


_CLAUSE_STOP = re.compile(
    rf"^(?:(?:{DIRECTION_WORDS}|up|down)\b|the\b|a\b|an\b|of\b|in\b|at\b|on\b|from\b|behind\b|beneath\b|near\b)"
)


def clauses(text: str) -> list[str]:
    """The steps of a sentence: "Pour the dewdrop into the Spring and speak the verse" -> both halves.

    It splits at commas, then at "and" and "then", and before "to <verb>" ("use
    the starter cell to start backup power"); parts that only say where or who
    (", north of the Sanctuary", ", the bunker's guidance AI") are dropped.
    """
    out = []
    for part in re.split(r"\s*[,;:]\s*", _cased(text).rstrip("?")):
        if not part or _CLAUSE_STOP.match(part.lower()):
            continue
        for step in re.split(r"\s+(?:and then|and|then)\s+", part):
            words = step.split()
            start = 0
            for i in range(1, len(words) - 1):
                if words[i].lower() == "to" and is_verb(words[i + 1]) and words[i + 1].islower():
                    out.append(" ".join(words[start:i]))
                    start = i + 1
            out.append(" ".join(words[start:]))
    return [c for c in out if c and not _CLAUSE_STOP.match(c.lower())]


def _first_step(line: str) -> str:
    """The first step of "do this and do that" (not of "take the fuse and the gloves")."""
    return re.split(
        r"\s+(?:and then|then|and)\s+(?=(?!the\b|a\b|an\b|my\b|some\b|his\b|her\b|then\b|(?:that|this|these|those)\s"
        r"|your\b|their\b|its\b|both\b)[a-z'-]+\s)",
        line,
    )[0]


_TELL_STOP = frozenset(
    re.findall(
        r"\S+",
        "my i i'm im i've i'll i'd that about we we're our you you're your he she they it it's his her their its "
        "this there here how what where who why when",
    )
)
_TELL_VERB = frozenset(re.findall(r"\S+", "is are was were will would can could has have had did does do lives waits"))


def _tell(words: list[str]) -> tuple[str, int]:
    """Whom "tell ..." addresses: (the addressee, the index where what is said begins)."""
    limit = min(len(words) - 1, 5)
    for i in range(limit):
        word = words[i].lower()
        if i > 0 and (word in _TELL_STOP or word in ("the", "a", "an")):
            return " ".join(words[:i]), i
        if i > 0 and word in _TELL_VERB:
            cut = max(1, i - 1)
            return " ".join(words[:cut]), cut
    cut = 2 if words and words[0].lower() in ("the", "old", "dr", "dr.", "doc", "princess") and len(words) > 2 else 1
    return " ".join(words[:cut]), cut


def _spoken(cased: str, line: str, start: int) -> str:
    """What is said, from ``start`` in ``line``, with the player's own capitals when they line up."""
    source = cased if len(cased) == len(line) else line
    return source[start:].strip().strip("\"'").strip()


def parse(text: str) -> Command:
    """Parse one line of player input."""
    raw = text.strip()
    line = _clean(raw)
    cased = _cased(raw)
    if not line:
        return Command("other", text=raw)
    if line in SIMPLE:
        return Command(SIMPLE[line], text=raw)
    question = line.endswith("?")
    line = line.rstrip("?!. ").strip()
    cased = cased.rstrip("?!. ").strip()
    if not line:
        return Command("help", text=raw)
    if line in DIRECTIONS:
        return Command("go", target=DIRECTIONS[line], text=raw)
    if line in SIMPLE:
        return Command(SIMPLE[line], text=raw)
    if line in SIMPLE_GO:
        return Command("go", target=SIMPLE_GO[line], text=raw)
    if (glance := GLANCE.match(line)) and (way := glance_way(glance)):  # "look north": a look that way
        return Command("examine", target=way, text=raw)
    verb_word, _, rest = line.partition(" ")
    if verb_word in {"save", "load"}:
        return Command(verb_word, target=rest.strip(), text=raw)
    if line.startswith(QUESTION_WORDS):
        return Command("ask", topic=line, text=raw)
    told = re.match(
        r"^(?:tell\s+me(?:\s+again)?|remind\s+me(?:\s+of)?)\s+"
        r"(?P<topic>(?:where|what|who|whom|why|how|when|which|if|whether)\b.+)$",
        line,
    )
    if told:
        return Command("ask", topic=told.group("topic"), text=raw)
    if SELF_STATEMENT.match(line):
        return Command("say", target=cased, text=raw)
    if (
        verb_word == "tell"
        and rest
        and not re.match(r"^me\s+(?:more\s+|something\s+|everything\s+|all\s+)?(?:about|of)\s", rest)
    ):
        words = rest.split(" ")
        addressee, cut = _tell(words)
        said = re.sub(r"^that\s+", "", " ".join(words[cut:]))
        addressee = _strip_article(addressee) or addressee
        if not said:
            return Command("talk", obj=addressee, text=raw)
        return Command("say", target=_spoken(cased, line, len(line) - len(said)), obj=addressee, text=raw)
    for step in dict.fromkeys((_first_step(line), line)):
        command = _match(step, line, cased, raw)
        if command is not None:
            return command
    if question:
        return Command("ask", topic=line, text=raw)
    return Command("other", text=raw)


def _match(step: str, line: str, cased: str, raw: str) -> Command | None:
    """The command ``step`` (the whole ``line`` or its first step) expresses, if a pattern reads it."""
    for verb, pattern in PATTERNS:
        match = pattern.match(line if verb == "say" else step)
        if not match:
            continue
        groups = {k: (v or "").strip() for k, v in match.groupdict().items()}
        if verb == "say":
            said = groups.get("text", "")
            start = match.start("text") if said else len(line)
            return Command("say", target=_spoken(cased, line, start), obj=groups.get("obj", ""), text=raw)
        target, obj, topic = groups.get("target", ""), groups.get("obj", ""), groups.get("topic", "")
        if verb == "go":
            target = place(target) if target else groups.get("conveyance", "")
        elif verb == "use":
            target, obj = thing(target), thing(obj) if obj else ""
        elif verb in ("give", "buy", "sell"):
            target, obj = thing(target), _person(obj) if obj else ""
        elif verb == "talk":
            obj = "" if obj in _ANYONE else _person(obj)
        else:  # take, drop, examine, attack and any verb that names a thing
            target = thing(target) if target else ""
        return Command(verb, target=target, obj=obj, topic=topic, text=raw)
    return None


_ANYONE = frozenset({"", "there", "everyone", "everybody", "all", "friend", "stranger", "all of you"})


def _person(text: str) -> str:
    """Whom a phrase names, article kept: "the voice in the lab pod bay" -> "the voice"."""
    return _QUALIFIER.sub("", text).strip() or text
