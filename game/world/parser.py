"""The verb parser: player text -> :class:`Command`.

Purely syntactic: it knows verbs, not the story. Names are resolved against the
content by whoever reads the command (the scripted narrator, the engine's meta
handling). Meta commands (help, save, load, quit, inventory, quests, status)
are marked so the engine can answer them without a narrator call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DIRECTIONS = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "u": "up",
    "d": "down",
    "north": "north",
    "south": "south",
    "east": "east",
    "west": "west",
    "up": "up",
    "down": "down",
    "in": "in",
    "out": "out",
    "inside": "in",
    "outside": "out",
    "northeast": "northeast",
    "northwest": "northwest",
    "southeast": "southeast",
    "southwest": "southwest",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
}

META_VERBS = frozenset({"help", "save", "load", "saves", "quit", "inventory", "quests", "status"})

_QUESTION_WORDS = (
    "where",
    "what",
    "who",
    "whom",
    "why",
    "how",
    "when",
    "which",
    "do ",
    "does ",
    "did ",
    "is ",
    "are ",
    "can ",
    "could ",
    "have ",
)
_SELF_STATEMENT = re.compile(
    r"^(my name is|my name's|call me|i am|i'm|im|i come from|i came from|i was born|i promise|i swear|i vow"
    r"|my secret|i have a secret|remember that|i love|i hate|i fear)\b"
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("give", re.compile(r"^(?:give|offer|hand|present)\s+(?:the\s+)?(?P<target>.+?)\s+to\s+(?P<obj>.+)$")),
    ("talk", re.compile(r"^(?:ask|question)\s+(?P<obj>.+?)\s+about\s+(?P<topic>.+)$")),
    ("say", re.compile(r"^(?:tell)\s+(?P<obj>\S+(?:\s+the\s+\S+)?)\s+(?:about\s+|that\s+)?(?P<text>.+)$")),
    ("talk", re.compile(r"^(?:talk|speak|chat)\s+(?:to|with)\s+(?P<obj>.+?)(?:\s+about\s+(?P<topic>.+))?$")),
    ("talk", re.compile(r"^(?:greet|hail|approach)\s+(?P<obj>.+)$")),
    ("say", re.compile(r"^(?:say|shout|whisper)\s+(?:to\s+(?P<obj>\S+)\s+)?[\"']?(?P<text>.+?)[\"']?$")),
    (
        "go",
        re.compile(
            r"^(?:go|move|walk|head|travel|run|climb|enter|return|proceed)\s+(?:to\s+|into\s+|towards?\s+|back\s+to\s+)?(?:the\s+)?(?P<target>.+)$"
        ),
    ),
    ("examine", re.compile(r"^(?:look\s+at|examine|inspect|x|study|read about|check)\s+(?:the\s+)?(?P<target>.+)$")),
    ("take", re.compile(r"^(?:take|get|grab|pick\s+up|collect|pocket|loot)\s+(?:the\s+)?(?P<target>.+)$")),
    ("drop", re.compile(r"^(?:drop|discard|leave)\s+(?:the\s+)?(?P<target>.+)$")),
    (
        "use",
        re.compile(
            r"^(?:use|play|drink|eat|read|activate|apply|insert|install|wield|wear|equip)\s+(?:the\s+)?(?P<target>.+?)(?:\s+(?:on|in|at|with)\s+(?:the\s+)?(?P<obj>.+))?$"
        ),
    ),
    (
        "attack",
        re.compile(r"^(?:attack|fight|hit|strike|kill|slay|battle|shoot|stab)(?:\s+(?:the\s+)?(?P<target>.+))?$"),
    ),
]

_SIMPLE = {
    "look": "look",
    "l": "look",
    "look around": "look",
    "survey": "look",
    "inventory": "inventory",
    "inv": "inventory",
    "i": "inventory",
    "bag": "inventory",
    "quests": "quests",
    "quest": "quests",
    "journal": "quests",
    "q": "quests",
    "status": "status",
    "stats": "status",
    "help": "help",
    "?": "help",
    "rest": "rest",
    "sleep": "rest",
    "camp": "rest",
    "wait": "rest",
    "flee": "flee",
    "run away": "flee",
    "escape": "flee",
    "retreat": "flee",
    "attack": "attack",
    "fight": "attack",
    "save": "save",
    "load": "load",
    "saves": "saves",
    "slots": "saves",
    "quit": "quit",
    "exit": "quit",
}


@dataclass(frozen=True)
class Command:
    """A parsed player action.

    Attributes:
        verb: one of go, look, examine, talk, say, ask, take, drop, use, give,
            attack, flee, rest, inventory, quests, status, help, save, load,
            saves, quit, or ``other`` for free text the parser does not know.
        target: the direct object ("north", "old hunter", "moonlight harp").
        obj: the indirect object (whom to give to, whom to talk to).
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


def parse(text: str) -> Command:
    """Parse one line of player input."""
    raw = text.strip()
    line = _clean(raw)
    if not line:
        return Command("other", text=raw)
    if line in DIRECTIONS:
        return Command("go", target=DIRECTIONS[line], text=raw)
    if line in _SIMPLE:
        return Command(_SIMPLE[line], text=raw)
    verb_word, _, rest = line.partition(" ")
    if verb_word in {"save", "load"}:
        return Command(verb_word, target=rest.strip(), text=raw)
    if line.endswith("?") or line.startswith(_QUESTION_WORDS):
        return Command("ask", topic=line.rstrip("?").strip(), text=raw)
    if _SELF_STATEMENT.match(line):
        return Command("say", text=raw)
    for verb, pattern in _PATTERNS:
        match = pattern.match(line)
        if match:
            groups = {k: (v or "").strip() for k, v in match.groupdict().items()}
            target = groups.get("target", "")
            if verb == "go":
                target = DIRECTIONS.get(target, target)
            if verb == "say":
                return Command("say", obj=groups.get("obj", ""), text=raw)
            return Command(verb, target=target, obj=groups.get("obj", ""), topic=groups.get("topic", ""), text=raw)
    return Command("other", text=raw)
