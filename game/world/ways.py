"""Where a movement leads (issue 41): the place a clause that moves names, in the world as it stands.

By a way ("north", "nroth", "the one way out"), by a neighbouring place's name ("the lodge"), by the way said
beside the place ("step out into the corridor to the east"), or by the words of the places' own text: Cliff
Road's "The lane down into the village lies to the east" makes "the village" east, the harbour's "A curved stone
quay ..." makes "the quay" the harbour. A place the story has but not next door is refused in one sentence.
"""

from __future__ import annotations

import re
from dataclasses import replace

from game.language.lexicon import DIRECTIONS, OWNED_PLACES, place_kin, role_kin
from game.language.parser import Command
from game.language.reading import Clause, Reading
from game.language.spelling import nearest
from game.text import best_match, keywords, stem
from game.world.acts import Act, Found, Scene
from game.world.describe import the
from game.world.names import elsewhere, full_name, match, named, stems


def go(command: Command, said: Clause, scene: Scene, reading: Reading) -> Found:
    exits = scene.exits
    target = _AWHILE.sub("", command.target.strip())  # "pop into the pub for a bit": the pub
    ways = {d: n for d, n in exits.items()}
    if not target:
        places = sorted(set(exits.values()))
        if len(places) == 1:
            return Found(acts=(Act("go", places[0]),), note="the one way out")
        return Found(offer=tuple(Act("go", n) for n in places), note="which way?")
    way = DIRECTIONS.get(target, target)
    if way in ways:
        return Found(acts=(Act("go", ways[way]),), note=f"way {way}")
    nodes = [(n, [scene.pack.nodes[n].name, n.replace("_", " ")]) for n in set(exits.values())]
    if way in DIRECTIONS.values():
        place, guessed = match(said.core, nodes)
        if place is not None and not guessed:  # "back out onto the high street": no way out, but the street is one
            return Found(acts=(Act("go", place),), note=f"to {place}, named")
        return Found(refusal=f"You can't go {way} from here.", note=f"no way {way}")
    first, _, rest = target.partition(" ")
    fixed_first = None
    if rest and first not in DIRECTIONS:
        fixed_first = nearest(first, list(ways), short=True) or nearest(
            first, [w for w in DIRECTIONS if len(w) > 3 and DIRECTIONS[w] in ways]
        )
    if fixed_first is not None and DIRECTIONS.get(fixed_first, fixed_first) in ways:
        # "go nrth to the lantrens", "go upstiars into the lighthose": the way, misspelt, then where it leads
        way = DIRECTIONS.get(fixed_first, fixed_first)
        return Found(acts=(Act("go", ways[way], guessed=True),), note=f"typo: {fixed_first}")
    node, guessed = match(target, nodes)
    said_way = _way_said(said.core, ways)
    named_fully = node is not None and _named_enough(target, scene.pack.nodes[node].name)
    if said_way in ways and not named_fully:  # "go north into the fog", "climb the rocky path east"
        return Found(acts=(Act("go", ways[said_way]),), note=f"way {said_way}")
    if node is None:
        fixed = nearest(target, [*DIRECTIONS, *ways]) or nearest(target, list(ways), short=True)
        if fixed is not None and DIRECTIONS.get(fixed, fixed) in ways:
            return Found(acts=(Act("go", ways[DIRECTIONS.get(fixed, fixed)], guessed=True),), note=f"typo: {fixed}")
    if node is not None and not named_fully and (told := _described_way(target, scene)) not in (None, node):
        # "hoof it up the rocky path toward the peaks": "a rocky path climbs east toward the peaks", not the
        # Fogbound Path a word of it names
        return Found(acts=(Act("go", told),), note=f"the way the place's words name: {told}")
    if node is not None:
        return Found(acts=(Act("go", node, guessed=guessed),), note=f"to {node}")
    if (led := _LEADS.search(target)) is not None:  # "down the lane to the quay", "up the trail into the fog":
        found = go(replace(command, target=led.group("place")), said, scene, reading)  # where the way leads
        if found.acts:
            return found
    if (told := _described_way(target, scene)) is not None:  # "down into the village", "to the quay"
        return Found(acts=(Act("go", told),), note=f"the way the place's words name: {told}")
    somewhere = best_match(target, [(n, [p.name]) for n, p in scene.pack.nodes.items()])
    if somewhere == scene.node:
        return Found(open=True, note="already here")
    who = elsewhere(target, scene.pack) or _kept_by(target, scene)
    if who is not None and scene.pack.npcs[who].location in exits.values():
        return Found(acts=(Act("go", scene.pack.npcs[who].location),), note=f"to where {who} is")
    if somewhere is not None and _words_of_name(target, scene.pack.nodes[somewhere].name):
        return Found(
            refusal=f"You can't get to {the(scene.pack.nodes[somewhere].name)} from here.",
            refused=Act("go", somewhere),
            note="not adjacent",
        )
    past = re.search(
        r"\b(?:(?:past|by|around)\s+(?:the\s+)?|round\s+the\s+)(?P<x>.+)$", said.core
    )  # not "the round door"
    if past and not match(past.group("x"), named(scene.pack, scene.enemies, "enemy"))[0]:
        return Found(refusal=f"There is no {past.group('x')} here.", note="nothing to get past")
    return Found(open=True, note=f"no way named {target!r}: left to the narrator")


_LEADS = re.compile(r"\s(?:to|into|towards?)\s+(?P<place>(?:(?!\s(?:to|into|towards?)\s).)+)$")
"""The last "to ..." of a way's words: where it leads."""
_AWHILE = re.compile(r"\s+for\s+(?:a|an|the)\s+(?:bit|while|moment|spell|minute|drink|pint|night)\b.*$")


def _kept_by(target: str, scene: Scene) -> str | None:
    """The one person next door a place is named by, by what they are ("the ripperdoc's place": the ripperdoc)."""
    owner = re.match(r"^(?P<who>.+?)'s?\s+(?P<what>[a-z]+)\b", target)
    if owner is None or owner.group("what") not in OWNED_PLACES:
        return None
    wanted = [{stem(k) for k in role_kin(w)} for w in keywords(owner.group("who"))]  # "innkeeper": a landlady too
    near = set(scene.exits.values())
    fits = [
        npc_id
        for npc_id, npc in scene.pack.npcs.items()
        if npc.location in near and wanted and all(kin & stems(" ".join([npc.role, *npc.names])) for kin in wanted)
    ]
    return fits[0] if len(fits) == 1 else None


def way_taken(said: Clause, scene: Scene) -> Found | None:
    """A way "taken" ("take the stairwell down", "take the ladder up"): the one way out the clause says beside a
    thing that is no item; None when it says none."""
    words = said.core.split()
    way = _way_said(" ".join(words[1:]), scene.exits)  # after the thing: "seize up the troll" takes no way
    return Found(acts=(Act("go", scene.exits[way]),), note=f"a way taken: {way}") if way else None


def _named_enough(target: str, name: str) -> bool:
    """Whether ``target`` names a place by its whole name or two words of it ("up the high street": Saltmoor High
    Street), not by one word another place shares ("the rocky path": not the Fogbound Path)."""
    return full_name(target, [name]) or len(stems(target) & stems(name)) >= 2


def way_named(words: str, scene: Scene, *, guessed: bool = False) -> Act | None:
    """The one way out the direction words of ``words`` name ("back south to the trailhead", "hatch east"), or
    None (none, or several)."""
    said = {DIRECTIONS[w] for w in re.findall(r"[a-z]+", words.lower()) if w in DIRECTIONS} & set(scene.exits)
    return Act("go", scene.exits[said.pop()], guessed=guessed) if len(said) == 1 else None


def _way_said(core: str, ways: dict[str, str]) -> str | None:
    """The one way out a movement says beside its place: "go north into the fog", "step out into the corridor to
    the east", "ride the lift up to the street" ("out" names no way out here; "east" and "up" do)."""
    said = {DIRECTIONS[w] for w in core.split()[1:] if w in DIRECTIONS} & set(ways)
    return said.pop() if len(said) == 1 else None


_COMPASS = frozenset(w for w, way in DIRECTIONS.items() if len(w) > 2 and way not in ("in", "out"))


def _described_way(target: str, scene: Scene) -> str | None:
    """The place a target names by the words of the place's own text: the one way a sentence of this place's
    description gives for it ("The lane down into the village lies to the east."), or else the one neighbouring
    place whose description or features hold every word of it ("A curved stone quay ...")."""
    wanted = set(keywords(target))
    if not wanted:
        return None
    here = scene.pack.nodes[scene.node]
    locked = [
        way for way, lock in here.locked_exits.items() if way in scene.exits and wanted <= set(keywords(lock.message))
    ]
    if len(locked) == 1:  # "through the round door": the door its lock's words name ("... bars the round door")
        return scene.exits[locked[0]]
    for sentence in re.split(r"(?<=[.!?;])\s+", scene.pack.nodes[scene.node].description):
        if wanted <= set(keywords(sentence)):
            ways = {DIRECTIONS[w] for w in re.findall(r"[a-z]+", sentence.lower()) if w in _COMPASS}
            if len(ways & set(scene.exits)) == 1:  # "down" in "the lane down into the village" is no way out
                return scene.exits[(ways & set(scene.exits)).pop()]
    own = [here.name, here.description, *(" ".join([f.name, *f.aliases]) for f in here.features)]
    if wanted <= set(keywords(" ".join(own))):
        return None  # "climb the tower" in the chapel: its own tower, not the street whose words see it
    told = {}
    for node in sorted(set(scene.exits.values())):
        place = scene.pack.nodes[node]
        # a sentence there that names this place tells of here ("the squat tower of St Brannoc's Chapel")
        ours = set(keywords(here.name))
        seen = [s for s in re.split(r"(?<=[.!?;])\s+", place.description) if not ours <= set(keywords(s))]
        words = [place.name, *seen, *(" ".join([f.name, *f.aliases]) for f in place.features)]
        told[node] = set(keywords(" ".join(words)))
    near = [node for node, said in told.items() if wanted <= said]
    if not near:  # "the pub": "A low-beamed taproom ..."
        near = [node for node, said in told.items() if all(place_kin(word) & said for word in wanted)]
    return near[0] if len(near) == 1 else None


def _words_of_name(target: str, name: str) -> bool:
    """Whether ``target`` holds every content word of the place's name ("the lodge" does not name "Old Hunter's
    Lodge" for a refusal; "moonwatch gate" does)."""
    wanted = set(keywords(name))
    return bool(wanted) and wanted <= set(keywords(target))
