"""The JSON turn a narrator must return, and its validation with one repair.

Validation is strict about shape (a JSON object with a non-empty ``narration``)
and lenient about what models commonly get slightly wrong (extra keys, a single
string where a list is expected, more than four choices). Repair, in order:
extract the outermost JSON object from surrounding prose or code fences, then
let ``json_repair`` fix syntax (trailing commas, single quotes, missing
brackets). A still-invalid answer is re-asked once by the pipeline with the
validation error attached.
"""

from __future__ import annotations

import json
from typing import Any

import json_repair
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from game.memory.records import NOTE_CHARS, MemoryNote
from game.world.effects import Effects

MAX_CHOICES = 4
MAX_NOTES = 8
"""Memory notes kept from one answer; the rest are dropped (a turn is not a lore dump)."""


def clean_notes(value: Any) -> tuple[list[str | MemoryNote], list[str]]:
    """The usable memory notes of an answer, and why each other one was dropped.

    A note is a non-empty string of at most ``NOTE_CHARS`` characters or an
    object that validates as a :class:`MemoryNote`; anything else is dropped
    with a reason, so one bad note never costs the turn or the other notes.
    """
    if value is None:
        return [], []
    items = [value] if isinstance(value, str | dict) else value if isinstance(value, list) else None
    if items is None:
        return [], [f"memory_notes: expected a list, got {type(value).__name__}"]
    kept: list[str | MemoryNote] = []
    dropped: list[str] = []
    for n, note in enumerate(items):
        if len(kept) == MAX_NOTES:
            dropped.append(f"memory_notes[{n}]: more than {MAX_NOTES} notes in one turn")
        elif isinstance(note, str):
            text = " ".join(note.split())
            if not text:
                dropped.append(f"memory_notes[{n}]: empty")
            elif len(text) > NOTE_CHARS:
                dropped.append(f"memory_notes[{n}]: longer than {NOTE_CHARS} characters")
            else:
                kept.append(text)
        elif isinstance(note, dict):
            try:
                kept.append(MemoryNote.model_validate(note))
            except ValidationError as exc:
                reasons = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'note'}: {e['msg']}" for e in exc.errors())
                dropped.append(f"memory_notes[{n}]: {reasons}")
        else:
            dropped.append(f"memory_notes[{n}]: expected text or an object, got {type(note).__name__}")
    return kept, dropped


class TurnOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    narration: str = Field(min_length=1)
    choices: list[str] = []
    effects: Effects = Effects()
    memory_notes: list[str | MemoryNote] = Field(
        default=[], description="Candidate Story Bible facts: text, or {entry_type, key, title, content, importance}"
    )
    dropped_notes: list[str] = Field(default=[], description="Why notes of the answer were dropped (not model input)")

    @model_validator(mode="before")
    @classmethod
    def _split_notes(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            data["memory_notes"], data["dropped_notes"] = clean_notes(data.get("memory_notes"))
        return data

    @field_validator("choices", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [v if isinstance(v, str) else json.dumps(v) for v in value]
        return value

    @field_validator("choices")
    @classmethod
    def _trim_choices(cls, value: list[str]) -> list[str]:
        return [c.strip() for c in value if c.strip()][:MAX_CHOICES]

    @field_validator("effects", mode="before")
    @classmethod
    def _null_effects(cls, value: Any) -> Any:
        return {} if value is None else value


class TurnParseError(ValueError):
    """The narrator's answer is not a valid JSON turn."""


def _extract_object(raw: str) -> str:
    start = raw.find("{")
    end = raw.rfind("}")
    if start == -1:
        raise TurnParseError("no JSON object found in the answer")
    return raw[start : end + 1] if end > start else raw[start:]


def _validate(data: Any) -> TurnOutput:
    if not isinstance(data, dict):
        raise TurnParseError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return TurnOutput.model_validate(data)
    except RecursionError:
        raise TurnParseError("the JSON is nested too deeply") from None
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'turn'}: {e['msg']}" for e in exc.errors())
        raise TurnParseError(details) from None


def parse_turn(raw: str) -> tuple[TurnOutput, bool]:
    """Parse a narrator answer.

    Returns:
        The validated turn and whether local repair was needed.

    Raises:
        TurnParseError: with a message fit to send back to the model.
    """
    if not isinstance(raw, str):
        raise TurnParseError(f"expected text, got {type(raw).__name__}")
    try:
        return _validate(json.loads(raw)), False
    except (ValueError, RecursionError) as first:  # JSONDecodeError and TurnParseError are ValueErrors
        try:
            candidate = _extract_object(raw)
            data = json_repair.loads(candidate)
        except TurnParseError:
            raise
        except Exception:  # noqa: BLE001 - json_repair raises assorted errors on garbage
            raise TurnParseError(f"unparseable JSON ({first})") from None
        if not data:
            raise TurnParseError(f"unparseable JSON ({first})") from None
        return _validate(data), True
