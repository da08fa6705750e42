"""Rules of money between people: giving gold, buying from and selling to a person who trades.

A person trades when the content gives them a ``trade`` (:class:`~game.world.content.Trade`): what they sell (at
its price there, else the item's ``value``) and what they buy (item ids or kinds, at a share of the item's value).
A narrator only proposes a deal (the ``trade`` and ``give_gold`` effects); :func:`deal` and :func:`give_gold`
check it against the world and apply it, or refuse it with the reason and change nothing. The price is the
rules' own: a narrator that tells another one (a pearl sold for 400 when the fixer pays 45) is refused.

:func:`refusal` is the one check, so the choices offered (:func:`offers`) are the deals the rules would accept,
and :func:`wares_text` tells what the people here sell and buy, and for how much.
"""

from __future__ import annotations

from typing import Any

from game.world.amounts import money
from game.world.conditions import npcs_at
from game.world.content import ContentPack
from game.world.effects import Trade
from game.world.rules.core import Outcome, bump_affinity, full_hands, gain_item, record_event
from game.world.rules.interaction import door_needing
from game.world.rules.quests import step_words, steps_needing
from game.world.state import GameState

GOLD_PER_AFFINITY = 5
"""Money given raises affinity by one for each this much (a gift of 25 gold: +5)."""
MAX_GOLD_AFFINITY = 10
"""At most this much affinity from one gift of money (the narrator's own step, ``interaction.MAX_AFFINITY_STEP``)."""


def traders_here(pack: ContentPack, state: GameState) -> list[str]:
    """The people here who trade, in the place's order."""
    return [n for n in npcs_at(pack, state.node) if (t := pack.npcs[n].trade) is not None and t.trades]


def asking_price(pack: ContentPack, npc_id: str, item_id: str) -> int | None:
    """What ``npc_id`` asks for ``item_id``, or None when they do not sell it."""
    npc, item = pack.npcs.get(npc_id), pack.items.get(item_id)
    if npc is None or npc.trade is None or item is None or item_id not in npc.trade.sells:
        return None
    return npc.trade.sells[item_id] or max(1, item.value)


def offered_price(pack: ContentPack, npc_id: str, item_id: str) -> int | None:
    """What ``npc_id`` pays for ``item_id`` (its value times the share of its id, else of its kind), or None when
    they do not buy it or it is worth nothing."""
    npc, item = pack.npcs.get(npc_id), pack.items.get(item_id)
    if npc is None or npc.trade is None or item is None or item.value <= 0:
        return None
    share = npc.trade.buys.get(item_id, npc.trade.buys.get(item.kind))
    return None if share is None else max(1, round(item.value * share))


def _trader(pack: ContentPack, state: GameState, npc_id: str) -> str | None:
    """Why ``npc_id`` cannot trade with the player now, or None."""
    npc = pack.npcs.get(npc_id)
    if npc is None:
        return f"no such character: {npc_id}"
    if npc_id not in npcs_at(pack, state.node):
        return f"{npc.name} is not here"
    if state.combat:
        return f"you are fighting {pack.enemies[state.combat.enemy_id].name}; there is no time to trade"
    if npc.trade is None or not npc.trade.trades:
        return f"{npc.name} does not trade" + ("" if traders_here(pack, state) else "; nobody here trades")
    return None


def refusal(pack: ContentPack, state: GameState, offer: Trade) -> str | None:
    """Why the rules refuse ``offer`` in ``state``, or None when they would accept it."""
    if why := _trader(pack, state, offer.npc):
        return why
    npc, item = pack.npcs[offer.npc], pack.items.get(offer.item)
    if item is None:
        return f"no such item: {offer.item}"
    if offer.deal == "buy":
        price = asking_price(pack, offer.npc, offer.item)
        if price is None:
            return f"{npc.name} does not sell the {item.name}"
        if why := full_hands(state):
            return why
        if not item.consumable and offer.item in state.inventory:
            return f"you already have the {item.name}"
        if offer.price is not None and offer.price != price:
            return f"{npc.name} asks {money(price, pack)} for the {item.name}, not {offer.price}"
        if state.gold < price:
            return f"the {item.name} costs {money(price, pack)}; you have only {state.gold}"
        return None
    if offer.item not in state.inventory:
        return f"you do not carry the {item.name}"
    price = offered_price(pack, offer.npc, offer.item)
    if price is None:
        return f"{npc.name} does not buy the {item.name}"
    if offer.price is not None and offer.price != price:
        return f"{npc.name} pays {money(price, pack)} for the {item.name}, not {offer.price}"
    if steps := steps_needing(pack, state, offer.item):
        return f"you will not sell the {item.name}: you still need it to {step_words(steps[0])}"
    if (door := door_needing(pack, offer.item)) is not None:
        return f"you will not sell the {item.name}: you need it to pass {door}"
    needs = [e.condition for e in pack.endings] + [c.condition for c in pack.story.choices]
    if any(offer.item in c.has_items for c in needs):
        return f"you will not sell the {item.name}: the story's end still asks for it"
    return None


def deal(pack: ContentPack, state: GameState, offer: Trade, out: Outcome) -> None:
    """Buy or sell as ``offer`` proposes, or refuse it with the reason and change nothing."""
    if why := refusal(pack, state, offer):
        out.reject("trade", offer.model_dump(), why)
        return
    npc, item = pack.npcs[offer.npc], pack.items[offer.item]
    if offer.deal == "buy":
        price = asking_price(pack, offer.npc, offer.item) or 0
        state.gold -= price
        gain_item(state, offer.item)
        record_event(state, out, f"bought:{offer.item}")
        told = f"You buy the {item.name} from {npc.name} for {money(price, pack)}. (-{money(price, pack)})"
        out.ok("trade", f"buy {offer.item}<-{offer.npc} {price}", told)
        return
    price = offered_price(pack, offer.npc, offer.item) or 0
    state.inventory.remove(offer.item)
    state.gold += price
    record_event(state, out, f"sold:{offer.item}:{offer.npc}")
    told = f"You sell the {item.name} to {npc.name} for {money(price, pack)}. (+{money(price, pack)})"
    out.ok("trade", f"sell {offer.item}->{offer.npc} {price}", told)


def give_gold(pack: ContentPack, state: GameState, amount: int, npc_id: str, out: Outcome) -> None:
    """Hand ``amount`` of the player's money to ``npc_id``, here; or refuse with the reason."""
    npc = pack.npcs.get(npc_id)
    value = {"amount": amount, "to": npc_id}
    if npc is None:
        out.reject("give_gold", value, f"no such character: {npc_id}")
    elif npc_id not in npcs_at(pack, state.node):
        out.reject("give_gold", value, f"{npc.name} is not here")
    elif amount <= 0:
        out.reject("give_gold", value, f"give at least {money(1, pack)}")
    elif state.gold < amount:
        out.reject("give_gold", value, f"you have only {money(state.gold, pack)}, not {amount}")
    else:
        state.gold -= amount
        delta = min(MAX_GOLD_AFFINITY, amount // GOLD_PER_AFFINITY)
        if delta:
            bump_affinity(state, npc_id, delta)
        record_event(state, out, f"gave:gold:{npc_id}")
        liking = f", affinity {delta:+d}" if delta else ""
        told = f"{npc.name} takes the {money(amount, pack)}. (-{money(amount, pack)}{liking})"
        out.ok("give_gold", f"{amount}->{npc_id}", told)


def offers(state: GameState, pack: ContentPack) -> list[str]:
    """Deals with the people here that the rules would accept, as choices ("sell Data Pearl to Goro Okabe"): what
    the player carries that they buy first (best price first), then what they sell that the player can afford."""
    if state.combat or state.ending:
        return []
    sales: list[tuple[int, str]] = []
    buys: list[tuple[int, str]] = []
    for npc_id in traders_here(pack, state):
        npc = pack.npcs[npc_id]
        for item_id in dict.fromkeys(state.inventory):
            price = offered_price(pack, npc_id, item_id)
            if price and refusal(pack, state, Trade(deal="sell", item=item_id, npc=npc_id)) is None:
                sales.append((-price, f"sell {pack.items[item_id].name} to {npc.name}"))
        for item_id in npc.trade.sells if npc.trade else {}:
            price = asking_price(pack, npc_id, item_id) or 0
            if refusal(pack, state, Trade(deal="buy", item=item_id, npc=npc_id)) is None:
                buys.append((price, f"buy {pack.items[item_id].name} from {npc.name}"))
    return [text for _, text in sorted(sales)] + [text for _, text in sorted(buys)]


def wares_text(state: GameState, pack: ContentPack, only: str | None = None) -> str:
    """What the people here (or ``only`` that one of them) sell and buy, with prices ("Goro Okabe sells: Stim Pack
    (12 yen). Buys: ..."), or ""."""
    lines = []
    for npc_id in traders_here(pack, state):
        if only is not None and npc_id != only:
            continue
        npc = pack.npcs[npc_id]
        assert npc.trade is not None
        sold = [f"{pack.items[i].name} ({money(asking_price(pack, npc_id, i) or 0, pack)})" for i in npc.trade.sells]
        bought = [
            f"your {pack.items[i].name} ({money(price, pack)})"
            for i in dict.fromkeys(state.inventory)
            if (price := offered_price(pack, npc_id, i))
        ]
        parts = [f"{npc.name} sells: {', '.join(sold)}." if sold else ""]
        kinds = [k for k in npc.trade.buys if k not in pack.items]
        if bought:
            parts.append(f"{npc.name} would buy {', '.join(bought)}.")
        elif npc.trade.buys:
            parts.append(f"{npc.name} buys {_things(pack, npc.trade.buys, kinds)}.")
        lines.append(" ".join(p for p in parts if p))
    return " ".join(lines)


def _things(pack: ContentPack, buys: dict[str, float], kinds: list[str]) -> str:
    """What a trader buys, in words: "treasure, weapons and the Data Pearl"."""
    words = [k if k in ("treasure", "armor") else f"{k}s" for k in kinds]
    words += [f"the {pack.items[i].name}" for i in buys if i in pack.items]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def trade_ids(state: GameState, pack: ContentPack) -> str:
    """What the people here trade, by ids, for a narrator's prompt ("Trade (...): okabe sells stim_pack 12, ...; buys
    from you data_pearl 45"), or "". Only the rules' prices are accepted."""
    lines = []
    for npc_id in traders_here(pack, state):
        trade = pack.npcs[npc_id].trade
        assert trade is not None
        sold = [f"{i} {asking_price(pack, npc_id, i)}" for i in trade.sells]
        bought = [f"{i} {p}" for i in dict.fromkeys(state.inventory) if (p := offered_price(pack, npc_id, i))]
        lines.append(
            f"{npc_id} sells {', '.join(sold) or 'nothing'}; buys from you {', '.join(bought) or 'nothing you carry'}"
        )
    if not lines:
        return ""
    return (
        f"Trade (trade {{deal: buy|sell, item, npc}}, in {pack.story.currency}; you have {state.gold}): "
        + "; ".join(lines)
    )


def trade_schema(pack: ContentPack, state: GameState) -> dict[str, Any] | None:
    """The ``trade`` effect as a JSON schema naming the deals possible here (a local model's grammar), or None when
    nobody here trades; the rules still check each deal."""
    traders = traders_here(pack, state)
    if not traders or state.combat:
        return None
    items = set(state.inventory)
    for npc_id in traders:
        items |= set(trade.sells) if (trade := pack.npcs[npc_id].trade) else set()
    return {
        "type": "object",
        "properties": {
            "deal": {"enum": ["buy", "sell"]},
            "item": {"enum": sorted(i for i in items if i in pack.items)},
            "npc": {"enum": traders},
        },
        "required": ["deal", "item", "npc"],
        "additionalProperties": False,
    }
