"""Things asked for by name alone, and the wares the traders here sell (issue 41).

"I'll have a toddy", "a glass of that brandy", "i'd like some of that waybread": a line that names a thing with no
verb of taking, buying or drinking asks for it all the same. :func:`sold_here` finds the ware a trader here sells
by the words said; :func:`asked_for` reads a thing asked for with no verb: bought from the trader who sells it,
else taken where it lies, else (a measure of a thing carried) drunk or eaten.
"""

from __future__ import annotations

import re

from game.language.lexicon import ASKED_FOR
from game.language.parser import thing
from game.world.acts import Act, Scene
from game.world.names import match, named
from game.world.rules.trade import traders_here

MEASURE = re.compile(
    r"^(?:some|one|a\s+(?:couple|few|bit|drop|cup|glass|mug|bowl|nip|sip|swig|mouthful|taste|tot|dram|bite))\s+of\s+"
)
"""How much of a thing a line asks for ("one of", "a glass of"), before the thing."""


def asked_for(core: str, scene: Scene, only: str | None = None) -> Act | None:
    """A thing asked for with no verb ("i'd like some of that waybread", "a glass of that brandy"): bought from the
    trader here who sells it (``only`` that one), else taken when it lies here, else, a measure of a thing carried,
    drunk or eaten ("a drop of the brandy")."""
    core = re.sub(r"^(?:have|take|get|grab)\s+(?=(?:a|an|some|one)\s.*\bof\b)", "", core)  # "have a glass of"
    if not core.split()[:1] or core.split()[0] not in ASKED_FOR:
        return None
    wanted = MEASURE.sub("", core)
    named_thing = thing(re.sub(r"\s+if\s.*$", "", wanted))
    sold = sold_here(named_thing, scene, only=only)
    if sold is not None:
        return sold
    if wanted == core:  # only a measure of a thing lying here is taken ("a glass of that brandy"): "one day I'd
        return None  # love to drink a draught" asks for nothing
    lying, guessed = match(named_thing, named(scene.pack, scene.lying, "item"))
    if lying is not None:
        return Act("take", lying, guessed=guessed)
    carried, guessed = match(named_thing, named(scene.pack, scene.carried, "item"))  # "a drop of the brandy": mine
    return Act("use", carried, guessed=guessed) if carried is not None else None


def sold_here(target: str, scene: Scene, only: str | None = None) -> Act | None:
    """A thing asked for that a trader here (``only`` that one) sells and that does not lie here: bought ("I'll
    have a toddy")."""
    for npc in traders_here(scene.pack, scene.state):
        trade = scene.pack.npcs[npc].trade
        if trade is None or (only is not None and npc != only):
            continue
        wares = [(i, list(scene.pack.items[i].names)) for i in trade.sells if i in scene.pack.items]
        item, guessed = match(target, wares)
        if item is not None:
            return Act("buy", item, npc, guessed=guessed)
    return None
