"""The content checker's findings and the report that holds them (:func:`game.checker.analysis.check_pack`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class EndingResult:
    id: str
    title: str
    reachable: bool
    actions: list[str] = field(default_factory=list)
    """The shortest action list that reaches it (when reachable)."""


@dataclass
class QuestLock:
    quest: str
    title: str
    actions: list[str]
    """The shortest action list after which the quest can never be completed."""
    why: str = ""


@dataclass
class WastedItem:
    item: str
    name: str
    node: str
    actions: list[str]
    """The shortest action list ending with the use that spends the item for nothing."""


@dataclass
class Mention:
    source: str
    """Where the text is ("story.json: intro", "npcs.json: [hal].topics.pendant")."""
    kind: str
    """"item" or "person"."""
    phrase: str
    context: str


@dataclass
class StaleLine:
    npc: str
    name: str
    line: str
    """"greeting" or the topic."""
    text: str
    why: str
    """The clauses of its ``true_while`` that do not hold when it is said."""
    actions: list[str]
    """The shortest action list after which it is said while untrue."""


@dataclass
class CheckReport:
    story: str
    title: str
    states: int = 0
    edges: int = 0
    max_depth_reached: int = 0
    complete: bool = True
    """False when the bound stopped the search before every reachable state was explored."""
    seconds: float = 0.0
    bound: dict[str, int] = field(default_factory=dict)
    endings: list[EndingResult] = field(default_factory=list)
    locks: list[QuestLock] = field(default_factory=list)
    never_completable: list[str] = field(default_factory=list)
    """Quests no explored path completes (proved only when the search is complete)."""
    wasted: list[WastedItem] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    stale: list[StaleLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    """Each search: its focus and how many states it explored."""

    @property
    def unreachable_endings(self) -> list[EndingResult]:
        return [e for e in self.endings if not e.reachable]

    @property
    def defects(self) -> int:
        """How many problems the report holds (an unexplored bound is not one)."""
        return (
            len(self.unreachable_endings)
            + len(self.locks)
            + len(self.never_completable)
            + len(self.wasted)
            + len(self.references)
            + len(self.mentions)
            + len(self.stale)
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["defects"] = self.defects
        return out

    def text(self) -> str:
        """The report as a person reads it."""
        head = f"{self.title} ({self.story}): "
        lines = [
            head + (f"{self.defects} defect(s)" if self.defects else "no defects found"),
            f"  explored {self.states} states, {self.edges} moves, {self.max_depth_reached} decisions deep, "
            f"in {self.seconds:.1f} s"
            + ("" if self.complete else f" - BOUND REACHED ({_bound_words(self.bound)}): results are partial"),
        ]
        if self.searches:
            lines.append(f"  searches: {'; '.join(self.searches)}")
        if self.references:
            lines.append("References to nothing:")
            lines += [f"  - {r}" for r in self.references]
        if self.endings:
            lines.append("Endings:")
        for ending in self.endings:
            if ending.reachable:
                lines.append(f"  + {ending.title} ({ending.id}): reachable in {_count(ending.actions)} actions")
                lines += [f"      {a}" for a in ending.actions]
            else:
                lines.append(f"  - {ending.title} ({ending.id}): NOT REACHED")
        if self.never_completable:
            lines.append("Quests no path completes:")
            lines += [f"  - {q}" for q in self.never_completable]
        if self.locks:
            lines.append("Quests that can become impossible (soft-locks):")
        for lock in self.locks:
            lines.append(f"  - {lock.title} ({lock.quest}) is locked after {_count(lock.actions)} actions{lock.why}:")
            lines += [f"      {a}" for a in lock.actions]
        if self.wasted:
            lines.append("Items that can be used up for no effect:")
        for waste in self.wasted:
            lines.append(f"  - {waste.name} ({waste.item}) at {waste.node}, after:")
            lines += [f"      {a}" for a in waste.actions]
        if self.mentions:
            lines.append("Things the texts mention that do not exist:")
            lines += [f"  - {m.kind} '{m.phrase}' in {m.source}: \"{m.context}\"" for m in self.mentions]
        if self.stale:
            lines.append("Lines said while untrue (their true_while does not hold):")
        for stale in self.stale:
            lines.append(f'  - {stale.name} ({stale.npc}), {stale.line}: "{stale.text[:60]}..." ({stale.why}), after:')
            lines += [f"      {a}" for a in stale.actions]
        lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)


def _count(actions: list[str]) -> int:
    """Actions in a list, not counting its comment lines."""
    return sum(1 for a in actions if not a.startswith("#"))


def _bound_words(bound: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in bound.items() if v)
