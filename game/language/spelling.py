"""Typos forgiven against the words that can apply: "tkae the herb", "go nroth", "pickup the knife".

A word is corrected only to a word of a small vocabulary the caller gives (the lexicon's verbs for a clause's
first word, the names and ways in scope for its object), only when one candidate is nearest, and only within a
distance that grows with the word's length: a three-letter word may only have two letters swapped or one left
out, a word of four to seven letters one edit, a longer one two ("traipse" is not two edits from "raise"). The
distance is Damerau's (optimal string alignment): a swap of two neighbouring letters is one edit, as a typist
makes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from game.language.lexicon.tables import words


def distance(a: str, b: str, limit: int = 3) -> int:
    """Edits (insert, delete, replace, swap two neighbours) from ``a`` to ``b``; ``limit + 1`` once over ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def allowed(word: str) -> int:
    """How many edits a word of this length may hold and still be read as another."""
    return 2 if len(word) >= 8 else 1 if len(word) >= 4 else 0


def nearest(word: str, vocabulary: Iterable[str], *, short: bool = False) -> str | None:
    found = candidates(word, vocabulary, short=short)
    return found[0] if len(found) == 1 else None


def candidates(word: str, vocabulary: Iterable[str], *, short: bool = False) -> list[str]:
    """The words of ``vocabulary`` nearest ``word`` within :func:`allowed` edits (a swap of two letters, or one
    left out, also for a three-letter word); :func:`nearest` is the one, when only one is. ``short``: a small
    vocabulary (the ways out of one place), where one edit is forgiven in a word of any length ("uo": up)."""
    word = word.lower()
    limit = max(allowed(word), 1) if short else allowed(word)
    best: list[str] = []
    best_distance = limit + 1
    for candidate in set(vocabulary):
        if candidate == word:
            return [candidate]
        if abs(len(candidate) - len(word)) > max(limit, 1) or len(candidate) < 2:
            continue
        d = distance(word, candidate, max(limit, 1))
        swapped = d == 1 and sorted(word) == sorted(candidate)
        dropped = d == 1 and len(candidate) == len(word) + 1
        doubled = d == 1 and any(
            word[i] == word[i - 1] and word[:i] + word[i + 1 :] == candidate for i in range(1, len(word))
        )
        extra = d == 1 and len(candidate) == len(word) - 1 and len(candidate) >= 2
        if limit == 0 and not (swapped or dropped or doubled or extra):
            continue  # three letters: two swapped ("gte": get), one left out ("gve": give), doubled ("goo": go)
            # or one too many ("goe": go)
        if d < best_distance:
            best, best_distance = [candidate], d
        elif d == best_distance:
            best.append(candidate)
    if best_distance > max(limit, 1):
        return []
    swaps = [c for c in best if len(c) == len(word) and sorted(c) == sorted(word)]
    return sorted(swaps or best)  # "haed": head (two letters swapped, as a typist does), not hand or had


def split_run(word: str, phrases: Iterable[str], verbs: Iterable[str] = ()) -> str | None:
    """Two words typed as one, read apart: into one of ``phrases`` ("pickup": pick up), or a verb of ``verbs``
    and a little word after it ("grabthe": grab the)."""
    known, heads = set(phrases), set(verbs)
    for i in range(2, len(word) - 1):
        joined = f"{word[:i]} {word[i:]}"
        if joined in known or (word[:i] in heads and word[i:] in _LITTLE):
            return joined
    return None


_LITTLE = words("the a an my your his her this that it them up down in out on off north south east west")
"""Little words a verb may run into ("grabthe": grab the, "walkwest": walk west)."""
