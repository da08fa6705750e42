"""What an import did, for the author: the format found, each entry mapped (to what), skipped (and why), the
entries the guard held back, and the source's fields kept but unused."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ImportReport:
    """The report of one import (:func:`game.checker.imports.apply.import_file`)."""

    source: Path
    story: str
    folder: Path
    format: str = ""
    made: bool = False
    kept_as: str = ""
    mapped: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    guarded: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    entry_unused: Counter[str] = field(default_factory=Counter)
    """Unused fields of the entries, by name: how many entries carry each."""
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        made = " (made with --new)" if self.made else ""
        lines = [
            f"imported {self.source.name} into the story {self.story!r}{made}: {self.folder}",
            f"format: {self.format}",
            f"mapped ({len(self.mapped)}):",
            *(f"  {line}" for line in self.mapped),
            f"skipped ({len(self.skipped)}):",
            *(f"  {line}" for line in self.skipped or ["none"]),
        ]
        if self.guarded:
            lines += [f"held back by the guard ({len(self.guarded)}):", *(f"  {line}" for line in self.guarded)]
        unused = [
            *self.unused,
            *(f"{name} (in {n} entr{'y' if n == 1 else 'ies'})" for name, n in sorted(self.entry_unused.items())),
        ]
        lines.append(f"kept but unused (the file is kept whole as {self.kept_as}):")
        lines += [f"  {line}" for line in unused or ["none"]]
        lines += [f"note: {line}" for line in self.notes]
        lines.append(f"check it: storyecho content check --story {self.story}")
        return "\n".join(lines)
