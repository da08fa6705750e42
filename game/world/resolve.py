"""Resolving a clause's words to the story's ids: this item here, that exit, this person (issue 41).

:func:`clause` takes one clause that asks for an act (:class:`~game.language.reading.Clause`, its command parsed)
and finds what it acts on in the :class:`Scene` (the state, and what a line's earlier acts changed: "take the herb
and eat it" eats what it took). It answers with a :class:`Found`: the :class:`Act` s asked, or a refusal in one
sentence ("There is no troll here."), or an offer to ask back (two things "it" could be), or nothing resolved and
left to the narrator (``open``: "speak the verse" is a quest step the scripted narrator reads in its own words).

Names are matched as the rest of the game matches them (:func:`game.text.best_match`), then, when nothing is
named, by a misspelling forgiven (:func:`game.language.spelling.nearest` over the words of the names in scope) or
a description ("the elf": a word of her role; "the old man": the one man here, old in his name). A name found only
so is marked ``guessed``: a consequential act asked with it is asked back first.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from game.language.lexicon import DIRECTIONS, MONEY, PRONOUNS, ROUTE_STARTS, WORN, leading, senses
from game.language.parser import Command, parse, place, thing
from game.language.reading import Clause, Reading
from game.language.spelling import nearest
from game.text import best_match
from game.world.acts import Act, Found, Scene
from game.world.choosing import CHOICE_VERBS, choice, choice_taken, described_choice
from game.world.describe import the
from game.world.names import KIN_OF, elsewhere, full_name, headed, item_names, match, named, person
from game.world.rules.trade import offered_price, traders_here
from game.world.wares import MEASURE, asked_for, sold_here
from game.world.ways import go, way_named, way_taken

_ALL = re.compile(r"^(?:all|everything|every\s*thing|it\s+all|all\s+of\s+it|all\s+items|the\s+lot|whatever)\b")


# ------------------------------------------------------------------ the clause
def clause(said: Clause, scene: Scene, reading: Reading) -> Found:
    """What ``said`` (a clause that binds) asks for in ``scene`` (see the module's docstring)."""
    if said.command.verb in CHOICE_VERBS and (chosen := choice(said, scene)) is not None:
        return chosen  # "kneel", "play the harp" at the throne: the story's choice before the verb's plain act
    said = _moved_down(said, scene)
    command = said.command if said.command.verb != "other" else _by_lexicon(said)
    if command.verb == "keep":
        return Found(note="kept: nothing asked")
    handler = _VERBS.get(command.verb)
    if handler is not None and command.verb in _MANY and (parts := _each(command.target)):
        found = _all_of(handler, command, parts, said, scene, reading)
    else:
        found = handler(command, said, scene, reading) if handler else Found(open=True, note="no act the rules know")
    if found.open and command.verb in ("other", "take") and (wanted := asked_for(said.core, scene)) is not None:
        return Found(acts=(wanted,), note=f"asked for: {wanted.target}")
    if found.open and command.verb == "take" and (taken := choice_taken(command.target, scene)) is not None:
        return Found(offer=(Act("choice", taken, guessed=True),), note=f"a choice's thing taken: {taken}")
    if found.open:  # words the verbs did not resolve: perhaps a story choice told in its own description
        described = described_choice(said, scene)
        if described is not None:
            return Found(offer=(Act("choice", described, guessed=True),), note=f"described: {described}")
    return found


def _by_lexicon(said: Clause) -> Command:
    """The command a clause the parser's patterns did not read stands for, by the lexicon: its first words'
    verb ("rest by your fire for a while", "leg it", "north again"), the rest its object."""
    words = said.core.split()
    if words and words[0] in ROUTE_STARTS:  # "back east we go", "back out to the street"
        words = words[1:]
        if words and (words[0] not in DIRECTIONS or words[1:2] in (["to"], ["into"], ["towards"])):
            return Command("go", target=place(" ".join(words)), text=said.text)
    if words and words[0] in ("into", "onto", "inside", "through", "across", "past"):  # "into the cottage to the north"
        return Command("go", target=place(" ".join(words)), text=said.text)
    if len(words) > 1 and words[1] in ("into", "to", "towards", "toward", "through"):
        fixed = nearest(words[0], [w for w in DIRECTIONS if len(w) > 2], short=True)
        words = [fixed, *words[1:]] if fixed else words  # "sotuh into the storeroom": south
    if words and words[0] in DIRECTIONS:  # "north, then west back to the pods"
        compass = len(words) > 1 and words[1] in DIRECTIONS and words[0] in _PARTICLES and words[1] not in _PARTICLES
        return Command("go", target=words[1] if len(words) > 1 and compass else words[0], text=said.text)
    for n in (3, 2, 1):
        verbs = senses(" ".join(words[:n])) if len(words) >= n else ()
        if verbs:
            rest = " ".join(words[n:])
            verb = {"greet": "talk", "ask": "talk", "look": "examine"}.get(verbs[0], verbs[0])
            if verb == "talk":
                return Command("talk", obj=re.sub(r"^(?:to|with)\s+", "", rest), text=said.text)
            return Command(verb, target=thing(rest) if rest else "", text=said.text)
    return said.command


_PARTICLES = frozenset({"up", "down", "in", "out", "back", "over", "u", "d"})
"""Ways that may go before a compass way ("up north", "back down south": north, south)."""


def _moved_down(said: Clause, scene: Scene) -> Clause:
    """``said`` read as a movement when a word that is also a way was read as a verb before a thing that is no item
    here ("down the cleft with the lantern": down, not drink; "down the toddy" stays a drink)."""
    first = said.text.split()[0] if said.text else ""
    if first not in DIRECTIONS or not said.how.startswith("idiom") or DIRECTIONS[first] not in scene.exits:
        return said
    if said.command.target and match(said.command.target, named(scene.pack, [*scene.carried, *scene.lying], "item"))[0]:
        return said
    core = f"go {said.text}"
    return replace(said, core=core, command=parse(core), how="")


_MANY = frozenset({"take", "drop", "give", "sell", "use", "buy"})
_AND = re.compile(r"\s*,\s*(?:and\s+)?(?:then\s+)?|\s+(?:and|plus)\s+(?:then\s+)?|\s+then\s+")


def _each(target: str) -> list[str]:
    """The things a target lists ("the fuse and the gloves", "the branch, the dewdrop and the vine"), when more
    than one."""
    parts = [p.strip() for p in _AND.split(target) if p.strip()]
    return parts if len(parts) > 1 else []


def _all_of(handler: Any, command: Command, parts: list[str], said: Clause, scene: Scene, reading: Reading) -> Found:
    """The acts of one verb on each thing a clause lists, in order; the first that cannot be stops the rest."""
    acts: list[Act] = []
    for part in parts:
        found = handler(replace(command, target=part), said, scene, reading)
        if acts and not found.acts and (way := way_named(part, scene)) is not None:
            found = Found(acts=(way,), note=f"then the way: {way.target}")  # "bag the gloves, hatch east"
        if found.refusal or found.offer or not found.acts:
            return found if not acts else Found(acts=tuple(acts), note="the rest: " + found.note)
        acts += found.acts
        for act in found.acts:
            scene = scene.after(act)
    return Found(acts=tuple(acts), note=f"each of {len(parts)}")


def _take(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    target = command.target.strip()
    lying = scene.lying
    if _ALL.match(target) or re.match(r"^everything\b|^all\b", target):
        if not lying:
            return Found(refusal="There is nothing here to take.", note="nothing lying here")
        return Found(acts=tuple(Act("take", i) for i in dict.fromkeys(lying)), note="everything here")
    if _is_pronoun(target):
        before = _pointed(said, [*lying], scene)
        if before is not None:
            return Found(acts=(Act("take", before),), note="it: the thing named before")
    held = [i for i in scene.carried if full_name(target, scene.pack.items[i].names)]
    named_here = any(full_name(target, scene.pack.items[i].names) for i in lying) or sold_here(target, scene)
    if held and not named_here:  # "take brass burner", carried: not the Brass Pocket Watch lying here
        return Found(refusal=f"You already have {the(scene.pack.items[held[0]].name)}.", note="carried already")
    item, guessed = match(target, named(scene.pack, lying, "item"))
    if item is not None:
        return Found(acts=(Act("take", item, guessed=guessed),), note=f"take {item}")
    sold = sold_here(target, scene)
    if sold is not None:
        return Found(acts=(sold,), note=f"sold here: {sold.target}")
    carried, _ = match(target, named(scene.pack, scene.carried, "item"))
    if carried is not None and not feature_named(target, scene):
        return Found(refusal=f"You already have {the(scene.pack.items[carried].name)}.", note="carried already")
    story_item = best_match(target, named(scene.pack, scene.pack.items, "item")) if target else None
    if (
        story_item is not None
        and not feature_named(target, scene)
        and full_name(target, scene.pack.items[story_item].names)
    ):
        return Found(
            refusal=f"There is no {scene.pack.items[story_item].name} here.",
            refused=Act("take", story_item),
            note="not here",
        )
    if (moved := way_taken(said, scene)) is not None:  # "take the stairwell down"
        return moved
    return Found(open=True, note=f"nothing named {target!r} lies here: left to the narrator")


def feature_named(target: str, scene: Scene) -> bool:
    """Whether ``target`` names a feature of the place (the spring, the altar): its use is the place's own."""
    features = scene.pack.nodes[scene.node].features
    return any(best_match(target, [(f.id, [f.name, *f.aliases])]) for f in features)


def _is_pronoun(target: str) -> bool:
    """Whether a target points without naming ("it", "them", "this", "that one")."""
    return target.strip() in (*PRONOUNS, "this", "that", "these", "those", "this one", "that one", "one")


def _pointed(said: Clause, pool: list[str], scene: Scene) -> str | None:
    """The thing "it" points back to: the one of ``pool`` the clause before names, else the only one."""
    for item in pool:
        if said.names_before([*scene.pack.items[item].names, item]):
            return item
    if any(said.names_before([*thing.names, i]) for i, thing in scene.pack.items.items() if i not in pool):
        return None  # "don't need the baton, leave it": the baton, which is not there to drop, not the one carried
    return pool[0] if len(set(pool)) == 1 else None


_YOU_ASKED = re.compile(r"^(?:would|could|will|can|might)\s+you\b")
"""A clause whose act is the person's it is said to ("would you ever part with that bow?")."""


def _carried(verb: str) -> Any:
    def handle(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
        target = command.target.strip()
        pool = list(scene.carried)
        if _is_pronoun(target):
            before = _pointed(said, pool, scene)
            if before is not None:
                return Found(acts=(Act(verb, before),), note="it: the thing named before")
        if verb == "drop" and _ALL.match(target):
            return (
                Found(offer=(tuple(Act("drop", i) for i in pool)[:1]), note="drop everything?")
                if pool
                else Found(refusal="You carry nothing.", note="nothing carried")
            )
        if verb == "use" and target and feature_named(target, scene) and not full_name(target, item_names(scene, pool)):
            return Found(open=True, note="a thing of the place: left to the narrator")  # "drink from the spring"
        item, guessed = match(target, named(scene.pack, pool, "item"))
        if item is not None and not guessed and not headed(target, scene.pack.items[item].names):
            return Found(offer=(Act(verb, item, guessed=True),), note=f"{item}? its word, another noun")
        if item is not None:
            return Found(acts=(Act(verb, item, guessed=guessed),), note=f"{verb} {item}")
        if verb == "drop" and _YOU_ASKED.match(said.text) and (who := person("", scene, reading)[0]) is not None:
            # "would you ever part with that bow?": theirs to part with, asked of them
            return Found(acts=(Act("talk", who, topic=f"{target}?"),), note=f"asked of {who}: {target}")
        if verb == "use" and (feature_named(target, scene) or not target):
            return Found(open=True, note="something here: left to the narrator")
        lying, guessed = match(target, named(scene.pack, scene.lying, "item"))
        if lying is not None and verb == "use" and leading(said.core, WORN):  # "pull on those gloves": take them
            return Found(acts=(Act("take", lying, guessed=guessed),), note=f"worn, so taken first: {lying}")
        if lying is not None and full_name(target, scene.pack.items[lying].names):
            return Found(refusal=f"You don't have {the(scene.pack.items[lying].name)}; it is here.", note="lying here")
        if target and re.search(rf"\b(?:my|your)\s+{re.escape(target)}\b", said.core):
            # "drink from my flask": theirs, in their words (not the name of a flask they never met)
            return Found(refusal=f"You don't have a {target}.", note="not carried")
        story_item = best_match(target, named(scene.pack, scene.pack.items, "item")) if target else None
        if story_item is not None and full_name(target, scene.pack.items[story_item].names):
            refused = Act(verb, story_item)
            return Found(refusal=f"You don't have {the(scene.pack.items[story_item].name)}.", refused=refused)
        return Found(open=True, note=f"nothing carried named {target!r}: left to the narrator")

    return handle


def _give(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    target, to = command.target.strip(), command.obj.strip()
    more = [_TOO.sub("", part) for part in _each(to)]
    if more and not _each(target):  # "pass the branch to elvin, and the moonvine strand too": one more thing
        given = replace(command, obj=more[0])
        return _all_of(_give, given, [target, *more[1:]], said, scene, reading)
    if re.match(r"^\d+\s", target) or not target:
        return Found(open=True, note="money or nothing named: left to the narrator")
    item, guessed = match(target, named(scene.pack, scene.carried, "item"))
    if item is None and _is_pronoun(target):
        item = _pointed(said, list(scene.carried), scene)
    who, by_description = person(to, scene, reading)
    if item is None:
        story_item = best_match(target, named(scene.pack, scene.pack.items, "item"))
        if story_item is not None and full_name(target, scene.pack.items[story_item].names):
            return Found(refusal=f"You don't have {the(scene.pack.items[story_item].name)}.", note="not carried")
        return Found(open=True, note=f"nothing carried named {target!r}")
    if who is None:
        away = elsewhere(to, scene.pack) if to else None
        if away is not None:
            return Found(refusal=f"{scene.pack.npcs[away].name} is not here.", note="not here")
        if not scene.people:
            return Found(refusal="There is no one here to give it to.", note="no one here")
        return Found(open=True, note=f"no one here named {to!r}")
    if _FOR_MONEY.search(said.core) and who in traders_here(scene.pack, scene.state):
        return Found(acts=(Act("sell", item, who, guessed=guessed),), note=f"offered for money: sell {item}")
    return Found(acts=(Act("give", item, who, guessed=guessed or by_description),), note=f"give {item} to {who}")


_TOO = re.compile(r"\s+(?:too|as well|also)$")
"""A thing added to a list after the person ("..., and the moonvine strand too")."""
_FOR_MONEY = re.compile(rf"\bfor\s+(?:some\s+|a\s+bit\s+of\s+)?(?:{'|'.join(sorted(MONEY))})\b")
"""A gift asked a price: "offer okabe my data pearl for cash" sells it."""


_COUNT = re.compile(r"^(?P<n>two|three|four|five|2|3|4|5|(?:a\s+)?couple\s+of|(?:a\s+)?pair\s+of)\s+(?P<thing>.+)$")
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "couple of": 2, "pair of": 2}


def _buy(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    counted = _COUNT.match(command.target.strip())
    if counted is None:
        return _buy_one(command, said, scene, reading)
    found = _buy_one(replace(command, target=counted.group("thing")), said, scene, reading)
    said_n = " ".join(counted.group("n").split()).removeprefix("a ")
    n = _COUNTS.get(said_n) or int(said_n)
    if len(found.acts) != 1 or found.acts[0].verb != "buy":
        return found
    return Found(acts=found.acts * n, note=f"{found.note}, {n} times")  # "buy two stims": each its own deal


def _buy_one(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    target, to = command.target.strip(), command.obj.strip()
    who, _ = person(to, scene, reading) if to or reading.addressee else (None, False)
    if to and who is None:
        away = elsewhere(to, scene.pack)
        if away is not None and away not in scene.people:
            return Found(refusal=f"{scene.pack.npcs[away].name} is not here.", note="not here")
        return Found(open=True, note=f"no one here named {to!r}")
    traders = traders_here(scene.pack, scene.state)
    sold = sold_here(target, replace(scene, state=scene.state), only=who)
    if sold is not None:
        return Found(acts=(sold,), note=f"buy {sold.target} from {sold.to}")
    lying, guessed = match(MEASURE.sub("", target), named(scene.pack, scene.lying, "item")) if target else (None, False)
    if lying is not None and not traders:  # "may I have one of the biscuits, miss?": they lie here, so take one
        return Found(acts=(Act("take", lying, guessed=guessed),), note=f"asked for, lying here: {lying}")
    if who is not None and who not in traders and re.match(r"^(?:buy|purchase)\b", said.core):
        return Found(refusal=f"{scene.pack.npcs[who].name} has nothing to sell.", note="sells nothing")
    if who is not None and who not in traders:  # "can I have the bow?" of someone who sells nothing: asked of them
        return Found(acts=(Act("talk", who, topic=f"{target}?"),), note="asked of the person here")
    if not traders:
        if len(scene.people) == 1:
            return Found(acts=(Act("talk", scene.people[0], topic=f"{target}?"),), note="asked of the one here")
        return Found(refusal="Nobody here trades." if scene.people else "There is nobody here to trade with.")
    seller = who or (traders[0] if len(traders) == 1 else None)
    if target and seller is not None:
        name = re.sub(r"^(?:the|a|an|some)\s+", "", target)
        return Found(refusal=f"{scene.pack.npcs[seller].name} has no {name} to sell.", note="not sold here")
    return Found(open=True, note="nothing named to buy")


def _misnamed(phrase: str, scene: Scene) -> str | None:
    """The one person here a short name misspelt by a letter may be ("nix": Nyx): asked back, never applied."""
    typed = [w for w in re.findall(r"[a-z]+", phrase.lower()) if w not in ("the", "to", "with", "a", "an")]
    if len(typed) != 1:
        return None
    fits = {
        npc
        for npc in scene.people
        for name in scene.pack.npcs[npc].names
        if nearest(typed[0], re.findall(r"[a-z0-9]+", name.lower()), short=True)
    }
    return fits.pop() if len(fits) == 1 else None


def _sell(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    item, guessed = match(command.target, named(scene.pack, scene.carried, "item"))
    if item is None:
        return Found(refusal=f"You have no {command.target.strip() or 'such thing'} to sell.", note="not carried")
    for npc in traders_here(scene.pack, scene.state):
        if offered_price(scene.pack, npc, item) is not None:
            return Found(acts=(Act("sell", item, npc, guessed=guessed),), note=f"sell {item} to {npc}")
    return Found(open=True, note="no buyer here: left to the narrator")


def _talk(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    who, guessed = person(command.obj, scene, reading)
    if who is not None:
        return Found(acts=(Act("talk", who, topic=command.topic, guessed=guessed),), note=f"talk to {who}")
    if command.obj:
        away = elsewhere(command.obj, scene.pack)
        if away is not None and away not in scene.people:
            enemy = match(command.obj, named(scene.pack, scene.enemies, "enemy"))[0] or _kin_enemy(away, scene)
            if enemy is None:
                return Found(refusal=f"{scene.pack.npcs[away].name} is not here.", note="not here")
        if (near := _misnamed(command.obj, scene)) is not None:  # "tlk to nix": Nyx?
            return Found(offer=(Act("talk", near, guessed=True),), note=f"{command.obj!r}: perhaps {near}")
        if KIN_OF.search(command.obj.lower()) is not None:  # "the fisherman's wife", with only him here
            return Found(refusal=f"There is no {command.obj.removeprefix('the ')} here.", note="kin not here")
        return Found(open=True, note=f"no one here named {command.obj!r}: left to the narrator")
    if not scene.people:
        return Found(open=True, note="no one here")
    return Found(open=True, note="whom? left to the narrator")


def _kin_enemy(npc_id: str, scene: Scene) -> str | None:
    """The enemy here that is this person (the Shadow Lord is Silas)."""
    names = {n.lower() for n in scene.pack.npcs[npc_id].names}
    for enemy in scene.enemies:
        if names & {n.lower() for n in scene.pack.enemies[enemy].names}:
            return enemy
    return None


def _attack(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    target = command.target.strip()
    if scene.state.combat is not None:
        foe = best_match(target, named(scene.pack, scene.pack.enemies, "enemy")) if target else None
        if foe is not None and foe != scene.state.combat.enemy_id and full_name(target, scene.pack.enemies[foe].names):
            said_name = next((n for n in scene.pack.enemies[foe].names if n.lower() in target), target)
            return Found(refusal=f"There is no {said_name.lower()} here.", note="another enemy named in a fight")
        return Found(acts=(Act("attack", scene.state.combat.enemy_id),), note="the fight goes on")
    here = scene.enemies
    if (
        target
        and match(target, named(scene.pack, here, "enemy"))[0] is None
        and (elsewhere := _enemy_elsewhere(target, scene))
    ):
        return Found(refusal=f"There is no {elsewhere.lower()} here.", note="an enemy of elsewhere named", unknown=True)
    if not target or said.pronoun():
        if len(here) == 1:
            return Found(acts=(Act("attack", here[0]),), note="the one enemy here")
        return (
            Found(open=True, note="whom? left to the narrator")
            if here
            else Found(refusal="There is nothing here to fight.", note="no enemy here")
        )
    enemy, guessed = match(target, named(scene.pack, here, "enemy"))
    if enemy is None:
        who, _ = person(target, scene, reading)
        kin = _kin_enemy(who, scene) if who else None
        if kin is not None:
            return Found(acts=(Act("attack", kin),), note=f"{who} is {kin}")
        if who is not None:
            return Found(refusal=f"{scene.pack.npcs[who].name} is no enemy of yours.", note="a friend")
        bare = re.sub(r"^(?:the|a|an)\s+", "", target)
        return Found(refusal=f"There is no {bare} here.", note="no such enemy", unknown=True)
    return Found(acts=(Act("attack", enemy, guessed=guessed),), note=f"attack {enemy}")


def _enemy_elsewhere(target: str, scene: Scene) -> str | None:
    """The name of a story's enemy that ``target`` names in full and that is not here ("shoot that harpy" on the
    troll's stair): never read as the one enemy here."""
    elsewhere = [e for e in scene.pack.enemies if e not in scene.enemies]
    foe = best_match(target, named(scene.pack, elsewhere, "enemy"))
    if foe is None or not full_name(target, scene.pack.enemies[foe].names):
        return None
    return next((n for n in scene.pack.enemies[foe].names if n.lower() in target.lower()), scene.pack.enemies[foe].name)


def _fight_move(verb: str) -> Any:
    def handle(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
        if scene.state.combat is None:
            if not said.how.startswith("typo") and (away := _away(said, scene, reading)) is not None:
                return away  # "scram back up to the stalls", "duck back into the pod bay": a way, with no fight
            texts = {"flee": "There is nothing here to flee from.", "defend": "Nothing here threatens you."}
            if scene.enemies:
                return Found(open=True, note="no fight yet: left to the narrator")
            if verb == "flee" and sum(c.binds for c in reading.clauses) > 1:  # "ok get out of here, east": the
                return Found(note="away: the way the line names")  # way named is the act, no flight from nothing
            return Found(refusal=texts[verb], note="no fight")
        return Found(acts=(Act(verb),), note=verb)

    return handle


def _away(said: Clause, scene: Scene, reading: Reading) -> Found | None:
    """The way a fight's verb said with no fight leads, when its words name one ("duck back into the pod bay"):
    the verb says haste, the way says where."""
    words = said.core.split()[1:]
    while words and words[0] in ROUTE_STARTS:
        words = words[1:]
    if not words or words[0] in ("from", "of", "away"):
        return None
    found = go(Command("go", target=place(" ".join(words)), text=said.text), said, scene, reading)
    return found if found.acts else None


def _pay(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    """Money paid for a ware sold here is the ware bought ("pay bess for a toddy"); other payments are the
    narrator's (a bribe, a tip)."""
    bought = re.search(r"\bfor\s+(?P<thing>.+)$", said.core)
    sold = sold_here(bought.group("thing"), scene) if bought else None
    if sold is not None:
        return Found(acts=(sold,), note=f"paid for: {sold.target}")
    return Found(open=True, note="a payment: left to the narrator")


def _rest(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    return Found(acts=(Act("rest"),), note="rest")


def _sense(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    if _MUST_SEE.search(said.text) and command.target:  # "I must see the crypt": go there
        went = go(Command("go", target=command.target, text=said.text), said, scene, reading)
        if went.acts:
            return Found(acts=went.acts, note=f"a place one must see: {went.acts[0].target}")
    return Found(note="a look: nothing asked")


_MUST_SEE = re.compile(r"\b(?:must|need to|have to|got to|gotta|want to|wanna)\s+(?:go\s+)?(?:see|visit)\s")
"""A place the player must see is a place to go to ("I must see the crypt"); a look at it is only a look."""


_VERBS = {
    "go": go,
    "take": _take,
    "drop": _carried("drop"),
    "use": _carried("use"),
    "give": _give,
    "buy": _buy,
    "sell": _sell,
    "talk": _talk,
    "attack": _attack,
    "flee": _fight_move("flee"),
    "defend": _fight_move("defend"),
    "rest": _rest,
    "pay": _pay,
    "look": _sense,
    "examine": _sense,
}
