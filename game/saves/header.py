"""The header of a save (story, turn, place, save time, kind): what a list of slots shows, read without the game.

:func:`~game.saves.format.encode` writes the header's members first, before
the game, the memory and the history, which are almost all of a file (a
5,000-turn game is megabytes; its header is a few hundred bytes).
:func:`read_header` reads the first :data:`HEADER_BYTES` of the file, finds
where those first members end (a scan that only steps over strings and
numbers), and parses just them, closed with ``}``, with the same strict JSON
parser and the same field rules as :class:`~game.saves.format.SaveFile`. A file
that is not laid out that way (a hand-edited or older save, another schema, a
header that does not validate, a file that does not end with ``}``) is read
and decoded in full instead, so a damaged file is refused with the load's own
reason.

The header only says what the list shows: a load still reads and validates
the whole file (and falls back to the backup), so a header that lies (edited
by hand) changes nothing but the list, and damage past the header (or a file
over the parts a save may hold) is found by the load, and by
``SlotStore.verify``, which the load screen runs on the slot picked.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import BinaryIO, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from game.saves.format import MAX_SAVE_BYTES, SaveError, SaveFile, SlotKind, decode
from game.saves.parted import PartFolder

HEADER_BYTES = 64 * 1024
"""How much of a file the header is looked for in; a header longer than this is read the slow way."""
TAIL_BYTES = 64
"""How much of the end of a file is read to check that it ends with ``}``: a file cut short mid-way is read in full
(and refused); one cut just after a brace is found by the load, as any damage past the header is."""


@dataclass(frozen=True)
class SaveHeader:
    """What a save says of itself before its game: the :class:`~game.saves.format.SaveFile` fields a list shows."""

    story_id: str
    story_title: str
    content_hash: str
    session_id: str
    turn: int
    place: str
    saved_at: str
    kind: SlotKind

    @classmethod
    def of(cls, save: SaveFile) -> SaveHeader:
        """The header of a save read in full."""
        return cls(**save.model_dump(include=set(HEADER_FIELDS) - {"schema_version"}))


HEADER_FIELDS = ("schema_version", *(f.name for f in fields(SaveHeader)))
"""The members a save written by the game starts with, in this order."""
_HeaderModel: type[BaseModel] = create_model(  # the same rules (types, bounds, kinds) as the full save's fields
    "_HeaderModel",
    __config__=ConfigDict(extra="forbid"),
    **{  # type: ignore[call-overload]
        name: (SaveFile.model_fields[name].annotation, SaveFile.model_fields[name])
        for name in HEADER_FIELDS
        if name != "schema_version"
    },
    schema_version=(Literal[1, 2], ...),  # a whole save, or one in parts (``parted.py``): the same header
)

_STRING = rb'"(?:[^"\\\x00-\x1f]|\\.)*"'
_SCALAR = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null"
_OPEN = re.compile(rb"\s*\{")
_MEMBER = re.compile(rb"\s*(" + _STRING + rb")\s*:\s*(" + _STRING + rb"|" + _SCALAR + rb")\s*,")
"""One ``"key": value,`` member whose value is a string or a number (or true, false, null): never an object."""
_KEY = re.compile(rb"\s*(" + _STRING + rb")\s*:")


def parse_header(prefix: bytes) -> SaveHeader | None:
    """The header at the start of ``prefix`` (the first bytes of a save), or None when it is not there as the game
    writes it (every header member exactly once, before any other member) or does not validate: the caller then
    decodes the whole file, which says what is wrong."""
    opened = _OPEN.match(prefix)
    if opened is None:
        return None
    start = end = position = opened.end()
    seen: list[str] = []
    while len(seen) < len(HEADER_FIELDS) and (member := _MEMBER.match(prefix, position)):
        key = _key(member.group(1))
        if key not in HEADER_FIELDS or key in seen:
            return None
        seen.append(key)
        end, position = member.end(2), member.end()
    after = _KEY.match(prefix, position)  # the member after the header ("game"): not one of the header's again
    if len(seen) < len(HEADER_FIELDS) or after is None or _key(after.group(1)) in HEADER_FIELDS:
        return None
    try:
        model = _HeaderModel.model_validate_json(b"{" + prefix[start:end] + b"}")
    except ValidationError:
        return None
    return SaveHeader(**{k: v for k, v in model.model_dump().items() if k != "schema_version"})


def _key(string: bytes) -> str | None:
    """A member's name (a JSON string), or None when it is not valid JSON."""
    try:
        key = orjson.loads(string)
    except orjson.JSONDecodeError:
        return None
    return key if isinstance(key, str) else None


def read_header(path: Path) -> SaveHeader:
    """The header of the save file at ``path``, reading only its first and last bytes when it was written by the
    game (:func:`parse_header`), else the whole file, decoded and validated as a load does.

    Raises:
        SaveError: the file is not a save (not a regular file, empty, over the size cap, not one this version
            reads), with the same reason a load gives.
    """
    with open_save(path) as (handle, size):
        prefix = handle.read(HEADER_BYTES)
        tail = prefix if size <= HEADER_BYTES else os.pread(handle.fileno(), TAIL_BYTES, size - TAIL_BYTES)
        header = parse_header(prefix) if tail.rstrip().endswith(b"}") else None
        if header is not None:
            return header
        handle.seek(0)
        data = handle.read(MAX_SAVE_BYTES + 1)
    return SaveHeader.of(decode(data, PartFolder(path.parent, MAX_SAVE_BYTES).read))


def read_bytes(path: Path) -> bytes:
    """The bytes of one save file (not empty, not over the size cap), checking its size before reading it."""
    with open_save(path) as (handle, _):
        return handle.read(MAX_SAVE_BYTES + 1)


@contextmanager
def open_save(path: Path) -> Iterator[tuple[BinaryIO, int]]:
    """The open file and its size: a regular file, not empty, not over the size cap.

    Raises:
        SaveError: it is not (or cannot be read), in words.
    """
    try:  # non-blocking open: a FIFO or device named like a slot must not hang the game
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SaveError(f"{path.name} is not a regular file")
            if info.st_size > MAX_SAVE_BYTES:
                raise SaveError(f"too large for a save ({info.st_size:,} bytes; at most {MAX_SAVE_BYTES:,})")
            if info.st_size == 0:
                raise SaveError("the file is empty")
            yield handle, info.st_size
    except OSError as exc:
        raise SaveError(f"cannot read {path.name}: {exc.strerror or exc}") from None
