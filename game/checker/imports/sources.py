"""What an imported file holds, whatever its format: lore entries and, for a character card, a character.

The readers (:mod:`game.checker.imports.readers`) turn each format's fields into these; the mapping
(:mod:`game.checker.imports.mapping`) turns these into a story's files. Every field of the source that neither
uses is named in ``unused`` (a field that carries a value), so the report can list it: nothing is dropped
silently, and the source itself is kept verbatim in the story's ``imported/`` folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_IMPORT_BYTES = 20 * 1024 * 1024
"""The largest file an import reads (20 MB): a card's PNG with its picture fits many times over."""


class ImportFailure(ValueError):
    """The file cannot be imported (unreadable, malformed, not a known format, too large), or the story cannot
    take it; the message names the file and what is wrong. Nothing was changed."""


def carries_value(value: object) -> bool:
    """Whether a field's value says anything (not None, "", [], {} or false)."""
    return not (value is None or value is False or (isinstance(value, str | list | dict) and not value))


def unused_fields(record: dict[str, object], used: set[str]) -> list[str]:
    """The names of ``record``'s fields that carry a value and are not in ``used``, in the record's order."""
    return [name for name, value in record.items() if name not in used and carries_value(value)]


@dataclass
class LoreEntry:
    """One entry of a lorebook (World Info, a card's character book, a NovelAI lorebook).

    Attributes:
        where: where it is in the file, for the report (``entries.12``, ``data.character_book.entries[3]``).
        name: its name or comment ("" when it has none).
        keys: the words that call it up.
        content: its text.
        constant: always in the prompt, whatever the keys (World Info ``constant``, NovelAI ``forceActivation``).
        enabled: false when the source disables it.
        regex_keys: its keys are regular expressions, not words.
        unused: the fields the import does not use that carry a value.
        activation: how its author has it fire, as :class:`game.world.lore.Activation`'s fields (issue 44).
        category: the story's lore category it belongs to ("" for the import's default).
    """

    where: str
    name: str
    keys: list[str]
    content: str
    constant: bool = False
    enabled: bool = True
    regex_keys: bool = False
    unused: list[str] = field(default_factory=list)
    activation: dict[str, Any] = field(default_factory=dict)
    category: str = ""


@dataclass
class Card:
    """A character card's character (V1, V2 or V3)."""

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    alternate_greetings: list[str] = field(default_factory=list)
    mes_example: str = ""
    """Example dialogue: how the character speaks (``Npc.voice``)."""
    creator_notes: str = ""
    """The card's author's notes to its user (the report shows them)."""
    tags: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    world: str = ""
    """The World Info the card links (``extensions.world``): a file of its own, named in the report."""


@dataclass
class Source:
    """A file read: its format, its lore entries, its character (cards only) and its unused top-level fields."""

    format: str
    entries: list[LoreEntry] = field(default_factory=list)
    card: Card | None = None
    unused: list[str] = field(default_factory=list)
