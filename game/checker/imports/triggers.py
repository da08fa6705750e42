"""An entry's activation fields, read from each format into :class:`game.world.lore.Activation`'s names (issue 44).

SillyTavern's World Info fields are ``newWorldInfoEntryDefinition``'s in ``public/scripts/world-info.js``; a card's
``character_book`` entry has the spec's own fields and SillyTavern's others in ``extensions`` (the map is
``originalWIDataKeyMap`` / ``convertCharacterBook`` there); a NovelAI entry has ``searchRange``,
``forceActivation`` and ``contextConfig.budgetPriority``. :data:`WORLD_INFO` and :data:`BOOK_EXTENSIONS` are the
maps; ``storyecho content export`` writes them back the other way (``game/checker/exports.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from game.checker.imports.sources import ImportFailure
from game.world.lore import LOGIC_CODES

Kind = str
"""``keys`` (a list of texts), ``flag`` (true/false), ``flag?`` (or null), ``int``, ``int?``, ``text``, ``logic``."""

WORLD_INFO: dict[str, tuple[str, Kind]] = {
    "key": ("keys", "keys"),
    "keysecondary": ("secondary_keys", "keys"),
    "selectiveLogic": ("logic", "logic"),
    "selective": ("selective", "flag"),
    "caseSensitive": ("case_sensitive", "flag?"),
    "matchWholeWords": ("whole_words", "flag?"),
    "constant": ("constant", "flag"),
    "vectorized": ("vectorized", "flag"),
    "order": ("order", "int"),
    "position": ("position", "int"),
    "depth": ("depth", "int"),
    "role": ("role", "int"),
    "probability": ("probability", "int"),
    "useProbability": ("use_probability", "flag"),
    "excludeRecursion": ("exclude_recursion", "flag"),
    "preventRecursion": ("prevent_recursion", "flag"),
    "delayUntilRecursion": ("delay_until_recursion", "int"),
    "group": ("group", "text"),
    "groupOverride": ("group_override", "flag"),
    "groupWeight": ("group_weight", "int"),
    "useGroupScoring": ("group_scoring", "flag?"),
    "sticky": ("sticky", "int?"),
    "cooldown": ("cooldown", "int?"),
    "delay": ("delay", "int?"),
    "scanDepth": ("scan_depth", "int?"),
    "automationId": ("automation_id", "text"),
    "uid": ("uid", "int?"),
    "displayIndex": ("display_index", "int?"),
    "comment": ("name", "text"),
    "addMemo": ("add_memo", "flag"),
}
"""World Info field -> (Activation field, kind)."""

BOOK: dict[str, tuple[str, Kind]] = {
    "keys": ("keys", "keys"),
    "secondary_keys": ("secondary_keys", "keys"),
    "selective": ("selective", "flag"),
    "constant": ("constant", "flag"),
    "insertion_order": ("order", "int"),
    "case_sensitive": ("case_sensitive", "flag?"),
    "id": ("uid", "int?"),
}
"""A ``character_book`` entry's own field -> (Activation field, kind)."""

BOOK_EXTENSIONS: dict[str, tuple[str, Kind]] = {
    "selectiveLogic": ("logic", "logic"),
    "position": ("position", "int"),
    "depth": ("depth", "int"),
    "role": ("role", "int"),
    "probability": ("probability", "int"),
    "useProbability": ("use_probability", "flag"),
    "exclude_recursion": ("exclude_recursion", "flag"),
    "prevent_recursion": ("prevent_recursion", "flag"),
    "delay_until_recursion": ("delay_until_recursion", "int"),
    "group": ("group", "text"),
    "group_override": ("group_override", "flag"),
    "group_weight": ("group_weight", "int"),
    "use_group_scoring": ("group_scoring", "flag?"),
    "sticky": ("sticky", "int?"),
    "cooldown": ("cooldown", "int?"),
    "delay": ("delay", "int?"),
    "scan_depth": ("scan_depth", "int?"),
    "match_whole_words": ("whole_words", "flag?"),
    "case_sensitive": ("case_sensitive", "flag?"),
    "automation_id": ("automation_id", "text"),
    "vectorized": ("vectorized", "flag"),
    "display_index": ("display_index", "int?"),
}
"""A ``character_book`` entry's ``extensions`` field (SillyTavern's) -> (Activation field, kind)."""

NOVELAI_CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("place", ("place", "location", "region", "city", "town", "geograph", "world", "realm", "land", "setting")),
    ("faction", ("faction", "group", "organi", "guild", "house", "nation", "clan", "order", "religion", "race")),
    ("item", ("item", "object", "artifact", "artefact", "weapon", "equipment", "tech", "gear")),
    ("relationship", ("character", "person", "people", "npc", "cast", "creature")),
)
"""A NovelAI category's name, by the words in it -> the story's lore category (else ``history``)."""
_REGEX_CHARS = re.compile(r"[\\^$.|?*+()\[\]{}]")


class Reader:
    """Typed reads of one record's activation fields. A value of the wrong type is left at the game's default, and
    the field is listed as kept but unused (the file kept in ``imported/`` has it): a lorebook imports whole even
    when a tool wrote one field oddly (a V3 entry's ``id`` may be text)."""

    def __init__(self, path: Path, where: str, record: dict[str, Any]) -> None:
        self.path, self.where, self.record = path, where, record

    def read(self, fields: dict[str, tuple[str, Kind]], into: dict[str, Any], prefix: str = "") -> set[str]:
        """Each of ``fields`` the record has, read into ``into``; the names read well."""
        read = set()
        for source, (name, kind) in fields.items():
            if source in self.record:
                try:
                    into[name] = self.value(source, kind, prefix)
                except ImportFailure:
                    continue
                read.add(source)
        return read

    def value(self, source: str, kind: Kind, prefix: str = "") -> Any:
        value = self.record[source]
        if kind.endswith("?") and value is None:
            return None
        where = f"{self.path}: {self.where}.{prefix}{source}"
        wrong = ImportFailure(f"{where}: expected {_expected(kind)}, found {value!r}")
        if kind == "keys":
            if isinstance(value, str):  # an old World Info writes its keys as one comma-separated string
                value = value.split(",")
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise wrong
            return [v.strip() for v in value if v.strip()]
        if kind.startswith("flag"):
            if not isinstance(value, bool):
                raise wrong
            return value
        if kind.startswith("int") or kind == "logic":
            if isinstance(value, bool) and source in ("delayUntilRecursion", "delay_until_recursion"):
                return int(value)  # SillyTavern wrote true for level 1 before levels
            if value is None and kind == "logic":
                return "and_any"  # as SillyTavern reads a missing logic
            if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
                raise wrong
            if kind == "logic":
                if not 0 <= int(value) < len(LOGIC_CODES):
                    raise wrong
                return LOGIC_CODES[int(value)]
            return int(value)
        if not isinstance(value, str):
            raise wrong
        return value


def _expected(kind: Kind) -> str:
    return {
        "keys": "a list of texts",
        "flag": "true or false",
        "flag?": "true, false or null",
        "int": "a whole number",
        "int?": "a whole number or null",
        "logic": "0 (AND ANY), 1 (NOT ALL), 2 (NOT ANY) or 3 (AND ALL)",
        "text": "text",
    }[kind]


def world_info(reader: Reader) -> tuple[dict[str, Any], set[str]]:
    """A World Info entry's activation, and the fields it read."""
    activation: dict[str, Any] = {}
    return activation, reader.read(WORLD_INFO, activation)


def book(reader: Reader, regex: bool, card: str) -> tuple[dict[str, Any], set[str]]:
    """A ``character_book`` (or ``lorebook_v3``) entry's activation, and the fields it read (``regex``: the V3
    ``use_regex``, its keys are patterns; ``card``: the card's name, "" for a book of its own)."""
    activation: dict[str, Any] = {"book": card} if card else {}
    read = reader.read(BOOK, activation)
    name = reader.record.get("name") or reader.record.get("comment")
    if isinstance(name, str) and name.strip():
        activation["name"] = name
    extensions = reader.record.get("extensions")
    if isinstance(extensions, dict):
        Reader(reader.path, reader.where, extensions).read(BOOK_EXTENSIONS, activation, "extensions.")
        read.add("extensions")
    position = reader.record.get("position")
    if position in ("before_char", "after_char"):  # SillyTavern's own number in extensions says more, when there
        activation.setdefault("position", 0 if position == "before_char" else 1)
        read.add("position")
    if regex:  # a V3 pattern with no pattern characters matches as the word it is
        for name in ("keys", "secondary_keys"):
            activation[name] = [k if not _REGEX_CHARS.search(k) else f"/{k}/" for k in activation.get(name, [])]
    return activation, read


def novelai(reader: Reader, categories: dict[str, str]) -> tuple[dict[str, Any], str, set[str]]:
    """A NovelAI entry's activation, its lore category and the fields it read. NovelAI matches a key anywhere in
    the last ``searchRange`` characters of the story, whatever the case."""
    record = reader.record
    activation: dict[str, Any] = {"case_sensitive": False, "whole_words": False}
    read = reader.read({"keys": ("keys", "keys"), "forceActivation": ("constant", "flag")}, activation)
    read |= reader.read({"searchRange": ("scan_chars", "int?"), "displayName": ("name", "text")}, activation)
    config = record.get("contextConfig")
    if isinstance(config, dict) and isinstance(config.get("budgetPriority"), int | float):
        # as SillyTavern's convertNovelLorebook takes it; the report still names contextConfig, whose other
        # settings (prefix, suffix, token budget) have no place here
        activation["order"] = int(config["budgetPriority"])
    category = ""
    named = categories.get(str(record.get("category") or ""), "")
    if named:
        read.add("category")
        words = named.lower()
        category = next((ours for ours, stems in NOVELAI_CATEGORIES if any(s in words for s in stems)), "history")
    return activation, category, read
