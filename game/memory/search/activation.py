"""Imported lore fires as its author meant: SillyTavern's World Info activation, turn by turn (issue 44, item 1).

An entry of ``knowledge.json`` with an ``activation`` (:class:`game.world.lore.Activation`, written by
``content import``) is called up by its keys, not by meaning: the story's own lore (no ``activation``) and an
imported entry marked ``vectorized`` are still recalled by meaning (``knowledge.py``). What this module does
follows ``checkWorldInfo`` in SillyTavern's ``public/scripts/world-info.js``:

- **What is scanned.** The player's line and the messages before it, newest first, as many as the entry's
  ``scan_depth`` (null: :data:`DEFAULT_SCAN_DEPTH`, SillyTavern's default, which counts the line being sent as
  the first message); a NovelAI entry's ``scan_chars`` keeps the last characters of that text.
- **Keys** (``lore_keys.py``): a primary key found fires the entry unless its secondary keys say otherwise:
  AND ANY (one of them found), AND ALL (all), NOT ANY (none), NOT ALL (not all). ``constant`` fires every turn.
- **Recursion**: the text of the entries fired feeds a further scan (not the text of a ``prevent_recursion``
  entry; an ``exclude_recursion`` entry is never fired by it; ``delay_until_recursion`` N fires only from the
  N-th level on), at most :data:`MAX_RECURSION_STEPS` scans a turn.
- **Inclusion groups**: of the entries of one group fired in a scan, one goes in: a sticky one, else the best
  key score when the group asks (``group_scoring``), else the ``group_override`` entry of highest order, else a
  roll weighted by ``group_weight``. A group that already went in this turn takes no other.
- **Probability**: an entry with ``use_probability`` and ``probability`` under 100 goes in when a roll of 0-100
  is at most its probability. Every roll (probability, group) is drawn from the game's seed, the turn and the
  entry (:func:`roll`): the same game plays the same lore again, in a replay, after a load, in a test.
- **Timed effects, in turns**: ``sticky`` N keeps a fired entry in the N turns after (no key, no roll needed);
  ``cooldown`` N keeps it out for the N turns after it was last in; ``delay`` N keeps it out until N turns were
  played. They are worked out from the game's log (:meth:`LoreActivation.at`), not kept in the save: a load, an
  undo or a branch has them exactly as the line played them.
- **Order**: the entries fired go into the prompt's lore in SillyTavern's order, lower ``order`` first (a higher
  one sits later, nearer the action). ``position``, ``depth`` and ``role`` are kept and exported back, but the
  prompt has one place for lore.

Every entry whose keys the text holds gets a verdict saying why it fired (the key, constant, sticky, recursion
from which entry, meaning) or why not (secondary keys, a roll, cooldown, delay, the group it lost to): the debug
panel and ``--json``'s ``retrieval_meta.lore`` show them. :func:`state_allows` is the one place where a
condition on the game's state gates an entry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from game.memory.search.lore_keys import Key
from game.memory.search.lore_scan import (
    MESSAGE_CHARS,
    Choice,
    Index,
    Rule,
    Scan,
    Timed,
    depth_of,
    one_per_group,
    rolled,
    text_of,
    words_of,
)
from game.world.content import ContentPack, KnowledgeEntry
from game.world.lore_state import lore_gate
from game.world.state import GameState

MAX_RECURSION_STEPS = 5
"""Scans a turn at most (the first and four recursion levels): each must fire a new entry to go on anyway."""
CACHE_TURNS = 4096
"""Timed states kept for :meth:`LoreActivation.at` (one per turn replayed)."""
LOGIC_NAMES = {"and_any": "AND ANY", "not_all": "NOT ALL", "not_any": "NOT ANY", "and_all": "AND ALL"}


def state_allows(entry: KnowledgeEntry, state: GameState | None, pack: ContentPack | None = None) -> str:
    """Why the game's state keeps ``entry`` out this turn ("" when it does not): the one place where a condition on
    the game's state (its ``when``: a place, a flag, a quest stage) gates an imported entry before its keys are
    read (``game/world/lore_state.py``)."""
    if state is None or pack is None:
        return ""
    return lore_gate(entry.when, state, pack) or ""


class LoreActivation:
    """The imported entries of a story, fired turn by turn as their authors meant (see the module's docstring)."""

    def __init__(self, pack: ContentPack | None) -> None:
        self._pack = pack
        entries = [e for e in (pack.knowledge if pack is not None else []) if e.activation is not None]
        position = {e.id: n for n, e in enumerate(entries)}
        rules = [Rule.of(e, e.activation) for e in entries if e.activation is not None]
        self.rules = sorted(rules, key=lambda r: (-r.activation.order, position[r.id]))  # SillyTavern's sortFn
        self._rank = {r.id: n for n, r in enumerate(self.rules)}
        self._index = Index.of(self.rules)
        self.timed_rules = any(r.activation.sticky or r.activation.cooldown for r in self.rules)
        self._states: dict[str, Timed] = {}
        self._chain: list[tuple[tuple[int, str, str], str]] = []
        """The last log seen, each turn with its digest (:meth:`_digests`)."""
        self._chain_seed: int | None = None

    def __bool__(self) -> bool:
        return bool(self.rules)

    @property
    def turns_needed(self) -> int:
        """The played turns the deepest scan reads (two messages a turn), when no entry has a timed effect."""
        return max((depth_of(r.activation) for r in self.rules), default=0) // 2 + 1

    def at(self, log: Sequence[tuple[int, str, str]], action: str, state: GameState) -> Choice:
        """The lore of the turn after ``state.turn`` for ``action``; ``log`` is every played turn up to it, oldest
        first, as (turn, action, narration). Sticky and cooldown effects are replayed from the log (cached)."""
        turn = state.turn + 1
        timed = self._timed_after(log, state.seed) if self.timed_rules else Timed()
        messages = _messages(action, log, self._index.depth)
        return self.choose(messages, turn, state.seed, timed.copy(), state)

    def _timed_after(self, log: Sequence[tuple[int, str, str]], seed: int) -> Timed:
        """The timed effects after the last turn of ``log``, each past turn's lore replayed once and cached by the
        log up to it (a digest chain: an undo or a load finds what it shares with the line it came from)."""
        digests = self._digests(log, seed)
        start, timed = 0, Timed()
        for n in range(len(digests) - 1, -1, -1):
            if digests[n] in self._states:
                start, timed = n + 1, self._states[digests[n]].copy()
                break
        for n in range(start, len(log)):
            turn, action, _ = log[n]
            self.choose(_messages(action, log, self._index.depth, n), turn, seed, timed, None)
            if len(self._states) >= CACHE_TURNS:
                self._states.clear()
            self._states[digests[n]] = timed.copy()
        return timed

    def _digests(self, log: Sequence[tuple[int, str, str]], seed: int) -> list[str]:
        """Each turn's digest of the log up to it (and the seed), each from the one before: only the turns past what
        the last call's log shares with this one are hashed (a game's log grows by a turn a call)."""
        chain = self._chain if self._chain_seed == seed else []
        same, limit = 0, min(len(log), len(chain))
        while same < limit and chain[same][0] == log[same]:  # the same strings: compared by identity first
            same += 1
        del chain[same:]
        previous = chain[-1][1] if chain else hashlib.blake2b(str(seed).encode(), digest_size=16).hexdigest()
        for turn, action, narration in log[same:]:
            digest = hashlib.blake2b(f"{previous}\x00{turn}\x00{action}\x00{narration}".encode(), digest_size=16)
            previous = digest.hexdigest()
            chain.append(((turn, action, narration), previous))
        self._chain, self._chain_seed = chain, seed
        return [digest for _, digest in chain]

    def choose(self, messages: list[str], turn: int, seed: int, timed: Timed, state: GameState | None = None) -> Choice:
        """The entries that fire at ``turn`` over ``messages`` (newest first, the player's line first); ``timed`` is
        brought to the end of the turn. ``state`` is the game's (None in a replay of past turns)."""
        scan = Scan(self.rules, messages, turn, seed, timed, index=self._index, pack=self._pack)
        _expire(scan)
        levels = list(self._index.levels)
        level = levels.pop(0) if levels else 0
        for step in range(MAX_RECURSION_STEPS):
            new = _candidates(scan, step, level, state)
            kept = one_per_group(scan, new)
            passed = rolled(scan, kept)
            for rule, why in passed:
                scan.fired[rule.id] = (rule, why)
                scan.say(rule, True, why)
                for group in rule.groups:
                    scan.groups_in.setdefault(group, rule.id)
                if not rule.activation.prevent_recursion:
                    scan.recursed.append((rule.id, rule.entry.content))
            if not any(not r.activation.prevent_recursion for r, _ in passed):
                if not levels:
                    break
                level = levels.pop(0)
        _start_effects(scan)
        fired = sorted(scan.fired.values(), key=lambda pair: (pair[0].activation.order, self._rank[pair[0].id]))
        return Choice(fired, list(scan.verdicts.values()))


def _messages(action: str, log: Sequence[tuple[int, str, str]], depth: int, end: int | None = None) -> list[str]:
    """The player's line and the ``depth`` - 1 messages before it in ``log[:end]``, newest first, each cut to its
    last ``MESSAGE_CHARS``."""
    end = len(log) if end is None else end
    out = [action]
    for n in range(end - 1, max(-1, end - 1 - depth // 2 - 1), -1):
        _, said, told = log[n]
        out += [told, said]
    return [m[-MESSAGE_CHARS:] for m in out[: max(depth, 1)]]


def _expire(scan: Scan) -> None:
    """End the effects past their last turn; a sticky effect ending starts the entry's cooldown (SillyTavern)."""
    timed, turn = scan.timed, scan.turn
    assert scan.index is not None
    by_id = scan.index.by_id
    for entry, last in list(timed.sticky.items()):
        if turn > last:
            del timed.sticky[entry]
            rule = by_id.get(entry)
            if rule is not None and rule.activation.cooldown:
                timed.cooldown[entry] = turn + rule.activation.cooldown - 1
    for entry, last in list(timed.cooldown.items()):
        if turn > last:
            del timed.cooldown[entry]


def _start_effects(scan: Scan) -> None:
    """The effects the entries fired this turn start (one already running goes on as it was)."""
    for rule, _ in scan.fired.values():
        if rule.activation.sticky and rule.id not in scan.timed.sticky:
            scan.timed.sticky[rule.id] = scan.turn + rule.activation.sticky
        if rule.activation.cooldown and rule.id not in scan.timed.cooldown:
            scan.timed.cooldown[rule.id] = scan.turn + rule.activation.cooldown


def _looked_up(scan: Scan) -> list[Rule]:
    """The entries whose keys this scan could find (and the sticky ones), in the scanning order."""
    index = scan.index
    assert index is not None
    if scan.worded < 0:  # the words of every text an entry reads (a few texts: most entries read the same)
        scan.words = set().union(*(words_of(text_of(scan, rule, 0)[0]) for rule in index.readers))
        scan.worded = 0
    for _, text in scan.recursed[scan.worded :]:
        scan.words |= words_of(text[-MESSAGE_CHARS:])
    scan.worded = len(scan.recursed)
    chosen = {r.id: r for r in index.always}
    for word in scan.words:
        chosen.update((r.id, r) for r in index.by_word.get(word, ()))
    chosen.update((entry, index.by_id[entry]) for entry in scan.timed.sticky if entry in index.by_id)
    return sorted(chosen.values(), key=lambda r: index.rank[r.id])


def _candidates(scan: Scan, step: int, level: int, state: GameState | None) -> list[tuple[Rule, str]]:
    """The entries this scan finds (sticky ones first), each with why; verdicts for those held back."""
    found: list[tuple[Rule, str]] = []
    for rule in _looked_up(scan):
        if rule.id in scan.fired or rule.id in scan.rolled_out:
            continue
        why = _why_fired(scan, rule, step, level, state)
        if why:
            found.append((rule, why))
    return sorted(found, key=lambda pair: pair[0].id not in scan.timed.sticky)


def _why_fired(scan: Scan, rule: Rule, step: int, level: int, state: GameState | None) -> str:
    """Why ``rule`` fires in this scan ("" when it does not; a verdict says why when its keys were seen)."""
    activation, timed = rule.activation, scan.timed
    sticky = rule.id in timed.sticky
    gated = state_allows(rule.entry, state, scan.pack)
    if gated:
        return _held(scan, rule, gated)
    if activation.delay and scan.turn - 1 < activation.delay:
        return _held(scan, rule, f"delay: held back until {activation.delay} turns were played")
    if rule.id in timed.cooldown and not sticky:
        return _held(scan, rule, f"cooldown: out until after turn {timed.cooldown[rule.id]}")
    if activation.delay_until_recursion and not sticky and (not step or activation.delay_until_recursion > level):
        return _held(scan, rule, f"waits for recursion level {activation.delay_until_recursion}")
    if step and activation.exclude_recursion and not sticky:
        return ""
    if activation.constant:
        return "constant"
    if sticky:
        return f"sticky: stays until turn {timed.sticky[rule.id]}"
    if not rule.keys:
        return ""
    text, lowered = text_of(scan, rule, step)
    primary = next((k for k in rule.keys if k.found(text, lowered)), None)
    if primary is None:
        return ""
    why = f"key {primary.text!r} found" + _recursion_source(scan, rule, primary, step)
    if activation.selective and rule.secondary:
        failed = _secondary_fails(rule, text, lowered)
        if failed:
            scan.say(rule, False, f"{why}, but {failed}")
            return ""
        why += f" ({LOGIC_NAMES[activation.logic]} {', '.join(repr(k.text) for k in rule.secondary)})"
    return why


def _held(scan: Scan, rule: Rule, why: str) -> str:
    """Record why ``rule`` is held back when its keys are in the text (or it is constant or sticky); fire nothing."""
    if rule.activation.constant or any(k.found(*text_of(scan, rule, 1)) for k in rule.keys):
        scan.say(rule, False, why)
    return ""


def _recursion_source(scan: Scan, rule: Rule, key: Key, step: int) -> str:
    """ ", from <entry>'s text" when ``key`` was only found in a fired entry's text."""
    if not step or key.found(*text_of(scan, rule, 0)):
        return ""
    source = next((entry for entry, text in scan.recursed if key.found(text)), "")
    return f", in the text of {source!r} (recursion)" if source else ""


def _secondary_fails(rule: Rule, text: str, lowered: str) -> str:
    """Why the secondary keys keep ``rule`` out ("" when they let it fire)."""
    found = [k.found(text, lowered) for k in rule.secondary]
    logic = rule.activation.logic
    passes = {
        "and_any": any(found),
        "not_all": not all(found),
        "not_any": not any(found),
        "and_all": all(found),
    }[logic]
    if passes:
        return ""
    keys = ", ".join(repr(k.text) for k in rule.secondary)
    return f"secondary keys failed ({LOGIC_NAMES[logic]} {keys})"
