"""A reading of the player's sentence: its clauses, each with a mood, a polarity and a verb class.

The rules apply an act for the player only when the player asked for it (:mod:`game.world.intent`). A bag of
words cannot tell "kneel" from "I will never kneel", "go north" from "look north" or "what lies to the north?".
A :class:`Reading` splits an action into clauses ("I stay here and do not go west" -> "I stay here", "do not go
west") and gives each:

- a **mood**: ``command`` (an imperative, "I take the herb", "I'll head east", "let's rest"), ``question`` ("what
  lies to the north?", "should I go?"), ``wish`` (wonder, hope, consideration: "I wonder if I should kneel",
  "maybe I should rest"), ``hypothetical`` ("if I join him ...", "I would never drop it", "I could go west") or
  ``report`` (someone else's act or a past one: "Garrick gives me the bow", "he told me to go north", "I went
  west yesterday");
- a **polarity**: negated by never, not, don't, won't, refuse, no ("no rest for me now"), nothing;
- its **verb classes**: move, take, drop, give, use, rest, fight, trade, sense, speak (a clause may have more than
  one: "leave" moves or drops, "take the freight lift" moves); a sensing verb ("look north", "look at everything")
  has only ``sense``;
- its **core**: the verb phrase without the frame ("I'd like to head east" -> "head east"), parsed as a
  :class:`~game.world.parser.Command`.

Words in quotes, and what follows say/shout/tell, are speech: spoken, never done. Only a positive clause in the
command mood *binds* (grounds an act); a question also counts as speaking to someone.

Why a reader of game English and not a dependency parser: PyPI's spaCy English models are third-party re-uploads
(the spaCy team ships them from GitHub, which this project cannot reach at install), and a general parser tags
terse game commands ("look north", "x ferns", "n") poorly. The game's language is a closed vocabulary (its verbs
in :mod:`game.world.verbs` and :mod:`game.world.vocabulary`); this reader covers the frames players wrap around
them, and ``tests/test_reading.py`` keeps its corpus. The pipeline reads an action once per turn and hands the
reading to the narrator's command, the intent check and memory.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import cache, cached_property

from game.text import keywords
from game.world.parser import Command, parse, verb_key
from game.world.vocabulary import PRONOUNS

MOODS = ("command", "question", "wish", "hypothetical", "report")
CLASSES = ("move", "take", "drop", "give", "use", "rest", "fight", "trade", "sense", "speak")


def _each(words: str, classes: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return dict.fromkeys(words.split(), classes)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_VERB_CLASSES: dict[str, tuple[str, ...]] = {
    "go": ("move",),
    "take": ("take",),
    "drop": ("drop",),
    "give": ("give",),
    "buy": ("trade", "take"),
    "sell": ("trade",),
    "use": ("use",),
    "rest": ("rest",),
    "attack": ("fight",),
    "flee": ("fight", "move"),
    "defend": ("fight",),
    "look": ("sense",),
    "examine": ("sense",),
    "talk": ("speak",),
    "ask": ("speak",),
    "say": ("speak",),
}
"""The classes of the parser's verbs (:data:`game.world.verbs.VERBS`)."""

_LEXICON: dict[str, tuple[str, ...]] = {
    # the first word of a core the parser does not read, or reads as one meaning of several
    **_each("go walk head travel run climb enter return visit wade step hurry rush march", ("move",)),
    **_each("proceed continue cross follow ride sneak slip creep wander descend ascend", ("move",)),
    "leave": ("move", "drop"),
    "exit": ("move",),
    "return": ("move", "give"),
    "take": ("take",),
    **_each("pick grab get gather collect pluck harvest snatch fetch pocket loot steal", ("take",)),
    "break": ("take", "fight"),  # "break off a branch"
    "cut": ("take", "fight"),
    **_each("buy purchase order rent hire", ("trade", "take")),
    **_each("pay", ("trade", "take")),  # "pay for the ramen"
    **_each("spend bribe tip trade barter sell", ("trade",)),
    **_each("drop discard toss throw ditch dump abandon", ("drop",)),
    **_each("give offer hand deliver present", ("give",)),
    **_each("use drink eat read wear wield equip apply pour play heal cure bandage", ("use",)),
    **_each("munch nibble gulp bite chew swallow sip quaff don", ("use",)),
    **_each("rest sleep nap doze camp", ("rest",)),
    **_each("attack fight hit strike kill slay stab slash smash punch kick shoot", ("fight",)),
    **_each("charge lunge swing hack bash block parry dodge duck evade brace flee", ("fight",)),
    **_each("look gaze peer glance stare see watch listen hear smell sniff observe", ("sense",)),
    **_each("examine inspect study survey scan search check view regard x", ("sense",)),
    **_each("talk speak chat ask tell say greet hail answer reply shout whisper call", ("speak",)),
    **_each("thank hello hi hey greetings", ("speak",)),
}
_SENSE_VERBS = frozenset({"look", "examine"})
_DROP_PHRASE = re.compile(
    r"^(?:get\s+rid\s+of|throw\s+away|put\s+down|set\s+down|lay\s+down|let\s+go\s+of|part\s+with)\b"
)
_REST = re.compile(r"\b(?:rest|sleep|nap|doze|camp|lie\s+down|recover|catch\s+(?:my|your)\s+breath|take\s+a\s+break)\b")
_TRADE = re.compile(
    r"\b(?:buy|purchase|pay|spend|bribe|tip|trade|barter|sell|hire|rent|\d+\s+(?:gold|coins?|credits?|cr))"
)
_MONEY = re.compile(r"\b(?:gold|coins?|credits?|money|cash|yen|eddies)\b")

_NEGATORS = _set(
    "not never no nothing none nor neither don't dont won't wont can't cant cannot shouldn't wouldn't couldn't "
    "mustn't didn't doesn't isn't aren't wasn't weren't refuse refuses refusing decline declines n't"
)
_FILLER = r"(?:and|then|now|so|ok|okay|well|please|just|also|first|next|finally|quickly|slowly|carefully|quietly|oh)"
_SUBJECT = r"(?:i|we)"
_COMMAND_FRAME = re.compile(
    rf"^(?:{_FILLER}\s+)*(?:(?:let\s+me|let's|lets|let\s+us|time\s+to|i\s+think\s+i'll|{_SUBJECT}\s+(?:will|shall|'ll"
    r"|am\s+going\s+to|'m\s+going\s+to|are\s+going\s+to|want\s+to|wanna|would\s+like\s+to|'d\s+like\s+to|'d\s+love\s+to"
    r"|try\s+to|decide\s+to|choose\s+to|need\s+to|have\s+to|must|gotta|attempt\s+to|begin\s+to|start\s+to|go\s+and"
    r"|intend\s+to|mean\s+to|plan\s+to|'m\s+gonna|am\s+gonna|do)|i'll|we'll|i'd\s+like\s+to|i'd\s+love\s+to|i'm\s+going\s+to"
    r"|i'm\s+gonna)\s+)?"
    rf"(?:{_SUBJECT}\s+)?(?:(?:{_FILLER}|then|now|also|carefully|quickly|slowly|quietly|gently|just)\s+)*"
)
_WISH = re.compile(
    r"^(?:(?:and|so|but|then|well|oh)\s+)*(?:i\s+wish|i\s+wonder|i'm\s+wondering|i\s+am\s+wondering|i\s+hope|we\s+hope"
    r"|maybe|perhaps|i\s+(?:think|thought)\s+about|i'm\s+thinking|i\s+am\s+thinking|i\s+consider|i'm\s+considering"
    r"|i\s+am\s+considering|i'm\s+tempted|i\s+am\s+tempted|i\s+dream|i\s+imagine|i\s+should|i\s+ought|we\s+should"
    r"|i\s+might\s+want|i'd\s+rather|i\s+would\s+rather|i\s+doubt|i\s+fear|i\s+worry)\b"
)
_HYPOTHETICAL = re.compile(
    r"^(?:(?:and|so|but|then|well|oh|even)\s+)*(?:if|what\s+if|suppose|supposing|imagine|pretend|unless|in\s+case"
    r"|(?:i|we|you)\s+(?:would|could|might|may|pretend|feign)|i'd(?!\s+(?:like|love)\b)|i\s+can|we\s+can"
    r"|i\s+could)\b"
)
_REPORT_SUBJECT = re.compile(
    r"^(?:(?:and|so|but|then|well)\s+)*(?:he|she|they|it|you|someone|somebody|everyone|nobody)\b"
)
_AUX_QUESTION = re.compile(
    r"^(?:do|does|did|is|are|was|were|can|could|shall|should|will|would|may|might|must|have|has|had|am)\s+"
    r"(?:i|you|we|he|she|they|it|there|the|my|your|this|that|anyone|someone)\b"
)
_PAST = _set(
    "went took gave dropped ate drank fought chose said spoke told saw heard looked walked ran came left got "
    "grabbed picked used rested slept killed attacked joined knelt kneeled accepted refused bought paid sold "
    "wore carried brought found met returned entered climbed already"
)
_QUOTE = re.compile(r"\"[^\"]*\"|“[^”]*”|(?:^|(?<=\s))'[^']{2,}'(?=\s|$|[,.!?])")
_SPEECH = re.compile(r"^(?:say|shout|whisper|yell|mutter|murmur|tell|reply|answer|call\s+out|cry)\b")
_SPLIT = re.compile(
    r"(\s*[,;:]\s*(?:(?:and\s+then|and|but|then|so|or|yet)\s+)?"
    r"|\s+(?:and\s+then|and|but|then|so|because|while|yet|or|instead)\s+)"
)
_STARTS_CLAUSE = re.compile(
    r"^(?:i|we|let|let's|lets|he|she|they|you|it|someone|not|never|no|don't|dont|do|won't|can't|cannot|if|maybe"
    r"|perhaps|what|where|who|whom|why|how|when|which|should|could|would|might|will|shall|can|does|did|is|are|am|time)\b"
)


@cache
def name_words(name: str) -> frozenset[str]:
    """The keywords of a content name (names are matched every turn: worked out once)."""
    return frozenset(keywords(name.replace("_", " ")))


@dataclass(frozen=True)
class Clause:
    """One clause of an action, read."""

    text: str
    """The clause as typed (lowercase, one space between words)."""
    core: str
    """The verb phrase without its frame: "i'd like to head east" -> "head east"."""
    mood: str
    negated: bool
    classes: frozenset[str]
    command: Command
    """The parser's reading of the core."""
    speech: bool = False
    """Words said (in quotes, or after say/shout/tell): spoken, not done."""
    before: str = ""
    """The core of the clause before it in the action: what "it" and "them" point back to ("take the herb and eat
    it")."""

    @property
    def binds(self) -> bool:
        """Whether the clause asks for what it says: positive, commanded, not only words said."""
        return self.mood == "command" and not self.negated and not self.speech

    @property
    def speaks(self) -> bool:
        """Whether the clause speaks to someone: words said, a positive command to talk, or a question asked."""
        if self.negated or self.mood in ("report", "hypothetical", "wish"):
            return False
        return self.speech or self.mood == "question" or "speak" in self.classes

    def describe(self) -> str:
        """One line for the debug panel: '"do not go west": command, negated, move: binds nothing'."""
        traits = [self.mood, *(["negated"] if self.negated else []), *(["words said"] if self.speech else [])]
        kinds = "/".join(sorted(self.classes)) or "no act"
        return f'"{self.text}": {", ".join(traits)}, {kinds}: ' + ("binds" if self.binds else "binds nothing")

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(keywords(self.core))

    def names(self, names: list[str] | tuple[str, ...], claimed: frozenset[str] = frozenset()) -> bool:
        """Whether the clause names something by one of ``names``: every keyword of one of them is a word of the
        clause, not all of them ``claimed`` (words of another thing's full name)."""
        for name in names:
            wanted = name_words(name)
            if wanted and wanted <= self.words and not wanted <= claimed:
                return True
        return False

    def names_before(self, names: list[str] | tuple[str, ...]) -> bool:
        """Whether the clause points back with a pronoun at a thing the clause before it names by ``names``."""
        if not self.before or not self.pronoun():
            return False
        said = frozenset(keywords(self.before))
        return any((wanted := name_words(n)) and wanted <= said for n in names)

    def pronoun(self) -> bool:
        """Whether the clause points at someone or something without naming it ("take it", "give her this")."""
        return bool(set(self.core.replace("'", " ").split()) & (PRONOUNS | {"this", "that", "these", "those"}))


@dataclass(frozen=True)
class Reading:
    """An action, read once per turn: its clauses and the command the narrator plays."""

    text: str
    clauses: tuple[Clause, ...]
    command: Command
    """What the scripted narrator plays: the first clause that binds (its core, parsed), else the whole line's
    reading when nothing binds ("what lies north?" stays a question; "I will never kneel" is no command)."""

    @classmethod
    def of(cls, action: str) -> Reading:
        return read(action)

    def binding(self, *classes: str) -> list[Clause]:
        """The clauses that bind, of any of ``classes`` (all that bind when none is given)."""
        return [c for c in self.clauses if c.binds and (not classes or c.classes & set(classes))]

    @property
    def question(self) -> bool:
        return any(c.mood == "question" for c in self.clauses)


def normal(action: str) -> str:
    """The action in one form: NFKC (fullwidth letters are letters), straight apostrophes, one space."""
    text = unicodedata.normalize("NFKC", action).replace("’", "'").replace("‘", "'")
    return " ".join(text.split())


def read(action: str) -> Reading:
    """Read ``action`` (see the module's docstring)."""
    raw = normal(action)
    whole = parse(raw)
    lowered = raw.lower()
    if whole.is_meta:
        return Reading(raw, (), whole)
    clauses: list[Clause] = []
    if whole.verb == "say" and _SPEECH.match(lowered):  # "say I will never kneel": all of it is words said
        clauses.append(_clause(lowered, "command", speech=True))
    else:
        for sentence, asked in _sentences(lowered):
            clauses += _clauses(sentence, asked)
        clauses = [replace(c, before=clauses[i - 1].core) if i else c for i, c in enumerate(clauses)]
    return Reading(raw, tuple(clauses), _command(raw, whole, clauses))


def _sentences(text: str) -> list[tuple[str, bool]]:
    """The sentences of ``text``, with whether each ends with a question mark; quoted words become one mark."""
    text = _QUOTE.sub(" « ", text)
    out = []
    for match in re.finditer(r"[^.!?]+[.!?]*", text):
        part = match.group().strip()
        asked = part.endswith("?")
        part = part.rstrip(".!? ").strip()
        if part:
            out.append((part, asked))
    return out


def _clauses(sentence: str, asked: bool) -> list[Clause]:
    """The clauses of one sentence: split at commas and conjunctions where a new verb phrase starts."""
    parts: list[str] = []
    pieces = _SPLIT.split(sentence)
    for i in range(0, len(pieces), 2):
        piece = pieces[i].strip()
        if not piece:
            continue
        if parts and not _new_clause(piece):
            parts[-1] += pieces[i - 1] + piece  # "grab the fuse and the gloves", "hello there, old man"
        else:
            parts.append(piece)
    out: list[Clause] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        clause = _clause(part, "question" if asked and last else None)
        if not clause.classes and out and clause.core and clause.negated:
            clause = replace(clause, classes=out[-1].classes)  # "take the herb, not the knife"
        out.append(clause)
    return out


def _new_clause(piece: str) -> bool:
    first = piece.split()[0]
    if piece == "«" or _STARTS_CLAUSE.match(piece):
        return True
    return first in _LEXICON or (verb_key(first) != first and verb_key(first) in _LEXICON)


def _clause(text: str, mood: str | None, *, speech: bool = False) -> Clause:
    """One clause: its mood (``mood`` when the sentence says it), polarity, core, classes and command."""
    speech = speech or text.strip() == "«" or bool(_SPEECH.match(text))
    words = text.replace("«", " ").split()
    said = _SPEECH.match(text)  # what follows "say" is what is said, not what is done
    negated = not said and any(w in _NEGATORS or w.endswith("n't") for w in words)
    mood = mood or _mood(text)
    core = _core(text)
    command = parse(core) if core else Command("other", text=text)
    return Clause(text, core, mood, negated, _classes(core, command), command, speech)


def _mood(text: str) -> str:
    if _WH_START.match(text) or _AUX_QUESTION.match(text):
        return "question"
    if _WISH.match(text):
        return "wish"
    if _HYPOTHETICAL.match(text):
        return "hypothetical"
    words = text.split()
    subject = _REPORT_SUBJECT.match(text)
    if subject or (len(words) > 1 and words[0] in ("i", "we") and words[1] in _PAST):
        return "report"
    if len(words) > 2 and words[0] in ("the", "a", "an") and _third_person(words[2]):
        return "report"  # "the guard takes the key"
    if len(words) > 1 and words[0] not in _LEXICON and words[0] not in _NOT_SUBJECT and _acted(words[1]):
        return "report"  # "garrick gives me the bow", "kage wants me to ...", "silas knelt"
    return "command"


_WH_START = re.compile(r"^(?:where|what|who|whom|why|how|when|which|whose)(?:'s|'re)?\b")


_NOT_SUBJECT = _set("i we let let's lets please now then just also first next finally time")


def _acted(word: str) -> bool:
    """Whether ``word``, second in a clause after a name, is its verb in the third person or the past."""
    if word in _PAST or word in ("knelt", "wants", "says", "asks", "tells"):
        return True
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word[:-1].isalpha()


def _third_person(word: str) -> bool:
    """Whether ``word`` is a verb in the third person ("takes", "goes", "gives")."""
    if not word.endswith("s") or word.endswith("ss"):
        return False
    return word[:-1] in _LEXICON or (word.endswith("es") and word[:-2] in _LEXICON)


_NEGATION_FRAME = re.compile(
    r"^(?:(?:i|we|you)\s+)?(?:(?:will|shall|would|do|does|did|am|are|can|could|must|should)\s+)?"
    r"(?:not|never|n't)\s+|^(?:don't|dont|won't|wont|can't|cant|cannot|never|not|no|refuse\s+to|i\s+refuse\s+to"
    r"|i\s+won't|i\s+don't|i\s+will\s+never|i\s+would\s+never|i'd\s+never|i\s+never|i\s+do\s+not|i\s+will\s+not"
    r"|i\s+shall\s+not|i'll\s+never|i\s+won't\s+ever|i'm\s+not\s+going\s+to|i\s+am\s+not\s+going\s+to|i\s+can't"
    r"|i\s+cannot)\s+(?:ever\s+)?"
)


def _core(text: str) -> str:
    """The verb phrase of a clause, without the frame around it."""
    text = text.replace("«", " ").strip()
    text = _NEGATION_FRAME.sub("", text)
    text = _COMMAND_FRAME.sub("", text, count=1)
    text = re.sub(r"^(?:try\s+to|go\s+and|then|now)\s+", "", text)
    return " ".join(text.split())


def _classes(core: str, command: Command) -> frozenset[str]:
    """What kinds of act a core's verb may stand for."""
    if not core:
        return frozenset()
    first = core.split()[0]
    if command.verb in _SENSE_VERBS or _LEXICON.get(first) == ("sense",):
        return frozenset({"sense"})  # looking is not doing: "look north", "look at everything"
    found = set(_VERB_CLASSES.get(command.verb, ()))
    found |= set(_LEXICON.get(first, ()) or _LEXICON.get(verb_key(first), ()))
    if _DROP_PHRASE.match(core):
        found.add("drop")
    if _REST.search(core):
        found.add("rest")
    if _TRADE.search(core) or ("give" in found and _MONEY.search(core)):
        found.add("trade")
    return frozenset(found)


def _command(raw: str, whole: Command, clauses: list[Clause]) -> Command:
    """The command the narrator plays for the whole action (see :attr:`Reading.command`)."""
    binding = [c for c in clauses if c.binds]
    if whole.verb in ("say", "ask") or not clauses:
        return whole
    if not binding:
        if any(c.mood == "question" for c in clauses):
            return Command("ask", topic=raw.lower().rstrip("?!. "), text=raw)
        return Command("other", text=raw)
    chosen = next((c for c in binding if c.command.verb != "other"), binding[0])
    if (
        whole.verb != "other"
        and chosen is clauses[0]
        and _VERB_CLASSES.get(whole.verb, ()) == tuple(_VERB_CLASSES.get(chosen.command.verb, ()))
    ):
        return whole  # the parser read the line as its first clause reads: keep its reading of the whole line
    return replace(chosen.command, text=raw)
