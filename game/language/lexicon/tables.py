"""The lexicon's tables are written as text: these read them (words, "key:value" pairs, phrases between "|")."""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def pairs(text: str, sep: str = ":") -> dict[str, str]:
    """A table written as "key:value key:value ..." (``_`` joins the words of a phrase)."""
    return {k.replace("_", " "): v.replace("_", " ") for k, v in (p.split(sep) for p in text.split())}


def phrases(text: str) -> tuple[str, ...]:
    """Phrases written one after another, "|" between them."""
    return tuple(p.strip() for p in text.split("|") if p.strip())


def frames(text: str) -> tuple[str, ...]:
    """Phrases written one after another, "|" between them; "{s}" stands for the speaker, "i" or "we"."""
    out: list[str] = []
    for phrase in phrases(text):
        out += [phrase.replace("{s}", s) for s in ("i", "we")] if "{s}" in phrase else [phrase]
    return tuple(dict.fromkeys(out))
