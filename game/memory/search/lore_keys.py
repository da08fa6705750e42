"""An imported entry's keys, matched as SillyTavern matches them (``WorldInfoBuffer.matchKeys`` in
``public/scripts/world-info.js``).

- A plain key matches anywhere in the text, case-insensitively unless the entry is case-sensitive.
- With whole words (the default, as SillyTavern's default settings have it), a one-word key must stand between
  non-word characters or the text's ends; a key of several words matches as it is written, anywhere.
- A key written ``/pattern/flags`` is a regular expression (flags ``i``, ``s``, ``m``; ``g``, ``u``, ``y`` mean
  nothing here). The file is untrusted: a pattern that could take exponential time (a repeated group holding a
  repetition or an alternative, a back-reference) or longer than :data:`MAX_PATTERN` is not used, and the debug
  trace says why; every text a key reads is cut to :data:`~game.memory.search.activation.MESSAGE_CHARS` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_PATTERN = 300
"""The longest regular-expression key used (characters)."""
_JS_REGEX = re.compile(r"^/([\s\S]+?)/([gimsuy]*)$")
_FLAGS = {"i": re.I, "s": re.S, "m": re.M}


WORD = re.compile(r"\w+")
"""A word, as whole-word matching and the word index (``activation.py``) read one."""


@dataclass(frozen=True)
class Key:
    """One key, ready to match: ``refused`` says why a regular expression is not used ("" when it is).

    A plain key is found as SillyTavern finds it: the text and the key lowercased (unless case-sensitive), the key
    anywhere in the text, or, for whole words, between non-word characters. ``word`` is the key as one word of the
    text (lowercased unless case-sensitive) when that is all a match needs, so a scan can look it up in the text's
    words instead of searching.
    """

    text: str
    pattern: re.Pattern[str] | None
    refused: str = ""
    needle: str | None = None
    """A plain key as searched for (lowercased unless case-sensitive); None for a regular expression."""
    lower: bool = True
    word: str | None = None

    def found(self, haystack: str, lowered: str | None = None) -> bool:
        """Whether the key is in ``haystack`` (``lowered``: ``haystack.lower()``, when the caller has it)."""
        if self.pattern is None:
            return False
        if self.needle is None:
            return self.pattern.search(haystack) is not None
        text = (lowered if lowered is not None else haystack.lower()) if self.lower else haystack
        return self.needle in text and self.pattern.search(text) is not None


def compile_key(key: str, *, case_sensitive: bool, whole_words: bool) -> Key:
    """``key`` as SillyTavern matches it (see the module's docstring)."""
    written = _JS_REGEX.match(key)
    if written is not None:
        return _regex_key(key, written.group(1), written.group(2))
    needle = key if case_sensitive else key.lower()
    lower = not case_sensitive
    if whole_words and len(key.split()) == 1:
        word = needle if WORD.fullmatch(needle) else None
        return Key(key, re.compile(rf"(?:^|\W){re.escape(needle)}(?:$|\W)"), "", needle, lower, word)
    return Key(key, re.compile(re.escape(needle)), "", needle, lower)


def _regex_key(key: str, body: str, flag_letters: str) -> Key:
    if len(body) > MAX_PATTERN:
        return Key(key, None, f"a regular expression over {MAX_PATTERN} characters")
    risk = _risky(body)
    if risk:
        return Key(key, None, risk)
    flags = 0
    for letter in flag_letters:
        flags |= _FLAGS.get(letter, 0)
    try:
        return Key(key, re.compile(re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", body), flags))
    except re.error as exc:
        return Key(key, None, f"not a regular expression Python reads ({exc})")


def _risky(pattern: str) -> str:
    """Why ``pattern`` could take exponential time on a hostile text ("" when it cannot, as far as this reads)."""
    if re.search(r"\\[1-9]|\\k<", pattern):
        return "a back-reference, which can take exponential time"
    inner: list[bool] = []  # per open group: whether it holds a repetition or an alternative
    position, in_class = 0, False
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            inner.append(False)
        elif char == ")" and inner:
            held = inner.pop()
            if held and pattern[position + 1 : position + 2] in ("*", "+", "{"):
                return "a repeated group holding a repetition or an alternative, which can take exponential time"
            if inner:
                inner[-1] = inner[-1] or held
        elif char in "*+{|" and inner:
            inner[-1] = True
        position += 1
    return ""
