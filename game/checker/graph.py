"""The explored states of one search, the moves between them, and what can be reached from where."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from game.checker.relevance import Key
from game.world.state import GameState


class StateGraph:
    """States by number (0 is the start), each with its key, the move that found it, its depth, losses and mode."""

    def __init__(self) -> None:
        self.states: list[GameState] = []
        self.keys: dict[Key, int] = {}
        self.parent: list[int] = []
        self.via: list[list[str]] = []
        self.depth: list[int] = []
        self.losses: list[int] = []
        self.mode: list[str] = []
        self.lost: list[str | None] = []
        self.succ: list[list[int]] = []
        self.preds: list[list[int]] = []
        self.expanded: list[bool] = []
        self.decisive: dict[int, int] = {}
        """state -> how many lines of the move that found it came before its free moves"""
        self.start_lines: list[str] = []

    def add(
        self, state: GameState, parent: int, lines: list[str], losses: int, mode: str, key: Key, lost: str | None = None
    ) -> int:
        sid = len(self.states)
        self.lost.append(lost)
        self.keys[key] = sid
        self.states.append(state)
        self.parent.append(parent)
        self.via.append(lines)
        self.depth.append(self.depth[parent] + 1 if parent >= 0 else 0)
        self.losses.append(losses)
        self.mode.append(mode)
        self.succ.append([])
        self.preds.append([])
        self.expanded.append(False)
        return sid

    def link(self, src: int, dst: int) -> None:
        if dst not in self.succ[src]:
            self.succ[src].append(dst)
            self.preds[dst].append(src)

    def path(self, sid: int, *, trim: bool = False) -> list[str]:
        """The action lines from the start to state ``sid`` (``trim``: without the free moves after the last move)."""
        steps: list[list[str]] = []
        if trim and sid > 0 and sid in self.decisive:
            steps.append(self.via[sid][: self.decisive[sid]])
            sid = self.parent[sid]
        while sid > 0:
            steps.append(self.via[sid])
            sid = self.parent[sid]
        return [*self.start_lines, *(line for step in reversed(steps) for line in step)]

    def reach(self, goal: Callable[[GameState], bool]) -> list[bool]:
        """For every state, whether a state where ``goal`` holds can be reached from it."""
        seen = [goal(s) for s in self.states]
        queue = deque(i for i, hit in enumerate(seen) if hit)
        while queue:
            for p in self.preds[queue.popleft()]:
                if not seen[p]:
                    seen[p] = True
                    queue.append(p)
        return seen

    def grow(self, can: list[bool], start: int, switched: int, goal: Callable[[GameState], bool]) -> None:
        """Extend ``can`` (reach of ``goal``) to the states added since ``start`` and the switch to ``switched``."""
        n = len(can)
        can.extend(goal(s) for s in self.states[n:])
        seeds = [i for i in range(start, len(self.states)) if can[i] or any(can[j] for j in self.succ[i])]
        if can[switched]:
            seeds.append(switched)
        queue = deque(seeds)
        for i in seeds:
            can[i] = True
        while queue:
            for p in self.preds[queue.popleft()]:
                if not can[p]:
                    can[p] = True
                    queue.append(p)

    def open_from(self, sid: int) -> list[int]:
        """The states not fully explored that can be reached from ``sid``."""
        seen = {sid}
        stack = [sid]
        out = []
        while stack:
            i = stack.pop()
            if not self.expanded[i]:
                out.append(i)
            for j in self.succ[i]:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        return out

    def closure_open(self, sid: int) -> bool:
        """Whether a state not fully explored can be reached from ``sid``."""
        return bool(self.open_from(sid))

    def first(self, goal: Callable[[GameState], bool]) -> int | None:
        """The shallowest state where ``goal`` holds (fewest moves from the start)."""
        hits = [i for i, s in enumerate(self.states) if goal(s)]
        return min(hits, key=lambda i: (self.depth[i], i)) if hits else None
