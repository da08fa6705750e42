"""The rules' record as memory: what the rules applied, turn by turn, as a log one can ask.

Every applied effect is known exactly (its turn, the place, the item, person or enemy), so "what did I give to
Garrick?", "who did I fight on the Fogbound Path?" and "what did I do first?" are answered from facts, in order,
whatever the narrator wrote. The log is read from the L2 episodes (``Episode.events`` holds ``"effect detail"``
for each applied effect), so nothing new is saved and an old save has its record too. A turn that only recalled
the past (``Episode.recalled``) did nothing and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from game.memory.records import Episode
from game.world.amounts import money
from game.world.content import ContentPack
from game.world.describe import the

KINDS = ("go", "talk", "take", "give", "drop", "use", "fight", "trade", "learn", "quest", "choice")
"""The kinds of event a question can ask about ("any" asks about all of them)."""


@dataclass(frozen=True)
class Event:
    """One thing the rules applied."""

    turn: int
    place: str
    """The place it happened (for a move: where the player arrived)."""
    kind: str
    what: str
    """What it was about, as the content names it: the item, enemy, quest, talent or place reached."""
    whom: str = ""
    """The person it involved (given to, spoken to), as the content names them."""
    origin: str = ""
    """For a move: the place the player left."""

    @property
    def id(self) -> str:
        return f"event:{self.turn}:{self.kind}:{self.what}"

    def told(self) -> str:
        """The event in the third person, as memory says it: "the player gave the Wolf Pelt to Old Garrick"."""
        what, whom = self.what, self.whom
        phrases = {
            "go": f"the player went from {self.origin} to {what}" if self.origin else f"the player went to {what}",
            "talk": f"the player talked to {whom}",
            "take": f"the player took the {what}",
            "give": f"the player gave the {what} to {whom}",
            "drop": f"the player left the {what}",
            "use": f"the player used the {what}",
            "fight": f"the player fought {the(what)}",
            "defeat": f"the player defeated {the(what)}",
            "trade": f"the player paid {what}" + (f" to {whom}" if whom else ""),
            "sell": f"the player sold the {what} to {whom}",
            "learn": f"the player learned {what}",
            "quest": f"the player took on the quest {what}",
            "quest_done": f"the player completed the quest {what}",
            "choice": f"the player chose: {what}",
        }
        return phrases.get(self.kind, f"{self.kind}: {what}")

    def text(self) -> str:
        """As the narrator's recalled block holds it: "Turn 5 at Old Hunter's Lodge: the player gave ..."."""
        where = f" at {self.place}" if self.place and self.kind != "go" else ""
        return f"Turn {self.turn}{where}: {self.told()}."

    def matches(self, kind: str) -> bool:
        """Whether the event is of the asked ``kind`` (a defeat is a fight, a finished quest a quest)."""
        if kind == "any":
            return True
        also = {("fight", "defeat"), ("quest", "quest_done"), ("trade", "sell")}  # a sale is a trade
        return self.kind == kind or (kind, self.kind) in also

    def names(self) -> str:
        """Every name the event carries, for matching a question's words."""
        return " ".join(x for x in (self.what, self.whom, self.place, self.origin) if x)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


def _name(table: Mapping[str, _Named], key: str) -> str:
    """The content's name for ``key`` (the id itself for what the story no longer has)."""
    found = table.get(key)
    return found.name if found is not None else key


def _event(pack: ContentPack, turn: int, place: str, origin: str, effect: str, detail: str) -> Event | None:
    if effect == "move_to":
        return Event(turn, place, "go", _name(pack.nodes, detail), origin=origin if origin != place else "")
    if effect == "talk_to":
        return Event(turn, place, "talk", "", _name(pack.npcs, detail))
    if effect in ("items_gained", "items_lost", "use_item"):
        kind = {"items_gained": "take", "items_lost": "drop", "use_item": "use"}[effect]
        return Event(turn, place, kind, _name(pack.items, detail))
    if effect == "give_item":
        item, _, npc = detail.partition("->")
        return Event(turn, place, "give", _name(pack.items, item), _name(pack.npcs, npc))
    if effect in ("start_combat", "defeated"):
        return Event(turn, place, "fight" if effect == "start_combat" else "defeat", _name(pack.enemies, detail))
    if effect == "talent":
        talent = next((t for t in pack.talents if t.id == detail), None)
        return Event(turn, place, "learn", talent.name if talent else detail)
    if effect in ("quest_started", "quest_completed"):
        quest = pack.quest(detail)
        title = quest.title if quest else detail
        return Event(turn, place, "quest" if effect == "quest_started" else "quest_done", title)
    if effect == "choice" and (choice := pack.choice(detail)):
        return Event(turn, place, "choice", choice.name)
    if effect == "give_gold":  # "5->old_hunter"
        amount, _, npc = detail.partition("->")
        return Event(turn, place, "trade", _money(amount, pack), _name(pack.npcs, npc))
    if effect == "trade":  # "buy stim_pack<-okabe 12", "sell data_pearl->okabe 45" (``rules.trade``)
        deal, _, rest = detail.partition(" ")
        pair, _, price = rest.rpartition(" ")
        item, _, npc = pair.partition("<-" if deal == "buy" else "->")
        money, thing, who = _money(price, pack), _name(pack.items, item), _name(pack.npcs, npc)
        if deal == "buy":
            return Event(turn, place, "trade", f"{money} for the {thing}", who)
        return Event(turn, place, "sell", f"{thing} for {money}", who)
    if effect == "gold_delta" and detail.startswith("-"):
        return Event(turn, place, "trade", _money(detail[1:], pack))
    return None


def record_of(pack: ContentPack | None, episodes: Iterable[Episode]) -> list[Event]:
    """The events of ``episodes`` (played turns, oldest first), in the order they happened."""
    record = EventRecord()
    return record.sync(pack, list(episodes))


class EventRecord:
    """The events of a log, kept between questions and read on only from where it was last read.

    A question about the past reads the whole record (10,000 turns in ``bench/turn_overhead.py``'s game); the log is
    append-only between loads and undos, so each question reads only the turns played since the last one. A log
    that was replaced (a load), cut (an undo, a failed turn) or changed under the last read is read again whole.
    """

    def __init__(self) -> None:
        self._log: list[Episode] | None = None
        self._read = 0
        self._last: Episode | None = None
        self._origin = ""
        self.events: list[Event] = []

    def sync(self, pack: ContentPack | None, log: list[Episode]) -> list[Event]:
        """The events of ``log``, oldest first (call under the lock that guards the log)."""
        if pack is None:
            return []
        stale = log is not self._log or len(log) < self._read or (self._read and log[self._read - 1] is not self._last)
        if stale:
            start = pack.nodes.get(pack.story.start_node)
            self._log, self._read, self._origin, self.events = log, 0, start.name if start else "", []
        for episode in log[self._read :]:
            self._add(pack, episode)
        self._read = len(log)
        self._last = log[-1] if log else None
        return self.events

    def _add(self, pack: ContentPack, episode: Episode) -> None:
        if not episode.action or episode.recalled:
            self._origin = episode.node or self._origin
            return
        for raw in episode.events:
            effect, _, detail = raw.partition(" ")
            event = _event(pack, episode.turn, episode.node, self._origin, effect, detail)
            if event is not None:
                self.events.append(event)
        self._origin = episode.node


def _money(amount: str, pack: ContentPack) -> str:
    """An amount the rules recorded as text, in the story's money ("1 shilling"); anything else as it is."""
    return money(int(amount), pack) if amount.isascii() and amount.isdigit() and len(amount) < 12 else amount
