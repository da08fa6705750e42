"""How an imported lorebook entry is called up: its author's activation settings (issue 44, item 1).

A ``knowledge.json`` entry that came from SillyTavern World Info, a card's ``character_book``, a ``lorebook_v3`` or
a NovelAI lorebook carries an ``activation`` object: its keys, secondary keys and their logic, matching options,
insertion order and place, probability, recursion, inclusion group, timed effects and scan depth, under names of
our own (the table in ``docs/authoring.md`` maps each to SillyTavern's and NovelAI's). Memory's activation
(``game/memory/search/activation.py``) fires the entry as SillyTavern does; ``storyecho content export`` writes the
same fields back. An entry without one is the story's own lore, recalled by meaning and keywords as before.

This module is plain data: the world layer validates it at load, as every other field of a pack.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from game.world.content_base import Model

Logic = Literal["and_any", "not_all", "not_any", "and_all"]
"""How secondary keys gate a primary match (SillyTavern's ``selectiveLogic`` 0, 1, 2, 3)."""
LOGIC_CODES: tuple[Logic, ...] = ("and_any", "not_all", "not_any", "and_all")
"""The logics in SillyTavern's numbering: ``LOGIC_CODES[selectiveLogic]``."""
MAX_KEYS = 200
"""Keys an entry may have (each list): a lorebook entry has a handful."""


class Activation(Model):
    """When an imported entry fires, as its author set it (defaults: SillyTavern's for a new entry)."""

    keys: list[str] = Field(default_factory=list, max_length=MAX_KEYS, description="primary keys (`key`)")
    secondary_keys: list[str] = Field(
        default_factory=list, max_length=MAX_KEYS, description="secondary keys (`keysecondary`), gated by `logic`"
    )
    logic: Logic = Field("and_any", description="how secondary keys gate a primary match (`selectiveLogic`)")
    selective: bool = Field(True, description="secondary keys are checked at all (`selective`)")
    case_sensitive: bool | None = Field(None, description="keys match case (null: the game's default, no)")
    whole_words: bool | None = Field(None, description="keys match whole words (null: the game's default, yes)")
    constant: bool = Field(False, description="fires every turn, keys or not")
    vectorized: bool = Field(False, description="also recalled by meaning, as the game's own lore is")
    order: int = Field(100, ge=-(10**6), le=10**6, description="insertion order: higher goes later in the prompt")
    position: int = Field(0, ge=0, le=7, description="SillyTavern's insertion position (kept, exported back)")
    depth: int = Field(4, ge=0, le=10**4, description="insertion depth for position 4 (kept, exported back)")
    role: int = Field(0, ge=0, le=2, description="message role for position 4 (kept, exported back)")
    probability: int = Field(100, ge=0, le=100, description="chance in percent that a match fires it")
    use_probability: bool = Field(True, description="`probability` is rolled at all")
    exclude_recursion: bool = Field(False, description="never fired by another entry's text")
    prevent_recursion: bool = Field(False, description="its text never fires other entries")
    delay_until_recursion: int = Field(0, ge=0, le=100, description="fires only at this recursion level or later")
    group: str = Field("", max_length=500, description="inclusion groups, comma-separated: one entry of a group fires")
    group_override: bool = Field(False, description="wins its group by order instead of a weighted roll")
    group_weight: int = Field(100, ge=0, le=10**6, description="its weight in the group's roll")
    group_scoring: bool | None = Field(None, description="the group's winners are those with most keys matched")
    sticky: int | None = Field(None, ge=0, le=10**4, description="once fired, stays this many more turns")
    cooldown: int | None = Field(None, ge=0, le=10**4, description="after it was in, cannot fire for this many turns")
    delay: int | None = Field(None, ge=0, le=10**6, description="cannot fire before this many turns were played")
    scan_depth: int | None = Field(None, ge=0, le=1000, description="messages scanned, the line first (null: 2)")
    scan_chars: int | None = Field(None, ge=0, le=10**6, description="NovelAI `searchRange`: characters scanned")
    automation_id: str = Field("", max_length=500, description="SillyTavern's automation id (kept, exported back)")
    uid: int | None = Field(None, ge=0, le=2**31, description="its uid in the source (kept, exported back)")
    display_index: int | None = Field(None, ge=0, le=2**31, description="its place in SillyTavern's list")
    name: str = Field("", max_length=1000, description="its name in the source (`comment`, `displayName`)")
    add_memo: bool = Field(False, description="SillyTavern shows its name (`addMemo`)")
    book: str = Field("", max_length=200, description="the card whose `character_book` it came from, if any")
