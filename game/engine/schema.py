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
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from game.world.effects import Effects

MAX_CHOICES = 4


class TurnOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    narration: str = Field(min_length=1)
    choices: list[str] = []
    effects: Effects = Effects()
    memory_notes: list[str | dict[str, Any]] = Field(
        default=[], description="Candidate Story Bible facts: text, or {entry_type, key, title, content, importance}"
    )

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

    @field_validator("memory_notes", mode="before")
    @classmethod
    def _notes_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str | dict) else value

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
    try:
        return _validate(json.loads(raw)), False
    except (json.JSONDecodeError, TurnParseError) as first:
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
