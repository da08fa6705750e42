"""Each story's look: Misty Forest in mossy greens and mist greys, Cyber in neon magenta and cyan on black, The Drowned
Light in lamp-brass and sea-fog greys."""

from __future__ import annotations

from textual.theme import Theme

MISTY_FOREST = Theme(
    name="misty-forest",
    primary="#7fa36b",  # moss
    secondary="#a9b8a4",  # lichen
    accent="#c9d6c3",  # mist
    foreground="#dfe6dc",
    background="#1b211c",
    surface="#242c25",
    panel="#2e382f",
    success="#8fbf6a",
    warning="#d9b45a",
    error="#c8644f",
    dark=True,
)
CYBER = Theme(
    name="cyber-neon",
    primary="#ff2bd6",  # neon magenta
    secondary="#00e5ff",  # cyan
    accent="#00e5ff",
    foreground="#e8e8f0",
    background="#050507",
    surface="#0d0d14",
    panel="#16162a",
    success="#39ff14",
    warning="#ffd400",
    error="#ff3860",
    dark=True,
)
DROWNED_LIGHT = Theme(
    name="drowned-light",
    primary="#c9a55a",  # lamp brass
    secondary="#8a9ba3",  # sea fog
    accent="#e8d9a8",  # lamplight
    foreground="#dcdad4",
    background="#121517",
    surface="#1a1f22",
    panel="#242b2f",
    success="#7fa88f",
    warning="#d9a441",
    error="#b85450",
    dark=True,
)
TITLE = Theme(
    name="storyecho",
    primary="#8fb3c9",
    secondary="#a9b8a4",
    accent="#e0c27a",
    foreground="#e4e4e4",
    background="#15181c",
    surface="#1d2126",
    panel="#262b31",
    dark=True,
)
THEMES = (MISTY_FOREST, CYBER, DROWNED_LIGHT, TITLE)
BY_GENRE = (
    ("cyber", CYBER.name),
    ("science fiction", CYBER.name),
    ("fantasy", MISTY_FOREST.name),
    ("gothic", DROWNED_LIGHT.name),
)


def theme_for(genre: str) -> str:
    """The theme name of a story's genre ("cyberpunk science fiction", "fantasy"); the title theme otherwise."""
    genre = genre.lower()
    return next((name for word, name in BY_GENRE if word in genre), TITLE.name)
