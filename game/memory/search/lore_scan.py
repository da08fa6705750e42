"""What one turn's scan of imported lore works with (``activation.py`` runs it): the entries ready to scan, the
scan's state, the texts their keys read, and the two draws of SillyTavern's World Info, inclusion groups and
probability, each from the game's seed (:func:`roll`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from game.memory.search.lore_keys import WORD, Key, compile_key
from game.world.content import ContentPack, KnowledgeEntry
from game.world.lore import Activation

DEFAULT_SCAN_DEPTH = 2
"""Messages scanned when an entry names none: SillyTavern's default (the player's line and the narration before)."""


MAX_SCAN_DEPTH = 1000
"""The most messages any entry scans (SillyTavern's ``MAX_SCAN_DEPTH``)."""


MESSAGE_CHARS = 4000
"""The characters of one message a key reads (the newest): a bound on the work a hostile key can make."""


def roll(seed: int, turn: int, entry: str, purpose: str) -> float:
    """A number in [0, 100) drawn from the game's seed, the turn, the entry and what it decides: the same every time
    the same game plays the same turn."""
    digest = hashlib.blake2b(f"{seed}:{turn}:{entry}:{purpose}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 * 100


@dataclass(frozen=True)
class Rule:
    """One imported entry, ready to scan."""

    entry: KnowledgeEntry
    activation: Activation
    keys: tuple[Key, ...]
    secondary: tuple[Key, ...]
    groups: tuple[str, ...]
    id: str = ""
    """The entry's id (a field, not a property: a scan reads it for every entry it looks at)."""

    @classmethod
    def of(cls, entry: KnowledgeEntry, activation: Activation) -> Rule:
        case = bool(activation.case_sensitive)
        whole = activation.whole_words is not False

        def compiled(keys: list[str]) -> tuple[Key, ...]:
            return tuple(compile_key(k, case_sensitive=case, whole_words=whole) for k in keys if k.strip())

        groups = tuple(g.strip() for g in activation.group.split(",") if g.strip())
        keys, secondary = compiled(activation.keys), compiled(activation.secondary_keys)
        return cls(entry, activation, keys, secondary, groups, entry.id)


@dataclass
class Verdict:
    """Why an entry fired or did not, this turn."""

    entry: str
    title: str
    fired: bool
    why: str

    def as_json(self) -> dict[str, object]:
        return {"entry": self.entry, "title": self.title, "fired": self.fired, "why": self.why}


@dataclass
class Timed:
    """Sticky and cooldown effects running: entry id -> the last turn each lasts."""

    sticky: dict[str, int] = field(default_factory=dict)
    cooldown: dict[str, int] = field(default_factory=dict)

    def copy(self) -> Timed:
        return Timed(dict(self.sticky), dict(self.cooldown))


@dataclass
class Choice:
    """What a turn's lore holds: the rules fired (prompt order) with why, and every verdict."""

    fired: list[tuple[Rule, str]] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)


@dataclass
class Scan:
    """One turn's scan under way."""

    rules: Sequence[Rule]
    messages: list[str]
    turn: int
    seed: int
    timed: Timed
    fired: dict[str, tuple[Rule, str]] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    recursed: list[tuple[str, str]] = field(default_factory=list)
    """(entry id, text) of the fired entries whose text feeds the next scan."""
    groups_in: dict[str, str] = field(default_factory=dict)
    """Inclusion group -> the entry of it that went in this turn."""
    index: Index | None = None
    pack: ContentPack | None = None
    """The story, for the entries' conditions over the game's state (``activation.state_allows``)."""
    texts: dict[tuple[int, int | None, int], tuple[str, str]] = field(default_factory=dict)
    words: set[tuple[str, bool]] = field(default_factory=set)
    """The words of the widest text scanned and of the recursion buffer so far, as the index looks them up."""
    worded: int = -1
    """How many recursed texts :attr:`words` holds (-1: not even the messages yet)."""
    rolled_out: set[str] = field(default_factory=set)
    """Entries whose probability roll failed: not scanned again this turn (SillyTavern's failedProbabilityChecks)."""

    def say(self, rule: Rule, fired: bool, why: str) -> None:
        self.verdicts[rule.id] = Verdict(rule.id, rule.entry.title, fired, why)


def depth_of(activation: Activation) -> int:
    """The messages an entry's keys read: its scan depth, else all (NovelAI's characters bound it), else 2."""
    if activation.scan_depth is not None:
        return min(activation.scan_depth, MAX_SCAN_DEPTH)
    return MAX_SCAN_DEPTH if activation.scan_chars is not None else DEFAULT_SCAN_DEPTH


def text_of(scan: Scan, rule: Rule, step: int) -> tuple[str, str]:
    """What ``rule``'s keys read, and it lowercased: its scan depth of messages (and characters), then the
    recursion buffer. Cached for the scan: most entries read the same text."""
    activation = rule.activation
    recursed = len(scan.recursed) if step else 0
    cache_key = (depth_of(activation), activation.scan_chars, recursed)
    cached = scan.texts.get(cache_key)
    if cached is not None:
        return cached
    messages = scan.messages[: cache_key[0]]
    if activation.scan_chars is not None:  # the story's last characters: only the messages that reach them
        kept, size = [], 0
        for message in messages:
            if size >= activation.scan_chars:
                break
            kept.append(message)
            size += len(message) + 1
        text = "\n".join(reversed(kept))[-activation.scan_chars :] if activation.scan_chars else ""
    else:
        text = "\n".join(messages)
    if recursed:
        text += "\n" + "\n".join(t[-MESSAGE_CHARS:] for _, t in scan.recursed)
    scan.texts[cache_key] = (text, text.lower())
    return scan.texts[cache_key]


@dataclass
class Index:
    """Which entries a text's words can fire: an entry whose every key is one plain word is looked up by its words;
    the others (constant, several words, a regular expression, not whole words) are checked every scan."""

    by_word: dict[tuple[str, bool], list[Rule]]
    always: list[Rule]
    rank: dict[str, int]
    depth: int
    """The most messages any entry reads."""
    by_id: dict[str, Rule]
    levels: tuple[int, ...]
    """The entries' ``delay_until_recursion`` levels, lowest first."""
    readers: tuple[Rule, ...]
    """One entry for each way of reading the messages (scan depth, characters): their texts hold every word."""

    @classmethod
    def of(cls, rules: Sequence[Rule]) -> Index:
        by_word: dict[tuple[str, bool], list[Rule]] = {}
        always: list[Rule] = []
        depth = 0
        for rule in rules:
            activation = rule.activation
            depth = max(depth, depth_of(activation))
            if activation.constant or not all(k.word is not None for k in rule.keys):
                always.append(rule)
                continue
            for key in rule.keys:
                assert key.word is not None
                by_word.setdefault((key.word, key.lower), []).append(rule)
        levels = tuple(sorted({r.activation.delay_until_recursion for r in rules} - {0}))
        readers = {(depth_of(r.activation), r.activation.scan_chars): r for r in rules}
        ranks = {r.id: n for n, r in enumerate(rules)}
        return cls(by_word, always, ranks, depth, {r.id: r for r in rules}, levels, tuple(readers.values()))


def words_of(text: str) -> set[tuple[str, bool]]:
    """The words of ``text``, as they are (for case-sensitive keys) and lowercased."""
    found = set(WORD.findall(text))
    return {(w, False) for w in found} | {(w.lower(), True) for w in found}


def _score(rule: Rule, text: str, lowered: str) -> int:
    """Keys found, as SillyTavern's group scoring counts them (``getScore``)."""
    primary = sum(k.found(text, lowered) for k in rule.keys)
    secondary = sum(k.found(text, lowered) for k in rule.secondary)
    if rule.secondary and rule.activation.logic == "and_any":
        return primary + secondary
    if rule.secondary and rule.activation.logic == "and_all" and secondary == len(rule.secondary):
        return primary + secondary
    return primary


def one_per_group(scan: Scan, new: list[tuple[Rule, str]]) -> list[tuple[Rule, str]]:
    """``new`` with one entry per inclusion group (SillyTavern's ``filterByInclusionGroups``)."""
    out = list(new)
    members: dict[str, list[tuple[Rule, str]]] = {}
    for pair in new:
        for group in pair[0].groups:
            members.setdefault(group, []).append(pair)

    def lose(pair: tuple[Rule, str], why: str) -> None:
        if pair in out:
            out.remove(pair)
            told = scan.verdicts.get(pair[0].id)
            if told is None or why.split(" went to")[0] not in told.why:  # a later scan's loss says less
                scan.say(pair[0], False, f"{pair[1]}, but {why}")

    for group, pairs in members.items():
        sticky = [p for p in pairs if p[0].id in scan.timed.sticky]
        if group in scan.groups_in or sticky:
            holder = scan.groups_in.get(group) or sticky[0][0].id
            for pair in pairs:
                if pair not in sticky:
                    lose(pair, f"inclusion group {group!r} went to {holder!r}")
            continue
        if any(p[0].activation.group_scoring for p in pairs):
            scores = {p[0].id: _score(p[0], *text_of(scan, p[0], 0)) for p in pairs}
            best = max(scores.values())
            for pair in [p for p in pairs if p[0].activation.group_scoring and scores[p[0].id] < best]:
                lose(pair, f"inclusion group {group!r}: fewer keys matched ({scores[pair[0].id]} < {best})")
                pairs = [p for p in pairs if p is not pair]
        if len(pairs) <= 1:
            continue
        winner = _group_winner(scan, group, pairs)
        for pair in pairs:
            if pair is not winner:
                how = "by its override" if winner[0].activation.group_override else "by the weighted roll"
                lose(pair, f"inclusion group {group!r} went to {winner[0].id!r} {how}")
    return out


def _group_winner(scan: Scan, group: str, pairs: list[tuple[Rule, str]]) -> tuple[Rule, str]:
    overrides = [p for p in pairs if p[0].activation.group_override]
    if overrides:
        return max(overrides, key=lambda p: p[0].activation.order)  # the first of the highest order
    total = sum(p[0].activation.group_weight for p in pairs)
    drawn = roll(scan.seed, scan.turn, group, "group") / 100 * total
    reached = 0
    for pair in pairs:
        reached += pair[0].activation.group_weight
        if drawn <= reached:
            return pair
    return pairs[-1]


def rolled(scan: Scan, kept: list[tuple[Rule, str]]) -> list[tuple[Rule, str]]:
    """The entries whose probability roll lets them in (a sticky one is not rolled again)."""
    out = []
    for rule, why in kept:
        activation = rule.activation
        if activation.use_probability and activation.probability < 100 and rule.id not in scan.timed.sticky:
            drawn = roll(scan.seed, scan.turn, rule.id, "probability")
            if drawn > activation.probability:
                scan.say(rule, False, f"{why}, but the probability roll {drawn:.0f} > {activation.probability}")
                scan.rolled_out.add(rule.id)
                continue
            why += f" (probability roll {drawn:.0f} <= {activation.probability})"
        out.append((rule, why))
    return out
