"""Readers of the formats people already have, each into a :class:`~game.checker.imports.sources.Source`.

- SillyTavern World Info JSON: ``{"entries": {uid: {key, keysecondary, comment, content, constant, disable, ...}}}``
  (field names from SillyTavern's ``public/scripts/world-info.js``, ``newWorldInfoEntryDefinition``).
- Character Card V1 (``name``, ``description``, ``personality``, ``scenario``, ``first_mes`` at the top), V2
  (``spec: "chara_card_v2"``, the fields in ``data``, its lorebook in ``data.character_book``) and V3
  (``spec: "chara_card_v3"``), as JSON or as a PNG whose ``chara`` (V2) or ``ccv3`` (V3) text chunk holds the
  card's JSON in base64 (``ccv3`` is read when both are there, as the V3 spec asks).
- A standalone V3 lorebook: ``{"spec": "lorebook_v3", "data": {"entries": [{keys, content, enabled, ...}]}}``.
- A NovelAI ``.lorebook``: ``{"lorebookVersion": n, "entries": [{text, keys, displayName, enabled, ...}]}``
  (``forceActivation`` is its "always on", read as constant).

A key written ``/pattern/flags`` (SillyTavern, NovelAI) or in an entry with ``use_regex`` (V3) is a regular
expression, not a word: it is not kept as a keyword, but the entry's activation matches it (issue 44). A V3
entry's decorator lines (``@@depth 4``) are taken out of its text and named as unused.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path

from game.checker.imports import triggers
from game.checker.imports.png import PngError, is_png, text_chunks
from game.checker.imports.sources import MAX_IMPORT_BYTES, Card, ImportFailure, LoreEntry, Source, unused_fields

FORMATS = (
    "SillyTavern World Info JSON, a Character Card V1, V2 or V3 (JSON, or PNG with a 'chara' or 'ccv3' chunk), "
    "a lorebook_v3 JSON, a NovelAI .lorebook"
)
CARD_SPECS = ("chara_card_v2", "chara_card_v3")
_REGEX_KEY = re.compile(r"^/.+/[a-z]*$", re.S)
_BOOK_ENTRY_USED = {"keys", "content", "enabled", "constant", "name", "comment", "id", "use_regex"}
_CARD_USED = {
    *("name", "description", "personality", "scenario", "first_mes", "alternate_greetings", "character_book"),
    *("mes_example", "creator_notes", "tags"),
}


class _Fields:
    """Typed reads of one record's fields; a wrong type is an :class:`ImportFailure` naming file and field."""

    def __init__(self, path: Path, where: str, record: object) -> None:
        if not isinstance(record, dict):
            raise ImportFailure(f"{path}: {where}: expected a JSON object, found {_kind(record)}")
        self.path, self.where, self.record = path, where, record

    def fail(self, name: str, expected: str) -> ImportFailure:
        found = _kind(self.record.get(name))
        return ImportFailure(f"{self.path}: {self.where}.{name}: expected {expected}, found {found}")

    def text(self, name: str) -> str:
        value = self.record.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(name, "text")
        return value

    def texts(self, name: str) -> list[str]:
        value = self.record.get(name)
        if value is None:
            return []
        if isinstance(value, str):  # an old World Info writes its keys as one comma-separated string
            return [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(name, "a list of texts")
        return [v for v in value if v.strip()]

    def flag(self, name: str, default: bool) -> bool:
        value = self.record.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(name, "true or false")
        return value


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number"}
    return "nothing" if value is None else names.get(type(value), type(value).__name__)


MAX_DEPTH = 64
"""How deep an import's JSON may nest (a card or a lorebook nests five or six levels)."""


def _json(path: Path, text: str, inside: str = "") -> object:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailure(
            f"{path}: invalid JSON{inside} at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        value = None  # nested past what the parser can follow: said below, as any JSON nested too deep
    if (value is None and text.strip() != "null") or _depth(value) > MAX_DEPTH:
        raise ImportFailure(
            f"{path}: its JSON{inside} nests deeper than {MAX_DEPTH} levels; no lorebook or card does, so it is refused"
        )
    return value


def _depth(value: object) -> int:
    """How deep ``value`` nests (lists and objects), counted without recursion; stops past :data:`MAX_DEPTH`."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            level += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


def read_source(path: Path) -> Source:
    """The file at ``path``, read in whichever of the known formats it is.

    Raises:
        ImportFailure: it cannot be read, is over :data:`MAX_IMPORT_BYTES`, is malformed or is no known format.
    """
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ImportFailure(
                f"{path}: {size / 1024 / 1024:.1f} MB is over the {MAX_IMPORT_BYTES // 1024 // 1024} MB an import "
                "may be (a lorebook or a card is far smaller; is it the right file?)"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if is_png(data):
        return _from_png(path, data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"{path}: neither a PNG nor UTF-8 text (byte {exc.start} is not UTF-8)") from None
    return read_object(path, _json(path, text))


def _from_png(path: Path, data: bytes) -> Source:
    try:
        chunks = text_chunks(data)
    except PngError as exc:
        raise ImportFailure(f"{path}: a damaged PNG: {exc}") from None
    key = "ccv3" if "ccv3" in chunks else "chara" if "chara" in chunks else None
    if key is None:
        found = f" (its text chunks: {', '.join(sorted(chunks))})" if chunks else ""
        raise ImportFailure(f"{path}: a PNG with no character card in it: no 'chara' or 'ccv3' text chunk{found}")
    try:
        raw = base64.b64decode(chunks[key], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ImportFailure(f"{path}: its {key!r} chunk is not base64 of UTF-8 JSON") from None
    card = _json(path, raw, f" in its {key!r} chunk")
    if not isinstance(card, dict) or not (card.get("spec") in CARD_SPECS or "first_mes" in card):
        raise ImportFailure(f"{path}: its {key!r} chunk holds no character card (no spec chara_card_v2/v3)")
    source = read_object(path, card)
    source.format += f" (PNG, {key!r} chunk)"
    if key == "ccv3" and "chara" in chunks:
        source.unused.append("PNG chunk 'chara' (the V2 copy of this card; the V3 'ccv3' one was read)")
    return source


def read_object(path: Path, obj: object) -> Source:
    """The parsed JSON ``obj`` of ``path`` as a :class:`Source` (its format told by its fields)."""
    if not isinstance(obj, dict):
        raise ImportFailure(f"{path}: expected a JSON object at the top level, found {_kind(obj)} ({FORMATS})")
    spec = obj.get("spec")
    if spec in CARD_SPECS:
        return _card(path, obj)
    if spec == "lorebook_v3":
        book = _Fields(path, "data", obj.get("data"))
        source = Source("lorebook_v3", unused=unused_fields(obj, {"spec", "data"}))
        _book(book, source, "data")
        return source
    if spec is not None:
        raise ImportFailure(
            f"{path}: spec {spec!r} is not one storyecho imports (chara_card_v2, chara_card_v3, lorebook_v3)"
        )
    if "lorebookVersion" in obj:
        return _novelai(path, obj)
    if isinstance(obj.get("entries"), dict):
        return _world_info(path, obj)
    if isinstance(obj.get("name"), str) and "first_mes" in obj:
        return _card_fields(_Fields(path, "(top level)", obj), "Character Card V1", "")
    raise ImportFailure(f"{path}: not a format storyecho imports; expected {FORMATS}")


def _keys(fields: _Fields, name: str, regex: bool) -> tuple[list[str], list[str]]:
    """The entry's word keys and its regular-expression ones."""
    keys = fields.texts(name)
    patterns = keys if regex else [k for k in keys if _REGEX_KEY.match(k.strip())]
    return [k.strip() for k in keys if k not in patterns], patterns


def _entry(fields: _Fields, *, name: str, keys: str, content: str, regex: bool, used: set[str]) -> LoreEntry:
    words, patterns = _keys(fields, keys, regex)
    entry = LoreEntry(fields.where, name.strip(), words, fields.text(content))
    entry.unused = unused_fields(fields.record, used)
    entry.regex_keys = bool(patterns)  # not words for recall by meaning; the activation matches them (issue 44)
    return entry


def _world_info(path: Path, obj: dict[str, object]) -> Source:
    source = Source("SillyTavern World Info", unused=unused_fields(obj, {"entries"}))
    entries = obj["entries"]
    assert isinstance(entries, dict)
    for uid, record in entries.items():
        fields = _Fields(path, f"entries.{uid}", record)
        name = fields.text("comment")
        reader = triggers.Reader(path, fields.where, fields.record)
        activation, read = triggers.world_info(reader)
        entry = _entry(
            fields, name=name, keys="key", content="content", regex=False,
            used={"uid", "key", "comment", "content", "constant", "disable", "addMemo", "displayIndex", *read},
        )  # fmt: skip
        entry.activation = activation
        entry.constant, entry.enabled = fields.flag("constant", False), not fields.flag("disable", False)
        source.entries.append(entry)
    return source


def _novelai(path: Path, obj: dict[str, object]) -> Source:
    source = Source("NovelAI lorebook", unused=unused_fields(obj, {"lorebookVersion", "entries", "categories"}))
    entries = obj.get("entries")
    if not isinstance(entries, list):
        raise ImportFailure(f"{path}: entries: expected a list of lorebook entries, found {_kind(entries)}")
    categories = _novelai_categories(obj.get("categories"))
    for index, record in enumerate(entries):
        fields = _Fields(path, f"entries[{index}]", record)
        reader = triggers.Reader(path, fields.where, fields.record)
        activation, category, read = triggers.novelai(reader, categories)
        entry = _entry(
            fields, name=fields.text("displayName"), keys="keys", content="text", regex=False,
            used={"text", "keys", "displayName", "enabled", "forceActivation", "id", *read},
        )  # fmt: skip
        entry.activation, entry.category = activation, category
        entry.constant, entry.enabled = fields.flag("forceActivation", False), fields.flag("enabled", True)
        source.entries.append(entry)
    return source


def _novelai_categories(categories: object) -> dict[str, str]:
    """A NovelAI lorebook's categories: id -> name (what is not a list of objects with both is left out)."""
    if not isinstance(categories, list):
        return {}
    return {
        str(c["id"]): c["name"]
        for c in categories
        if isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("id"), str | int)
    }


def _book(book: _Fields, source: Source, where: str) -> None:
    """A V2/V3 lorebook's entries into ``source`` (its own unused fields too)."""
    source.unused += [f"{where}.{name}" for name in unused_fields(book.record, {"entries"})]
    entries = book.record.get("entries")
    if not isinstance(entries, list):
        raise ImportFailure(f"{book.path}: {where}.entries: expected a list of entries, found {_kind(entries)}")
    for index, record in enumerate(entries):
        fields = _Fields(book.path, f"{where}.entries[{index}]", record)
        name = fields.text("name") or fields.text("comment")
        regex = fields.flag("use_regex", False)
        card = source.card.name if source.card is not None else ""
        reader = triggers.Reader(book.path, fields.where, fields.record)
        activation, read = triggers.book(reader, regex, card)
        entry = _entry(
            fields, name=name, keys="keys", content="content", regex=regex, used=_BOOK_ENTRY_USED | read
        )  # fmt: skip
        entry.activation = activation
        entry.constant, entry.enabled = fields.flag("constant", False), fields.flag("enabled", True)
        kept = [line for line in entry.content.splitlines() if not line.lstrip().startswith("@@")]
        if len(kept) != len(entry.content.splitlines()):
            decorators = [line.split()[0] for line in entry.content.splitlines() if line.lstrip().startswith("@@")]
            entry.unused.append(f"decorators {', '.join(decorators)}")
            entry.content = "\n".join(kept)
        source.entries.append(entry)


def _card(path: Path, obj: dict[str, object]) -> Source:
    spec = str(obj["spec"])
    data = _Fields(path, "data", obj.get("data"))
    label = "Character Card V2" if spec == "chara_card_v2" else "Character Card V3"
    source = _card_fields(data, label, "data.")
    copies = {k for k, v in obj.items() if k in data.record and data.record[k] == v}  # V1 fields a V2 card repeats
    source.unused = unused_fields(obj, {"spec", "spec_version", "data", *copies}) + source.unused
    return source


def _card_fields(data: _Fields, label: str, prefix: str) -> Source:
    name = data.text("name").strip()
    if not name:
        raise ImportFailure(f"{data.path}: {prefix}name: a card needs its character's name")
    card = Card(
        name=name,
        description=data.text("description"),
        personality=data.text("personality"),
        scenario=data.text("scenario"),
        first_mes=data.text("first_mes"),
        alternate_greetings=data.texts("alternate_greetings"),
        mes_example=data.text("mes_example"),
        creator_notes=data.text("creator_notes"),
        tags=data.texts("tags"),
    )
    extensions = data.record.get("extensions")
    world = extensions.get("world") if isinstance(extensions, dict) else None
    card.world = world.strip() if isinstance(world, str) else ""
    used = _CARD_USED if prefix else {*_CARD_USED, "spec", "spec_version"}
    source = Source(label, card=card, unused=[f"{prefix}{n}" for n in unused_fields(data.record, used)])
    book = data.record.get("character_book")
    if book is not None:
        _book(_Fields(data.path, f"{prefix}character_book", book), source, f"{prefix}character_book")
    return source
