"""The memory autopilot: a slow narrator's turns kept near ``turn_time_target_s`` by sizing memory's share.

A model's time to answer grows with the prompt it reads (prefill), and the part of the prompt the game can
shrink is memory: the prompt budget decides how much of what recall found is sent. When the narrator's time per
turn (the median of the last :data:`WINDOW` turns, so one slow answer does not move it) is over the target, the
budget shrinks by :data:`STEP` of the configured budget, turn after turn; when it is under :data:`ROOM` of the
target, it grows back by half a step, up to the configured budget. It never shrinks below what the prompt carries
whatever the budget plus :data:`RESERVE` for memory: below that, recall's best memories no longer reach the
narrator (``bench/autopilot.py``), and a faster turn that has forgotten is not worth having. The debug panel's
timings show the budget each turn was composed with and why it moved (``DebugTrace.autopilot``).
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field

WINDOW = 3
STEP = 0.15
ROOM = 0.7
FLOOR = 1000
"""The smallest budget (the configuration's own minimum)."""
RESERVE = 600
"""Tokens kept for memory beyond the prompt's required part. Measured with ``bench/autopilot.py``: with the budget
down to the required part plus ~130 tokens, 1 of 8 planted facts reached the prompt; ``bench/memory_delivery.py``
delivered 8 of 8 at 20 and 60 turns with a budget of 2,000, about 600 tokens over the required part."""


@dataclass
class Autopilot:
    """Sizes the prompt budget to keep the narrator's turns near ``target_s`` (``ceiling``: the configured one)."""

    target_s: float
    ceiling: int
    budget: int = 0
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))

    def __post_init__(self) -> None:
        self.budget = self.budget or self.ceiling

    def observe(self, narrate_s: float, required_tokens: int = 0) -> str:
        """Take one turn's narrator time (and what its prompt carried whatever the budget); returns what the
        autopilot did, for the debug panel."""
        self.recent.append(narrate_s)
        measured = statistics.median(self.recent)
        step = max(1, round(self.ceiling * STEP))
        floor = min(self.ceiling, max(FLOOR, required_tokens + RESERVE))
        before = self.budget
        if measured > self.target_s:
            self.budget = max(floor, self.budget - step)
        elif measured < ROOM * self.target_s:
            self.budget = min(self.ceiling, self.budget + step // 2)
        said = f"narrator {measured:.2f} s (median of {len(self.recent)}) against a target of {self.target_s:g} s"
        if self.budget == before:
            held = " (memory's reserve: it shrinks no further)" if measured > self.target_s else ""
            return f"{said}: budget stays {self.budget} tokens{held}"
        return f"{said}: budget {before} -> {self.budget} tokens"
