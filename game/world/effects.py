"""The effects a narrator may propose for one turn.

The narrator proposes; :mod:`game.world.rules` decides. Field names follow the
JSON turn of DESIGN.md, plus the verbs the rules need to resolve play without
trusting the model with numbers (``talk_to``, ``use_item``, ``give_item``,
``give_gold``, ``trade``, ``combat_action``, ``rest``, ``choice``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


class QuestUpdate(BaseModel):
    """Mark one objective of a quest as done."""

    model_config = ConfigDict(extra="ignore")

    quest: str
    objective: str

    @classmethod
    def coerce(cls, value: Any) -> Any:
        # Models often write "quest:objective" or use other key names.
        if isinstance(value, str) and ":" in value:
            quest, _, objective = value.partition(":")
            return {"quest": quest.strip(), "objective": objective.strip()}
        if isinstance(value, dict):
            return {
                "quest": value.get("quest", value.get("quest_id")),
                "objective": value.get("objective", value.get("objective_id")),
            }
        return value


class GiveItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    item: str
    to: str = Field(validation_alias=AliasChoices("to", "npc"))


class GiveGold(BaseModel):
    """Hand some of the player's money to a person here."""

    model_config = ConfigDict(extra="ignore")

    amount: int
    to: str = Field(validation_alias=AliasChoices("to", "npc"))


class Trade(BaseModel):
    """Buy an item from, or sell one to, a person here who trades; the rules set the price (``rules.trade``)."""

    model_config = ConfigDict(extra="ignore")

    deal: Literal["buy", "sell"] = Field(validation_alias=AliasChoices("deal", "action", "kind"))
    item: str
    npc: str = Field(validation_alias=AliasChoices("npc", "with", "from", "to", "trader"))
    price: int | None = None
    """The price the narrator tells, if any: a price that is not the rules' own is refused."""


NOT_OFFERED = frozenset({"quest_updates", "ending"})
"""Effects the answer format does not offer a narrator (issue 42): the rules complete quest steps and reach endings
from the acts themselves, so a narrator's claim of either only repeats them. One that sends them is still checked
(``game/world/rules/quests.py``, ``check_claim``)."""


class Effects(BaseModel):
    """State changes proposed by the narrator; every field defaults to 'no change'."""

    model_config = ConfigDict(extra="ignore")

    talk_to: str | None = None
    move_to: str | None = None
    items_gained: list[str] = []
    items_lost: list[str] = []
    use_item: str | None = None
    give_item: GiveItem | None = None
    give_gold: GiveGold | None = None
    trade: Trade | None = None
    hp_delta: int = 0
    gold_delta: int = 0
    exp_delta: int = 0
    affinity: dict[str, int] = {}
    start_combat: str | None = None
    combat_action: Literal["attack", "flee", "defend"] | None = None
    rest: bool = False
    choice: str | None = None
    trigger_side_quest: str | None = None
    quest_updates: list[QuestUpdate] = []
    ending: str | None = None

    @field_validator("quest_updates", mode="before")
    @classmethod
    def _coerce_updates(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [QuestUpdate.coerce(v) for v in value]
        return value

    @field_validator("items_gained", "items_lost", mode="before")
    @classmethod
    def _coerce_items(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return value

    @field_validator("affinity", mode="before")
    @classmethod
    def _coerce_affinity(cls, value: Any) -> Any:
        return {} if value is None else value

    def is_empty(self) -> bool:
        return self == Effects()
