"""The player's game state: plain data, serialisable, copied for snapshots."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from game.world.content import ContentPack
from game.world.content_base import MAX_AMOUNT as MAX_AMOUNT
from game.world.content_base import MAX_STAT as MAX_STAT

QuestStatus = Literal["active", "completed"]

MINUTES_PER_TURN = 10

MAX_TURN = 10_000_000
"""Most turns a game counts."""
MAX_CARRIED = 1_000
"""Most things the player carries (a whole story gives a few dozen): a save holding more is refused, and in play
what would be more stays on the ground (issue 43: a save within every other bound held an 800,000-item
inventory)."""
MAX_LISTED = 20_000
"""Most flags, things taken, places with things left at them, talents, achievements, quests, people's affinities or
a quest's objectives done a save holds (a whole story gives a few hundred of each; each place holds at most
:data:`MAX_CARRIED` things left there): lists are bounded as numbers are (issue 43: a save within every bound could
hold lists that made each prompt megabytes). A save holding more is refused with a reason."""
Amount = Annotated[int, Field(ge=0, le=MAX_AMOUNT)]
StatValue = Annotated[int, Field(ge=0, le=MAX_STAT)]
Health = Annotated[int, Field(ge=-MAX_STAT, le=MAX_STAT)]
Turns = Annotated[int, Field(ge=0, le=MAX_TURN)]
Affinity = Annotated[int, Field(ge=-100, le=100)]
"""Every number of the saved state is bounded (issue 22): a save is checked at load, so a hostile one that holds
``exp: 9e18`` or ``gold: 2**64`` is refused with a message instead of loading a game that hangs or cannot be saved
again. Play keeps to the same bounds (:meth:`GameState.keep_in_bounds`, issue 33): whatever a save accepts, the
game played on from it saves again."""


_SAVED = ConfigDict(extra="forbid")
"""Saved data forbids unknown fields: a save holding anything else is not one of ours."""


class CombatState(BaseModel):
    """An ongoing fight with one enemy."""

    model_config = _SAVED

    enemy_id: str
    enemy_hp: Health
    rounds: Turns = 0


class QuestProgress(BaseModel):
    model_config = _SAVED

    status: QuestStatus = "active"
    objectives_done: list[str] = Field(default=[], max_length=MAX_LISTED)


class GameState(BaseModel):
    """Everything that changes while playing one story."""

    model_config = _SAVED

    story_id: str
    player_name: str = "Traveller"
    node: str
    hp: Health
    max_hp: Annotated[int, Field(ge=1, le=MAX_STAT)]
    strength: StatValue
    agility: StatValue
    intelligence: StatValue
    level: Annotated[int, Field(ge=1, le=MAX_AMOUNT)] = 1
    exp: Amount = 0
    gold: Amount = 0
    inventory: list[str] = Field(default=[], max_length=MAX_CARRIED)
    equipped_weapon: str | None = None
    equipped_armor: str | None = None
    quests: dict[str, QuestProgress] = Field(default={}, max_length=MAX_LISTED)
    affinity: dict[str, Affinity] = Field(default={}, max_length=MAX_LISTED)
    flags: list[str] = Field(default=[], max_length=MAX_LISTED)
    taken_items: list[str] = Field(default=[], max_length=MAX_LISTED, description="'node:item' pairs already picked up")
    dropped_items: dict[str, Annotated[list[str], Field(max_length=MAX_CARRIED)]] = Field(
        default={}, max_length=MAX_LISTED, description="node -> items dropped there"
    )
    talents: list[str] = Field(default=[], max_length=MAX_LISTED)
    achievements: list[str] = Field(default=[], max_length=MAX_LISTED)
    combat: CombatState | None = None
    ending: str | None = None
    turn: Turns = 0
    clock_minutes: int = Field(8 * 60, ge=0, le=MAX_AMOUNT, description="In-game minutes since day 1, 00:00")
    seed: int = Field(0, ge=-(2**63), lt=2**63)

    def has_flag(self, flag: str) -> bool:
        return flag in self.flags

    def add_flag(self, flag: str) -> bool:
        """Set a flag; returns whether it was new."""
        if flag in self.flags:
            return False
        self.flags.append(flag)
        return True

    def stat(self, name: str) -> int:
        """A stat by its name (``strength``, ``agility``, ``intelligence``: ``content.Stat``)."""
        return {"strength": self.strength, "agility": self.agility, "intelligence": self.intelligence}[name]

    def clock_text(self) -> str:
        day, minutes = divmod(self.clock_minutes, 24 * 60)
        return f"Day {day + 1}, {minutes // 60:02d}:{minutes % 60:02d}"

    def active_quests(self) -> list[str]:
        return [q for q, p in self.quests.items() if p.status == "active"]

    def snapshot(self) -> GameState:
        return self.model_copy(deep=True)

    def keep_in_bounds(self) -> None:
        """Bring every bounded number back within the bounds a save is checked against (the fields' own: one set
        for load and play), and HP within max HP (``saves.format.check_against``). The rules call it after each
        turn: experience and money stop at the most there is, a level-up past the most HP and stats there are
        still raises the level."""
        _clamp(self, _int_bounds(GameState))
        if self.combat is not None:
            _clamp(self.combat, _int_bounds(CombatState))
        self.hp = min(self.hp, self.max_hp)


@cache
def _int_bounds(model: type[BaseModel]) -> dict[str, tuple[int | None, int | None]]:
    """The integer fields of ``model`` with their bounds, the least and the most value allowed (read from the
    schema a save is checked with, once, on the first turn: not at import, which the title screen waits for)."""
    out: dict[str, tuple[int | None, int | None]] = {}
    for name, field in model.model_json_schema()["properties"].items():
        low, high = field.get("minimum"), field.get("maximum")
        if "exclusiveMaximum" in field:
            high = field["exclusiveMaximum"] - 1
        if field.get("type") == "integer" and (low is not None or high is not None):
            out[name] = (low, high)
    return out


def _clamp(model: BaseModel, bounds: dict[str, tuple[int | None, int | None]]) -> None:
    for name, (low, high) in bounds.items():
        value = model.__dict__[name]  # a saved model's fields are its attributes (``records.model_fields``)
        if low is not None and value < low:
            setattr(model, name, low)
        elif high is not None and value > high:
            setattr(model, name, high)


def new_game(pack: ContentPack, seed: int = 0, player_name: str | None = None) -> GameState:
    """A fresh state at the story's start, with the first main quest active."""
    defaults = pack.story.player
    state = GameState(
        story_id=pack.id,
        player_name=player_name or defaults.name,
        node=pack.story.start_node,
        hp=defaults.hp,
        max_hp=defaults.hp,
        strength=defaults.strength,
        agility=defaults.agility,
        intelligence=defaults.intelligence,
        gold=defaults.gold,
        inventory=list(defaults.inventory),
        affinity={npc.id: npc.initial_affinity for npc in pack.npcs.values()},
        seed=seed,
    )
    state.quests[pack.story.main_quest_order[0]] = QuestProgress()
    state.add_flag(f"visited:{state.node}")
    return state
