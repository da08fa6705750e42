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
  :class:`~game.language.parser.Command`.

Words in quotes, and what follows say/shout/tell, are speech: spoken, never done. Only a positive clause in the
command mood *binds* (grounds an act); a question also counts as speaking to someone.

Why a reader of game English and not a dependency parser: PyPI's spaCy English models are third-party re-uploads
(the spaCy team ships them from GitHub, which this project cannot reach at install), and a general parser tags
terse game commands ("look north", "x ferns", "n") poorly. The game's language is a closed vocabulary (its verbs
in :mod:`game.language.verbs` and :mod:`game.language.lexicon`); this reader covers the frames players wrap around
them, and ``tests/test_reading.py`` keeps its corpus. The pipeline reads an action once per turn and hands the
reading to the narrator's command, the intent check and memory.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import cache, cached_property
from itertools import pairwise

from game.language import frames, spelling
from game.language.lexicon import (
    AFTER_COMMA,
    ASKING_TAGS,
    CLAUSE_STARTS,
    DIRECTIONS,
    JOINERS,
    KEENNESS,
    LITTLE_WORDS,
    MONEY,
    NEGATORS,
    OTHER_VERBS,
    PEOPLE_NOUNS,
    PRONOUNS,
    ROLES,
    ROUTE_STARTS,
    SHORTHAND,
    SUBORDINATORS,
    TAGS,
    TITLES,
    VERB_CLASSES,
    known_verbs,
    lemma,
    phrasal,
    progressive,
    senses,
)
from game.language.lexicon import classes as word_classes
from game.language.mood import mood_of, polite_frame, verb_phrase
from game.language.parser import Command, parse
from game.text import keywords

MOODS = ("command", "question", "wish", "hypothetical", "report")
CLASSES = ("move", "take", "drop", "give", "use", "rest", "fight", "trade", "sense", "speak")


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_SENSE_VERBS = frozenset({"look", "examine"})
_QUOTE = re.compile(r"\"[^\"]*\"|“[^”]*”|(?:^|(?<=\s))'(?:[^']|(?<=\w)'(?=\w)){2,}'(?=\s|$|[,.!?])")
_SPEECH = re.compile(r"^(?:say|shout|whisper|yell|mutter|murmur|tell|reply|answer|call\s+out|cry)\b")


def _either(joiners: tuple[str, ...]) -> str:
    return "|".join(r"\s+".join(j.split()) for j in sorted(joiners, key=len, reverse=True))


_SUBORDINATE = re.compile(rf"\s(?:{_either(SUBORDINATORS)})\s")
_SPLIT = re.compile(rf"(\s*(?:[,;:]|\s[-–—])\s*(?:(?:{_either(AFTER_COMMA)})\s+)?|\s+(?:{_either(JOINERS)})\s+)")


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
    how: str = ""
    """How far the words are from a plain request: "" (plain), "idiom: take on", "typo: tkae -> take"."""
    polite: bool = False
    """A request asked as a question ("may i pass through the gate?", "could you brief me?")."""
    refusal: str = ""
    """Why a clause with the words of an act asks none: "over my dead body", "held back", "declined", "left be",
    "taken back" (a bare "No deal." after it)."""

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
        traits += [t for t in (self.refusal, self.how) if t]
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
    addressee: str = ""
    """Whom the line calls by name ("Reverend, may I have a word?" -> "reverend"), as typed."""

    @classmethod
    def of(cls, action: str, names: frozenset[str] = frozenset(), people: frozenset[str] = frozenset()) -> Reading:
        return read(action, names, people)

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


def read(action: str, names: frozenset[str] = frozenset(), people: frozenset[str] = frozenset()) -> Reading:
    """Read ``action`` (see the module's docstring).

    ``names`` are the words of the story's names (people, things, places): a word among them is never taken for a
    misspelt verb. A sentence's leading or trailing words that hold one of ``people`` (the words of its people's
    names), or "old man", "sir", "wise one", before a comma are the person it is said to (:func:`frames.vocative`),
    and so is a sentence that is only a name ("Mr Crane!").
    """
    raw = normal(action)
    whole = parse(raw)
    lowered = _SIGNS.sub(lambda m: ", then " if m.group(1) else " and ", _unhurried(raw.lower()))
    lowered = _N.sub(lambda m: f" and {m.group(1)}" if senses(m.group(1)) else m.group(), lowered)
    if whole.is_meta:
        return Reading(raw, (), whole)
    clauses: list[Clause] = []
    addressee = ""
    if whole.verb == "say" and _SPEECH.match(lowered):  # "say I will never kneel": all of it is words said
        clauses.append(_clause(lowered, "command", speech=True))
    else:
        for sentence, asked in _sentences(lowered):
            called, rest = frames.vocative(sentence, people | _TITLES | PEOPLE_NOUNS)
            if not called:
                called, rest = frames.named_first(sentence, people)  # "echo whats the status on main power"
            known = set(re.split(r"[\s-]+", called)) & (people | PEOPLE_NOUNS | _TITLES)
            if called and (known or frames.hailed(sentence)):
                addressee, sentence = addressee or called, rest
            elif _called_out(sentence, people):  # "Mr Crane!", "Miss Crane?"
                addressee = addressee or sentence  # "Mr Crane! Can you hear me?": a name called out
                continue
            said = _clauses(sentence, asked, names)
            tagged = len(said) > 1 and said[-1].core in TAGS
            if tagged and (asked or said[-1].core in ASKING_TAGS):  # "i'll just fight it, shall i?": all asked
                said = [replace(c, mood="question") if c.mood == "command" else c for c in said]
            if frames.bare_refusal(sentence):  # "..., no deal.": nothing before it in the line is asked
                clauses = [replace(c, negated=True, refusal="taken back") for c in clauses]
                said = [replace(c, negated=True, refusal="no") for c in said]
            if refused := frames.refusal(sentence):  # "yeah, right, sell my pearl for pocket change"
                said = [replace(c, negated=True, refusal=refused) for c in said]
            clauses += said
        clauses = [replace(c, before=_named_before(clauses[:i])) if i else c for i, c in enumerate(clauses)]
    return Reading(raw, tuple(clauses), _command(raw, whole, clauses), addressee)


def _named_before(earlier: list[Clause]) -> str:
    """The words "it" may point back to: the clause before, or the one before a movement ("take the cell, go down
    and plug it in": the cell)."""
    for clause in reversed(earlier):
        if clause.classes != frozenset({"move"}):
            return clause.core
    return earlier[-1].core


_WOULD = re.compile(r"^(?:i would|i'd|id)\s+(?!like\b|love\b|rather\b|be\b|have\b|never\b|not\b)(?=[a-z])")
"""A wish told in a courteous sentence's words ("By your leave, I would speak with the Reverend.")."""
_ABBREVIATED = re.compile(r"\b(mr|mrs|ms|dr|st|jr|sr|mt|capt|rev)\.(?=\s)")
"""Titles whose full stop ends no sentence."""
_WORD = re.compile(r"[a-z]+")
_KEENLY = re.compile(rf"\b(i'd|i would|i)\s+(?:(?:{'|'.join(sorted(KEENNESS))})\s+)+(?=like|love|want)")
"""How keenly a wish is said ("I'd quite like to go"): the wish is the same."""
_WHILE_STATE = re.compile(r"^\s*while\s+(?:it's|it is|they're|they are|he's|she's|i'm|i am|you're|we're)\s")
"""A state said with "while" ("drink it while it's hot"): when, not a step."""
_GO_AND_SEE = re.compile(r"\bgo and (?:see|visit|check out|have a look at)\s+(?=the\b)")
"""A place gone to and seen ("go and see the chapel to the south"): the going is the act."""
_BEFORE_DOING = re.compile(r"\s+before\s+(?=([a-z]+)ing\b)")
"""A later step said with "before" ("chat with echo-7 before going south")."""


def _unhurried(text: str) -> str:
    """``text`` with words typed in a hurry spelt out (:data:`SHORTHAND`), a keen wish plain, and a step said with
    "before ...ing" made the next step."""
    text = _WORD.sub(lambda m: SHORTHAND.get(m.group(), m.group()), text)
    text = _KEENLY.sub(r"\1 ", text)
    text = _GO_AND_SEE.sub("go to ", text)
    return _BEFORE_DOING.sub(lambda m: ", then " if senses(lemma(m.group(1) + "ing")) else m.group(), text)


_N = re.compile(r"\s+(?:n|an'|'n'?)\s+([a-z]+)")
"""A typed "and" before a verb ("grab teh pipe n head east"); "go n" stays north."""
_SIGNS = re.compile(r"\s*(>+|->|=>|→)\s*|\s+[+&]\s*")
"""Signs that join a line's steps: "fuse in > grab cell" (then), "journal + biscuit" (and)."""
_TITLES = TITLES.union(*ROLES)
"""Words that call someone without their name."""
_CALLED = re.compile(
    r"^(?:(?:hey|oi|hello|mr|mrs|ms|miss|mister|dr|doctor|sir)\s+)?(?P<name>[a-z'-]+(?:\s+[a-z'-]+)?)$"
)


def _called_out(sentence: str, people: frozenset[str]) -> bool:
    """Whether a sentence is only a person's name called ("Mr Crane!", "hey Garrick"): no verb, a name in it."""
    called = _CALLED.match(sentence)
    if called is None:
        return False
    words = re.split(r"[\s-]+", called.group("name"))
    return bool(set(words) & people) and not any(senses(w) for w in words)


def _sentences(text: str) -> list[tuple[str, bool]]:
    """The sentences of ``text``, with whether each ends with a question mark; quoted words become one mark."""
    text = _ABBREVIATED.sub(r"\1", _QUOTE.sub(" « ", text))  # "mr. okabe": one sentence
    out = []
    for match in re.finditer(r"[^.!?]+[.!?]*", text):
        part = match.group().strip()
        asked = part.endswith("?")
        part = part.rstrip(".!? ").strip()
        if part:
            out.append((part, asked))
    return out


def _clauses(sentence: str, asked: bool, names: frozenset[str] = frozenset()) -> list[Clause]:
    """The clauses of one sentence: split at commas and conjunctions where a new verb phrase starts."""
    parts: list[str] = []
    joiners: list[str] = []
    pieces = _SPLIT.split(sentence)
    for i in range(0, len(pieces), 2):
        piece = pieces[i].strip()
        if not piece:
            continue
        if parts and (not _new_clause(piece) or _WHILE_STATE.match(pieces[i - 1] + piece)):
            parts[-1] += pieces[i - 1] + piece  # "grab the fuse and the gloves", "hello there, old man"
        else:
            parts.append(piece)
            joiners.append(pieces[i - 1].strip() if i else "")
    courtly = any(frames.courteous(p) != p for p in parts)
    out: list[Clause] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if courtly and (would := _WOULD.match(part)):  # "with your leave, i would pass on": what i wish to do
            part = f"i would like to {part[would.end() :]}"
        supposed = any(c.mood == "hypothetical" for c in out)  # "if i took the baton, could i beat it?"
        polite = bool(polite_frame(part)) and not supposed  # "may i pass through the gate?": a request
        clause = _clause(part, "question" if asked and last and not polite else None, names=names)
        if out and _shares_frame(joiners[i], part):
            clause = _under(
                clause, out[-1], joiners[i].endswith("r")
            )  # "i wish i could sit by the fire and sleep": sleep is wished
        if supposed and clause.polite:
            clause = replace(clause, mood="question", polite=False)
        if not clause.classes and out and clause.core and clause.negated:
            clause = replace(clause, classes=out[-1].classes)  # "take the herb, not the knife"
        if (out and frames.thinks_better(clause.core) and frames.begun(out[-1].text)) or frames.held_back(clause.text):
            if not frames.held_back(clause.text):  # "i start to drop it, then think better of it"
                out[-1] = replace(out[-1], negated=True, refusal="held back")
            else:  # "i almost kneel"
                clause = replace(clause, negated=True, refusal="held back")
        elif out and frames.thinks_better(clause.core) and not out[-1].negated:
            out[-1] = replace(out[-1], negated=True, refusal="held back")  # "i kneel... then stop"
        if frames.thinks_better(clause.core):  # "stop", "think better of it": itself no act
            clause = replace(clause, negated=True, refusal="held back")
        out.append(clause)
    return out


def _shares_frame(joiner: str, piece: str) -> bool:
    """Whether a clause joined by ``joiner`` is a second verb under the frame of the one before: "and" or "or"
    with no subject of its own ("..., and sleep", not "..., and then sleep" or "and i sleep")."""
    first = piece.split()[0]
    verb = bool(senses(first)) or first in OTHER_VERBS or lemma(first) in OTHER_VERBS
    return joiner in ("and", "or", "nor", ", and", ", or") and first not in CLAUSE_STARTS and verb


def _under(clause: Clause, before: Clause, alternative: bool) -> Clause:
    """``clause`` under the frame of ``before``: wished, supposed or asked with it; refused with it after "or"
    (``alternative``: "i will never kneel or beg"; after "and" a command stands: "don't take it, and go north")."""
    if before.mood in ("wish", "hypothetical", "question", "report") and clause.mood == "command":
        clause = replace(clause, mood=before.mood)  # "the hunter said to head north and find the princess"
    if alternative and before.negated and not before.refusal and not clause.negated:
        clause = replace(clause, negated=True)  # "i will never kneel or beg"
    return clause


def _new_clause(piece: str) -> bool:
    first = piece.split()[0]
    if piece == "«" or first in CLAUSE_STARTS or first.split("'")[0] in CLAUSE_STARTS:
        return True
    if first in DIRECTIONS or first in ROUTE_STARTS:
        return True  # "go north and then north again", "..., then west back to the pods", "..., then back out"
    words = piece.split()
    if first in ("through", "into", "across", "past") and len(words) > 1 and words[1] in ("the", "that", "this"):
        return True  # "go down the shaft and then through the round door": a way, with no verb

    if len(words) <= 3 and DIRECTIONS.get(words[-1], "in") not in ("in", "out", "up", "down"):
        return True  # "bag the gloves, hatch east": a way, not a thing of the list
    if first in OTHER_VERBS or frames.thinks_better(piece):  # "..., then think better of it"
        return True
    two = " ".join(piece.split()[:2])  # "... and pull on the gloves"
    return bool(senses(first)) or bool(senses(two)) or bool(frames.plainer(piece)[1])  # "..., then wolf down it"


def _clause(text: str, mood: str | None, *, speech: bool = False, names: frozenset[str] = frozenset()) -> Clause:
    """One clause: its mood (``mood`` when the sentence says it), polarity, core, classes and command."""
    speech = speech or text.strip() == "«" or bool(_SPEECH.match(text))
    said = _SPEECH.match(text)  # what follows "say" is what is said, not what is done
    # courtesy out ("if it is no trouble": no refusal, no supposition), but never out of a request's own frame
    # ("i'd be glad if you would sell me ...")
    plain = text if polite_frame(text) else frames.courteous(text) or text
    main = _SUBORDINATE.split(plain)[0]
    negated = not said and any(w in NEGATORS or w.endswith("n't") for w in main.replace("«", " ").split())
    # "nick the pistol while senda isn't looking": the main clause is not negated
    mood = mood or mood_of(plain)
    core, how = _plain(frames.courteous(verb_phrase(plain)), mood, names)
    refusal = ""
    if not said and (frames.declined(core) or frames.left_be(core)):  # "push the purse back", "leave it alone"
        negated, refusal = True, "declined" if frames.declined(core) else "left be"
    command = parse(core) if core else Command("other", text=text)
    if speech and command.verb in ("talk", "ask") and command.topic and not said_words(text):
        speech = False  # "tell me of the harp": asked of someone, not words said
    polite = bool(polite_frame(text))
    return Clause(
        text, core, mood, negated, _classes(core, command), command, speech, how=how, refusal=refusal, polite=polite
    )


def said_words(text: str) -> bool:
    """Whether a clause carries words said (quoted, or after say/shout...): "tell him I'm coming" does."""
    return "«" in text or bool(re.match(r"^(?:say|shout|whisper|yell|mutter|murmur)\b", text))


def _plain(core: str, mood: str, names: frozenset[str]) -> tuple[str, str]:
    """The core as the lexicon reads it, and how far that was from the words typed: an idiom ("take on the wolf"),
    a typo in its verb forgiven ("tkae the herb"), two words typed as one ("pickup the knife")."""
    first, _, rest = core.partition(" ")
    if mood == "command" and first and lemma(first) != first and senses(lemma(first)):
        core, first = f"{lemma(first)} {rest}".strip(), lemma(first)  # "would you mind if i took it": take it
    plain, idiom = frames.plainer(core)
    if idiom:
        return plain, f"idiom: {idiom}"
    phrasal_verb = bool(rest) and bool(senses(f"{first} {rest.split()[0]}"))  # "fire up the genny": no typo
    if mood == "command" and first and first not in names and not _known(first) and not phrasal_verb:
        if run := spelling.split_run(first, phrasal(), known_verbs()):
            fixed = frames.plainer(f"{run} {rest}".strip())[0]
            return fixed, f"typo: {first} -> {run}"
        if (verb := _likely(spelling.candidates(first, known_verbs()), rest)) is not None:
            return frames.plainer(f"{verb} {rest}".strip())[0], f"typo: {first} -> {verb}"
        if (doing := spelling.nearest(first, progressive())) is not None:  # "goign downstairs": going
            verb = progressive()[doing]
            return frames.plainer(f"{verb} {rest}".strip())[0], f"typo: {first} -> {doing}"
    return core, ""


def _likely(verbs: list[str], rest: str) -> str | None:
    """The one of ``verbs`` (a misspelt word's nearest) the words after it fit: "tak to the boatman" talks (to
    someone), "tak the herb" takes; None when they fit none or several."""
    if len(verbs) < 2:
        return verbs[0] if verbs else None
    wanted = {"speak"} if re.match(r"^(?:to|with)\b", rest) else {"take", "use", "drop", "fight", "give"}
    fits = [v for v in verbs if word_classes(v) & wanted]
    return fits[0] if len(fits) == 1 else None


def _known(word: str) -> bool:
    """Whether ``word`` is a word of the lexicon (a verb, or one of the other verbs and the little words)."""
    return (
        bool(senses(word))
        or word in OTHER_VERBS
        or lemma(word) in OTHER_VERBS
        or word in LITTLE_WORDS
        or word in ROUTE_STARTS
        or word in DIRECTIONS
    )


def _classes(core: str, command: Command) -> frozenset[str]:
    """What kinds of act a core's verb may stand for."""
    if not core:
        return frozenset()
    first = core.split()[0]
    if command.verb in _SENSE_VERBS or word_classes(first) == {"sense"}:
        return frozenset({"sense"})  # looking is not doing: "look north", "look at everything"
    found = set(VERB_CLASSES.get(command.verb, ()))
    found |= word_classes(first)
    words = core.split()
    sums = any(a.isdigit() and b in MONEY for a, b in pairwise(words))
    if any("trade" in word_classes(w) for w in words) or sums or ("give" in found and set(words) & MONEY):
        found.add("trade")  # "buy a stim pack for 10 gold", "give 5 gold to garrick"
    return frozenset(found)


def _command(raw: str, whole: Command, clauses: list[Clause]) -> Command:
    """The command the narrator plays for the whole action (see :attr:`Reading.command`)."""
    binding = [c for c in clauses if c.binds]
    if whole.verb == "say" or not clauses or (whole.verb == "ask" and not any(c.polite for c in binding)):
        return whole  # a question stays one, unless it is a request asked politely ("may i pass?")
    if not binding:
        if any(c.mood == "question" for c in clauses):
            return Command("ask", topic=raw.lower().rstrip("?!. "), text=raw)
        return Command("other", text=raw)
    chosen = next((c for c in binding if c.command.verb != "other"), binding[0])
    if (
        whole.verb != "other"
        and chosen is clauses[0]
        and VERB_CLASSES.get(whole.verb, ()) == VERB_CLASSES.get(chosen.command.verb, ())
    ):
        return whole  # the parser read the line as its first clause reads: keep its reading of the whole line
    return replace(chosen.command, text=raw)
