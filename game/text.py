"""Text utilities every layer shares: token estimates, keywords, name matching.

This module imports nothing from the game, so the world, memory, narrators and
engine can all use it without importing each other (an import-linter contract
in ``pyproject.toml`` keeps the layers in order).

- Tokens: narrators with a tokenizer of their own (llama.cpp) or an endpoint
  that reports usage give exact counts; everywhere else the prompt size is
  *estimated* as one token per four characters (rounded up), the usual rule of
  thumb for English text with BPE tokenizers. Traces say which one they report.
- Keywords: lower-case content words with a light suffix stemmer, for BM25 and
  for word-overlap matching.
- Names: one matcher for "which of these things does the text name": exact
  whole-word mentions (memory's query rewriting and the Story Bible) and the
  best fuzzy match (the scripted narrator resolving "the old hunter").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CHARS_PER_TOKEN = 4
DEFAULT_PROMPT_BUDGET = 2200
"""Tokens the whole narrator prompt may take (system, window and user message) unless configured.

Under 2,500 with room for a chat template's markup (issue 11; ``bench/prompt_size.py`` plays 500 turns
at it). At 3,000 the prompt settled at 2,500-2,950 estimated tokens once every memory block was full; at
2,100 a fact told to an NPC 20 turns earlier no longer reaches it (``tests/test_scripted.py``)."""


def clip(text: str, chars: int) -> str:
    """``text`` within ``chars`` characters: cut at the last space that fits, with an ellipsis.

    A "word" longer than the budget (10,000 characters typed without a space)
    is cut too: a budget in characters holds whatever the text is made of.
    """
    text = text.strip()
    if len(text) <= chars:
        return text
    cut = text[: chars - 1]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


_STOPWORD_TEXT = """
a an the and or but if then else of to in on at by for with about against between into through during
before after above below from up down out off over under again further once here there when where why how all any both
each few more most other some such no nor not only own same so than too very s t can will just don should now i me my
myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they
them their theirs themselves what which who whom this that these those am is are was were be been being have has had
having do does did doing would could might must shall may also
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("edly", ""), ("ed", ""), ("ly", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light suffix stemmer: enough to match 'swamps'/'swamp', 'hunted'/'hunting'/'hunt'."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + replacement
    return word


def keywords(text: str) -> list[str]:
    """Lower-case, stemmed content words of ``text`` (repeats kept)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def slug(text: str, words: int = 6) -> str:
    """A short key from the first content words of ``text``."""
    return "-".join(keywords(text)[:words]) or "note"


Named = Iterable[tuple[str, Iterable[str]]]
"""Candidates: (id, the names it goes by)."""


def mentions(text: str, candidates: Named, *, masked: Iterable[str] = ()) -> tuple[list[str], str]:
    """The ids whose names ``text`` mentions as whole words, and the text without those names.

    Longer names are matched first and a matched span is not matched again, so
    "Garrick's son" names Garrick once. Phrases in ``masked`` are set aside
    before matching (a place name such as "the hunter's lodge" does not name
    the hunter).
    """
    hidden = text
    for phrase in sorted({p for p in masked if p}, key=len, reverse=True):
        hidden = re.sub(rf"\b{re.escape(phrase)}\b", lambda m: "\0" * len(m.group()), hidden, flags=re.I)
    table = sorted(
        ((name, entity_id) for entity_id, names in candidates for name in names if name),
        key=lambda pair: -len(pair[0]),
    )
    found: list[str] = []
    rest = text
    for name, entity_id in table:
        for match in re.finditer(rf"\b{re.escape(name)}(?:'s)?\b", hidden, re.I):
            if entity_id not in found:
                found.append(entity_id)
            start, end = match.span()
            rest = rest[:start] + " " * (end - start) + rest[end:]
            hidden = hidden[:start] + "\0" * (end - start) + hidden[end:]
    return found, " ".join(rest.split())


def best_match(text: str, candidates: Named) -> str | None:
    """The id ``text`` refers to: the one it names, else the one sharing most words (None if none share any).

    The same matcher as :func:`mentions` first: a text that names exactly one
    candidate (or is its id) means that one. Otherwise the overlap of keywords,
    weighed against the length of the name, decides ("herb" finds the
    Healing Herb).
    """
    pool = [(cid, list(names)) for cid, names in candidates]
    lowered = text.lower().strip()
    named = mentions(text, pool)[0]
    if len(named) == 1:
        return named[0]
    exact = [cid for cid, _ in pool if cid == lowered]
    if exact:
        return exact[0]
    wanted = set(keywords(text))
    best: tuple[float, str] | None = None
    for cid, names in [c for c in pool if c[0] in named] or pool:
        for name in names:
            name_l = name.lower()
            overlap = len(wanted & set(keywords(name_l.replace("_", " "))))
            if overlap:
                score = overlap / (1 + len(set(keywords(name_l))))
                if best is None or score > best[0]:
                    best = (score, cid)
    return best[1] if best else None
