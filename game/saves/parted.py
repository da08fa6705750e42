"""Saves in parts: a long game stays savable, and its autosave costs the same at turn 50,000 as at turn 1,000.

What grows with every turn (the L2 log, the summaries, the history's turns: :data:`PARTED_LISTS`) is kept by the
game as its JSON, in runs sealed once they reach ``export.PART_BYTES`` (``export.Part``). A save refers to its
sealed runs by their SHA-256 and holds only what follows them (``schema_version`` 2, :data:`PARTED_VERSION`); each
run is a file of its own, ``<saves folder>/.parts/<digest>.json``, written once (:class:`PartFolder`) and shared by
every save of the game, its backups, branches and slots set aside (a run depends only on the items before its end).
An autosave writes the runs sealed since the last one, if any, and a slot file of at most a few runs' size. Why
this design rather than compaction or one larger file: ``docs/architecture.md``, "Long games".

A load trusts the parts no more than the slot file: each is checked against its name and the per-file bounds, and
the whole game against :data:`MAX_GAME_BYTES`, :data:`MAX_GAME_OBJECTS` and :data:`MAX_GAME_VALUES`, before
anything is validated; then the whole is version 1's document, read as any save is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from game.files import sync_folder, write_synced
from game.memory.export import Part, Parted, json_counts
from game.saves.errors import SaveError

WHOLE_VERSION = 1
"""The version of the whole document a save in parts is joined into (``format.SCHEMA_VERSION``)."""
PARTED_VERSION = 2
"""A save in parts: version 1's document, each of :data:`PARTED_LISTS` holding only its items past its parts, and
``parts`` last, naming them. A version that reads only version 1 says it was made by a newer StoryEcho."""
PARTED_LISTS = {
    "memory.log": ("memory", "log"),
    "memory.summaries": ("memory", "summaries"),
    "history.turns": ("history", "turns"),
}
"""The lists a save keeps in parts, by their name in ``parts``: what grows with every turn."""
MAX_GAME_BYTES = 160 * 1024 * 1024
"""Most bytes of a whole game, its slot file and its parts (an honest 50,000-turn game: ~35 MB with the scripted
narrator's tellings, up to ~90 MB with a model's longest: ``bench/long_games.py``). Each file stays within the bounds
of one (``format.MAX_SAVE_BYTES`` and its counts); these bound what a load builds from all of them."""
MAX_GAME_OBJECTS = 300_000
"""Most JSON objects of a whole game: ~2.5 a turn, so ~120,000 turns (an honest 50,000-turn game: ~125,000)."""
MAX_GAME_VALUES = 3_000_000
"""Most JSON values of a whole game: ~21 a turn, so ~140,000 turns."""
PARTS_FOLDER = ".parts"
_DIGEST = re.compile(r"[0-9a-f]{64}")
PartReader = Callable[[str], bytes]
"""The file of a part by its digest, checked against it (:meth:`PartFolder.read`)."""


def parts_of(memory: Any, history: Mapping[str, Any] | None) -> dict[str, tuple[Part, ...]]:
    """The parts of a save's memory (``export.Parted``) and history (``GameHistory.saved(parted=True)``), by list."""
    parts = {f"memory.{name}": found for name, found in memory.parts.items()} if isinstance(memory, Parted) else {}
    if history is not None and history.get("parts"):
        parts["history.turns"] = tuple(history["parts"])
    return {name: found for name, found in parts.items() if found}


def in_parts(document: dict[str, Any], parts: Mapping[str, tuple[Part, ...]]) -> dict[str, Any]:
    """``document`` (its lists already past their parts) as a save in parts writes it: version 2, ``parts`` last."""
    named = {name: [part.digest for part in parts[name]] for name in PARTED_LISTS if parts.get(name)}
    return {**document, "schema_version": PARTED_VERSION, "parts": named}


def check_whole(size: int, counts: tuple[int, int], parts: Iterable[Part]) -> None:
    """Refuse a game larger than a load builds: the slot file's bytes and JSON counts (``size``, ``counts``) with
    its parts'.

    Raises:
        SaveError: saying which bound and by how much.
    """
    total, (objects, values) = size, counts
    for part in parts:
        total, objects, values = total + len(part.data) + 1, objects + part.objects, values + part.values
    _check_totals(total, objects, values)


def _check_totals(total: int, objects: int, values: int) -> None:
    if total > MAX_GAME_BYTES:
        raise SaveError(f"too large for a save ({total:,} bytes in all its parts; at most {MAX_GAME_BYTES:,})")
    if objects > MAX_GAME_OBJECTS:
        raise SaveError(f"too many parts for a save ({objects:,} JSON objects in all; at most {MAX_GAME_OBJECTS:,})")
    if values > MAX_GAME_VALUES:
        raise SaveError(f"too many parts for a save ({values:,} JSON values in all; at most {MAX_GAME_VALUES:,})")


def join(raw: dict[str, Any], read: PartReader | None) -> bytes:
    """The whole version-1 document of a save in parts (``raw``, its slot file parsed), its parts read with ``read``
    and checked as they come: each against its name and the bounds of one file, the whole against the game's.

    Raises:
        SaveError: ``parts`` is not as the game writes it, a part is missing or damaged, or the whole is too large.
    """
    named = raw.pop("parts", None)
    if not isinstance(named, dict) or not set(named) <= set(PARTED_LISTS):
        raise SaveError("damaged save: parts: expected the lists kept in parts")
    if read is None:
        raise SaveError("this save is kept in parts beside its slot file: load it from its saves folder")
    head = orjson.dumps(raw)
    total, (objects, values) = len(head), json_counts(head)
    for name, digests in named.items():
        if not isinstance(digests, list) or not all(isinstance(d, str) and _DIGEST.fullmatch(d) for d in digests):
            raise SaveError(f"damaged save: parts.{name}: expected the digests of its parts")
        parent, member = PARTED_LISTS[name]
        container = raw.get(parent)
        tail = container.get(member) if isinstance(container, dict) else None
        if not isinstance(container, dict) or not isinstance(tail, list):
            raise SaveError(f"damaged save: {name}: expected a list")
        pieces = []
        for digest in digests:
            data = read(digest)
            part_objects, part_values = json_counts(data)
            total, objects, values = total + len(data), objects + part_objects, values + part_values
            _check_totals(total, objects, values)
            if data[:1] != b"[" or data[-1:] != b"]":
                raise SaveError(f"damaged save: part {digest[:12]} of {name} is not a list")
            if len(data) > 2:
                pieces.append(data[1:-1])
        if tail:
            pieces.append(orjson.dumps(tail)[1:-1])
        container[member] = orjson.Fragment(b"[" + b",".join(pieces) + b"]")
    raw["schema_version"] = WHOLE_VERSION
    return orjson.dumps(raw)


class PartFolder:
    """The parts of the saves in one folder: ``<folder>/.parts/<digest>.json``, each written once, atomically."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.folder = Path(root) / PARTS_FOLDER
        self._max_bytes = max_bytes
        self._known: set[str] = set()
        """Digests whose file this process wrote or read back whole: not checked again."""

    def path(self, digest: str) -> Path:
        return self.folder / f"{digest}.json"

    def keep(self, parts: Iterable[Part]) -> None:
        """Write each part not yet in the folder (or there but damaged), synced, before a slot names it.

        Raises:
            OSError: a part could not be written (the caller says so; no slot names it yet).
        """
        wrote = False
        for part in parts:
            path = self.path(part.digest)
            if part.digest in self._known and path.exists():
                continue
            try:
                self.read(part.digest)
            except SaveError:  # not there, or damaged: written anew
                self.folder.mkdir(parents=True, exist_ok=True)
                temp = self.folder / f".{part.digest}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
                try:
                    write_synced(temp, part.json(), exclusive=True)
                    os.replace(temp, path)
                finally:
                    with contextlib.suppress(OSError):
                        temp.unlink()
                wrote = True
            self._known.add(part.digest)
        if wrote:
            sync_folder(self.folder)

    def read(self, digest: str) -> bytes:
        """The file of part ``digest``, checked against its name.

        Raises:
            SaveError: it is missing, not a regular file, over the bound of one file, or not what its name says.
        """
        short = digest[:12]
        try:  # non-blocking: a FIFO named like a part must not hang the game
            with os.fdopen(os.open(self.path(digest), os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size > self._max_bytes:
                    raise SaveError(f"part {short} of this save is not a part the game wrote")
                data = handle.read(self._max_bytes + 1)
        except OSError as exc:
            raise SaveError(f"part {short} of this save cannot be read ({exc.strerror or exc})") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise SaveError(f"part {short} of this save is damaged (its bytes are not the ones saved)")
        self._known.add(digest)
        return data

