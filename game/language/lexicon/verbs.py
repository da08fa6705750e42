"""The verbs of the lexicon: each verb of the game's closed set with its words, and their forms.

:data:`WORDS` lists the words of each verb (a word may stand for several: "leave" goes or drops; the first list that
holds it is the parser's), :data:`KIN` the verbs that mean the same for a quest objective, :data:`IRREGULAR` and
:func:`lemma` the forms of a verb, :data:`DECISIONS` the decisions the voice check knows and :data:`EVENT_KINDS`
the events memory's question reading knows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from game.language.lexicon.tables import pairs
from game.language.lexicon.tables import words as word_set

# ------------------------------------------------------------------ verbs
WORDS: dict[str, str] = {
    # a verb of the closed set (or a list of words read as one: VERB_OF) -> its words; "_" joins a phrasal verb's
    # words and "my" in one stands for my or your
    "go": "go walk head travel move run proceed continue hike march trek journey wander climb clamber scramble"
    " ascend descend ride board enter reach find visit stand arrive slip sneak creep squeeze crawl return cross"
    " follow wade swim step jog hurry rush navigate backtrack venture stroll amble trudge saunter stride dash"
    " sprint roam tramp trot scurry hasten meander nip scoot advance push_on press_on set_off set_out set_forth"
    " make_my_way retrace_my_steps head_out head_back go_back come_back double_back exit leave depart",
    "take": "take get grab collect gather pluck harvest snatch retrieve fetch obtain wrench pry prise salvage"
    " scavenge claim pick_up pocket loot steal acquire scoop catch unhook unplug pick nab snag swipe nick filch"
    " pilfer seize procure bag grab_hold_of pick_out scoop_up gather_up yank lift borrow",
    "drop": "drop discard leave throw_away toss abandon dump ditch chuck bin jettison shed put_down set_down lay_down",
    "use": "use play strum activate operate start insert install plug fit seat slot pour put place apply load"
    " attach connect hold_up raise light ignite burn ring blow sprinkle spill empty drip dip power_up turn_on"
    " switch_on fire_up inject swap replace feed mount brandish wave offer_up lay set sound tune invoke trigger"
    " press flip wield wear equip don kindle strap_on put_on pull_on slip_on stick drink sip quaff gulp guzzle"
    " swig slurp"
    " imbibe chug"
    " eat consume chew swallow munch munch_on nibble nibble_on devour gobble scoff nosh bite feast_on snack_on"
    " read peruse",
    "heal": "heal cure bandage",
    "give": "give offer hand deliver bring present hand_over donate gift entrust bestow",
    "buy": "buy purchase pay_for order rent hire",
    "sell": "sell pawn fence trade trade_in barter flog hawk offload",
    "talk": "talk speak chat converse confer natter gossip",
    "greet": "greet hail approach address call_out_to call_to call_for wave_to wave_at say_hello_to say_hi_to"
    " say_hey_to comfort console consult meet help rescue free question interrogate thank calm reassure salute",
    "ask": "ask inquire enquire query quiz",
    "say": "say shout whisper yell mutter murmur reply answer cry call call_out declare announce tell hello hi hey"
    " greetings",
    "pay": "pay spend bribe tip",
    "attack": "attack fight hit strike kill slay destroy face defeat smash break crush shoot stab beat vanquish"
    " wreck battle slash punch kick ambush engage murder assault bash cut_down take_down take_out finish_off"
    " shatter hack_at cleave spear skewer behead dispatch overpower subdue duel challenge pummel clobber thrash"
    " wallop whack smite tackle brawl_with fire_at gun_down blast zap shank jab thump bludgeon maul charge lunge"
    " swing hack cut lay_into swat smack slap clout",
    "defend": "defend block parry guard brace dodge duck evade sidestep",
    "flee": "flee escape retreat bolt scram skedaddle withdraw run_away get_away back_away back_off leg_it bail"
    " run_for_it scarper vamoose",
    "rest": "rest sleep nap doze camp snooze kip slumber recuperate lie_down",
    "look": "look survey",
    "examine": "examine inspect x study check search observe view watch peer glance gaze stare investigate scan"
    " analyse analyze probe regard admire scrutinise scrutinize eye eyeball squint peek see listen hear smell sniff"
    " look_at look_in look_into look_inside look_under look_behind look_over look_through check_out glance_at"
    " peer_at peer_into gaze_at stare_at squint_at peek_at peek_into listen_to",
    "keep": "keep hold_on_to hang_on_to hold_onto",
}
"""The words of each verb of the game's closed set. A word may stand for several ("leave": go or drop); the
first list that holds it is the parser's verb. ``keep`` asks for no change: "I keep the knife" drops nothing."""
VERB_OF = {"heal": "use", "greet": "talk"}
"""Word lists read as another verb: healing is using a remedy, greeting someone is talking to them (the parser
reads their object as the person)."""

KIN: tuple[str, ...] = (
    "talk speak chat converse ask question greet address tell say recite chant utter",
    "haul pull drag tug free rescue yank help lift untangle unravel untie calm soothe",
    "go walk head travel move run proceed continue hike march trek journey wander climb clamber scramble ascend"
    " descend ride board enter reach find visit stand arrive slip sneak creep squeeze crawl venture",
    "take get grab collect gather pluck harvest snatch retrieve fetch obtain wrench pry prise salvage scavenge claim",
    "use play strum activate operate start insert install plug fit seat slot pour put place apply",
    "drink sip quaff gulp guzzle swig",
    "eat consume chew swallow devour gobble munch",
    "read study",
    "give offer hand deliver bring return",
    "defeat attack fight kill slay destroy face hit strike smash break crush shoot stab beat vanquish wreck",
)
"""Verbs that mean the same when a sentence is compared with a quest objective's words (:func:`verb_key`):
finer than the closed set ("drink" is not "eat"), and "help" or "free" someone is hauling them out, not talking."""

VERB_CLASSES: dict[str, tuple[str, ...]] = {
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
    "keep": (),
    "pay": ("trade",),
}
"""The classes of act each verb stands for (:mod:`game.language.reading`): what it may ground."""

_SECOND_SENSES = {
    # a word the parser reads as its first verb that may also stand for another kind of act
    "return": "give",
    "break": "take",
    "cut": "take",
}


def _phrase(word: str) -> str:
    return word.replace("_", " ")


@cache
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(phrase -> its verbs, first the parser's; phrase -> its kin head)."""
    verbs: dict[str, list[str]] = {}
    for verb, words in WORDS.items():
        for word in (_phrase(w) for w in words.split()):
            verbs.setdefault(word, [])
            if verb not in verbs[word]:
                verbs[word].append(verb)
    for word, verb in _SECOND_SENSES.items():
        verbs.setdefault(word, [])
        if verb not in verbs[word]:
            verbs[word].append(verb)
    kin = {word: group.split()[0] for group in KIN for word in group.split()}
    return {w: tuple(v) for w, v in verbs.items()}, kin


def senses(phrase: str) -> tuple[str, ...]:
    """The verbs of the closed set a word or phrasal verb stands for, the parser's first ("leave" -> go, drop);
    () when the lexicon does not know it."""
    verbs, _ = _table()
    phrase = " ".join(phrase.lower().split())
    found = verbs.get(phrase)
    if found is None:
        head, _, rest = phrase.partition(" ")
        found = verbs.get(f"{lemma(head)} {rest}".strip(), ())
    return tuple(dict.fromkeys(VERB_OF.get(v, v) for v in found))


def classes(phrase: str) -> frozenset[str]:
    """The kinds of act a verb may stand for (move, take, drop, give, use, rest, fight, trade, sense, speak)."""
    return frozenset(c for verb in senses(phrase) for c in VERB_CLASSES.get(verb, ()))


def words_of(verb: str) -> tuple[str, ...]:
    """The words of one list of :data:`WORDS`, phrasal verbs with their spaces ("run away")."""
    return tuple(_phrase(w) for w in WORDS[verb].split())


def phrasal() -> frozenset[str]:
    """The lexicon's phrasal verbs ("pick up", "look at"): what two words typed as one are read apart into."""
    verbs, _ = _table()
    return frozenset(w for w in verbs if " " in w)


def known_verbs() -> frozenset[str]:
    """Every single word the lexicon knows as a verb (the words a typo is forgiven against)."""
    verbs, kin = _table()
    return frozenset(w for w in [*verbs, *kin] if " " not in w)


@cache
def progressive() -> dict[str, str]:
    """The -ing forms of the lexicon's one-word verbs, each with its verb ("going": go, "grabbing": grab): what a
    misspelt act told as under way ("goign downstairs") is forgiven against."""
    out: dict[str, str] = {}
    for verb in sorted(known_verbs()):
        stem = verb[:-1] if verb.endswith("e") and not verb.endswith("ee") and len(verb) > 2 else verb
        out.setdefault(f"{stem}ing", verb)
        if re.match(r"^[^aeiou]*[aeiou][^aeiouwxy]$", verb):  # "grab": grabbing, "get": getting
            out.setdefault(f"{verb}{verb[-1]}ing", verb)
    return out


OTHER_VERBS = word_set(
    """push shove kneel bow accept join agree nod smile laugh sit jump dance sing pray think wonder hide knock open
    close shut unlock lock touch feel hug kiss shake wash clean scrape dig cook tie follow lead fly fall lie lean wipe
    want need like love hate fear hope wish know believe trust doubt remember forget promise swear vow admit confess
    beg plead apologise apologize forgive warn threaten insult tease joke cheer sigh shrug frown wink point show
    explain describe mention write draw sign seal stamp fold tear rip bury fill count hunt track chase throw roll spin
    turn twist bend carry stay remain linger notice sense try decide choose surrender yield submit obey betray save
    protect bless curse rise float sink drown breathe cough sneeze yawn stretch shiver tremble whistle hum pretend bet
    gamble win lose come become seem appear vanish wake dream stop halt pause freeze hesitate reconsider refrain"""
)
"""English verbs the game has no act for, or that are no misspelling of one: a clause starting with one is never
"corrected" to a verb that is ("push the purse back" is not "rush"; "kneel" is not "keel")."""


@cache
def alternation(*lists: str) -> str:
    """A regular-expression alternation of the words of the lists named (verbs of :data:`WORDS`), longest first,
    for the parser's patterns. A phrasal verb's words are joined by ``\\s+``; its "my" matches my or your."""
    words = {_phrase(w) for name in lists for w in WORDS[name].split()}
    parts = []
    for word in sorted(words, key=lambda w: (-len(w), w)):
        part = r"\s+".join("(?:my|your)" if p == "my" else re.escape(p) for p in word.split())
        parts.append(part + _NOT_BEFORE.get(word, ""))
    return "|".join(parts)


_NOT_BEFORE = {
    "pick": r"(?!\s+(?:up|a\s+fight)\b)",
    "lay": r"(?!\s+into\b)",
    "hack": r"(?!\s+at\b)",
    "press": r"(?!\s+on\b)",
}
"""Words a list's alternation must not take when the next word makes them another verb's ("pick up")."""


def verb_key(word: str) -> str:
    """What a verb means, so that synonyms compare equal ("destroy" and "defeat", "nab" and "take")."""
    _, kin = _table()
    word = word.lower().strip(" ,.!?")
    for form in (word, lemma(word)):
        if form in kin:
            return kin[form]
    found = senses(word)
    if found and found[0] in kin:
        return kin[found[0]]
    for suffix in ("ing", "ed"):  # a verb the lexicon does not know: "jumping" and "jumped" are "jump"
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3:
            return base[:-1] if len(base) > 3 and base[-1] == base[-2] else base
    return lemma(word)


def is_verb(word: str) -> bool:
    """Whether ``word`` is a verb the lexicon knows, in any of its forms ("pours", "start")."""
    verbs, kin = _table()
    return any(form in verbs or form in kin for form in (word, lemma(word)))


def is_verb_phrase(text: str) -> bool:
    """Whether ``text`` starts with a verb (one of the game's or another English verb): a phrase that can be told
    back as an attempt ("munch on the bark"), unlike a statement ("garrick sent me")."""
    first = text.lower().split()[0] if text.split() else ""
    return bool(senses(first)) or first in OTHER_VERBS or lemma(first) in OTHER_VERBS


# ------------------------------------------------------------------ word forms
IRREGULAR = pairs(
    """took:take taken:take got:get gotten:get gave:give given:give went:go gone:go came:come ate:eat eaten:eat
    drank:drink drunk:drink fought:fight bought:buy sold:sell paid:pay said:say spoke:speak spoken:speak
    told:tell saw:see seen:see heard:hear ran:run left:leave met:meet found:find brought:bring caught:catch
    slew:slay slain:slay struck:strike knelt:kneel chose:choose chosen:choose swore:swear sworn:swear
    stole:steal stolen:steal threw:throw thrown:throw wore:wear worn:wear rode:ride fled:flee slept:sleep
    read:read learnt:learn hid:hide stood:stand sat:sit lay:lay laid:lay hung:hang held:hold kept:keep
    shot:shoot hit:hit put:put set:set cut:cut beat:beat beaten:beat broke:break broken:break began:begin
    begun:begin bit:bite bitten:bite did:do done:do was:be were:be had:have has:have dove:dive led:lead
    sought:seek won:win dug:dig lit:light rang:ring rung:ring fed:feed drew:draw dealt:deal pled:plead made:make
    sent:send spent:spend lent:lend built:build felt:feel meant:mean lost:lose taught:teach thought:think
    understood:understand wrote:write written:write woke:wake ridden:ride"""
)
"""Irregular forms of the verbs players and narrators use, to their base form (memory's question reading, the
voice check and the reading share it)."""


_SUFFIXES = (("ies", ("y",)), ("ied", ("y",)), ("ing", ("", "e")), ("ed", ("", "e")), ("es", ("", "e")), ("s", ("",)))


@cache
def lemma(word: str) -> str:
    """The base form of a verb form: "took" -> "take", "grabbing" -> "grab", "hurries" -> "hurry"; a word that
    is no form of a known verb comes back as it is ("herbs" stays "herbs" unless "herb" is a verb)."""
    word = word.lower().strip(" ,.!?'\"")
    if word in IRREGULAR:
        return IRREGULAR[word]
    verbs, kin = _table()
    if word in verbs or word in kin:
        return word
    for suffix, endings in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 2:
            continue
        stem = word[: -len(suffix)]
        forms = [stem + e for e in endings]
        if len(stem) > 2 and stem[-1] == stem[-2] and suffix in ("ing", "ed"):
            forms.append(stem[:-1])  # "grabbing", "nabbed"
        for form in forms:
            if form in verbs or form in kin or form in _DECISION_WORDS:
                return form
    return word


# ------------------------------------------------------------------ decisions (the voice check)
DECISIONS: dict[str, tuple[str, ...]] = {
    phrase: tuple(groups.split("+"))
    for phrase, groups in pairs(
        """agree:assent accept:assent consent:assent comply:assent obey:assent kneel:assent surrender:assent
        yield:assent submit:assent give_in:assent join:assent side_with:assent ally:assent seal:assent sign:assent
        strike:assent say_yes:assent refuse:refuse decline:refuse reject:refuse turn_down:refuse spurn:refuse
        defy:refuse say_no:refuse promise:promise vow:promise swear:promise+assent pledge:promise+assent
        give_your_word:promise offer_to:promise betray:betray decide:decide choose:decide resolve:decide
        opt:decide make_up_your_mind:decide"""
    ).items()
}
"""Decisions a narration may put in the player's mouth (``game.engine.voice``): told back only when the action
made the same kind of decision."""
_DECISION_WORDS = frozenset(w for phrase in DECISIONS for w in (phrase, phrase.split()[0]))

# ------------------------------------------------------------------ memory's events
EVENT_KINDS: dict[str, tuple[str, ...]] = {
    # an event kind of the rules' record (memory/events.py) -> the verbs that ask about it
    "take": ("take",),
    "give": ("give",),
    "fight": ("attack",),
    "go": ("go",),
    "talk": ("talk",),
    "trade": ("buy", "sell"),
    "use": ("use",),
    "drop": ("drop",),
}
_EVENT_EXTRA = {
    "learn": ("learn",),
    "quest_done": ("finish", "complete", "solve"),
    "any": ("do", "happen"),
    "go": ("come",),
    "talk": ("meet", "speak", "ask"),
}


@cache
def event_kind(word: str) -> str | None:
    """The kind of event a verb in a question about the past asks about ("took" -> take, "met" -> talk)."""
    base = lemma(word)
    for kind, words in _EVENT_EXTRA.items():
        if base in words:
            return kind
    if base in ("look", "examine", "keep", "say") or not senses(base):
        return None
    verb = senses(base)[0]
    return next((kind for kind, verbs in EVENT_KINDS.items() if verb in verbs), None)


# ------------------------------------------------------------------ words of speech (the voice check)
SPEECH_VERBS = word_set(
    """say reply answer respond shout yell whisper mutter murmur call_out exclaim declare announce tell ask greet thank
    introduce_yourself explain insist plead beg retort speak blurt blurt_out stammer chat agree_aloud admit confess
    reassure assure warn lie_to boast remark suggest propose joke say_goodbye"""
)
"""Verbs that put words in a mouth: a narration that has the player do one speaks for them."""
SOUND_VERBS = word_set(
    """cry cry_out scream gasp laugh sigh groan grunt hiss growl snap add continue offer mumble breathe manage begin
    start"""
)
"""Verbs that may carry words when a quotation follows ("you gasp, "No!"")."""
_DOUBLED = frozenset(["beg", "chat", "admit", "snap", "begin", "submit"])
"""Verbs whose last letter doubles before -ed and -ing ("begged", "chatting")."""


def forms(phrase: str) -> tuple[str, ...]:
    """A verb's forms, a phrasal verb's by its first word: "say" -> say, says, saying, said; "call_out" -> call
    out, calls out, calling out, called out."""
    head, _, rest = phrase.replace("_", " ").partition(" ")
    tail = f" {rest}" if rest else ""
    stem = head + head[-1] if head in _DOUBLED else head
    third = (
        head[:-1] + "ies"
        if head.endswith("y") and head[-2:-1] not in "aeiou"
        else (head + "es" if head.endswith(("s", "sh", "ch", "x")) else head + "s")
    )
    past = [p for p, base in IRREGULAR.items() if base == head] or [
        head[:-1] + "ied"
        if head.endswith("y") and third.endswith("ies")
        else head + "d"
        if head.endswith("e")
        else stem + "ed"
    ]
    ing = (
        head[:-2] + "ying"
        if head.endswith("ie")
        else head[:-1] + "ing"
        if head.endswith("e") and not head.endswith("ee")
        else stem + "ing"
    )
    return tuple(dict.fromkeys(f"{w}{tail}" for w in (head, third, ing, *past)))


def forms_alternation(phrases: Iterable[str]) -> str:
    """A regular-expression alternation of every form of the verbs given (:func:`forms`), longest first, the words
    of a phrase joined by ``\\s+``: the voice check's vocabulary."""
    words = {form for phrase in phrases for form in forms(phrase)}
    return "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=lambda w: (-len(w), w)))
