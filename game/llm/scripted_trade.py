"""The scripted narrator's trade: "buy the herb", "sell the pearl to Goro", "give 5 gold to Garrick".

Like the rest of the scripted narrator it only proposes (the ``trade`` and ``give_gold`` effects) and says what
the player tries; the rules (:mod:`game.world.rules.trade`) set the price, move the item and the money and tell
the result, or refuse with the reason (which the narrator, asked again, tells). ``scripted.py`` hooks in
:func:`trade_verbs` (the ``buy`` and ``sell`` verbs), :func:`gold_given` (a ``give`` of money) and
:func:`with_wares` (what the people of a place sell, told with the place).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from game.language.parser import Command
from game.text import best_match
from game.world.amounts import money
from game.world.conditions import npcs_at
from game.world.content import ContentPack
from game.world.rules.trade import asking_price, offered_price, traders_here, wares_text
from game.world.state import GameState

_MONEY_WORDS = ("gold", "coin", "coins", "money", "credit", "credits", "cash")


def _people(pack: ContentPack, ids: list[str] | dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(i, pack.npcs[i].names) for i in ids]


def _things(pack: ContentPack, ids: list[str] | dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(i, pack.items[i].names) for i in dict.fromkeys(ids)]


def _named(pack: ContentPack, who: str, state: GameState) -> str | None:
    """The person ``who`` names: someone here first, else anyone of the story (the rules say they are not here)."""
    here = npcs_at(pack, state.node)
    return best_match(who, _people(pack, here)) or best_match(who, _people(pack, pack.npcs))


def _trader_for(pack: ContentPack, state: GameState, fits: Callable[[str], bool]) -> str | None:
    """The trader here ``fits`` (one who sells or buys the thing), else the only trader here."""
    traders = traders_here(pack, state)
    return next((t for t in traders if fits(t)), traders[0] if len(traders) == 1 else None)


def _nobody(pack: ContentPack, state: GameState) -> str:
    return "Nobody here trades." if npcs_at(pack, state.node) else "There is nobody here to trade with."


def buy(pack: ContentPack, command: Command, state: GameState, effects: dict[str, Any]) -> str:
    """ "buy the herb (from Garrick)": the deal proposed, or why there is none to propose."""
    wanted = best_match(command.target, _things(pack, pack.items)) if command.target else None
    if command.obj:
        npc = _named(pack, command.obj, state)
    else:
        npc = _trader_for(pack, state, lambda t: wanted is not None and asking_price(pack, t, wanted) is not None)
    if npc is None:
        return _nobody(pack, state) if not command.obj else f"There is no '{command.obj}' to buy from."
    trade = pack.npcs[npc].trade
    sold = list(trade.sells) if trade else []
    item = (best_match(command.target, _things(pack, sold)) if sold and command.target else None) or wanted
    if item is None:
        return f"{pack.npcs[npc].name} has no {command.target or 'such thing'} to sell."
    effects["trade"] = {"deal": "buy", "item": item, "npc": npc}
    return f"You ask {pack.npcs[npc].name} for the {pack.items[item].name}."


def sell(pack: ContentPack, command: Command, state: GameState, effects: dict[str, Any]) -> str:
    """ "sell the pearl (to Goro)": the deal proposed, or why there is none to propose."""
    item = best_match(command.target, _things(pack, state.inventory)) if command.target else None
    if item is None:
        return f"You have no {command.target or 'such thing'} to sell."
    if command.obj:
        npc = _named(pack, command.obj, state)
    else:
        npc = _trader_for(pack, state, lambda t: offered_price(pack, t, item) is not None)
    if npc is None:
        return _nobody(pack, state) if not command.obj else f"There is no '{command.obj}' to sell to."
    effects["trade"] = {"deal": "sell", "item": item, "npc": npc}
    return f"You offer the {pack.items[item].name} to {pack.npcs[npc].name}."


def gold_given(pack: ContentPack, command: Command, state: GameState, effects: dict[str, Any]) -> str | None:
    """ "give 5 gold to Garrick": the money proposed, or None when the gift is no sum of money."""
    words = (*_MONEY_WORDS, pack.story.currency.lower())
    match = re.match(r"^(\d+)\s+(\S+)$", command.target.strip().lower())
    if match is None or match.group(2) not in words:
        return None
    amount = int(match.group(1))
    here = npcs_at(pack, state.node)
    npc = _named(pack, command.obj, state) if command.obj else (here[0] if len(here) == 1 else None)
    if npc is None:
        return f"There is no '{command.obj}' to give {money(amount, pack)} to."
    effects["give_gold"] = {"amount": amount, "to": npc}
    return f"You count out {money(amount, pack)} for {pack.npcs[npc].name}."


def trade_verbs(pack: ContentPack) -> dict[str, Callable[..., str]]:
    """The ``buy`` and ``sell`` verbs' handlers, in the scripted narrator's handler signature."""

    def do_buy(command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        return buy(pack, command, state, effects)

    def do_sell(command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        return sell(pack, command, state, effects)

    return {"buy": do_buy, "sell": do_sell}


def with_wares(text: str, state: GameState, pack: ContentPack, node: str | None = None) -> str:
    """``text`` (a place told) followed by what the people there sell and buy, and for how much."""
    there = state if node is None or node == state.node else state.model_copy(update={"node": node})
    wares = wares_text(there, pack)
    return f"{text} {wares}" if wares else text
