"""The phrases of the lexicon: idioms, the words that make a clause ask nothing, and the frames around a verb.

:data:`IDIOMS` are read as a plainer phrase ("take on the wolf": fight the wolf); :data:`REFUSALS`,
:data:`HELD_BACK`, :data:`THOUGHT_BETTER`, :data:`DECLINES` and :data:`LEAVE_BE` make a clause ask nothing; the
frames say a clause's mood ("maybe I should": a wish; "if I": a supposition; "may I": a polite request; "I will
never": a negation) and :func:`leading` finds the one a clause starts with.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from game.language.lexicon.tables import frames, phrases, words

# ------------------------------------------------------------------ idioms and frames
IDIOMS: tuple[tuple[str, str], ...] = tuple(
    (phrase.strip(), plain.strip())
    for phrase, plain in (
        entry.split("=")
        for entry in phrases(
            """hit the road = leave | make tracks = go | take me back = go back | take me = go | head off = leave
        | get going = leave | get moving = leave
        | take a look around = look | have a look around = look | take a look at = look at | take a look = look
        | have a look at = look at | have a look = look | take a peek at = look at | have a peek at = look at
        | shoot a glance at = glance at | cast a glance at = glance at | throw a glance at = glance at
        | steal a glance at = glance at | cast an eye over = look at | run my eye over = look at
        | kill time = wait | bide my time = wait | get some shut-eye = sleep | get some shut eye = sleep
        | catch some z's = sleep | catch some zs = sleep | get some sleep = sleep | get some rest = rest
        | take a nap = nap | take a break = rest | take a breather = rest | take five = rest
        | catch my breath = rest | put my feet up = rest | take on = fight | have a go at = attack
        | have a crack at = attack | take a crack at = attack | take a swing at = attack | have a pop at = attack
        | take a pop at = attack | lay into = attack
        | go after = attack | scarf down = eat | wolf down = eat | chow down on = eat | polish off = eat
        | tuck into = eat | dig into = eat | knock back = drink | throw back = drink | down = drink
        | take a swig of = drink | take a swig from = drink from | take a sip of = drink | take a sip from = drink from
        | take a pull from = drink from | take a pull of = drink | take a bite of = eat | slam = drink | pop = use
        | go get = get | go and get = get | go fetch = fetch | go grab = grab | go pick up = pick up
        | help myself to = take | get my hands on = take | lay my hands on = take | pass = give | slip = give
        | arm myself with = take | spend it on = buy | spend that on = buy | spend the money on = buy
        | spend the gold on = buy | spend the coin on = buy | cash in = sell | trade in = sell
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
        | a word = talk | a moment = talk | a quick word = talk | make tracks for = go to | head for = go to
        | make for = go to | set off for = go to | set out for = go to | leave for = go to | hightail it to = go to
        | hightail it = go | kill some time = rest | kill a bit of time = rest | pass the time = rest
        | crash here = rest here | crash out = sleep | crash for the night = sleep | bed down = sleep
        | hit the sack = sleep | hit the hay = sleep | get some kip = sleep | have a kip = sleep
        | square up to = fight | rough up = attack | make off with = take | walk off with = take
        | run off with = take | sell me = buy | sell us = buy | have a bite of = eat | grab a bite of = eat
        | have a sip of = drink | have a swig of = drink | have a nip of = drink | take a nip of = drink
        | take a nip from = drink from | have a nip from = drink from | have a drop of = drink
        | take a drop of = drink | take a gulp of = drink | gnaw on = eat | gnaw = eat | neck = drink
        | hunker down = defend | turtle up = defend | take cover = defend | keep my head down = defend
        | throw in my lot with = join | pinch = take | take the deal = accept the deal
        | take your deal = accept the deal | take the offer = accept the offer | take your offer = accept the offer
        | count me in = accept
        | sign me up = accept | shake on it = accept | turn it off and on again = reboot it
        | switch it off and on again = reboot it | pore over = read | leaf through = read | thumb through = read
        | shoot up = inject | patch myself up with = use | patch me up with = use | crash by = rest by
        | crash at = rest at | crash in = rest in | crash on = rest on | crash for = rest for | duck into = go into
        | duck inside = go inside | nip into = go into | pop into = go into | pop over to = go to
        | splash out on = buy | treat myself to = buy | spring for = buy | shell out for = buy
        | bury my nose in = read | grab forty winks = sleep | catch forty winks = sleep | have forty winks = sleep
        | take forty winks = sleep | by a = buy a | by some = buy some | by one = buy one | a little rest = rest
        | a rest = rest | some rest = rest | a bit of rest = rest | some sleep = sleep | a nap = nap
        | make a break for it = run away | do a runner = run away | peg it = run away | hotfoot it = go
        | have a gander at = look at | take a gander at = look at | have a butcher's at = look at
        | have a squint at = look at | have a shufti at = look at | take a closer look at = look at
        | have a closer look at = look at | get a closer look at = look at | take a good look at = look at
        | have a good look at = look at | get a good look at = look at | carry on = go | keep going = go
        | skedaddle back to = go back to | scarper back to = go back to | bolt back to = go back to
        | leg it back to = go back to | brought you = take | i brought you = take
        | pass on to = go on to | get back to = go back to | get back inside = go back inside
        | get back in = go back in | get back out = go back out | get back up = go back up
        | get back down = go back down
        | get inside = go inside | reach into = look into | reach in = look in
        | cut loose = take | cut free = take | beat a hasty retreat = retreat | trouble you for a word = talk
        | trouble you for a moment = talk | stand myself = buy | stand me = buy | my eyes wander to = look at
        | my eyes wander over = look at | my eyes fall on = look at | my gaze falls on = look at
        | my gaze drifts to = look at | my eyes drift to = look at
        | get my head down = sleep | put my head down = sleep | lay my head down = sleep | rest my head = sleep
        | a chat with = talk with | a quick chat with = talk with | want words with = talk with
        | want a word with = talk with | have words with = talk with | i'm off up = go up | i'm off down = go down
        | i'm off to = go to | i'm off into = go into | i'm off back = go back | i'm off out = go out"""
        )
    )
)
"""Phrasal verbs and idioms, each read as the plainer phrase after it ("I take on the wolf" -> "fight the wolf").
A one-word entry ("down", "pass", "slip", "pop", "slam", "have") is read so only before a thing ("down the
tonic", "I'll have a toddy": ordered) or, for "pass" and "slip", in "X to Y" (:func:`game.language.frames.plainer`
applies them)."""

REFUSALS = phrases(
    """over my dead body | only a fool would | only an idiot would | only a madman would | as if i would | as if i'd
    | as if i will | as if | yeah right | yeah, right | like hell i will | like hell i would | not a chance
    | not on your life | not in a million years | not in this lifetime | never in a million years | when pigs fly
    | in your dreams | dream on | nice try | no deal | no way | no chance | no thanks | no thank you | not likely
    | forget it | i'd sooner die | i would sooner die | i'd rather die | i would rather die | you must be joking
    | you must be mad | you're joking | you are joking | you can't be serious | you cannot be serious | think again
    | not happening | not today | fat chance | what could possibly go wrong | what could go wrong | great plan
    | brilliant plan | capital idea | capital plan | top idea | cracking idea | bright idea
    | brilliant idea | great idea | genius idea | genius plan | smart move | what a plan | oh sure | oh yeah, sure
    | splendid idea | lovely idea | wonderful idea | fantastic idea | marvellous idea | superb idea | splendid plan
    | lovely plan | wonderful plan | fantastic plan | marvellous plan | i'm made of money | made of money | oh aye
    | aye, right | not yet | someday | some day | one of these days | later on | eventually
    | sure, let me just | yeah, let me just | yeah, i'll just | yeah i'll just | oh yes, let's
    | because that always works | because that worked so well | oh absolutely | oh, absolutely | oh great
    | oh, great | oh brilliant | oh, brilliant | oh definitely | oh, definitely | oh of course | oh, of course
    | oh certainly | oh, certainly | oh, sure | oh right | oh, right | so nicely last time | so well last time
    | worked out so well | went so well | oh, splendid | oh splendid | oh, wonderful | oh wonderful | oh, lovely
    | oh lovely | oh, perfect | oh perfect | for peanuts | pigs learn to fly | pigs can fly | pigs fly
    | hell freezes over"""
)
"""Words that say no: a sentence holding one asks for no act ("yeah, right, sell my pearl for pocket change"), and
a sentence that is only one ("No deal.") takes back the acts of the line before it."""
HELD_BACK = phrases("almost | nearly | am about to | i'm about to | start to | begin to | reach to | move to | go to")
THOUGHT_BETTER = phrases(
    """but stop | but don't | but do not | but hold back | but hesitate | but decide not to | but decide against it
    | but change my mind | then stop | then think better | but think better | but pull back | but catch myself
    | but stop myself | but can't | but cannot | but refrain"""
)
"""An act begun and not finished is no act: HELD_BACK words before it and THOUGHT_BETTER words after it."""
STOPS = phrases(
    """stop | halt | pause | freeze | hesitate | reconsider | refrain | stop myself | stop short | pull back | hold back
    | think better | think better of it | change my mind | decide against it | catch myself | don't | dont | do not
    | can't | cant | cannot | back down"""
)
"""A clause that is only this takes back the act before it ("I almost kneel, but stop")."""
GREETINGS = phrases(
    "hey | hi | hello | oi | yo | hiya | howdy | ahoy | greetings | excuse me | pardon me | pardon | sorry | dear | oh"
)
"""Words before a name a line calls ("hey Garrick, ...")."""
DECLINES = phrases(
    """push back | push away | shove back | slide back | hand back | wave away | wave off | brush aside | brush off
    | turn down | decline | reject | refuse | spurn | shake my head | pass on | say no to"""
)
"""A thing handed back or waved away: declining what is offered, not giving or taking it."""
LEAVE_BE = phrases("alone | be | where it is | where they are | where it lies | in peace | untouched | there")
""""leave X alone", "let X be": no act on X."""
HEDGES = words("maybe perhaps probably possibly guess suppose somehow kinda sorta think reckon might")
"""Words that make a request less than plain: a consequential act asked with them is asked back first ("kind of"
and "sort of" too, but not the kindness of "would you be so kind as to": :data:`HEDGE_PHRASES`)."""
HEDGE_PHRASES = phrases("kind of | sort of")
COURTESY = phrases(
    """please | kindly | if you would | if you don't mind | if you please | thank you | thanks | thank you kindly
    | if it is no trouble | if it's no trouble | if it is not too much trouble | if it's not too much trouble
    | if it isn't too much trouble | if it's no bother | if it is no bother | if it's all the same to you
    | if it is all the same to you | if that's all right | if that is all right | if that's alright | if that's ok
    | if that's okay | if it's ok | if it's okay | if it is ok | if it is okay | if that's cool
    | with your leave | by your leave | with your permission
    | with respect | with all due respect | begging your pardon | beg pardon | i beg your pardon | forgive me
    | pardon me | excuse me"""
)
"""Courtesy: dropped from a request, which it leaves plain ("I would like to go north, please")."""


DISCOURSE = phrases(
    """very well | well | well then | alright | all right | ok | okay | ok then | okay then | right | right then
    | righto | agreed | understood | hmm | hm | er | um | look | listen | now then"""
)
"""A clause that is only this and a name says no act ("Very well, Corbyn. I'll take the purse.": the purse is the
request, not a word with Corbyn). Not "sure", "yeah" or "fine": they open sarcasm ("Sure, Goro, I'll sell you my
pearl for a smile")."""
SELF_REPORTS = phrases(
    """my name is | my name's | call me | i am a | i'm a | i am an | i'm an | i come from | i came from | i hail from
    | i was born | i grew up"""
)
"""How a player tells who they are ("My name is Ren and I come from the salt marshes"): words about themselves, never
a request the game should ask back."""
INTENT_FRAMES = phrases("i'll | i will | i shall | let me | i'm going to | i am going to | i'm gonna")
"""How a player says what they are about to do, to someone or not: their own act, never words with that person
("Corbyn, I'll take the purse")."""
GRANTS = words("give grant hand send bring heal move award")
"""Verbs that ask someone else to act on the player ("give me 1000 gold", "heal me"): theirs to answer."""
SWALLOWED = (("down", "me"), ("down", "my", "neck"), ("down", "my", "throat"), ("inside", "me"))
"""How a thing eaten or drunk on the spot ends ("get that toddy down me", "send the stim down my throat")."""
BLOWS = words(
    "thrashing beating hiding kicking pasting walloping drubbing battering pummelling pummeling whipping licking"
)
"""What one gives someone when one fights them ("give the scoundrel a good thrashing": attack him)."""
BLOW_SIZES = words("good proper sound right real solid")
FILLERS = words("and then now so ok okay well please just also first next finally quickly slowly carefully quietly oh")
"""Words before a clause's verb that change nothing it asks ("and then quickly take the herb")."""
MANNER = words("then now also carefully quickly slowly quietly gently just")
"""Words after a frame and before the verb ("i'll quietly take it")."""
OPENERS = words("and so but then well oh even")
"""Words that may open a wish, a supposition or a report ("but maybe I should rest")."""
COMMAND_FRAMES = frames(
    """let me | let's | lets | let us | time to | i think i'll | i'll | we'll | i'd like to | i'd love to | i'm going to
    | i'm gonna | {s} will | {s} shall | {s} want to | {s} wanna | {s} would like to | {s} would love to | {s} try to
    | {s} decide to | {s} choose to | {s} need to | {s} have to | {s} must | {s} gotta | {s} attempt to | {s} begin to
    | {s} start to | {s} go and | {s} intend to | {s} mean to | {s} plan to | {s} do | i am going to | we are going to
    | i am gonna | i'm gonna | we're going to | {s} should like to | {s} should love to | reckon i'll | i reckon i'll
    | guess i'll | i guess i'll | gonna | i'd love | i'd like | i've got to | we've got to"""
)
"""What frames a command without changing it ("I'd like to head east": head east)."""
WISH_FRAMES = frames(
    """i wish | i wonder | i'm wondering | i am wondering | {s} hope | maybe | perhaps | i think about | i thought about
    | i'm thinking | i am thinking | i consider | i'm considering | i am considering | i'm tempted | i am tempted
    | i dream | i imagine | {s} should | i ought | i might want | i'd rather | i would rather | i doubt | i fear
    | i worry | part of me wants to | a part of me wants to | i'm half tempted to | i half want to
    | i'm half minded to | wish i | wish we | part of me would love to | a part of me would love to
    | part of me would like to | a part of me would like to"""
)
"""What makes a clause a wish, a wonder or a consideration: no act ("maybe I should rest")."""
HYPOTHETICAL_FRAMES = frames(
    """if | what if | suppose | supposing | imagine | pretend | unless | in case | {s} would | you would | {s} could
    | you could | {s} might | you might | {s} may | you may | {s} pretend | you pretend | {s} feign | i'd | {s} can"""
)
"""What makes a clause a supposition: no act ("if I join him ...", "I could go west")."""
NOT_HYPOTHETICAL = frames("{s} would like | {s} would love | i'd like | i'd love")
"""...except a wish to act, which is a command ("I would like to go north")."""
POLITE_FRAMES = frames(
    """can {s} | could {s} | may {s} | might {s} | can {s} please | could {s} please | may {s} please | would you
    | could you | can you | will you | would you please | could you please | can you please | will you please
    | would you kindly | could you kindly | would you mind if {s} | do you mind if {s} | mind if {s}
    | is it all right if {s} | is it alright if {s} | is it ok if {s} | is it okay if {s} | is it fine if {s}
    | would it be all right if {s} | would it be alright if {s} | would it be ok if {s} | would it be okay if {s}
    | would it be possible to | would it be possible for me to | i'd be grateful for | i would be grateful for
    | would you be so good as to | would you be so kind as to | could you be so kind as to
    | could you be so good as to | could you be kind enough to | be so good as to
    | be so kind as to | would you be kind enough to | would you be good enough to | be a dear and
    | do me a favour and | do me a favor and | would you permit me to | would you let me | will you let me
    | would you allow me to | could you let me | permit me to | allow me to | might {s} be permitted to
    | may {s} be permitted to | could {s} be permitted to | am {s} permitted to | would anyone mind if {s}
    | would anybody mind if {s} | does anyone mind if {s} | anyone mind if {s}"""
)
_GLAD = tuple(
    f"{very}{glad}"
    for very in ("", "much ", "most ", "very ", "really ", "so ", "ever so ")
    for glad in ("grateful", "obliged", "thankful", "glad", "happy", "delighted", "honoured", "honored")
)
POLITE_FRAMES += tuple(
    f"{me} be {glad} if {s} {may}"
    for me in ("i'd", "i would", "i should")
    for glad in _GLAD
    for s in ("i", "we")
    for may in ("could", "might", "may", "can")
) + tuple(
    f"{me} be {glad} {then}"
    for me in ("i'd", "i would", "i should")
    for glad in _GLAD
    for then in ("if you", "if you could", "if you would", "if you'd", "if you might", "for", "to")
)
"""A request asked as a question ("may I pass through the gate?", "would you mind if I took the branch?", "I'd be
much obliged if I might go down")."""
NEGATION_FRAMES = tuple(
    dict.fromkeys(
        [
            f"{subject}{aux}{negation}"
            for subject in ("", "i ", "we ", "you ")
            for aux in ("", *(f"{a} " for a in words("will shall would do does did am are can could must should")))
            for negation in ("not", "never")
        ]
        + list(
            phrases(
                """don't | dont | won't | wont | can't | cant | cannot | never | not | no | refuse to | i refuse to
                | i won't | i don't | i'd never | i'll never | i won't ever | i'm not going to | i am not going to
                | i can't | i cannot | we won't | we don't"""
            )
        )
    )
)
"""What frames a negated clause ("I will never kneel": kneel, negated)."""
REPORT_SUBJECTS = words("he she they it you someone somebody everyone nobody")
"""A clause about another's act opens with one of these ("he told me to go west")."""
AUXILIARIES = words("do does did is are was were can could shall should will would may might must have has had am")
QUESTION_SUBJECTS = words("i you we he she they it there the my your this that anyone someone")
"""An auxiliary before one of these opens a question ("is the lodge to the east?")."""
WH_WORDS = words("where what who whom why how when which whose")
AFTER_COMMA = phrases(
    """and then|and after that|after that|and afterwards|afterwards|after which|and next|next|and finally|finally
    |and also|and|but|then|so|or|yet"""
)
"""Words that may join two clauses after a comma: "talk to senda, after that grab the shard"."""
JOINERS = phrases("and then|and after that|after that|and afterwards|and next|and finally|and|but|then|so|because")
JOINERS += phrases("while|yet|or|instead")
"""Words that join two clauses with no comma: "speak with alicia and after that go north"."""
CLAUSE_STARTS = words(
    """i we let let's lets he she they you it someone not never no don't dont do won't can't cannot if maybe perhaps
    what where who whom why how when which should could would might will shall can does did is are am time"""
)
"""Words that start a new clause after "and", "but" or a comma."""
INTENSIFIERS = words("most very really truly awfully ever quite much terribly")
"""Words that only adorn a polite frame: "i should be most grateful if i might"."""
POLITE_OPENERS = words("so well oh now please")
"""Words that may open a polite request ("so, may I ...")."""
NEGATORS = words(
    """not never no nothing none nor neither don't dont won't wont can't cant cannot shouldn't wouldn't couldn't
    mustn't didn't doesn't isn't aren't wasn't weren't refuse refuses refusing decline declines n't"""
)
"""Words that negate a clause: what it names is not asked for."""
NOT_SUBJECTS = words("i we let let's lets please now then just also first next finally time")
"""First words of a clause that are no one's name ("then takes..." is no report of someone's act)."""
LITTLE_WORDS = words(
    """be am is are was were been do does did have has had get got go make made let the a an my your his her their
    its this that these those some any all every each no not never i me we us you he him she they them it there here
    what where who whom why how when which whose if then and but or so to of in on at by for with from up down out
    over off into onto about north south east west yes yeah yep ok okay please thanks hello hi hey well now just
    maybe perhaps sure fine good nice great"""
)
"""The little words of a sentence: never taken for a misspelt verb."""
MONEY = words("gold coin coins credit credits cr money cash yen eddies shilling shillings")
PAST = words(
    """went took gave dropped ate drank fought chose said spoke told saw heard looked walked ran came left got grabbed
    picked used rested slept killed attacked joined knelt kneeled accepted refused bought paid sold wore carried
    brought found met returned entered climbed already"""
)
"""The player's past acts: "I went west yesterday" reports, it asks nothing."""


def leading(text: str, phrases: Iterable[str]) -> str:
    """The longest of ``phrases`` that ``text`` starts with, as whole words; "" when none."""
    try:
        candidates: Iterable[str] = _by_first_word(phrases).get(text.split(" ", 1)[0], ())  # type: ignore[arg-type]
    except TypeError:  # a list: not indexed
        candidates = phrases
    best = ""
    for phrase in candidates:
        if len(phrase) > len(best) and (text == phrase or text.startswith(phrase + " ")):
            best = phrase
    return best


@cache
def _by_first_word(phrases: tuple[str, ...] | frozenset[str]) -> dict[str, tuple[str, ...]]:
    """``phrases`` by their first word: the frames are thousands (every "i'd be most grateful if i could"), and
    each clause is read against them several times."""
    index: dict[str, list[str]] = {}
    for phrase in phrases:
        index.setdefault(phrase.split(" ", 1)[0], []).append(phrase)
    return {first: tuple(group) for first, group in index.items()}


def skip(text: str, words: frozenset[str]) -> str:
    """``text`` without the leading words that are among ``words`` ("and then quickly take it": take it)."""
    parts = text.split()
    i = 0
    while i < len(parts) and parts[i] in words:
        i += 1
    return " ".join(parts[i:])


# ------------------------------------------------------------------ questions
PAST_MARKERS = words(
    """did didn't had have has was were told said gave took went met fought killed defeated learned learnt bought sold
    paid found visited talked spoke asked happened ago earlier before after first last"""
)
"""Words that put a question in the past ("what did Garrick tell me?"): memory's to answer."""
MEMORY_WORDS = words("remember recall remind memory memories")
MEMORY_PHRASES = phrases(
    """what's my name | what is my name | what was my name | who am i | my name | do i know | did i know | do we know
    | did we know | who told | who said | who mentioned"""
)
"""Questions that ask memory ("who am I?", "do I know her?")."""
REMIND_FRAMES = phrases("remind me | recall | remember | tell me again")
DONE_WORDS = words("finish finished complete completed done solved fulfilled")
STATUS_MONEY = words("gold money coin coins cash credit credits shilling shillings silver eddies yen")
STATUS_PHRASES = {
    "gold": phrases("what's in my purse | what is in my purse | how rich am i | how much do i have"),
    "health": phrases(
        """am i hurt | am i wounded | am i injured | am i ok | am i okay | am i alright | am i all right | am i dying
        | am i bleeding | am i healthy | am i well | how hurt am i | how badly hurt am i | how wounded am i
        | how's my health | how is my health | how's my hp | how is my hp | what's my health | what is my health
        | what's my hp | what is my hp | how much health do i have | how much hp do i have | how am i doing"""
    ),
    "inventory": phrases(
        """what do i have | what do i carry | what am i carrying | what am i holding | what do i hold
        | what do i have on me | what do i have with me | what's in my bag | what is in my bag | what's in my pack
        | what is in my pack | what's in my pockets | what is in my pockets | what's in my pocket
        | what is in my pocket | what's in my backpack | what is in my backpack | what's in my satchel
        | what is in my satchel | what's in my inventory | what is in my inventory"""
    ),
}
"""Questions about the player's own state, which the rules answer ("how much gold do I have?")."""
STATUS_WORDS = {
    "gold": STATUS_MONEY | words("purse wallet funds broke rich"),
    "health": words("hurt wounded injured health hp bleeding banged beaten hurting wounds shape condition battered"),
    "inventory": words("carrying holding pockets pocket bag pack backpack satchel inventory gear belongings"),
}
"""The words of a question about the player's own figures in any phrasing: "how banged up am I right now", "what
have I got in my pockets" (the player's own words, "I", "my" or "me", beside one of these)."""
STATUS_PAST = words("did was were had gave took bought sold told said used")
"""Words that put a question about the player in the past: memory's, not the rules' ("what did I carry?")."""
HANDING_OVER = phrases(
    """here you go | here you are | here's | here is | it's yours | it is yours | that's yours | they're yours
    | yours again | belongs to you | belong to you | take it back | take them back | have it back | have it
    | take it | for you | brought you | got you | fetched you | you wanted | you asked for | you were after
    | as promised | as you asked | this is yours | this was yours | these are yours | this is your | this was your
    | these were your | belonged to you"""
)
"""Words that hand over a thing the line names to the person it is said to ("yo runner, brought you some noodles",
"here you go, old sage: the moonvine you wanted")."""
LIST_WORDS = words("n plus then both also too")
"""Words of a bare list of things that are no names ("the watch n the burner", "fuse + gloves too")."""
GIFT_OPENERS = phrases("here's | here is | here are | this | these | that")
"""What opens a thing handed to someone ("here's a bottle for your trouble", "this ramen's for you")."""
OWN_FRAMES = frames(
    """i | i'll | i'm | i'd | i've | let me | let's | we | we'll | with your leave | can {s} | could {s} | may {s}
    | might {s} | would you mind if {s} | do you mind if {s} | mind if {s} | would you permit me to
    | would you let me | will you let me | would you allow me to | permit me to | allow me to"""
)
"""The player's own act, though said to someone ("Reverend, I'll go down to the crypt", "Doc, mind if I take it?",
"Reverend, would you permit me to go down?")."""

# ------------------------------------------------------------ the small words of a line's grammar
TAGS = phrases("shall i | should i | will i | won't i | right | eh | yeah | no | okay | ok")
ASKING_TAGS = phrases("shall i | should i | will i | won't i")
"""Tags that ask though the line ends with no question mark ("i'll just fight it bare-handed, shall i")."""
WORN = phrases("put on | pull on | slip on | strap on | wear | don | equip")
"""What is worn: a thing lying here put on is taken first ("pull on those insulated gloves")."""
OWNED_PLACES = words("place shop house home den stall office room rooms digs joint pad")
"""Words that say a place is someone's ("the ripperdoc's place")."""
"""Tags that make a sentence a question, though it opens as a statement ("I'll just fight it, shall I?")."""
SUBORDINATORS = phrases("while | when | whilst | before | after | because | since | until | unless | as long as")
"""Words that open a clause inside another: a negation after one is not the main clause's ("nick the pistol while
Senda isn't looking")."""
REPORTING = words("said says told tells reckons claims claimed mentioned swears swore wants asks")
"""Verbs that report someone else's words: a line with one after its subject is a report ("some guy in the alley
said Okabe'll buy anything shiny")."""
LEAD_INS = words("please here oh now look listen well so sorry")
"""Words set apart by a comma before a name a line calls ("please, Nyssa, accept this", "here, doc, ...")."""
PARTICLES = words("back down off up out over in")
"""Particles of a phrasal verb that may follow its object ("knock it back", "wolf them down")."""
OBJECT_PRONOUNS = words("it them this that these those one")
"""What may stand between a phrasal verb and its particle."""
ASKED_FOR = words("a an some one two that those another more")
"""How a thing asked for with no verb begins ("I'd like some of that waybread", "a hot toddy for me")."""
BODY_PARTS = words("arm leg thigh neck vein veins skin wound wounds cut cuts side chest shoulder hand")
"""Where a remedy is applied ("jab the stim into my thigh", "rub the salve into my cuts")."""
APPLYING = words("jab stick plunge stab push press rub smear dab slap")
"""Verbs that apply a remedy when a part of the body follows; before an enemy some of them attack."""
SHORTHAND: dict[str, str] = dict(
    tuple(pair.replace("_", " ").split(":", 1))  # type: ignore[misc]
    for pair in words(
        """cn:can cna:can ur:your pls:please plz:please pleas:please thx:thanks wiht:with whit:with wtih:with
        teh:the hte:the adn:and nad:and fo:of ot:to gimme:give_me lemme:let_me gotta:got_to dont:don't
        cant:can't wouldnt:wouldn't couldnt:couldn't didnt:didn't isnt:isn't ive:i've youre:you're"""
    )
)
"""Words typed in a hurry, read as the words meant ("cn i by a tody", "tlak wiht the AI"): only words no story
could mean otherwise (a two-letter "u" stays the way up)."""
SIZES = BLOW_SIZES | words("quick little long hard big fair decent serious swift brief careful")
"""Words of size inside an idiom, left out when the idiom is read ("have a proper go at", "take a quick look at")."""
AFTER_THING = words(
    """back down up out away here there now again anyway anyways instead then too please first already quickly also
    still though"""
)
"""Words said after a thing that are not its noun ("drop the pipe back", "wield the smart pistol anyway")."""
KIN_NOUNS = words(
    """wife husband son daughter mother father brother sister friend boss widow boy girl lad lass child kid mate
    partner apprentice servant master mistress"""
)
"""Someone named as another's kin or fellow ("the fisherman's wife"): the one named last, not the other."""
DEFERRALS = phrases(
    "later | later on | another time | some other time | tomorrow | one day | someday | at some point | eventually"
)
"""An act put off to then ("..., later"): a wish, nothing asked now."""
KEENNESS = INTENSIFIERS | words("so just rather")
"""How keenly a wish is said ("I'd quite like to", "I'd very much like to"): the wish is the same."""
