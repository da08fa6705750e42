"""The narrator's voice: it tells the world and never speaks or decides for the player (issue 31, part 4).

Pure functions over text, no I/O; the turn pipeline (:mod:`game.engine.pipeline`) asks the narrator again once
when the first answer fails one of them.

- :func:`speaks_for_player`: the first sentence that puts words in the player's mouth when the action said nothing
  (``You say, "..."``, ``"...," you reply``, ``you shout a warning``, ``you ask Garrick about ...``), or that
  decides for them what the action did not (``you agree to his terms``, ``you kneel``, ``you decide to trust
  him``, ``..., accepting the pact``; also a first-person decision inside words the narrator has the player say).
  What is not the player's act passes: other characters' words (quoted spans are never read as narration), an
  offer or a question to the player (``you could agree``, ``will you join him?``, ``if you accept, ...``),
  gestures (``you nod``, ``you shake your head``), and the player's own act told back (``You say hello`` after
  "say hello", ``You agree`` after "I agree to his terms", ``You refuse`` after "I will never kneel").
  The action is read with :class:`~game.language.reading.Reading`: a clause that speaks (words said, a question,
  talk) lets the narrator voice the player; a commanded clause grounds the decisions its words name, a negated
  one grounds a refusal.
- :func:`repeats`: how much of a narration the last tellings already said: the largest share of its word 3-grams
  found in any one of the previous :data:`RECENT` tellings. A model stuck in a loop re-tells its last turn
  almost word for word (share near 1); a new turn in the same scene shares names and a few stock phrases.
  Over ``tests/voice_corpus.py`` the 24 repetitions score 0.68 to 1.0 and the 25 new tellings at most 0.04; the
  scripted narrator's 469 tellings over the walkthroughs at most 0.10 (:data:`MIN_GRAMS` keeps its stock lines
  out: "You press the attack against the Mist Wolf." after itself). :data:`REPEAT_THRESHOLD` sits between.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from game.language.lexicon import DECISIONS, SOUND_VERBS, SPEECH_VERBS, forms_alternation, lemma, verb_key
from game.language.reading import Reading

REPEAT_THRESHOLD = 0.6
"""Share of a narration's word 3-grams already in one recent telling from which it counts as a repetition."""
RECENT = 3
"""How many previous tellings :func:`repeats` compares with."""
MIN_GRAMS = 8
"""A narration with fewer word 3-grams than this (under ten words) is never a repetition: a stock line ("You use
the Tome of the Elder Roots.") shares most of its few 3-grams with the turn that named the thing."""

# ---------------------------------------------------------------- vocabulary
_GROUPS = DECISIONS
"""A decision's lemma -> the groups an action's word must share for the narration to tell it back (the lexicon's
:data:`~game.language.lexicon.DECISIONS`)."""
_BY_OBJECT = frozenset({"strike", "seal", "sign", "give your word"})
"""Decisions only with the thing decided: "strike a deal", not "strike the wolf"."""
_DECISION = rf"(?:(?:{forms_alternation(d for d in DECISIONS if d not in _BY_OBJECT)})\b(?!-)"
_DECISION += rf"|(?:{forms_alternation(['strike'])})\s+(?:a|the)\s+(?:deal|bargain|pact)"
_DECISION += rf"|(?:{forms_alternation(['seal'])})\s+(?:the|a|your)\s+(?:deal|bargain|pact)"
_DECISION += r"|g[ai]ve?s?\s+\w+\s+your\s+word"
_DECISION += (
    rf"|(?:{forms_alternation(['sign'])})\s+(?:the|a|his|her|their)\s+(?:contract|pact|deal|treaty|agreement|oath))"
)
_SPEAK_STRONG = forms_alternation(SPEECH_VERBS) + r"|bid\s+\w+\s+farewell"
_SPEAK_WEAK = forms_alternation(SOUND_VERBS)
_ADV = r"(?:\s+(?:\w+ly|then|now|just|also|still|finally|already|instead|simply|even|at\s+last|at\s+once|quickly))*"
_AUX = r"(?P<aux>\s+(?:do|does|did|have|has|had|are|were|am))?(?:\s+(?:not|never))?"
_SUBJECT = r"\byou(?:\s+(?:hear|find|catch|found|heard|caught)\s+yourself)?"
_FINITE = re.compile(rf"{_SUBJECT}{_ADV}{_AUX}{_ADV}\s+(?P<verb>{_DECISION})")
_CHAINED = re.compile(rf"(?:,|\s+and|\s+then|\s+and\s+then){_ADV}\s+(?P<verb>{_DECISION})")
_SPOKE = re.compile(rf"{_SUBJECT}{_ADV}{_AUX}{_ADV}\s+(?P<verb>{_SPEAK_STRONG})\b(?!\s+(?:yourself|nothing|no\b))")
_SAYS_BEFORE = re.compile(rf"{_SUBJECT}{_ADV}{_AUX}{_ADV}\s+(?:{_SPEAK_STRONG}|{_SPEAK_WEAK})\b[^.;]{{0,40}}?[,:]?\s*$")
_SAYS_AFTER = re.compile(rf"^[,.!?]?{_ADV}\s+you{_ADV}\s+(?:{_SPEAK_STRONG}|{_SPEAK_WEAK})\b")
_VOICED = re.compile(r"\byour\s+(?:own\s+)?voice\b[^.;]{0,40}?[,:]?\s*$")
_BE = frozenset({" are", " were", " am"})
_TRADES = ("buy", "sell")
"""Acts whose telling may report the player asking ("You ask Old Garrick for the Healing Herb." on "I buy a healing
herb from garrick"), but never give them words of their own ("'Keep the change,' you tell Okabe.")."""
_SUBJECT_BEFORE = re.compile(r"(?:^|[,;:(-]|\bQUOTE|\b(?:and|but|so|then|yet|now|\w+ly|last|instead|still|soon))\s*$")
_GESTURE_ASSENT = re.compile(r"\b(?:nod(?:s|ded|ding)?|bow(?:s|ed|ing)?)\s+(?:your\s+)?(?:assent|agreement|consent)")
_OFFER_FRAME = re.compile(
    r"(?:\b(?:if|unless|whether|should|lest|when|whenever|until|before|once|whatever|whichever|why|how|what|who"
    r"|do|does|did|will|would|can|could|may|might|must|shall|to|let|for|want|wants|asks?|wonders?|sees?|invites?"
    r"|expects?|urges?|begs?|bids?|tells?|told|offers?|lets?|makes?|made|watch(?:es)?|hears?|helps?|forces?"
    r"|nothing|anything|everything|whatever|all|as\s+if|as\s+though|(?:demand|insist|command|order|ask|urge|require|suggest|beg|pray)(?:s|ed)?\s+that)\s*)$"
)
_CONTRACTIONS = (
    (r"\b(do|does|did|have|has|had|are|were|is|was|could|would|should|must|need)n't\b", r"\1 not"),
    (r"\bcan't\b", "can not"),
    (r"\bwon't\b", "will not"),
    (r"\byou've\b", "you have"),
    (r"\byou're\b", "you are"),
    (r"\byou'll\b", "you will"),
    (r"\byou'd\b", "you would"),
    (r"\bi'll\b", "i will"),
    (r"\bi've\b", "i have"),
    (r"\bi'm\b", "i am"),
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})
_DOUBLE = re.compile(r'"[^"]*"?')
_SINGLE = re.compile(r"(?<![\w'])'(?:[^']|'(?=\w))+'(?!\w)")
_SPEAK_WORDS = re.compile(r"[\"“”]|\b(?:yes|no|hello|hi|hey|thanks|thank you|greetings|farewell|goodbye)\b")
_SUBMITS = re.compile(
    r"\s*(?:down\s+)?(?:$|[.;!]|and\s+(?:swear|pledge|submit|yield|surrender|accept|agree)|before\s+(?!(?:the|an?)\s+"
    r"(?:altar|shrine|spring|fire|pool|water|stone|grave|body|tree|door|gate|chest|terminal|console|statue))|to\s+(?:him"
    r"|her|them|the|his|your)\b|at\s+\w+\s+feet|in\s+(?:submission|fealty|homage|surrender|defeat))"
)
_NOT_A_DECISION = {
    # a decision verb's other senses, by what follows it: "accept the strand from Bruno", "swear under your breath"
    "join": re.compile(
        r"\s+(?:the\s+(?:road|path|trail|crowd|queue|line|procession|caravan|others|dance|meal)|\w+\s+(?:by"
        r"|beside|near)\b|\w+\s+at\s+the\s+(?:fire|table|bar|counter|campfire|window|edge))"
    ),
    "accept": re.compile(r"\s+(?:that|the\s+[\w' -]+?\s+from|it\s+from)\b"),
    "choose": re.compile(r"\s+your\s+(?:footing|steps|words|way|moment|path\s+carefully)"),
    "swear": re.compile(r"\s+(?:under|at|loudly|softly|quietly|aloud|again|as)\b"),
}
_I_DECIDE = re.compile(
    rf"\b(?:i|we)(?:\s+(?:will|shall|do|have|am|hereby))?{_ADV}(?:\s+(?:not|never))?\s+(?P<verb>{_DECISION})"
    r"|\b(?:i|we)\s+(?:will|shall)\s+(?!not\b|never\b)(?P<will>\w+)"
)


# ------------------------------------------------------------------ sentences
def sentences(text: str) -> list[str]:
    """The sentences of ``text`` as written: a quotation stays whole, ``"Hello." Garrick nods.`` is two."""
    out: list[str] = []
    flat = text.translate(_QUOTES)
    balanced = flat.count('"') % 2 == 0
    quoted, start, i = False, 0, 0
    while i < len(flat):
        char = flat[i]
        if char == "\n":
            out.append(text[start:i])
            start = i + 1
        elif char == '"' and balanced:
            quoted = not quoted
            if not quoted and i > 0 and flat[i - 1] in ".!?" and re.match(r"\s+[A-Z\"]", flat[i + 1 :]):
                out.append(text[start : i + 1])
                start = i + 1
        elif char in ".!?…" and not quoted and re.match(r"[)\]]*(?:\s|$)", flat[i + 1 :]):
            end = i + 1 + len(re.match(r"[)\]]*", flat[i + 1 :]).group())  # type: ignore[union-attr]
            out.append(text[start:end])
            start = i = end
            continue
        i += 1
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def _plain(sentence: str) -> tuple[str, list[str]]:
    """``sentence`` lower-cased, contractions spelled out, each quotation replaced by ``QUOTE``; and the quotations."""
    text = sentence.translate(_QUOTES).lower()
    for pattern, spelled in _CONTRACTIONS:
        text = re.sub(pattern, spelled, text)
    said: list[str] = []

    def mask(match: re.Match[str]) -> str:
        said.append(match.group().strip("\"'"))
        return " QUOTE "

    text = " ".join(_SINGLE.sub(mask, _DOUBLE.sub(mask, text)).split())
    return re.sub(r"QUOTE\s+(?=[,.!?])", "QUOTE", text).strip(), said


def _lemma(phrase: str) -> str:
    """The decision a verb form names: "knelt" -> "kneel", "agreeing" -> "agree", "turned down" -> "turn down"
    (the lexicon's :func:`~game.language.lexicon.lemma` for the verb, then the phrase it heads)."""
    phrase = " ".join(phrase.split())
    if phrase in _GROUPS:
        return phrase
    head, _, rest = phrase.partition(" ")
    if rest.endswith("your word"):
        return "give your word"
    base = lemma(head)
    if rest and f"{base} {rest}" in _GROUPS:  # "gave in", "turned down", "said yes", "made up your mind"
        return f"{base} {rest}"
    return base  # "strikes a deal", "sealed the pact": the verb's decision


# ------------------------------------------------------------------ the action
class _Asked:
    """What the player's action lets the narrator tell: whether they speak, and the decisions they made."""

    def __init__(self, action: str | Reading, earlier: Callable[[], Iterable[str]] = tuple) -> None:
        reading = action if isinstance(action, Reading) else Reading.of(action)  # the turn's, when it has one
        lowered = reading.text.lower().translate(_QUOTES)
        self._earlier, self._said_before = earlier, cast("list[_Asked] | None", None)
        self.speaks = any(c.speaks for c in reading.clauses) or reading.command.verb in ("say", "talk", "ask")
        self.trades = reading.command.verb in _TRADES
        self.speaks = self.speaks or bool(_SPEAK_WORDS.search(lowered))
        self.groups: set[str] = set()
        self.verbs: set[str] = set()
        self.words: set[str] = set()
        texts = [(c.text, c.mood, c.negated, c.speech) for c in reading.clauses] or [(lowered, "command", False, False)]
        if re.match(r"\W*(?:no|nope|never)\b", lowered):  # "no thanks", whatever its mood
            self.groups.add("refuse")
        elif re.match(r"\W*(?:yes|yeah|ok|okay|sure|deal|agreed)\b", lowered):
            self.groups.add("assent")
        for text, mood, negated, speech in texts:
            words = re.findall(r"[a-z']+", text)
            self.words.update(words)
            self.verbs.update(verb_key(w) for w in words)
            if mood != "command" and not speech:
                continue  # a question, a wish, a hypothetical or a report decides nothing
            named = self._named(text)
            self.speaks = self.speaks or bool(named & {"assent", "refuse", "promise"})  # "I agree": said to someone
            if negated:
                self.groups.add("refuse")
                named.discard("assent")
            self.groups |= named
            if speech and re.search(r"\b(?:i|we)\s+(?:will|shall|'ll|promise|swear)\b", text):
                self.groups.add("promise")  # "tell garrick I will find hal" is a promise, in words

    @staticmethod
    def _named(text: str) -> set[str]:
        groups: set[str] = set()
        for match in re.finditer(rf"\b{_DECISION}", text.replace(" my ", " your ")):
            groups.update(_GROUPS.get(_lemma(match.group()), ()))
        if re.search(r"\b(?:yes|yeah|ok|okay|sure|deal|agreed|fine|very well)\b", text):
            groups.add("assent")
        if re.search(r"\b(?:no|never|nope)\b", text):
            groups.add("refuse")
        if re.search(r"\b(?:pick|select|go\s+with)\b", text):
            groups.add("decide")
        return groups

    def recalls(self, verb: str | None, rest: str) -> bool:
        """Whether the player made the decision ``verb`` names (None: spoke at all) in an earlier action: what a
        telling may recall ("You promised the old hunter you would bring Hal home."). The earlier actions are
        read only when a telling recalls one."""
        if self._said_before is None:
            self._said_before = [_Asked(a) for a in self._earlier()]
        if verb is None:
            return any(a.speaks for a in self._said_before)
        return any(a.grounds(verb, rest) for a in self._said_before)

    def grounds(self, verb: str, rest: str) -> bool:
        """Whether the action made the decision ``verb`` names (``rest``: the words after it in the sentence)."""
        lemma = _lemma(verb)
        if lemma == "kneel" and not _SUBMITS.match(rest):
            return True  # "you kneel beside the spring": a pose, not a submission
        other = _NOT_A_DECISION.get(lemma)
        if re.match(r"\s+(?:nothing|no\s+sign)\b", rest) or (other is not None and other.match(rest)):
            return True  # "you promise nothing", "you accept the strand from Bruno"
        groups = set(_GROUPS.get(lemma, ()))
        if groups & self.groups or (lemma == "accept" and "take" in self.verbs):
            return True  # taking a thing is accepting it
        if "decide" not in groups:
            return False
        then = re.match(r"\s*(?:to|that\s+you\s+will)\s+(?P<verb>[a-z']+)", rest)
        if then:  # "you decide to head north": the decision is the act it leads to
            inner = then.group("verb")
            if re.fullmatch(_DECISION, inner):
                return self.grounds(inner, rest[then.end() :])
            return verb_key(inner) in self.verbs and inner not in ("be", "have", "do")
        if re.match(r"\s*(?:that|against|on|whether)\b", rest):
            return False  # "you decide that Kage lies": only the player's own decision grounds it
        return bool(set(re.findall(r"[a-z]{4,}", rest)) & self.words)  # "you choose the left tunnel"


# ------------------------------------------------------------------ the checks
def speaks_for_player(
    narration: str, action: str | Reading, earlier: Callable[[], Iterable[str]] = tuple
) -> str | None:
    """The first sentence of ``narration`` that speaks or decides for the player beyond ``action``, or None.

    ``earlier``: the player's earlier actions (read only when needed): a sentence that recalls what they said or
    decided then, in the past ("you promised...", "you had asked..."), is theirs, not the narrator's."""
    asked: _Asked | None = None
    for sentence in sentences(narration):
        plain, said = _plain(sentence)
        if "you" not in plain:
            continue
        asked = asked or _Asked(action, earlier)
        if _offends(plain, said, asked):
            return sentence
    return None


def _offends(plain: str, said: list[str], asked: _Asked) -> bool:
    """Whether the sentence (``plain``, its quotations ``said``) speaks or decides for the player."""
    if plain.endswith("?"):
        return False  # a question to the player: they answer it
    theirs = _player_quotes(plain, said)
    if (theirs or (_reported(plain, asked) and not asked.trades)) and not asked.speaks:
        return True
    for match in _decisions(plain):
        verb, rest = match.group("verb"), plain[match.end() :]
        if not asked.grounds(verb, rest) and not (_recalled(match) and asked.recalls(verb, rest)):
            return True
    gesture = _GESTURE_ASSENT.search(plain)
    if gesture and _subject_before(plain, gesture.start()) and "assent" not in asked.groups:
        return True
    for words in theirs:  # the narrator may voice a player who speaks, but not a decision they did not make
        for match in _I_DECIDE.finditer(words):
            if not asked.grounds(match.group("verb") or "promise", words[match.end() :]):
                return True
    return False


def _player_quotes(plain: str, said: list[str]) -> list[str]:
    """The quotations the sentence gives the player (``You say, "..."``, ``"...," you reply``)."""
    parts = plain.split("QUOTE")
    theirs = []
    for k, words in enumerate(said[: len(parts) - 1]):
        before, after = parts[k], parts[k + 1]
        said_before = _SAYS_BEFORE.search(before) or _VOICED.search(before)
        if (said_before and _asserted(before, said_before.start())) or _SAYS_AFTER.match(after):
            theirs.append(words.lower())
    return theirs


def _reported(plain: str, asked: _Asked | None = None) -> bool:
    """Whether the sentence tells the player speaking without quoting them ("you ask Garrick about his son"), other
    than recalling what they did say earlier (``asked``: "you asked Garrick about his son")."""
    return any(
        m.group("aux") not in _BE
        and _asserted(plain, m.start())
        and not (asked is not None and _recalled(m) and asked.recalls(None, ""))
        for m in _SPOKE.finditer(plain)
    )


def _recalled(match: re.Match[str]) -> bool:
    """Whether a telling of the player's act is told as past: "you promised", "you had agreed", "you did ask"."""
    aux = (match.groupdict().get("aux") or "").strip()  # a chained verb ("..., and agreed") has none
    if aux in ("had", "did", "have", "has"):
        return True
    head = match.group("verb").split()[0]
    return not aux and head != lemma(head) and not head.endswith(("s", "ing"))


def _decisions(plain: str) -> Iterable[re.Match[str]]:
    """The decisions the sentence tells the player made: "you agree", "you nod and accept", "..., swearing"."""
    for match in _FINITE.finditer(plain):
        passive = match.group("aux") in _BE and not match.group("verb").endswith("ing")  # "you were chosen"
        if not passive and _asserted(plain, match.start()):
            yield match
    first = next((m for m in re.finditer(rf"{_SUBJECT}\b", plain) if _subject_before(plain, m.start())), None)
    if first is None or not _asserted(plain, first.start()):
        return
    for match in _CHAINED.finditer(plain, first.end()):
        verb = match.group("verb")
        if re.search(
            r"\b(?:as|while|who|whom|which|that|where|when|he|she|they|we|i)\b", plain[first.end() : match.start()]
        ):
            break  # another subject took over
        if (verb.endswith("s") and not verb.endswith("ss")) or re.match(
            r"(?:kneel|decid|choos|resolv|join)\w*ing", verb
        ):
            continue  # "and accepts": another's verb; "..., kneeling beside him": maybe another's pose
        yield match


def _subject_before(plain: str, at: int) -> bool:
    """Whether the "you" at ``at`` opens a clause (is a subject, not "hands you the letter")."""
    return bool(_SUBJECT_BEFORE.search(plain[:at]))


def _asserted(plain: str, at: int) -> bool:
    """Whether the "you" at ``at`` is told as done, not offered, asked or supposed ("if you agree", "will you"),
    and is the one who does it, not a preposition's object ("the nests above you warn that harpies guard it")."""
    if _OBJECT_OF.search(plain[:at]):
        return False
    clause = re.split(r"[,;:(]|\bQUOTE\b|\band\b|\bbut\b", plain[:at].rstrip())[-1]
    return not _OFFER_FRAME.search(" " + clause)


_OBJECT_OF = re.compile(
    r"\b(?:above|below|behind|beneath|beside|around|near|toward|towards|over|under|at|to|for|with|from|of|upon|on"
    r"|into|past|beyond|about|against|among|between|through|like|before|after|without|within|across)\s*$"
)
"""A preposition right before "you": the "you" is its object, and the verb after it another's."""


def repeats(narration: str, previous: list[str]) -> float:
    """The largest share of ``narration``'s word 3-grams found in one of the last :data:`RECENT` ``previous``
    tellings (0.0 to 1.0); 0.0 for a narration under :data:`MIN_GRAMS` 3-grams."""
    grams = _grams(narration)
    if len(grams) < MIN_GRAMS:
        return 0.0
    return max((len(grams & _grams(told)) / len(grams) for told in previous[-RECENT:]), default=0.0)


def _grams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.translate(_QUOTES).lower())
    return set(zip(words, words[1:], words[2:], strict=False))


# ------------------------------------------------------------------ a turn's verdict
@dataclass(frozen=True)
class Voice:
    """What :func:`judge` found in one answer's narration."""

    sentence: str | None = None
    """The first sentence that speaks or decides for the player (None: none does)."""
    overlap: float = 0.0
    """:func:`repeats` of the narration over the recent tellings it was compared with."""

    @property
    def repeated(self) -> bool:
        return self.overlap >= REPEAT_THRESHOLD

    @property
    def faults(self) -> bool:
        return self.sentence is not None or self.repeated

    def why(self) -> str:
        """What to tell the narrator when it is asked again (empty when nothing is wrong)."""
        reasons = []
        if self.sentence is not None:
            reasons.append(
                f'The narration spoke or decided for the player ("{self.sentence[:200]}"): the player speaks and '
                "decides only through their own action; tell what the world does and says, never what the player "
                "says, agrees to or chooses beyond what they typed."
            )
        if self.repeated:
            reasons.append("The narration repeats the last turns: tell what is new this turn, in fresh words.")
        return " ".join(reasons)


def judge(
    narration: str, action: str | Reading, previous: list[str], earlier: Callable[[], Iterable[str]] = tuple
) -> Voice:
    """Whether ``narration`` speaks for the player of ``action`` (``earlier``: their earlier actions) and how
    much it repeats ``previous`` (oldest first; empty: repetition not judged)."""
    return Voice(speaks_for_player(narration, action, earlier), repeats(narration, previous))


def mended(narration: str, action: str | Reading, earlier: Callable[[], Iterable[str]] = tuple) -> str:
    """``narration`` without the sentences that speak or decide for the player (empty when all of them do)."""
    told = sentences(narration)
    kept = [s for s in told if speaks_for_player(s, action, earlier) is None]
    return narration if len(kept) == len(told) else " ".join(kept)
