"""The rules engine: the only code that changes a :class:`GameState`.

:meth:`Rules.resolve_turn` is the one door a played turn goes through: it
validates each proposed effect against the world, applies the allowed ones in
a fixed order (talk, move, items, combat, ...), runs the rules' own
consequences (objectives whose events happened, quest rewards, level-ups,
talents, achievements, affinity thresholds, endings), checks the narrator's
claims (``quest_updates``, ``ending``) against what the rules decided, and
advances the turn and the clock. An effect the rules do not allow is rejected
with a reason and never applied.

Randomness (combat, loot) comes from a ``random.Random`` seeded with the game's
seed and the turn number, so replaying the same actions gives the same game.

The rules are split along their seams: :mod:`.interaction` (talking, moving,
items, gifts, deltas, resting), :mod:`.trade` (gold given, buying, selling), :mod:`.combat`, :mod:`.quests` (choices,
triggers, objectives: one function decides every objective) and
:mod:`.growth` (levels, talents, achievements, thresholds, endings).
"""

from __future__ import annotations

import random

from game.language.lexicon import name_given
from game.language.reading import Reading
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.intent import NOT_ASKED, refused
from game.world.rules import combat, growth, interaction, quests, trade
from game.world.rules.core import AppliedEffect, Outcome, RejectedEffect, costs_nothing, record_event, said_anyway
from game.world.state import MINUTES_PER_TURN, GameState

__all__ = ["NOT_ASKED", "AppliedEffect", "Outcome", "Reading", "RejectedEffect", "Rules"]


_SINGLE = (
    "talk_to",
    "move_to",
    "use_item",
    "give_item",
    "give_gold",
    "trade",
    "start_combat",
    "combat_action",
    "choice",
)


def with_granted(effects: Effects, granted: Effects) -> Effects:
    """The narrator's ``effects`` with the acts the engine read from the action (``granted``) in them: a granted
    act replaces the narrator's of the same kind, and granted things come first in the lists."""
    mine, theirs = granted.model_dump(), effects.model_dump()
    update: dict[str, object] = {k: mine[k] for k in _SINGLE if mine[k] is not None and not _same(mine[k], theirs[k])}
    if granted.rest:
        update["rest"] = True
    for key in ("items_gained", "items_lost"):
        if mine[key]:
            update[key] = list(dict.fromkeys([*mine[key], *theirs[key]]))
    return Effects.model_validate({**theirs, **update})


def _same(granted: object, proposed: object) -> bool:
    """Whether the narrator proposed the granted act itself (the same deal, gift or move), perhaps with more in it
    (a price it tells, which the rules then check): then the narrator's stands."""
    if isinstance(granted, dict) and isinstance(proposed, dict):
        return all(proposed.get(k) == v for k, v in granted.items() if v is not None)
    return granted == proposed


def is_granted(effect: str, value: object, granted: Effects | None) -> bool:
    """Whether ``effect`` with ``value`` is one of the ``granted`` acts (asked for by the action's reading)."""
    if granted is None:
        return False
    mine = granted.model_dump().get(effect)
    if effect in ("items_gained", "items_lost"):
        return isinstance(mine, list) and value in mine
    return bool(mine) if effect == "rest" else mine is not None and _same(mine, value)


class Rules:
    """Validates and applies effects for one content pack."""

    def __init__(self, pack: ContentPack, *, ambushes: bool = True) -> None:
        self.pack = pack
        self.ambushes = ambushes
        """Whether an aggressive enemy left alone attacks (:func:`combat.stalk`); the content checker plays without:
        a player can always step out of its place and back, which starts its count again."""

    def resolve_turn(
        self,
        state: GameState,
        effects: Effects,
        reading: Reading | None = None,
        *,
        refused_before: bool = False,
        granted: Effects | None = None,
    ) -> Outcome:
        """Play one turn's proposed ``effects`` on ``state`` in place, then advance the turn and the clock.

        With ``reading`` (the player's action, read), an effect that acts for the player and that the action does not
        ask for is refused first (:mod:`game.world.intent`); without it (the content checker's simulated play),
        every possible effect is applied. ``granted`` are the acts the engine read the action to ask
        (``game.world.asked``): they are carried out whatever the narrator proposed, and never refused as unasked.
        A turn that changed nothing because it was refused (or a word in a fight) costs no time
        (:func:`costs_nothing`; ``refused_before``: the narrator's first answer was refused): the outcome is
        ``free`` and the turn, the clock and the enemies do not move.
        """
        out = Outcome()
        before = state.snapshot()
        if granted is not None:
            effects = with_granted(effects, granted)
        if reading is not None:
            effects = self._asked(state, effects, reading, out, granted)
        out = self.apply(state, effects, out, anyway=reading is not None and said_anyway(reading.text))
        name = name_given(reading.text) if reading is not None and not state.ending else None
        if name and name != state.player_name:  # "my name is Kael": the sheet says so from now on
            state.player_name = name
            out.ok("player_name", name)
        if costs_nothing(before, state, out, reading, self.pack, refused_before=refused_before):
            out.free = True
            return out
        if self.ambushes:
            combat.stalk(self.pack, state, out)  # time passes: an aggressive enemy left alone comes closer
        state.turn += 1
        state.clock_minutes += MINUTES_PER_TURN
        state.keep_in_bounds()  # what a save accepts, a turn keeps to (issue 33)
        return out

    def _asked(
        self, state: GameState, effects: Effects, reading: Reading, out: Outcome, granted: Effects | None = None
    ) -> Effects:
        """``effects`` without the acts for the player ``reading`` does not ask for, each refused in ``out``
        (``granted`` acts are asked for)."""
        unasked = [pair for pair in refused(reading, effects, state, self.pack) if not is_granted(*pair, granted)]
        if not unasked:
            return effects
        for effect, value in unasked:
            out.reject(effect, value, NOT_ASKED)
        dropped = {effect for effect, _ in unasked}
        update: dict[str, object] = {e: None for e in dropped if e not in ("rest", "items_gained", "items_lost")}
        if "rest" in dropped:
            update["rest"] = False
        if "gold_delta" in dropped:
            update["gold_delta"] = 0
        update["items_gained"] = [i for i in effects.items_gained if ("items_gained", i) not in unasked]
        update["items_lost"] = [i for i in effects.items_lost if ("items_lost", i) not in unasked]
        return effects.model_copy(update=update)

    def apply(self, state: GameState, effects: Effects, out: Outcome | None = None, *, anyway: bool = False) -> Outcome:
        """Apply ``effects`` to ``state`` in place (the turn does not advance); return what happened (``anyway``: the
        player said to go ahead, e.g. wielding a weaker weapon, :func:`interaction.use`)."""
        pack = self.pack
        out = out if out is not None else Outcome()
        if state.ending:
            if not effects.is_empty():
                out.reject("*", None, f"the story has ended ({state.ending})")
            return out
        affinity_before = dict(state.affinity)
        rng = random.Random(f"{state.seed}:{state.turn}")
        if effects.talk_to:
            interaction.talk(pack, state, effects.talk_to, out)
        if effects.move_to:
            interaction.move(pack, state, effects.move_to, out)
        interaction.take_all(pack, state, list(effects.items_gained), out)
        for item in effects.items_lost:
            interaction.drop(pack, state, item, out)
        if effects.use_item:
            interaction.use(pack, state, effects.use_item, out, anyway=anyway)
        if effects.give_item:
            interaction.give(pack, state, effects.give_item.item, effects.give_item.to, out)
        if effects.give_gold:
            trade.give_gold(pack, state, effects.give_gold.amount, effects.give_gold.to, out)
        if effects.trade:
            trade.deal(pack, state, effects.trade, out)
        interaction.deltas(pack, state, effects, out)
        for npc, delta in effects.affinity.items():
            interaction.affinity(pack, state, npc, delta, out)
        if effects.start_combat:
            combat.start_combat(pack, state, effects.start_combat, out)
        if effects.combat_action:
            combat.combat_action(pack, state, effects.combat_action, rng, out)
        if any(flag.startswith("defeated:") for flag in out.events):
            record_event(state, out, "won_fight")  # "your first fight", whichever enemy it was
        if effects.rest:
            interaction.rest(pack, state, out)
        if effects.choice:
            quests.choose(pack, state, effects.choice, out)
        if effects.trigger_side_quest:
            quests.trigger_side_quest(pack, state, effects.trigger_side_quest, out)
        self.consequences(state, out, affinity_before)
        for update in effects.quest_updates:  # claims, checked against what the rules decided
            quests.check_claim(pack, state, update.quest, update.objective, out)
        if effects.ending:
            growth.claim_ending(pack, state, effects.ending, out)
        state.keep_in_bounds()
        return out

    def consequences(self, state: GameState, out: Outcome, affinity_before: dict[str, int]) -> None:
        """Run the rules' own consequences until nothing more changes."""
        pack = self.pack
        for _ in range(20):  # bounded: each pass can only add progress
            changed = quests.progress_quests(pack, state, out)
            changed |= growth.level_up(state, out)
            changed |= growth.talents(pack, state, out)
            if not changed:
                break
        growth.achievements(pack, state, out)
        growth.thresholds(pack, state, affinity_before, out)
        growth.check_endings(pack, state, out)
        quests.undo_failed_choices(pack, state, out)
