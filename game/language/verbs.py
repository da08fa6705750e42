"""The verbs: each verb's words, the patterns that read it, its help lines and what completion offers, together.

Adding a verb is one :class:`Verb` in :data:`VERBS` (its narration is a handler in ``game/llm/scripted.py``, which
a test checks every verb has; CONTRIBUTING.md has the checklist). The parser (:mod:`game.language.parser`) reads a
line as a verb with :data:`SIMPLE` (whole lines: "l", "run away") and :data:`PATTERNS`; the TUI's help and
completion and the generic help examples are made from the same entries.

Pattern order matters where verbs share words ("put down the lamp" is a drop, "put the lamp on the hook" a use):
every verb's ``first`` patterns are tried before any verb's ``patterns``, each tier in the order of ``VERBS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from game.language.lexicon import APPLYING, BODY_PARTS, alternation, words_of


@dataclass(frozen=True)
class HelpLine:
    form: str
    """How the help shows it: "give THING to SOMEONE"."""
    also: str
    """Other words for it."""
    sample: str
    """A line the parser reads as this verb (a test checks it does)."""


@dataclass(frozen=True)
class Verb:
    name: str
    """What :class:`~game.language.parser.Command` calls it."""
    help: tuple[HelpLine, ...] = ()
    typed: tuple[str, ...] = ()
    """What the action line's completion offers for it."""
    simple: tuple[str, ...] = ()
    """Whole lines that mean this verb and nothing more."""
    first: tuple[str, ...] = ()
    """Patterns tried before every verb's ``patterns`` (named groups: target, obj, topic, text, conveyance)."""
    patterns: tuple[str, ...] = ()
    meta: bool = False
    """Answered by the engine without a turn (save, inventory, ...)."""
    senses: bool = False
    """Asks for nothing but to see (or hear): its words name what is sensed, not what is acted on
    (:mod:`game.world.intent` refuses an act it would stand for)."""


_GO = alternation("go")
_CONVEYANCE = r"(?:freight\s+)?(?:elevator|lift|stairs?|staircase|stairway|ladder|escalator|ramp|tram|train)"
_TAKE = alternation("take")
_USE = alternation("use")
_ATTACK = alternation("attack")
_EXAMINE = alternation("examine")
_TALK_TO = alternation("greet")
_DROP = alternation("drop")
_GIVE = alternation("give")
_PASS = r"pass(?!\s+(?:by|through|over|under|on|along|across|into|beyond|between|around)\b)"
_BUY = alternation("buy")
_SELL = alternation("sell")
_REST = alternation("rest")
_DEFEND = alternation("defend")
_ON = r"on|in|into|at|with|onto|inside|to|under|over|upon|against|beside|by|through|across"

VERBS: tuple[Verb, ...] = (
    Verb(
        "go",
        (HelpLine("go DIRECTION / go to PLACE", "n s e w ne nw se sw up down in out; walk, head, enter", "go north"),),
        typed=("go",),
        simple=("leave", "depart", "head out", "move on", "get going", "move along", "press on", "push on"),
        first=(
            rf"^(?:{_GO}|take|use|board|get\s+(?:in|on|into|onto)|catch|call)\s+(?:the\s+|a\s+)?"
            rf"(?P<conveyance>{_CONVEYANCE})(?:\s+(?P<target>.+))?$",
        ),
        patterns=(rf"^(?:{_GO})\s+(?P<target>.+)$",),
    ),
    Verb(
        "look",
        (HelpLine("look", "l, look around: describe where you are", "look"),),
        typed=("look",),
        simple=("look", "l", "look around", "survey", "look about"),
        senses=True,
    ),
    Verb(
        "examine",
        (HelpLine("examine THING", "look at, inspect, x, check", "examine the door"),),
        typed=("examine",),
        patterns=(rf"^(?:{_EXAMINE})\s+(?P<target>.+)$",),
        senses=True,
    ),
    Verb(
        "attack",
        (HelpLine("attack [ENEMY]", "fight, hit, strike, shoot", "attack"),),
        typed=("attack",),
        simple=("attack", "fight"),
        patterns=(rf"^(?:{_ATTACK})(?:\s+(?P<target>.+))?$",),
    ),
    Verb(
        "take",
        (HelpLine("take THING", "get, grab, pick up", "take the map"),),
        typed=("take",),
        patterns=(
            rf"^(?:{_TAKE})\s+(?P<target>.+)$",
            r"^(?:pick|pull|lift)\s+(?P<target>.+?)\s+(?:up|out|free|loose)$",
            r"^(?:stash|stow|tuck|put|shove|slip|pop|throw|stuff)\s+(?P<target>.+?)\s+(?:in|into)\s+(?:my|your)\s+"
            r"(?:pack|bag|backpack|satchel|pocket|pockets|rucksack|knapsack|coat|jacket|belt|pouch)$",  # taken along
        ),
    ),
    Verb(
        "drop",
        (HelpLine("drop THING", "discard, leave", "drop the map"),),
        typed=("drop",),
        first=(
            r"^(?:put|set|lay)\s+down\s+(?P<target>.+)$",
            r"^(?:put|set|lay)\s+(?P<target>.+?)\s+down(?:\s+(?:by|beside|near|next\s+to|on|at|in|here|there)\b.*)?$",
            rf"^(?:{_DROP})\s+(?P<target>.+)$",
        ),
    ),
    Verb(
        "use",
        (
            HelpLine(
                "use THING [on TARGET]", "drink, eat, read, wear, equip, insert, activate", "use the key on the door"
            ),
        ),
        typed=("use",),
        first=(
            r"^(?:drink|sip|bathe|wash|scoop\s+water|fill\s+\S+(?:\s+\S+)?)\s+(?:from|in|at)\s+(?P<target>.+)$",
            r"^(?:unlock|open)\s+(?P<obj>.+?)\s+with\s+(?P<target>.+)$",
            r"^(?:drink|sip|swig|gulp|quaff)\s+(?:\S+\s+){1,3}?from\s+(?P<target>(?:my|the|your|this|that)\s.+)$",
            r"^(?:slap|stick|strap|slip|pull|pop)\s+(?P<target>\S+(?:\s+\S+){0,3}?)\s+on$",  # "slap it on": worn
            rf"^(?:{'|'.join(sorted(APPLYING))})\s+(?P<target>.+?)\s+(?:into|onto|on|in)\s+(?:my|your|this|the)\s+"
            rf"(?:{'|'.join(sorted(BODY_PARTS))})$",
        ),
        patterns=(rf"^(?:{_USE})\s+(?P<target>.+?)(?:\s+(?:{_ON})\s+(?P<obj>.+))?$",),
    ),
    Verb(
        "give",
        (HelpLine("give THING to SOMEONE", "offer, hand", "give the map to the guard"),),
        typed=("give",),
        first=(
            rf"^(?:{_GIVE}|return|{_PASS})\s+(?!back\b|home\b|to\b)(?P<target>.+?)"
            r"\s+to\s+(?P<obj>.+)$",
            r"^(?:give|offer|hand|bring)\s+(?P<obj>(?!the\b|a\b|an\b|my\b|some\b|this\b)\S+)\s+"
            r"(?:the|a|an|my|this|some|one\s+of\s+(?:the|my|these|those))\s+(?P<target>.+)$",
            r"^(?:give|offer|hand|pay|tip)\s+(?P<obj>(?!me\b|us\b|myself\b).+?)\s+(?P<target>\d+\s+\S+)$",
        ),
    ),
    Verb(
        "buy",
        (HelpLine("buy THING [from SOMEONE]", "purchase; give 5 gold to SOMEONE pays them", "buy the herb"),),
        typed=("buy",),
        first=(rf"^(?:{_BUY})\s+(?P<target>.+?)(?:\s+(?:from|off)\s+(?P<obj>.+))?$",),
    ),
    Verb(
        "sell",
        (HelpLine("sell THING [to SOMEONE]", "trade, pawn, fence", "sell the pearl to the fixer"),),
        typed=("sell",),
        first=(  # "sell garrick my shard": the buyer first
            r"^(?:sell|flog)\s+(?P<obj>(?!the\b|a\b|an\b|my\b|some\b|this\b|these\b|that\b|it\b|them\b)\S+)\s+"
            r"(?:the|a|an|my|this|some|that|one\s+of\s+(?:the|my|these|those))\s+(?P<target>.+)$",
            rf"^(?:{_SELL})\s+(?P<target>.+?)(?:\s+(?:to|with)\s+(?P<obj>.+))?$",
        ),
    ),
    Verb(
        "talk",
        (
            HelpLine("talk to SOMEONE [about TOPIC]", "speak with, greet, approach", "talk to the guard"),
            HelpLine(
                "ask SOMEONE about TOPIC", "question; or just ask: 'where is the exit?'", "ask the guard about the exit"
            ),
        ),
        typed=("talk to", "ask"),
        simple=("talk", "speak", "chat"),
        first=(
            r"^(?:ask|query|quiz|inquire|enquire)\s+(?:about|after|of|regarding)\s+(?P<topic>.+)$",
            r"^(?:ask|question|query|quiz)\s+(?P<obj>.+?)\s+(?:about|after|regarding|concerning|of)\s+(?P<topic>.+)$",
            r"^ask\s+(?P<obj>.+?)\s+(?P<topic>(?:where|what|who|whom|why|how|when|which|whether|if)\b.+)$",
            r"^(?:ask|question)\s+(?P<obj>.+)$",
            r"^tell\s+me\s+(?:more\s+|something\s+|everything\s+|all\s+)?(?:about|of)\s+(?P<topic>.+)$",
            r"^(?:talk|speak|chat|converse)\s+(?:to|with)\s+(?P<obj>.+?)"
            r"(?:\s+(?:about|regarding|concerning)\s+(?P<topic>.+))?$",
            r"^(?:talk|speak|chat)\s+(?:about|of|regarding)\s+(?P<topic>.+)$",
            rf"^(?:{_TALK_TO})\s+(?P<obj>.+)$",
            r"^(?:hello|hi|hey|greetings|good\s+(?:morning|evening|day|afternoon)|well\s+met)"
            r"(?:\s*,?\s+(?P<obj>.+))?$",
        ),
    ),
    Verb(
        "say",
        (HelpLine("say TEXT", "shout, whisper; tell SOMEONE TEXT; 'my name is ...'", "say hello"),),
        typed=("say", "tell"),
        first=(r"^(?:say|shout|whisper|yell|mutter|murmur)\s+(?:to\s+(?P<obj>\S+)\s+)?[\"']?(?P<text>.+?)[\"']?$",),
    ),
    Verb(
        "defend",
        (HelpLine("defend", "block, parry, brace: take less harm from the next blow", "defend"),),
        typed=("defend",),
        simple=("defend myself", "brace myself", *words_of("defend")),
        patterns=(rf"^(?:{_DEFEND})(?:\s+(?:myself|yourself))?\s+(?:behind|with|against|from|for)\b.*$",),
    ),
    Verb(
        "flee",
        (HelpLine("flee", "run away, escape, retreat", "flee"),),
        ("flee",),
        words_of("flee"),
    ),
    Verb(
        "rest",
        (HelpLine("rest", "sleep, camp, wait", "rest"),),
        ("rest",),
        ("rest", "sleep", "camp", "wait"),
        patterns=(
            r"^wait(?:\s+(?:for\s+)?(?:a\s+(?:while|bit|moment|spell)|an\s+hour|here|awhile))?$",
            rf"^(?:{_REST})(?:\s+(?!(?:with|on|in)\s+(?:the|a|an|my)\b).*)?$",
            r"^(?:need|want|take|get|have)\s+(?:some|a)\s+(?:rest|sleep|nap|break|breather)$",
        ),
    ),
    Verb("ask"),  # a question ("where is the exit?"), read by the parser before any pattern
    Verb(
        "inventory",
        (HelpLine("inventory", "i, inv, bag: what you carry", "i"),),
        ("inventory",),
        ("inventory", "inv", "i", "bag"),
        meta=True,
    ),
    Verb(
        "quests",
        (HelpLine("quests", "q, journal, hint", "quests"),),
        ("quests",),
        ("quests", "quest", "journal", "q", "hint", "hints", "objectives", "goals"),
        meta=True,
    ),
    Verb("status", (HelpLine("status", "stats", "status"),), ("status",), ("status", "stats"), meta=True),
    Verb("help", (HelpLine("help", "?", "help"),), ("help",), ("help", "?"), meta=True),
    Verb("save", (HelpLine("save [NAME]", "no name: the quick slot", "save"),), ("save",), ("save",), meta=True),
    Verb(
        "load",
        (HelpLine("load [NAME]", "no name: the quick slot; 'saves' lists the slots", "load"),),
        ("load", "saves"),
        ("load",),
        meta=True,
    ),
    Verb("saves", simple=("saves", "slots"), meta=True),
    Verb("undo", (HelpLine("undo", "take the last turn back (ctrl+z)", "undo"),), ("undo",), ("undo",), meta=True),
    Verb("redo", (HelpLine("redo", "play an undone turn again (ctrl+y)", "redo"),), ("redo",), ("redo",), meta=True),
    Verb(
        "retry",
        (HelpLine("retry", "another telling of the last turn (ctrl+r)", "retry"),),
        ("retry",),
        ("retry", "reroll"),
        meta=True,
    ),
    Verb("quit", (HelpLine("quit", "exit", "quit"),), ("quit",), ("quit", "exit"), meta=True),
)

SIMPLE: dict[str, str] = {line: verb.name for verb in VERBS for line in verb.simple}
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    *((verb.name, re.compile(pattern)) for verb in VERBS for pattern in verb.first),
    *((verb.name, re.compile(pattern)) for verb in VERBS for pattern in verb.patterns),
]
META_VERBS = frozenset(verb.name for verb in VERBS if verb.meta)
TYPED: tuple[str, ...] = tuple(word for verb in VERBS for word in verb.typed)
"""What the action line completes, in the order of :data:`VERBS`."""
SENSING = frozenset(verb.name for verb in VERBS if verb.senses)
