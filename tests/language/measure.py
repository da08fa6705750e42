"""Measuring the understanding corpus (issue 41): misses, false refusals and confirmations, both narrators.

Each row is played through the real pipeline from the scene it sets (``acts.state_for``): the whole line (every
act of a sequence, each its own turn) and, when the game asks back, the answer a player who meant the row's acts
would give ("yes" when the offer is the act wanted, else "no"). Then:

- a row that asks for acts is **carried out** when its acts were applied in order; **asked back** when the game
  offered them first; a **false refusal** otherwise, **silent** when no sentence said why (no refusal told, no
  rules' message). A false refusal that applied some other act instead (not a word with someone) is counted again
  as a **wrong act**: worse than silence ("pick up the circlet" walking away), and not to be read as one;
- a row that asks nothing **misses** when any act but talking was applied (or talking, when it is the act it
  tempts), and is **asked back** when the game offered an act for it.

Two narrators play each row: the scripted one, and :class:`ProposingNarrator`, a fake model that proposes what a
careless endpoint would (the row's wanted act, or the act its words tempt).

``python -m tests.language.measure [FILE ...]`` prints the table for the development corpus and any other row
files (the held-out part) and writes ``--json`` when asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from game.engine.pipeline import TurnPipeline, TurnResult
from game.llm.base import NarratorBase, PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.search.knowledge import KnowledgeBase
from game.memory.settings import MemoryConfig
from game.world.asked import Asked
from game.world.content import ContentPack
from tests.language.acts import (
    acts_applied,
    effects_of,
    first_not_done,
    load_module,
    same_act,
    shipped_packs,
    state_for,
)
from tests.language.rows import Row


class ProposingNarrator(NarratorBase):
    """A fake model endpoint (issue 41's measurement): it answers every turn with a valid JSON turn proposing the
    row's effects, as a model that reads the player's words carelessly would: the wanted acts of a row that asks
    for them (the next one each turn of a sequence), the tempting acts of a row that asks nothing. A fake because
    no capable model runs here and the proposal must be the row's, not a guess."""

    name = "proposing"

    def __init__(self, row: Row) -> None:
        self.row = row
        self.turns = 0

    def narrate(self, bundle: PromptBundle) -> str:
        wanted = self.row.want[self.turns : self.turns + 1] if self.row.want else self.row.tempt
        effects: dict[str, Any] = {}
        for act in wanted:
            for key, value in effects_of(act, bundle.state).items():
                effects[key] = [*effects.get(key, []), *value] if isinstance(value, list) else value
        if not bundle.refused:
            self.turns += 1
        return json.dumps({"narration": "The moment passes.", "choices": ["look"], "effects": effects})

    def summarize(self, text: str, max_words: int = 60) -> str:
        return " ".join(text.split()[:max_words])


@dataclass
class Outcome:
    """What one row came to."""

    row: Row
    applied: list[str]
    asked_back: bool
    told: str
    verdict: str
    """carried, confirmed, refused, silent (asking rows); fine, miss (rows asking nothing)."""
    wrong: bool = False
    """A row that asks for acts, not carried out, where another act than the ones asked (or a talk) was applied."""


@dataclass
class Report:
    """The counts over a set of rows for one narrator."""

    narrator: str
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, verdict: str, asking: bool | None = None) -> int:
        return sum(1 for o in self.outcomes if o.verdict == verdict and (asking is None or o.row.asks == asking))

    @property
    def asking(self) -> int:
        return sum(1 for o in self.outcomes if o.row.asks)

    @property
    def nothing(self) -> int:
        return sum(1 for o in self.outcomes if not o.row.asks)

    @property
    def asked_back(self) -> int:
        return sum(1 for o in self.outcomes if o.row.asks and o.asked_back)

    def rates(self) -> dict[str, float]:
        asking, nothing = max(self.asking, 1), max(self.nothing, 1)
        return {
            "carried_out": (self.count("carried") + self.count("confirmed")) / asking,
            "misses": self.count("miss") / nothing,
            "false_refusals": (self.count("refused") + self.count("silent")) / asking,
            "silent_false_refusals": self.count("silent") / asking,
            "wrong_acts": sum(1 for o in self.outcomes if o.row.asks and o.wrong) / asking,
            "confirmations": self.asked_back / asking,
        }

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict in ("miss", "refused", "silent")]


_LORE: dict[int, tuple[ContentPack, KnowledgeBase]] = {}


def lore_of(pack: ContentPack) -> KnowledgeBase:
    """``pack``'s knowledge base, indexed by keyword once and shared by every row's memory (``GameMemory``'s
    ``knowledge``): without a store or an embedder nothing a turn does writes to it, and indexing the lore again
    for each of the corpus's ~4,400 plays took about 40% of their time."""
    held = _LORE.get(id(pack))
    if held is None or held[0] is not pack:
        held = _LORE[id(pack)] = (pack, KnowledgeBase(pack, None, None))
        held[1].build()
    return held[1]


def engine_for(row: Row, pack: ContentPack, narrator: str) -> TurnPipeline:
    """The real pipeline at the row's scene, with keyword memory (the story's lore indexed once) and the chosen
    narrator."""
    voice = ScriptedNarrator(pack) if narrator == "scripted" else ProposingNarrator(row)
    memory = GameMemory(
        pack,
        ScriptedNarrator(pack),  # type: ignore[arg-type]
        config=MemoryConfig(),
        knowledge=lore_of(pack),
        background=False,
    )
    return TurnPipeline(pack, state_for(row, pack), voice, memory)


def play_row(row: Row, pack: ContentPack, narrator: str) -> Outcome:
    """Play ``row``'s line (and the answer to any question back) and judge it."""
    engine = engine_for(row, pack, narrator)
    results = engine.play_all(row.action)
    asked_back = any(r.asking for r in results)
    if results[-1].asking:
        results += engine.play_all(_answer(row, engine.pending))
    applied = acts_applied([a for r in results for a in r.applied])
    told = "\n".join(r.narration for r in results)
    verdict = _verdict(row, applied, results)
    wrong = verdict in ("refused", "silent") and any(
        a.split()[0] in _ACTS and not a.startswith("talk ") and not any(same_act(w, a) for w in row.want)
        for a in applied
    )
    return Outcome(row, applied, asked_back, told, verdict, wrong)


def _answer(row: Row, pending: Asked | None) -> str:
    """What a player who meant the row's acts answers the question back: yes, the number of the act meant, or no
    (a whole line offered together: yes when every act of it was meant)."""
    offer = pending.offer if pending is not None else ()
    meant = [a for a in offer if any(same_act(w, _act(a)) for w in row.want)]
    if pending is not None and pending.together:
        return "yes" if len(meant) == len(offer) else "no"
    if not meant:
        return "no"
    return "yes" if len(offer) == 1 else str(offer.index(meant[0]) + 1)


def _act(act: Any) -> str:
    """A resolved :class:`~game.world.resolve.Act` as the corpus writes acts."""
    ids = " ".join(x for x in (act.target, act.to) if x)
    return f"{act.verb} {ids}".strip()


def _verdict(row: Row, applied: list[str], results: list[TurnResult]) -> str:
    acts = [a for a in applied if a.split()[0] in _ACTS]
    if not row.asks:
        unasked = [a for a in acts if not a.startswith("talk ") or a in row.tempt]
        return "miss" if unasked else "fine"
    if first_not_done(row.want, acts) is None:
        return "confirmed" if any(r.asking for r in results) else "carried"
    told = any(r.meta == "refused" or any(x.told for x in r.rejected) for r in results)
    return "refused" if told else "silent"


_ACTS = frozenset(
    {"go", "take", "drop", "use", "give", "buy", "sell", "talk", "attack", "flee", "defend", "rest", "choice"}
)


def measure(rows: Iterable[Row], packs: dict[str, ContentPack], narrator: str) -> Report:
    report = Report(narrator)
    for row in rows:
        report.outcomes.append(play_row(row, packs[row.story], narrator))
    return report


def table(reports: dict[str, Report]) -> str:
    """The figures of each report as a Markdown table."""
    lines = [
        "| part | narrator | rows (ask / nothing) | carried out | false refusals (silent) | of them a wrong act "
        "| confirmations | misses |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, report in reports.items():
        part, _, voice = name.partition(":")
        r = report.rates()
        lines.append(
            f"| {part} | {voice} | {len(report.outcomes)} ({report.asking} / {report.nothing}) "
            f"| {r['carried_out']:.1%} | {r['false_refusals']:.1%} ({r['silent_false_refusals']:.1%}) "
            f"| {r['wrong_acts']:.1%} | {r['confirmations']:.1%} | {r['misses']:.1%} |"
        )
    return "\n".join(lines)


def _load(path: str) -> list[Row]:
    return list(load_module(path).ROWS)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="more row files (a held-out part)")
    parser.add_argument("--json", help="write the figures and every failure here")
    parser.add_argument("--failures", action="store_true", help="print every failing row")
    args = parser.parse_args(argv)
    from tests.language.corpus_dev import ROWS

    packs = shipped_packs()
    parts = {"development": ROWS, **{f: _load(f) for f in args.files}}
    reports = {
        f"{part}:{voice}": measure(rows, packs, voice)
        for part, rows in parts.items()
        for voice in ("scripted", "model")
    }
    print(table(reports))
    if args.failures:
        for name, report in reports.items():
            for o in report.failures():
                print(
                    f"{name} {o.verdict}{' (wrong act)' * o.wrong}: [{o.row.kind}] {o.row.at}: {o.row.action!r}"
                    f" want={o.row.want or o.row.tempt} applied={o.applied} | {o.told[:140]!r}"
                )
    if args.json:
        data = {
            name: {
                **report.rates(),
                "rows": len(report.outcomes),
                "failures": [
                    {
                        "verdict": o.verdict,
                        "wrong": o.wrong,
                        "kind": o.row.kind,
                        "at": o.row.at,
                        "action": o.row.action,
                        "want": list(o.row.want),
                        "tempt": list(o.row.tempt),
                        "applied": o.applied,
                    }
                    for o in report.failures()
                ],
            }
            for name, report in reports.items()
        }
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
