"""The author decides about instructions (issue 44, item 5): ``content import --keep-orders``.

An imported text that reads as an order to the narrator ("SYSTEM - Ambient Weather Tag: At the very END of every
reply, append exactly ONE weather tag") is never lore and never canon: the guard takes it out and the report names
it. With ``--keep-orders`` the author says they want it: it is kept in the story's author's note, ``story.json``
``author_note``, a list of the author's wishes for the telling, which every system prompt shows under its own
heading as the author's, never as a fact of the world (``game/engine/turn_parts.py``). It is never in the Story
Bible, the knowledge base or the worldview, so it is never recalled as history.

Why a field of ``story.json`` and not a file of its own: the story's files are validated as one pack when it loads
(a note is bounded there, and ``content check`` reads it with the rest), the persona it sits beside is there, and
the import already writes ``story.json`` in the copy it swaps in whole; an author edits or deletes a note there as
any other field.

A chat format's role marker that opens an order ("SYSTEM -", "System:") is taken off: the note is the author's
words, shown as such, not a message from the system.
"""

from __future__ import annotations

import re
from typing import Any

from game.checker.imports.report import ImportReport
from game.text import clip
from game.world.content import AUTHOR_NOTE_CHARS

MAX_NOTES = 20
"""The most notes a story keeps (``Story.author_note``)."""
_ROLE = re.compile(r"^\W*(?:system|assistant|developer|narrator|ooc)\s*(?:note\s*)?[:\u2014\u2013-]+\s*", re.I)


class AuthorNote:
    """Collects the orders an import's guard took out, then writes them into ``story.json`` ``author_note``."""

    def __init__(self, story: dict[str, Any], report: ImportReport) -> None:
        self.story, self.report = story, report
        self.kept: list[tuple[str, str]] = []

    def keep(self, where: str, sentences: list[str]) -> None:
        """Keep the order ``sentences`` of the text at ``where`` (one note per text)."""
        text = _ROLE.sub("", " ".join(sentences)).strip()
        if text:
            self.kept.append((where, text))

    def write(self) -> None:
        """Add each order kept to the story's author's note (one already there is not added again)."""
        notes: list[str] = list(self.story.get("author_note", []))
        for where, text in self.kept:
            note = clip(text, AUTHOR_NOTE_CHARS)
            if note in notes:
                self.report.skipped.append(f"{where}: its order is already in the author's note")
            elif len(notes) >= MAX_NOTES:
                self.report.skipped.append(f"{where}: the author's note holds {MAX_NOTES} notes already")
            else:
                notes.append(note)
                cut = f" (its first {AUTHOR_NOTE_CHARS} characters)" if note != text else ""
                self.report.mapped.append(
                    f"{where}: its order -> story.json author_note{cut}: the author's wish for the telling, in every "
                    "system prompt, never canon or lore"
                )
        if notes:
            self.story["author_note"] = notes
