"""Plain text for the screen: what a model or a player wrote is shown, never obeyed.

Textual and Rich read ``[bold]`` and ``[@click=app.quit]`` as markup in a
plain ``str``; a model's narration or a player's slot name must not be able to
style the screen or run an action. :func:`plain` builds a :class:`rich.text.Text`
(which never parses markup) and makes control characters visible, so an ANSI
escape shows as ``\\x1b[31m`` instead of colouring the terminal.
"""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(value: str) -> str:
    """``value`` with control characters (ANSI escapes included) written out as ``\\xNN``; newlines and tabs kept."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def plain(value: str, style: str = "") -> Text:
    """A Text that shows ``value`` literally (no markup, escapes made visible)."""
    return Text(visible(value), style=style)


def bar(value: int, total: int, width: int, *, fill: str = "█", empty: str = "░") -> str:
    """A text bar of ``width`` cells, ``value`` out of ``total`` filled."""
    total = max(total, 1)
    filled = max(0, min(width, round(width * value / total)))
    return fill * filled + empty * (width - filled)
