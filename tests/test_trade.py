"""Trade (issue 35, item 3): gold given, buying and selling with people who trade, through the rules.

The narrator (scripted here, or an LLM's JSON answer) only proposes a deal; ``game.world.rules.trade`` sets the
price, moves the item and the money, or refuses with the reason and changes nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from game.engine.pipeline import TurnPipeline
from game.language.parser import parse
from game.llm.scripted import ScriptedNarrator
from game.memory.events import record_of
from game.memory.records import Episode
from game.world.choices import suggested
from game.world.content import ContentError, ContentPack
from game.world.effects import Effects, Trade
from game.world.loader import content_root, load_pack
from game.world.rules import Rules
from game.world.rules.trade import offers
from game.world.state import GameState, new_game
from tests.conftest import DATA, SHIPPED, keyword_memory
from tests.fakes import ScriptedAnswers


def at(pack: ContentPack, node: str, *, gold: int | None = None, carrying: tuple[str, ...] = ()) -> GameState:
    state = new_game(pack, seed=3)
    state.node = node
    state.add_flag(f"visited:{node}")
    if gold is not None:
        state.gold = gold
    state.inventory += list(carrying)
    return state


def play(pack: ContentPack, state: GameState, action: str, narrator=None):
    engine = TurnPipeline(pack, state, narrator or ScriptedNarrator(pack), keyword_memory(pack))
    return engine, engine.play(action)


# ------------------------------------------------------------------ the play-tester's two examples
def test_give_5_gold_to_garrick_moves_the_gold(fantasy):
    state = at(fantasy, "hunter_cabin")
    assert state.gold == 25
    engine, result = play(fantasy, state, "give 5 gold to garrick")
    assert engine.state.gold == 20
    assert "Old Garrick takes the 5 gold" in result.narration
    assert "no 5 gold" not in result.narration
    assert engine.state.affinity["old_hunter"] > state.affinity.get("old_hunter", 0)


def test_asked_what_a_trader_sells_the_answer_is_the_rules_prices(fantasy):
    """Was: "what does garrick sell?" recalled who Garrick is ("Retired royal huntsman...") and not his wares."""
    engine, result = play(fantasy, at(fantasy, "hunter_cabin"), "what does garrick sell?")
    assert result.narration.startswith("Old Garrick sells: Healing Herb (6 gold)")
    for question in ("what do you sell?", "how much does the herb cost?", "what does garrick buy?"):
        assert "Healing Herb (6 gold)" in engine.play(question).narration, question
    engine.play("go west")
    away = engine.play("what does garrick sell?").narration
    assert away.startswith("At Old Hunter's Lodge: Old Garrick sells: Healing Herb (6 gold)")
    silas = fantasy.npcs["silas"].location
    engine.state.add_flag(f"visited:{silas}")
    assert engine.play("what does silas sell?").narration == "Silas does not trade."
    _, unmet = play(fantasy, new_game(fantasy, seed=3), "what does garrick sell?")  # never been to his lodge
    assert "Healing Herb" not in unmet.narration


def test_give_more_gold_than_you_have_or_to_someone_absent_is_refused(fantasy):
    engine, result = play(fantasy, at(fantasy, "hunter_cabin"), "give 500 gold to garrick")
    assert engine.state.gold == 25
    assert "You have only 25 gold, not 500." in result.narration
    engine, result = play(fantasy, at(fantasy, fantasy.story.start_node), "give 5 gold to garrick")
    assert engine.state.gold == 25
    assert "Old Garrick is not here." in result.narration


def test_sell_the_data_pearl_to_goro(scifi):
    state = at(scifi, "black_market", carrying=("data_pearl",))
    engine, result = play(scifi, state, "sell the data pearl to goro")
    assert "data_pearl" not in engine.state.inventory
    assert engine.state.gold == 15 + 45  # fixers pay well: three quarters of its 60
    assert "You sell the Data Pearl to Goro Okabe for 45 yen" in result.narration
    assert "nothing much comes of it" not in result.narration


# ------------------------------------------------------------------ refusals change nothing
def test_buying_with_too_little_money_is_refused_and_changes_nothing(scifi):
    state = at(scifi, "black_market")
    before = state.model_dump()
    engine, result = play(scifi, state, "buy the nano salve from goro")
    assert "The Nano-Salve costs 30 yen; you have only 15." in result.narration
    assert engine.state.gold == 15 and "nano_salve" not in engine.state.inventory
    assert engine.state.inventory == before["inventory"]


def test_buying_what_they_sell_with_enough_money(scifi):
    engine, _result = play(scifi, at(scifi, "black_market", gold=20), "buy a stim pack")
    assert engine.state.gold == 8
    assert engine.state.inventory.count("stim_pack") == 2


def test_selling_what_the_trader_does_not_buy_is_refused(scifi):
    engine, result = play(scifi, at(scifi, "black_market"), "sell the stim pack to goro")
    assert "Goro Okabe does not buy the Stim Pack." in result.narration
    assert engine.state.inventory == ["stim_pack"] and engine.state.gold == 15


def test_nobody_trades_where_no_trader_is(fantasy):
    rules = Rules(fantasy)
    state = at(fantasy, "sanctuary_gate", carrying=("wolf_pelt",))
    out = rules.apply(state, Effects(trade=Trade(deal="sell", item="wolf_pelt", npc="alicia")))
    assert [r.reason for r in out.rejected] == ["Princess Alicia does not trade; nobody here trades"]
    assert "wolf_pelt" in state.inventory and state.gold == 25


def test_a_thing_a_quest_still_needs_is_not_sold(scifi):
    # the drone core is Okabe's to be given (a quest step): a trader who bought "quest" things still would not get it
    rules = Rules(scifi)
    state = at(scifi, "black_market", carrying=("data_pearl",))
    pack = scifi.model_copy(deep=True)
    trade = pack.npcs["okabe"].trade
    assert trade is not None
    pack.npcs["okabe"] = pack.npcs["okabe"].model_copy(
        update={"trade": trade.model_copy(update={"buys": {**trade.buys, "quest": 0.5}})}
    )
    state.inventory.append("drone_core")
    out = Rules(pack).apply(state, Effects(trade=Trade(deal="sell", item="drone_core", npc="okabe")))
    assert out.rejected and "you still need it to" in out.rejected[0].reason
    assert "drone_core" in state.inventory
    assert rules.apply(state, Effects(trade=Trade(deal="sell", item="data_pearl", npc="okabe"))).applied


# ------------------------------------------------------------------ choices
def test_a_trade_choice_is_offered_only_when_the_rules_would_accept_it(scifi):
    with_pearl = at(scifi, "black_market", carrying=("data_pearl",))
    assert offers(with_pearl, scifi)[0] == "sell Data Pearl to Goro Okabe"
    assert "sell Data Pearl to Goro Okabe" in suggested(with_pearl, scifi)
    poor = at(scifi, "black_market", gold=5)
    assert offers(poor, scifi) == []  # a stim pack costs 12, and Goro buys nothing the player carries
    assert not any(c.startswith(("buy", "sell")) for c in suggested(poor, scifi))
    elsewhere = at(scifi, "neon_crossing", carrying=("data_pearl",))
    assert offers(elsewhere, scifi) == []
    for choice in offers(at(scifi, "black_market", gold=40, carrying=("data_pearl",)), scifi):
        _engine, result = play(scifi, at(scifi, "black_market", gold=40, carrying=("data_pearl",)), choice)
        assert [a.effect for a in result.applied] == ["trade"], choice


def test_the_place_tells_what_its_trader_sells_and_for_how_much(scifi):
    _engine, result = play(scifi, at(scifi, "black_market"), "look")
    assert "Goro Okabe sells: Stim Pack (12 yen), Nano-Salve (30 yen)." in result.narration


# ------------------------------------------------------------------ an LLM's proposals, checked by the same rules
def _answer(effects: dict) -> str:
    return json.dumps({"narration": "Goro weighs the pearl and nods.", "choices": [], "effects": effects})


def test_an_llm_trade_at_its_own_price_is_refused(scifi):
    """The model's price is refused; the sale the player asked for is the rules' to make, at the rules' price
    (issue 41: what was asked is read first and carried out whatever the model proposes)."""
    state = at(scifi, "black_market", carrying=("data_pearl",))
    overpriced = _answer({"trade": {"deal": "sell", "item": "data_pearl", "npc": "okabe", "price": 400}})
    fallback = _answer({})
    engine, result = play(scifi, state, "sell the data pearl to goro", ScriptedAnswers([overpriced, fallback]))
    assert [r.reason for r in result.rejected if r.effect == "trade"] == [
        "Goro Okabe pays 45 yen for the Data Pearl, not 400"
    ]
    assert engine.state.gold == 15 + 45 and "data_pearl" not in engine.state.inventory
    assert "400" not in result.narration


@pytest.mark.parametrize(
    ("effects", "reason"),
    [
        ({"trade": {"deal": "buy", "item": "monowire", "npc": "okabe"}}, "Goro Okabe does not sell the Monowire"),
        ({"trade": {"deal": "buy", "item": "nano_salve", "npc": "okabe", "price": 1}}, "asks 30 yen"),
        ({"trade": {"deal": "sell", "item": "data_pearl", "npc": "nyx"}}, "Nyx is not here"),
        ({"give_gold": {"amount": 99, "to": "okabe"}}, "you have only 15 yen, not 99"),
    ],
)
def test_impossible_llm_deals_are_refused_and_change_nothing(scifi, effects, reason):
    state = at(scifi, "black_market", carrying=("data_pearl",))
    before = state.model_dump()
    out = Rules(scifi).apply(state, Effects.model_validate(effects))
    assert len(out.rejected) == 1 and reason in out.rejected[0].reason
    assert state.model_dump() == before


def test_the_json_schema_offers_trade_and_gold_given():
    from game.llm.schemas import TURN_SCHEMA

    effects = TURN_SCHEMA["properties"]["effects"]["properties"]
    assert {"trade", "give_gold"} <= set(effects)


# ------------------------------------------------------------------ content
def test_every_story_has_a_trader():
    for story in SHIPPED:
        pack = load_pack(content_root() / story)
        assert any(n.trade and n.trade.sells and n.trade.buys for n in pack.npcs.values()), story


def test_the_loader_refuses_a_trade_naming_an_unknown_item(tmp_path: Path):
    pack = tmp_path / "mini"
    shutil.copytree(DATA / "mini", pack)
    npcs = json.loads((pack / "npcs.json").read_text(encoding="utf-8"))
    npcs[0]["trade"] = {"sells": {"unicorn_horn": 5}, "buys": {"dragon_egg": 0.5, "treasure": 0.5}}
    (pack / "npcs.json").write_text(json.dumps(npcs), encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        load_pack(pack)
    who = npcs[0]["id"]
    assert f"npcs.json: [{who}].trade.sells: unknown item 'unicorn_horn'" in str(caught.value)
    assert f"npcs.json: [{who}].trade.buys: unknown item or item kind 'dragon_egg'" in str(caught.value)
    assert "treasure" not in str(caught.value)  # a kind of item is a fine thing to buy


def test_the_loader_refuses_prices_that_make_money_from_nothing(tmp_path: Path):
    pack = tmp_path / "mini"
    shutil.copytree(DATA / "mini", pack)
    npcs = json.loads((pack / "npcs.json").read_text(encoding="utf-8"))
    npcs[0]["trade"] = {"sells": {"fang": 1}, "buys": {"fang": 1.0}}  # worth 3: bought for 1, sold back for 3
    (pack / "npcs.json").write_text(json.dumps(npcs), encoding="utf-8")
    with pytest.raises(ContentError, match=r"trade\.sells\.fang: sold for 1, less than sage pays for it \(3\)"):
        load_pack(pack)
    npcs[0]["trade"] = {"sells": {"fang": 0}, "buys": {"fang": 1.0}}  # at its value: no gain
    (pack / "npcs.json").write_text(json.dumps(npcs), encoding="utf-8")
    assert load_pack(pack).npcs["sage"].trade is not None


@pytest.mark.parametrize(
    ("line", "verb", "target", "obj"),
    [
        ("give 5 gold to garrick", "give", "5 gold", "garrick"),
        ("pay garrick 5 gold", "give", "5 gold", "garrick"),
        ("buy the healing herb from garrick", "buy", "healing herb", "garrick"),
        ("pay for the ramen", "buy", "ramen", ""),
        ("sell the data pearl to goro", "sell", "data pearl", "goro"),
        ("give me 9999 gold", "other", "", ""),  # asking for money is not giving it
    ],
)
def test_the_parser_reads_trade(line, verb, target, obj):
    command = parse(line)
    assert (command.verb, command.target, command.obj) == (verb, target, obj)


def test_a_deal_the_player_does_not_ask_for_is_not_struck(scifi):
    state = at(scifi, "black_market", carrying=("data_pearl",))
    deal = _answer({"trade": {"deal": "sell", "item": "data_pearl", "npc": "okabe"}})
    engine, result = play(scifi, state, "I will never sell the data pearl", ScriptedAnswers([deal, _answer({})]))
    assert "data_pearl" in engine.state.inventory and engine.state.gold == 15
    assert [r.effect for r in result.rejected] == ["trade"]


def test_memory_remembers_the_deals(fantasy, scifi):
    engine, sold = play(scifi, at(scifi, "black_market", gold=20, carrying=("data_pearl",)), "sell the pearl to goro")
    bought = engine.play("buy a stim pack")
    _, gift = play(fantasy, at(fantasy, "hunter_cabin"), "give 5 gold to garrick")

    def told(pack: ContentPack, result) -> list[str]:
        events = [f"{a.effect} {a.detail}" for a in result.applied]
        episode = Episode(turn=1, action=result.action, narration=result.narration, node="here", events=events)
        return [e.told() for e in record_of(pack, [episode])]

    assert told(scifi, sold) == ["the player sold the Data Pearl for 45 yen to Goro Okabe"]
    assert told(scifi, bought) == ["the player paid 12 yen for the Stim Pack to Goro Okabe"]
    assert told(fantasy, gift) == ["the player paid 5 gold to Old Garrick"]
    assert record_of(scifi, [Episode(turn=1, action="x", narration="x", node="here", events=[])]) == []
