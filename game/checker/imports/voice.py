"""A card's example dialogue (``mes_example``) as its person's voice (issue 44, item 4).

SillyTavern shows a card's examples to the model as how the character speaks: exchanges each opened by a
``<START>`` line, with ``{{char}}:`` and ``{{user}}:`` (or V1's ``<BOT>:`` and ``<USER>:``) before each turn.
Here they become ``Npc.voice``: one text per exchange, the names resolved, the ``<START>`` lines taken out, the
turns one a line; the prompt shows them when the player talks to the person (``game/engine/turn_parts.py``),
marked as how they speak and never as what happened. They are bounded (:data:`VOICE_CHARS` in all, the first
exchanges kept whole), and the report says what was left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from game.world.content import VOICE_CHARS

_START = re.compile(r"^\s*<START>\s*$", re.I | re.M)
EXAMPLES = 4
"""The most exchanges kept (a card has two to four)."""


@dataclass
class Voice:
    """The exchanges kept, and what was left out and why (for the report)."""

    examples: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def voice(mes_example: str, resolve: Callable[[str], str]) -> Voice:
    """``mes_example`` as exchanges in the person's voice: each ``<START>`` block one text, turns a line each,
    ``resolve`` naming ``{{char}}`` / ``{{user}}``; at most :data:`EXAMPLES`, :data:`VOICE_CHARS` in all."""
    out = Voice()
    blocks = [b for b in (_lines(block, resolve) for block in _START.split(mes_example)) if b]
    total = 0
    for index, text in enumerate(blocks):
        if len(out.examples) == EXAMPLES:
            out.left_out.append(f"exchange {index + 1}: past the {EXAMPLES} kept")
        elif total + len(text) > VOICE_CHARS:
            out.left_out.append(
                f"exchange {index + 1}: {len(text):,} characters, past the {VOICE_CHARS} a voice may hold"
            )
        else:
            out.examples.append(text)
            total += len(text)
    return out


def _lines(block: str, resolve: Callable[[str], str]) -> str:
    """One exchange: its non-empty lines, ``Name: words``, the macros resolved."""
    lines = [resolve(line.strip()) for line in block.splitlines() if line.strip()]
    return "\n".join(line for line in lines if line)
