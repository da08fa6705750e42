"""What frames a clause beyond its verb: idioms, refusals, acts held back or declined, and whom a line addresses.

:mod:`game.language.reading` splits a line into clauses; this module reads, with the lexicon's tables, what turns
a clause's words into another act or into none:

- an **idiom** is read as its plainer phrase before the verb is looked up ("take on the wolf" -> "fight the
  wolf", "take a look at the herb" -> "look at the herb", "kill time" -> "wait");
- a **refusal** in a sentence ("over my dead body will I kneel", "only a fool would kneel", "yeah, right, sell my
  pearl") leaves every clause of it asking nothing, and a sentence that is nothing but one ("No deal.") takes
  back the clauses before it;
- an act **held back** ("I almost kneel, but stop"), **declined** ("I push Corbyn's purse back across the desk")
  or **left be** ("leave my knife alone") is no act;
- a **vocative** ("Reverend, may I have a word?", "how much for the toddy, Bess?") says whom the line is for.

Everything here is words: whether "Reverend" is someone present is the world's to say (:mod:`game.world.asked`).
"""

from __future__ import annotations

import re
from functools import cache

from game.language.lexicon import (
    BLOW_SIZES,
    BLOWS,
    COURTESY,
    DECLINES,
    ENDEARMENTS,
    GREETINGS,
    HELD_BACK,
    IDIOMS,
    LEAD_INS,
    LEAVE_BE,
    OBJECT_PRONOUNS,
    PARTICLES,
    PEOPLE_NOUNS,
    REFUSALS,
    SIZES,
    STOPS,
    SWALLOWED,
    THOUGHT_BETTER,
    leading,
    lemma,
    senses,
    skip,
)


def _split(text: str) -> list[str]:
    return text.split()


_OBJECT_START = frozenset(_split("the a an my your his her their its this that these those some one two three it them"))


@cache
def _idioms() -> tuple[tuple[tuple[str, ...], str], ...]:
    """The idioms as word tuples, longest first (so "take a look at" wins over "take a look")."""
    table = [(tuple(phrase.split()), plain) for phrase, plain in IDIOMS]
    return tuple(sorted(table, key=lambda entry: -len(entry[0])))


def _same(said: str, idiom: str) -> bool:
    if idiom == "my":
        return said in ("my", "your", "our")
    return said == idiom or lemma(said) == idiom


def plainer(core: str) -> tuple[str, str]:
    """``core`` with a leading idiom read as its plainer phrase, and the idiom ("" when none).

    A one-word idiom ("down the tonic", "pass the letter to garrick") counts only before a thing, and "pass" and
    "slip" only with "to" after it ("slip past the troll" stays a move).
    """
    words = core.split()
    if len(words) >= 4 and lemma(words[0]) == "give" and words[-1] in BLOWS and words[-2] in ("a", "an", *BLOW_SIZES):
        who = words[1 : words.index(next(w for w in words[2:] if w in ("a", "an")), 2)]  # "give him a good hiding"
        if who:
            return " ".join(["attack", *who]), f"give ... a {words[-1]}"
    swallowed = next((t for t in SWALLOWED if len(words) > len(t) + 1 and tuple(words[-len(t) :]) == t), None)
    if swallowed and lemma(words[0]) in ("get", "put", "knock", "send"):  # "get that toddy down me": drink it
        return " ".join(["consume", *words[1 : -len(swallowed)]]), f"{words[0]} ... {' '.join(swallowed)}"
    for i in range(1, min(4, len(words) - 1)):
        if words[i] in ("a", "an") and words[i + 1] in SIZES:
            plain, idiom = plainer(" ".join(words[: i + 1] + words[i + 2 :]))
            if " " in idiom:  # "have a proper go at the thief": "have a go at", not "have" (= order)
                return plain, idiom
    for phrase, plain in _idioms():
        if _split_particle(words, phrase):  # "knock it back", "wolf them down"
            return " ".join([plain, *words[1:2], *words[3:]]), " ".join(phrase)
        if len(words) < len(phrase) or not all(_same(w, p) for w, p in zip(words, phrase, strict=False)):
            continue
        rest = words[len(phrase) :]
        if len(phrase) == 1:
            if not rest or rest[0] not in _OBJECT_START:
                continue
            if phrase[0] in ("pass", "slip") and "to" not in rest:
                continue
        return " ".join([plain, *rest]), " ".join(phrase)
    return _reworded(words)


def _reworded(words: list[str]) -> tuple[str, str]:
    """The idioms said around their words: an errand asked of a seller ("get bess to sell me a toddy"), a beast
    put down for good, a liquid tipped into something."""
    if not words:
        return "", ""
    if lemma(words[0]) in ("get", "ask", "have") and "to" in words[2:5]:
        errand = words[words.index("to", 2) + 1 :]
        if errand[:2] in (["sell", "me"], ["sell", "us"]):  # "get bess to sell me one of her toddies"
            return " ".join(["buy", *errand[2:]]), f"{words[0]} ... to sell me"
    if lemma(words[0]) == "put" and words[-3:] == ["down", "for", "good"] and len(words) > 4:
        return " ".join(["attack", *words[1:-3]]), "put ... down for good"  # a beast put down, never a thing
    if lemma(words[0]) == "do" and words[-1] == "in" and len(words) > 2:
        return " ".join(["attack", *words[1:-1]]), "do ... in"  # "do the rat in": killed
    if lemma(words[0]) == "keep" and len(words) > 2 and words[1] == "on":
        words = [words[0], *words[2:]]  # "keep on hitting it"
    if lemma(words[0]) == "keep" and words[1].endswith("ing") and senses(lemma(words[1])):
        return " ".join([lemma(words[1]), *words[2:]]), "keep ...ing"  # "keep hitting the drone": hit it
    if lemma(words[0]) == "tip" and any(w in ("into", "onto", "over", "out") for w in words[2:]):
        return " ".join(["pour", *words[1:]]), "tip ... into"  # poured, not a payment ("tip the porter")
    return " ".join(words), ""


def _split_particle(words: list[str], phrase: tuple[str, ...]) -> bool:
    """Whether ``words`` say a two-word phrasal idiom with a pronoun between its verb and particle."""
    return (
        len(phrase) == 2
        and phrase[1] in PARTICLES
        and len(words) >= 3
        and _same(words[0], phrase[0])
        and words[1] in OBJECT_PRONOUNS
        and words[2] == phrase[1]
    )


def _holds(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text) is not None


def refusal(sentence: str) -> str:
    """The refusal a sentence holds ("over my dead body"), or ""."""
    flat = sentence.replace(",", " ").replace("  ", " ")
    return next((p for p in REFUSALS if _holds(sentence, p) or _holds(flat, p.replace(",", ""))), "")


_BARE_NO = frozenset(
    _split("no nope nah never not no. way deal chance thanks thank you forget it way! i refuse decline nay")
)


def bare_refusal(sentence: str) -> bool:
    """Whether a sentence is nothing but a refusal ("No deal.", "Forget it.", "No, thank you."): it takes back the
    acts before it in the line."""
    words = [w for w in re.findall(r"[a-z']+", sentence.lower()) if w not in ("just", "and", "so", "well", "oh")]
    if not words:
        return False
    if refusal(sentence) and len(words) <= 5:
        return True
    return all(w in _BARE_NO for w in words) and words[0] in ("no", "nope", "nah", "never", "nay")


def held_back(text: str) -> bool:
    """Whether a clause tells an act begun and not done ("i almost kneel", "i nearly take it")."""
    return any(_holds(text, w) for w in ("almost", "nearly"))


def thinks_better(core: str) -> bool:
    """Whether a clause takes back the act before it ("..., but stop", "then think better of it")."""
    core = skip(core, frozenset({"i", "we"}))
    if core in STOPS or leading(core, ("decide not to",)):
        return True
    return any(core == p.split(" ", 1)[1] for p in THOUGHT_BETTER)


def begun(text: str) -> bool:
    """Whether a clause only begins an act ("i start to drop it", "i reach for the herb"): taken back when the next
    clause stops it."""
    return any(_holds(text, w) for w in HELD_BACK) or _holds(text, "reach for")


def declined(core: str) -> bool:
    """Whether a clause hands back or waves away what is offered ("push the purse back", "turn down his offer")."""
    words = core.split()
    if not words:
        return False
    first = lemma(words[0])
    for phrase in DECLINES:
        head, _, particle = phrase.partition(" ")
        if particle and first == head and any(w == particle for w in words[1:]) and particle != "my":
            return True
        if not particle and first == head:
            return True
    return False


def left_be(core: str) -> bool:
    """Whether a clause leaves a thing as it is ("leave my knife alone", "let it be"): no act on it."""
    words = core.split()
    if len(words) < 2 or lemma(words[0]) not in ("leave", "let"):
        return False
    return any(core.endswith(f" {phrase}") for phrase in LEAVE_BE)


def courteous(text: str) -> str:
    """``text`` without its courtesy ("please", "if you don't mind"): it asks the same, plainly."""
    for phrase in COURTESY:
        text = re.sub(rf"(?:^|,?\s+){re.escape(phrase)}(?=$|[\s,.!?])", "", text)
    return " ".join(text.split()).strip(" ,")


_NOT_VOCATIVE = frozenset(
    _split(
        "ok okay well so then now yes yeah yep no nope right alright fine first next finally look listen wait "
        "hmm um uh oh ah sure please thanks and but i we you he she they it this that there here what where "
        "who why how when which also instead meanwhile honestly seriously frankly look"
    )
)


def hailed(sentence: str) -> bool:
    """Whether a sentence opens with a hail set apart ("oi, beardy, ...", "hey - amber eye - ..."): the words after
    it call someone, though they name no one the story knows."""
    return re.split(r",|\s[-–—]+\s", sentence)[0].strip() in GREETINGS


_ASKED_NEXT = re.compile(
    r"^(?P<name>[a-z][a-z0-9'-]{2,})\s+(?=(?:what|whats|what's|where|wheres|where's|who|whos|who's|why|how|hows|how's"
    r"|when|can|could|would|will|do|did|is|are)\s)"
)


def named_first(sentence: str, people: frozenset[str]) -> tuple[str, str]:
    """(the name a sentence opens with before its question, the question): "echo whats the status on main power"
    -> ("echo", "whats the status on main power"), a name with no comma; ("", sentence) for any other."""
    asked = _ASKED_NEXT.match(sentence)
    if asked is None or asked.group("name") not in people or asked.group("name") in _NOT_VOCATIVE:
        return "", sentence
    return asked.group("name"), sentence[asked.end() :]


def vocative(sentence: str, known: frozenset[str] = frozenset()) -> tuple[str, str]:
    """(whom ``sentence`` addresses by name, the sentence without it): "reverend, may i have a word" ->
    ("reverend", "may i have a word"); "how much for the toddy, bess" -> ("bess", "how much for the toddy").

    A name is one to three words before the first comma or after the last, none of them a verb the lexicon knows
    or a word that frames a sentence ("okay, take it" addresses no one); between two commas, when it holds one of
    the ``known`` words people are called by ("a hot toddy for me, Bess, if you'd be so kind").
    """
    parts = [p.strip() for p in re.split(r",|\s[-–—]+\s", sentence)]
    if len(parts) < 2:
        return "", sentence
    hail = hailed(sentence)
    lead = 1 if len(parts) > 2 and (parts[0] in LEAD_INS or hail or not courteous(parts[0])) else 0
    # "please, nyssa, accept this", "oi, ...", "with your leave, elder, ..."
    middle = [i for i in range(1, len(parts) - 1) if set(parts[i].split()) & known]
    for index in (lead, len(parts) - 1, *middle):
        name = parts[index]
        if not name:  # "hello," or ", garrick": an empty part names no one
            continue
        if greeting := leading(name, GREETINGS) or (name.split()[0] == "good" and " ".join(name.split()[:2])):
            name = name[len(greeting) :].strip()  # "hey Garrick", "good morning, ..."
        words = name.split()
        while len(words) > 1 and words[-1] in ENDEARMENTS:  # "ada love, tell me ...", "jory my friend"
            words = words[:-2] if words[-2] in ("my", "old") and len(words) > 2 else words[:-1]
        name = " ".join(words)
        # "oi, big fella with the hammer, ...": a call, whatever its words; "lady of the spring": a title
        longest = 5 if hail and index == 1 else 4 if "of" in words[1:-1] else 3
        if not 1 <= len(words) <= longest or any(w in _NOT_VOCATIVE for w in words):
            continue
        called = words[:1] if hail and index == 1 else words  # "hey, amber eye": a verb after the first word
        if any(senses(w) for w in called if w not in PEOPLE_NOUNS | known) or re.search(r"[^a-z0-9' .-]", name):
            continue
        rest = ", ".join(p for i, p in enumerate(parts) if i != index)
        return name, rest
    return "", sentence
