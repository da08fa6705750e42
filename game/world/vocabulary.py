"""The parser's vocabulary: the words it knows and the patterns that read a sentence.

Directions, the meta verbs, question openings and statements about oneself;
for each action the many verbs players use for it (quest objectives are written
"pour the dewdrop into the spring", "take the elevator up to Research Floor
88"), the patterns that read an action's object, indirect object and topic,
the one-word commands, and :func:`verb_key`, which verbs mean the same.
:mod:`game.world.parser` reads a line with them.
"""

from __future__ import annotations

import re

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
    "upstairs": "up",
    "downstairs": "down",
}

META_VERBS = frozenset({"help", "save", "load", "saves", "quit", "inventory", "quests", "status"})

QUESTION_WORDS = (
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
    "will ",
    "would ",
    "were ",
    "was ",
)
SELF_STATEMENT = re.compile(
    r"^(my name is|my name's|call me|i am|i'm|im|i come from|i came from|i was born|i promise|i swear|i vow"
    r"|my secret|i have a secret|remember that|i love|i hate|i fear)\b"
)
PRONOUNS = frozenset({"him", "her", "them", "it", "he", "she", "they"})
"""Words by which the player points at someone present without naming them."""

DIRECTION_WORDS = "|".join(sorted((re.escape(d) for d in DIRECTIONS if len(d) > 2), key=len, reverse=True))
ARTICLE = r"(?:(?:the|a|an|some|this|that|your|my)\s+)"

# ----------------------------------------------------------------- verbs
_GO = (
    r"go|move|walk|head|travel|run|climb|clamber|scramble|enter|return|proceed|find|reach|visit|ascend|descend|cross"
    r"|follow|wade|swim|hike|step|continue|sneak|slip|creep|jog|journey|hurry|rush|stand|ride|make\s+(?:my|your)\s+way"
    r"|set\s+(?:off|out)|backtrack|retrace\s+(?:my|your)\s+steps|squeeze|crawl|march|wander|trek|navigate|push\s+on"
)
_CONVEYANCE = r"(?:freight\s+)?(?:elevator|lift|stairs?|staircase|stairway|ladder|escalator|ramp|tram|train)"
_TAKE = (
    r"take|get|grab|pick\s+up|collect|pocket|loot|gather|pluck|harvest|snatch|retrieve|fetch|acquire|obtain"
    r"|wrench|pry|prise|steal|salvage|scavenge|claim|scoop|catch|unhook|unplug"
)
_USE = (
    r"use|play|strum|drink|quaff|sip|eat|consume|chew|swallow|read|activate|apply|insert|install|wield|wear|equip"
    r"|don|pour|put|place|plug|fit|seat|slot|load|attach|connect|hold\s+up|raise|light|ignite|burn|ring|blow|sprinkle"
    r"|spill|empty|drip|dip|start|power\s+up|turn\s+on|switch\s+on|fire\s+up|inject|swap|replace|feed|mount|operate"
    r"|brandish|wave|offer\s+up|lay|set|sound|tune|invoke|trigger|press|flip"
)
_ATTACK = (
    r"attack|fight|hit|strike|kill|slay|battle|shoot|stab|face|defeat|destroy|smash|break|crush|slash|punch|kick"
    r"|ambush|engage|wreck|murder|assault|bash|cut\s+down|take\s+down|take\s+out|finish\s+off|beat|vanquish"
    r"|shatter|hack\s+at|cleave|spear|skewer|behead|dispatch|overpower|subdue|duel|challenge"
)
_EXAMINE = (
    r"look\s+at|look\s+in(?:to|side)?|look\s+under|look\s+behind|look\s+over|examine|inspect|x|study|read\s+about"
    r"|check|search|observe|view|watch|peer\s+at|peer\s+into|investigate|scan|analy[sz]e|probe|regard|admire"
)
_TALK_TO = (
    r"greet|hail|approach|address|call\s+(?:out\s+)?(?:to|for)|wave\s+(?:to|at)|say\s+(?:hello|hi|hey)\s+to|comfort"
    r"|console|consult|meet|help|rescue|free|question|interrogate|thank|calm|reassure"
)

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "give",
        re.compile(
            r"^(?:give|offer|hand(?:\s+over)?|present|bring|deliver|return)\s+(?!back\b|home\b|to\b)(?P<target>.+?)"
            r"\s+to\s+(?P<obj>.+)$"
        ),
    ),
    (
        "give",
        re.compile(
            r"^(?:give|offer|hand|bring)\s+(?P<obj>(?!the\b|a\b|an\b|my\b|some\b|this\b)\S+)\s+"
            r"(?:the|a|an|my|this|some)\s+(?P<target>.+)$"
        ),
    ),
    ("talk", re.compile(r"^(?:ask|query|quiz|inquire|enquire)\s+(?:about|after|of|regarding)\s+(?P<topic>.+)$")),
    (
        "talk",
        re.compile(
            r"^(?:ask|question|query|quiz)\s+(?P<obj>.+?)\s+(?:about|after|regarding|concerning|of)\s+(?P<topic>.+)$"
        ),
    ),
    (
        "talk",
        re.compile(r"^ask\s+(?P<obj>.+?)\s+(?P<topic>(?:where|what|who|whom|why|how|when|which|whether|if)\b.+)$"),
    ),
    ("talk", re.compile(r"^(?:ask|question)\s+(?P<obj>.+)$")),
    ("talk", re.compile(r"^tell\s+me\s+(?:more\s+|something\s+|everything\s+|all\s+)?(?:about|of)\s+(?P<topic>.+)$")),
    (
        "talk",
        re.compile(
            r"^(?:talk|speak|chat|converse)\s+(?:to|with)\s+(?P<obj>.+?)"
            r"(?:\s+(?:about|regarding|concerning)\s+(?P<topic>.+))?$"
        ),
    ),
    ("talk", re.compile(r"^(?:talk|speak|chat)\s+(?:about|of|regarding)\s+(?P<topic>.+)$")),
    ("talk", re.compile(rf"^(?:{_TALK_TO})\s+(?P<obj>.+)$")),
    (
        "talk",
        re.compile(
            r"^(?:hello|hi|hey|greetings|good\s+(?:morning|evening|day|afternoon)|well\s+met)"
            r"(?:\s*,?\s+(?P<obj>.+))?$"
        ),
    ),
    (
        "say",
        re.compile(r"^(?:say|shout|whisper|yell|mutter|murmur)\s+(?:to\s+(?P<obj>\S+)\s+)?[\"']?(?P<text>.+?)[\"']?$"),
    ),
    ("drop", re.compile(r"^(?:put|set|lay)\s+down\s+(?P<target>.+)$")),
    ("drop", re.compile(r"^(?:put|set|lay)\s+(?P<target>.+?)\s+down$")),
    (
        "drop",
        re.compile(r"^(?:drop|discard|leave|throw\s+away|toss|abandon|dump|ditch)\s+(?P<target>.+)$"),
    ),
    (
        "go",
        re.compile(
            rf"^(?:{_GO}|take|use|board|get\s+(?:in|on|into|onto)|catch|call)\s+(?:the\s+|a\s+)?"
            rf"(?P<conveyance>{_CONVEYANCE})(?:\s+(?P<target>.+))?$"
        ),
    ),
    ("go", re.compile(rf"^(?:{_GO})\s+(?P<target>.+)$")),
    ("attack", re.compile(rf"^(?:{_ATTACK})(?:\s+(?P<target>.+))?$")),
    ("examine", re.compile(rf"^(?:{_EXAMINE})\s+(?P<target>.+)$")),
    (
        "use",
        re.compile(r"^(?:drink|sip|bathe|wash|scoop\s+water|fill\s+\S+(?:\s+\S+)?)\s+(?:from|in|at)\s+(?P<target>.+)$"),
    ),
    ("use", re.compile(r"^(?:unlock|open)\s+(?P<obj>.+?)\s+with\s+(?P<target>.+)$")),
    ("take", re.compile(rf"^(?:{_TAKE})\s+(?P<target>.+)$")),
    ("take", re.compile(r"^(?:pick|pull|lift)\s+(?P<target>.+?)\s+(?:up|out|free|loose)$")),
    (
        "use",
        re.compile(
            rf"^(?:{_USE})\s+(?P<target>.+?)(?:\s+(?:on|in|into|at|with|onto|inside|to|under|over|upon|against"
            r"|beside|by|through|across)\s+(?P<obj>.+))?$"
        ),
    ),
]

SIMPLE = {
    "look": "look",
    "l": "look",
    "look around": "look",
    "survey": "look",
    "look about": "look",
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
    "defend": "defend",
    "defend myself": "defend",
    "block": "defend",
    "parry": "defend",
    "guard": "defend",
    "brace": "defend",
    "brace myself": "defend",
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
    "talk": "talk",
    "speak": "talk",
    "chat": "talk",
}
SIMPLE_GO = {
    "ascend": "up",
    "climb": "up",
    "climb up": "up",
    "go up": "up",
    "descend": "down",
    "climb down": "down",
    "go down": "down",
    "enter": "in",
    "go in": "in",
    "go inside": "in",
    "go out": "out",
}

VERB_GROUPS = (
    "talk speak chat converse ask question greet address tell say recite chant utter",
    "haul pull drag tug free rescue yank help lift untangle unravel untie calm soothe",
    "go walk head travel move run proceed continue hike march trek journey wander climb clamber scramble ascend"
    " descend ride board enter reach find visit stand arrive slip sneak creep squeeze crawl",
    "take get grab collect gather pluck harvest snatch retrieve fetch obtain wrench pry prise salvage scavenge claim",
    "use play strum activate operate start insert install plug fit seat slot pour put place apply",
    "drink sip quaff",
    "eat consume chew swallow",
    "read study",
    "give offer hand deliver bring return",
    "defeat attack fight kill slay destroy face hit strike smash break crush shoot stab beat vanquish wreck",
)
SAME_VERB: dict[str, str] = {word: group.split()[0] for group in VERB_GROUPS for word in group.split()}
"""Verbs that mean the same when a narrator compares the player's words with an objective's."""


def verb_key(word: str) -> str:
    """What a verb means, so that synonyms compare equal ("destroy" and "defeat", "haul" and "pull")."""
    word = word.lower().strip(" ,.!?")
    for suffix in ("ing", "ed", "s"):  # "slipping", "hauled", "pours"
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]
            if base in SAME_VERB or base + "e" in SAME_VERB:
                word = base if base in SAME_VERB else base + "e"
                break
            if suffix != "s":
                word = base
                break
    return SAME_VERB.get(word, word)


def is_verb(word: str) -> bool:
    """Whether ``word`` is a verb the vocabulary knows, in any of its forms ("pours", "start")."""
    return verb_key(word) in SAME_VERB.values() or word in SAME_VERB
