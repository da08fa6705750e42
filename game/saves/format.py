"""The save file: one JSON document per slot, versioned, validated, migrated.

A save is the whole game: the world (:class:`GameState`, whose dice are seeded
by the game seed and the turn, so the seed is the RNG state) and the memory
(:class:`MemoryState`: the L2 log the L1 window is read from, the summaries
each carrying the L3 synopsis written with it, the Story Bible, the
consolidation counter, the ids whose vectors were still pending). The vector
index is not in the save: it is rebuilt from it.

Loading trusts nothing. The size is checked before anything is parsed, the
JSON is parsed strictly (no NaN, valid UTF-8, bounded nesting), every field is
validated by the pydantic models (which forbid unknown fields), older schema
versions are migrated step by step, and the references the save makes (its
story, its place, its items and quests) are checked against the content pack.
Whatever fails raises :class:`SaveError` with a message a player can read;
nothing in a save is ever executed (JSON only, no pickle, no eval).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.memory.export import Part, Parted, StateEncoder, json_counts
from game.memory.records import MemoryState, model_fields
from game.saves.errors import SaveError as SaveError
from game.saves.errors import SaveTooLong
from game.saves.history import GameHistory, HistoryError, SavedHistory
from game.saves.lines import new_line
from game.saves.parted import PARTED_VERSION, PartReader, check_whole, in_parts, join, parts_of
from game.world.content import ContentPack
from game.world.state import MAX_TURN, GameState

SCHEMA_VERSION = 1
MAX_SAVE_BYTES = 10 * 1024 * 1024
"""Largest save file read or written: 3.7x an honest 5,000-turn game (2.8 MB, ``bench/saves.py``'s game). A turn
takes 0.6 KB (scripted narration) to ~1.8 KB (a model's narration at the most memory keeps of it), so this holds
5,800 to 17,000 turns. A load indexes the text for recall (each episode with its neighbours: ~0.45 s of CPU a MB
of narration), so the bytes bound the load time too: 10 MB of long narrations load in ~4.8 s
(``bench/save_memory.py``)."""
MAX_SAVE_OBJECTS = 30_000
"""Most JSON objects a save holds: ~2.3 a turn (an episode, a history turn, a summary every 5 turns, Bible
entries), so ~13,000 turns. Each object becomes a Python object, a model, an index entry on load; issue 33:
100,000 minimal log episodes in 7.4 MB took 15 s and 970 MB to load."""
MAX_SAVE_VALUES = 1_000_000
"""Most JSON values a save holds: ~21 a turn (the commas of the narration among them), so ~47,000 turns; and room
for the fields a file may leave out (a model writes all of its, at most 18), so a file within the object bound
saves again within this one."""
SlotKind = Literal["manual", "autosave", "quick"]
_HEADER = re.compile(rb'^\s*\{\s*"schema_version"\s*:\s*(\d{1,6})\s*[,}]')


class SaveFile(BaseModel):
    """One save slot's content (schema version 1)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    story_id: str
    story_title: str = ""
    content_hash: str = Field(description="Hash of the content pack the game was played with")
    session_id: str = Field(
        description="The line this moment is on (lines.py: ``<game>`` or ``<game>.<n>``); the game's own id is the "
        "memory's session id. Before lines, the game's id: a save written then is on its game's first line"
    )
    turn: int = Field(ge=0, le=MAX_TURN)
    place: str = Field("", description="Name of the place the player is at")
    saved_at: str = Field(description="UTC, ISO 8601")
    kind: SlotKind = "manual"
    game: GameState
    memory: MemoryState
    history: SavedHistory | None = Field(
        None, description="The game state after each turn (history.py), where a branch starts; older saves: none"
    )


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def encode(
    pack: ContentPack,
    game: GameState | dict[str, Any],
    memory: bytes | dict[str, Any],
    *,
    kind: SlotKind = "manual",
    session_id: str | None = None,
    line: str | None = None,
    history: dict[str, Any] | None = None,
) -> bytes:
    """The bytes of a save of ``game`` and ``memory`` (and the game's ``history``: ``GameHistory.saved``).

    ``memory`` is the memory state as JSON bytes (``GameMemory.export_json``,
    spliced in as is, with ``session_id`` given) or as a dict. ``schema_version``
    is written first, so a reader can tell the version before parsing the rest.
    ``line`` is the line the save is on (``lines.py``: its header's ``session_id``); without it, the game's first,
    named by its session id.
    """
    node_id, turn = (str(game["node"]), game["turn"]) if isinstance(game, dict) else (game.node, game.turn)
    node = pack.nodes.get(node_id)
    memory_part: Any = memory
    parts = parts_of(memory, history)
    if history is not None and "parts" in history:
        history = {k: v for k, v in history.items() if k != "parts"}
    if isinstance(memory, bytes):
        if session_id is None:
            raise ValueError("session_id is required with memory given as bytes")
        memory_part = orjson.Fragment(bytes(memory) if isinstance(memory, Parted) else memory)  # not a subclass
    else:
        session_id = str(memory["session_id"])
    document = {
        "schema_version": SCHEMA_VERSION,
        "story_id": pack.id,
        "story_title": pack.story.title,
        "content_hash": pack.content_hash,
        "session_id": line or session_id,
        "turn": turn,
        "place": node.name if node else node_id,
        "saved_at": now_iso(),
        "kind": kind,
        "game": game,
        "memory": memory_part,
    }
    if history is not None:
        document["history"] = history
    return _written(document, parts, "the game")


def _written(document: dict[str, Any], parts: dict[str, tuple[Part, ...]], what: str) -> bytes:
    """The bytes of ``document`` (its long lists past their ``parts``, ``parted.in_parts``), checked as a load
    checks them: what the game writes, it reads back."""
    if parts:
        document = in_parts(document, parts)
    try:
        data = orjson.dumps(document, default=model_fields)
    except (TypeError, orjson.JSONEncodeError) as exc:  # a number out of JSON's range, say: the game goes on
        raise SaveError(f"{what} could not be written ({exc})") from None
    try:
        counts = check_size(data)
        check_whole(len(data), counts, [part for found in parts.values() for part in found])
    except SaveError as exc:
        raise SaveTooLong(f"this game has grown past what a save holds: {exc}") from None
    return Parted.of(data, parts) if parts else data


def check_size(data: bytes) -> tuple[int, int]:
    """Refuse bytes larger than a save may be, before anything is parsed: the bytes, then the JSON objects and
    values they can hold (``{`` and ``,`` counted outside the strings: each object opens with a brace, each value
    after the first of its array or object follows a comma). What a load builds grows with these counts, not with
    the bytes (an empty object is 3 bytes and a model); bounded, loading any file peaks under 500 MB and 5 s
    (``bench/save_memory.py``). Issue 43: the braces and commas a player types, inside the strings, counted too,
    and a player who typed braces could no longer save from turn 36.

    Returns:
        The JSON objects and values counted.

    Raises:
        SaveError: saying which bound and by how much.
    """
    if len(data) > MAX_SAVE_BYTES:
        raise SaveError(f"too large for a save ({len(data):,} bytes; at most {MAX_SAVE_BYTES:,})")
    objects, values = json_counts(data)
    if objects > MAX_SAVE_OBJECTS:
        raise SaveError(f"too many parts for a save ({objects:,} JSON objects; at most {MAX_SAVE_OBJECTS:,})")
    if values > MAX_SAVE_VALUES:
        raise SaveError(f"too many parts for a save ({values:,} JSON values; at most {MAX_SAVE_VALUES:,})")
    return objects, values


def decode(data: bytes, parts: PartReader | None = None) -> SaveFile:
    """Parse, migrate and validate the bytes of a save file (:func:`check_size` first); a save in parts is joined
    first, its parts read with ``parts`` (``parted.join``: each checked against its name, the whole against the
    game's bounds).

    Raises:
        SaveError: the bytes are not a save this version can read.
    """
    check_size(data)
    data = bytes(data) if isinstance(data, Parted) else data  # as read from its file (orjson reads no subclass)
    header = _HEADER.match(data[:64])
    version = int(header.group(1)) if header else None
    if version == PARTED_VERSION:
        data = join(_parse(data), parts)
    elif version != SCHEMA_VERSION:  # another layout, or an older version
        raw = _parse(data)
        if raw.get("schema_version") != PARTED_VERSION:
            try:
                return SaveFile.model_validate(migrate(raw))
            except ValidationError as exc:
                raise SaveError(_explain(exc)) from None
        data = join(raw, parts)
    try:  # the current version: one strict parse-and-validate pass in pydantic-core
        return SaveFile.model_validate_json(data)
    except ValidationError as exc:
        raise SaveError(_explain(exc)) from None


def _parse(data: bytes) -> dict[str, Any]:
    if data[:2] == b"\x80\x04" or data[:1] == b"\x80":
        raise SaveError("not a save file: it holds Python pickle data, which is never loaded")
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SaveError(f"not a save file: not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise SaveError(f"not a save file: a JSON {type(raw).__name__}, not an object")
    return raw


def _explain(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    if first["type"] == "json_invalid":
        return f"not a save file: {first['msg']}"
    where = ".".join(str(part) for part in first["loc"]) or "save"
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"damaged save: {where}: {first['msg']}{more}"


def branch(save: SaveFile, turn: int, places: Mapping[str, str] | None = None, *, line: str = "") -> bytes:
    """The bytes of a save of the game in ``save`` as it was after ``turn``, on a line of its own (``line``, else a
    new one: ``lines.new_line``; issue 43, a branch on its game's line wrote over the line's later turns): the game
    state from its history,
    memory as of that turn (``MemoryState.as_of``: nothing recorded after it), the history up to it. Its place is
    the one told at that turn, else the state's node by its name in ``places`` (node id -> name), else its id
    (issue 43: a branch at turn 0 was said to be at the last turn's place).

    Raises:
        SaveError: the save's history does not reach ``turn`` (an older save has none), or is damaged.
    """
    history = GameHistory.of(save.history, save.game)
    try:
        game = history.state_at(turn)
    except HistoryError as exc:
        raise SaveError(str(exc)) from None
    memory = save.memory.as_of(turn)
    told = memory.told(turn)
    place = told.node if told is not None else (places or {}).get(game.node, game.node)
    line = line or new_line(save.session_id)
    fields = dict(save.__dict__, session_id=line, turn=turn, place=place, saved_at=now_iso(), kind="manual")
    memory_json = StateEncoder().encode_parted(memory)  # parted as the game's own saves are: they share the parts
    saved = history.saved(upto=turn, parted=True)
    fields.update(game=game, memory=orjson.Fragment(bytes(memory_json)), history={"start": saved["start"], "turns": saved["turns"]})
    fields["schema_version"] = SCHEMA_VERSION
    return _written(fields, parts_of(memory_json, saved), "the branch")


# ------------------------------------------------------------------ migrations
def _v0_to_v1(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 0, the prototype's format, to version 1.

    v0 was ``{"version": 0, "story": ID, "state": GameState, "memory": {...}}``
    with the L1 window and L3 synopsis stored apart (``window``, ``synopsis``),
    summaries without their synopsis, Bible entries without ``source``, and no
    content hash or save time.
    """
    memory = dict(_object(raw.get("memory"), "memory"))
    state = _object(raw.get("state"), "state")
    synopsis = memory.pop("synopsis", "")
    memory.pop("window", None)
    summaries = [dict(_object(s, "memory.summaries[]")) for s in memory.get("summaries", [])]
    if summaries and isinstance(synopsis, str):
        summaries[-1].setdefault("synopsis", synopsis)
    memory["summaries"] = summaries
    bible = []
    for entry in memory.get("bible", []):
        entry = dict(_object(entry, "memory.bible[]"))
        entry.setdefault("source", "content" if str(entry.get("id", "")).startswith("core-") else "consolidation")
        bible.append(entry)
    memory["bible"] = bible
    return {
        "schema_version": 1,
        "story_id": raw.get("story"),
        "content_hash": raw.get("content_hash", ""),
        "session_id": memory.get("session_id"),
        "turn": state.get("turn", 0),
        "saved_at": raw.get("saved_at", "unknown"),
        "kind": "manual",
        "game": state,
        "memory": memory,
    }


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _v0_to_v1}
"""``MIGRATIONS[n]`` turns a version-``n`` document into version ``n + 1``."""


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SaveError(f"damaged save: {where}: expected an object")
    return value


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring a parsed save of any known version up to :data:`SCHEMA_VERSION`."""
    version = raw.get("schema_version", raw.get("version"))
    if isinstance(version, bool) or not isinstance(version, int):
        raise SaveError("not a save file: no schema_version")
    if version > SCHEMA_VERSION:
        raise SaveError(
            f"made by a newer StoryEcho (save schema {version}; this version reads up to {PARTED_VERSION})"
        )
    if version < 0:
        raise SaveError(f"not a save file: schema_version {version}")
    while version < SCHEMA_VERSION:
        raw = MIGRATIONS[version](raw)
        version += 1
    return raw


# ---------------------------------------------------------- against the story
def check_against(save: SaveFile, pack: ContentPack) -> list[str]:
    """Check that ``save`` belongs to ``pack`` and refers only to what exists.

    Returns:
        Notices for the player (the content changed since the save).

    Raises:
        SaveError: a save of another story, or one that names places, items
            or quests the story does not have.
    """
    game = save.game
    if save.story_id != pack.id or game.story_id != pack.id:
        raise SaveError(f"this is a save of another story ({save.story_id!r}), not of {pack.id!r}")
    problems = []
    if game.node not in pack.nodes:
        problems.append(f"place {game.node!r}")
    dropped = [i for items in game.dropped_items.values() for i in items]  # shown at their place: must exist
    problems += [f"item {i!r}" for i in dict.fromkeys([*game.inventory, *dropped]) if i not in pack.items]
    quests = {q.id for q in [*pack.quests.main, *pack.quests.side]}
    problems += [f"quest {q!r}" for q in game.quests if q not in quests]
    if game.combat is not None and game.combat.enemy_id not in pack.enemies:
        problems.append(f"enemy {game.combat.enemy_id!r}")
    if game.hp > game.max_hp or game.max_hp <= 0:
        problems.append(f"hp {game.hp}/{game.max_hp}")
    if problems:
        raise SaveError(f"the save refers to what {pack.story.title} does not have: {', '.join(problems[:5])}")
    if save.content_hash != pack.content_hash:
        return [f"{pack.story.title} has changed since this save was made; the game continues with the new content."]
    return []
