"""The one lexicon: every verb of the game's closed set with the words that mean it, and the words around them.

Every reader of the player's English reads through this table (issue 41): the parser's patterns draw each verb's
words from it (:func:`alternation`), the reading gives a clause its verb classes from it (:func:`classes`), the
narrator matches objectives by it (:func:`verb_key`), memory's question reading knows events by it
(:func:`event_kind`) and the voice check knows decisions by it (:data:`DECISIONS`). Before, five tables
disagreed: "pocket" was an act to the parser and no event to memory.

- :data:`SENSES`: each verb of the closed set (go, take, drop, use, give, buy, sell, talk, say, attack, defend,
  flee, rest, look, examine, keep) with its *kin*: groups of words that mean the same when a sentence is compared
  with a quest objective ("drink" and "sip", but not "drink" and "eat"). A word may have several senses
  ("leave": go or drop; "break": attack or take); the first is the parser's.
- :data:`IDIOMS`: phrasal verbs and idioms read as a plainer phrase before anything else reads the clause ("hit
  the road" = leave, "take a look at" = look at, "kill time" = wait, "take on" = fight).
- :data:`REFUSALS`, :data:`HEDGES`: the words that make a sentence ask nothing ("over my dead body", "only a fool
  would", "no deal", "I almost ... but stop") or less than plainly ("maybe", "I guess").
- Directions, pronouns, question words, the player's statements about themselves.

Word forms are reduced by :func:`lemma` (one table of irregular forms, then suffixes), so "took", "grabbing" and
"nabbed" find their verbs.
"""

from __future__ import annotations

import re
from functools import cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _pairs(text: str, sep: str = ":") -> dict[str, str]:
    """A table written as "key:value key:value ..." (``_`` joins the words of a phrase)."""
    return {k.replace("_", " "): v.replace("_", " ") for k, v in (p.split(sep) for p in text.split())}


def _phrases(text: str) -> tuple[str, ...]:
    """Phrases written one after another, "|" between them."""
    return tuple(p.strip() for p in text.split("|") if p.strip())


DIRECTIONS = _pairs(
    "n:north s:south e:east w:west u:up d:down north:north south:south east:east west:west up:up down:down in:in"
    " out:out inside:in outside:out northeast:northeast northwest:northwest southeast:southeast"
    " southwest:southwest ne:northeast nw:northwest se:southeast sw:southwest upstairs:up downstairs:down"
    " northward:north northwards:north southward:south southwards:south eastward:east eastwards:east"
    " westward:west westwards:west"
)
QUESTION_WORDS = (
    *sorted(_words("where what who whom why how when which")),
    *sorted(f"{w} " for w in _words("do does did is are can could have will would were was")),
)
SELF_STATEMENT = re.compile(
    r"^(my name is|my name's|call me|i am|i'm|im|i come from|i came from|i was born|i promise|i swear|i vow"
    r"|my secret|i have a secret|remember that|i love|i hate|i fear)\b"
)
NAME_GIVEN = re.compile(r"\b(?:my name is|my name's|call me|i am called|i'm called)\s+(?P<v>[\w' -]+)", re.I)
"""The player telling their name ("my name is Kael"); the Story Bible and the rules read it."""
MAX_NAME_CHARS = 40


def name_given(text: str) -> str | None:
    """The name the player gives in ``text`` ("call me kael and ..." -> "Kael"), at most three words, or None."""
    match = NAME_GIVEN.search(text)
    if not match:
        return None
    value = re.split(r"\s+and\b|\s+but\b|[.;!,?]", match.group("v"), maxsplit=1, flags=re.I)[0]
    words = value.split()[:3]
    name = " ".join(w if any(c.isupper() for c in w) else w.capitalize() for w in words)[:MAX_NAME_CHARS]
    return name or None


PRONOUNS = _words("him her them it he she they")
"""Words by which the player points at someone present without naming them."""
PEOPLE_NOUNS = _words(
    "man woman guy lady fellow gentleman stranger person figure chap bloke lad lass boy girl kid sir madam ma'am"
    " mister miss friend buddy pal dude mate"
)
"""Nouns that point at a person without naming them ("the old man", "that lady"): the one present who fits."""

DIRECTION_WORDS = "|".join(sorted((re.escape(d) for d in DIRECTIONS if len(d) > 2), key=len, reverse=True))
ARTICLE = r"(?:(?:the|a|an|some|this|that|your|my)\s+)"
SIMPLE_GO = _pairs(
    "ascend:up climb:up climb_up:up go_up:up descend:down climb_down:down go_down:down enter:in go_in:in"
    " go_inside:in go_out:out"
)
"""Whole lines that go one way ("climb": up)."""

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
    " pilfer seize procure bag grab_hold_of pick_out scoop_up gather_up",
    "drop": "drop discard leave throw_away toss abandon dump ditch chuck bin jettison shed put_down set_down lay_down",
    "use": "use play strum activate operate start insert install plug fit seat slot pour put place apply load"
    " attach connect hold_up raise light ignite burn ring blow sprinkle spill empty drip dip power_up turn_on"
    " switch_on fire_up inject swap replace feed mount brandish wave offer_up lay set sound tune invoke trigger"
    " press flip wield wear equip don kindle strap_on put_on drink sip quaff gulp guzzle swig slurp imbibe chug"
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
    " run_for_it",
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


def words(verb: str) -> tuple[str, ...]:
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


OTHER_VERBS = _words(
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
IRREGULAR = _pairs(
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


# ------------------------------------------------------------------ idioms and frames
IDIOMS: tuple[tuple[str, str], ...] = tuple(
    (phrase.strip(), plain.strip())
    for phrase, plain in (
        entry.split("=")
        for entry in _phrases(
            """hit the road = leave | make tracks = leave | head off = leave | get going = leave | get moving = leave
        | take a look around = look | have a look around = look | take a look at = look at | take a look = look
        | have a look at = look at | have a look = look | take a peek at = look at | have a peek at = look at
        | shoot a glance at = glance at | cast a glance at = glance at | throw a glance at = glance at
        | steal a glance at = glance at | cast an eye over = look at | run my eye over = look at
        | kill time = wait | bide my time = wait | get some shut-eye = sleep | get some shut eye = sleep
        | catch some z's = sleep | catch some zs = sleep | get some sleep = sleep | get some rest = rest
        | take a nap = nap | take a break = rest | take a breather = rest | take five = rest
        | catch my breath = rest | put my feet up = rest | take on = fight | have a go at = attack
        | go after = attack | scarf down = eat | wolf down = eat | chow down on = eat | polish off = eat
        | tuck into = eat | dig into = eat | knock back = drink | throw back = drink | down = drink
        | take a swig of = drink | take a swig from = drink from | take a sip of = drink | take a sip from = drink from
        | take a pull from = drink from | take a pull of = drink | take a bite of = eat | slam = drink | pop = use
        | go get = get | go and get = get | go fetch = fetch | go grab = grab | go pick up = pick up
        | help myself to = take | get my hands on = take | lay my hands on = take | pass = give | slip = give
        | have a word with = talk to | have a chat with = talk to | have a word = talk
        | have a moment of your time = talk | have a moment = talk | a moment of your time = talk
        | spare a moment = talk | got a minute = talk | have a minute = talk | trouble you for = order
        | have = order | get me = order | pass through = go through | pass by = go by | pass into = go into
        | strike up a conversation with = talk to | chat up = talk to | pay a visit to = go to
        | make a run for it = run away | run for it = run away | beat a retreat = retreat
        | get out of here = run away | get out of dodge = run away | cut and run = run away | get rid of = drop
        | let go of = drop | part with = drop | throw away = drop | raise my guard = defend
        | keep my guard up = defend | shield myself = defend | stand my ground = defend | hold my ground = defend
        | bend the knee = kneel | bury the hatchet with = make peace with | bury the hatchet = make peace
        | cut a deal with = bargain with | strike a deal with = bargain with | make a deal with = bargain with
        | shin up = climb | hoof it = go | make my way = go | a word with = talk to | a word about = talk about
        | a word = talk | a moment = talk | a quick word = talk"""
        )
    )
)
"""Phrasal verbs and idioms, each read as the plainer phrase after it ("I take on the wolf" -> "fight the wolf").
A one-word entry ("down", "pass", "slip", "pop", "slam", "have") is read so only before a thing ("down the
tonic", "I'll have a toddy": ordered) or, for "pass" and "slip", in "X to Y" (:func:`game.language.frames.plainer`
applies them)."""

REFUSALS = _phrases(
    """over my dead body | only a fool would | only an idiot would | only a madman would | as if i would | as if i'd
    | as if i will | as if | yeah right | yeah, right | like hell i will | like hell i would | not a chance
    | not on your life | not in a million years | not in this lifetime | never in a million years | when pigs fly
    | in your dreams | dream on | nice try | no deal | no way | no chance | no thanks | no thank you | not likely
    | forget it | i'd sooner die | i would sooner die | i'd rather die | i would rather die | you must be joking
    | you must be mad | you're joking | you are joking | you can't be serious | you cannot be serious | think again
    | not happening | not today | fat chance | what could possibly go wrong | great plan | brilliant plan
    | brilliant idea | great idea | genius idea | genius plan | smart move | what a plan | oh sure | oh yeah, sure
    | sure, let me just | yeah, let me just | yeah, i'll just | yeah i'll just | oh yes, let's
    | because that always works | because that worked so well | oh absolutely | oh, absolutely | oh great
    | oh, great | oh brilliant | oh, brilliant | oh definitely | oh, definitely | oh of course | oh, of course
    | oh certainly | oh, certainly | oh, sure | oh right | oh, right"""
)
"""Words that say no: a sentence holding one asks for no act ("yeah, right, sell my pearl for pocket change"), and
a sentence that is only one ("No deal.") takes back the acts of the line before it."""
HELD_BACK = _phrases("almost | nearly | am about to | i'm about to | start to | begin to | reach to | move to | go to")
THOUGHT_BETTER = _phrases(
    """but stop | but don't | but do not | but hold back | but hesitate | but decide not to | but decide against it
    | but change my mind | then stop | then think better | but think better | but pull back | but catch myself
    | but stop myself | but can't | but cannot | but refrain"""
)
"""An act begun and not finished is no act: HELD_BACK words before it and THOUGHT_BETTER words after it."""
DECLINES = _phrases(
    """push back | push away | shove back | slide back | hand back | wave away | wave off | brush aside | brush off
    | turn down | decline | reject | refuse | spurn | shake my head"""
)
"""A thing handed back or waved away: declining what is offered, not giving or taking it."""
LEAVE_BE = _phrases("alone | be | where it is | where they are | where it lies | in peace | untouched | there")
""""leave X alone", "let X be": no act on X."""
HEDGES = _words("maybe perhaps probably possibly guess suppose somehow sort kinda kind think reckon might")
"""Words that make a request less than plain: a consequential act asked with them is asked back first."""
COURTESY = _phrases("please | kindly | if you would | if you don't mind | if you please | thank you | thanks")
"""Courtesy: dropped from a request, which it leaves plain ("I would like to go north, please")."""

# ------------------------------------------------------------------ decisions (the voice check)
DECISIONS: dict[str, tuple[str, ...]] = {
    phrase: tuple(groups.split("+"))
    for phrase, groups in _pairs(
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
