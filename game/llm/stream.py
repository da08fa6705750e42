"""Narration as it streams: the ``narration`` text of a JSON turn, decoded while the turn is still arriving.

Narrator-neutral: the local narrator decodes llama.cpp's pieces with it, and
the TUI the JSON that a model narrator streams to ``on_text``.
"""

from __future__ import annotations

import contextlib
import re
from typing import ClassVar


class NarrationStream:
    """Decodes the ``narration`` string of a JSON turn as its text arrives in pieces."""

    _START = re.compile(r'"narration"\s*:\s*"')
    _ESCAPES: ClassVar[dict[str, str]] = {
        '"': '"',
        "\\": "\\",
        "/": "/",
        "b": "\b",
        "f": "\f",
        "n": "\n",
        "r": "\r",
        "t": "\t",
    }

    def __init__(self) -> None:
        self.buffer = ""
        self.pos: int | None = None
        self.done = False

    def feed(self, chunk: str) -> str:
        """Add ``chunk``; return the narration text it completes (may be empty)."""
        self.buffer += chunk
        if self.done:
            return ""
        if self.pos is None:
            match = self._START.search(self.buffer)
            if match is None:
                return ""
            self.pos = match.end()
        out: list[str] = []
        text, i = self.buffer, self.pos
        while i < len(text):
            char = text[i]
            if char == '"':
                self.done = True
                i += 1
                break
            if char != "\\":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(text):
                break  # the escape is not complete yet
            code = text[i + 1]
            if code == "u":
                if i + 6 > len(text):
                    break
                with contextlib.suppress(ValueError):
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
            else:
                out.append(self._ESCAPES.get(code, code))
                i += 2
        self.pos = i
        return "".join(out)
