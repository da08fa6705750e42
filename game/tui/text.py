"""Plain text for the screen: what a model or a player wrote is shown, never obeyed.

Textual and Rich read ``[bold]`` and ``[@click=app.quit]`` as markup in a
plain ``str``; a model's narration or a player's slot name must not be able to
style the screen or run an action. :func:`plain` builds a :class:`rich.text.Text`
(which never parses markup) and makes control characters visible (:func:`safe`),
so an ANSI escape shows as ``\\x1b[31m`` instead of colouring the terminal.
"""

from __future__ import annotations

from rich.text import Text

from game.text import visible


def safe(value: object) -> str:
    """``value`` as text with every control character but newline and tab written out (ESC as ``\\x1b``)."""
    return visible(value if isinstance(value, str) else str(value))


def plain(value: object, style: str = "") -> Text:
    """A Text that shows ``value`` literally (no markup, escapes made visible: ``game.text.visible``)."""
    return Text(safe(value), style=style)


def bar(value: int, total: int, width: int, *, fill: str = "█", empty: str = "░") -> str:
    """A text bar of ``width`` cells, ``value`` out of ``total`` filled."""
    total = max(total, 1)
    filled = max(0, min(width, round(width * value / total)))
    return fill * filled + empty * (width - filled)
