"""Judging the sixty natural sentences (issue 41): played with the built-in narrator, is each read right?

What reading right is for each kind of expectation is ``rows.Natural``'s docstring; :func:`judge` checks it on the
results of the whole line (and of the answer a player who meant the sentence gives when the game asks back).
``python -m tests.language.natural FILE`` prints each sentence's verdict.
"""

from __future__ import annotations

import re

from game.engine.pipeline import TurnPipeline, TurnResult
from game.language.lexicon import is_verb_phrase
from game.language.reading import read
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.search.query import QueryRewriter
from game.memory.search.question import read_question
from game.memory.settings import MemoryConfig
from game.world.content import ContentPack
from tests.language.acts import acts_applied, first_not_done, load_module, same_act, shipped_packs, state_for
from tests.language.rows import Natural

ALWAYS_FORBIDDEN = ("not possible now",)
_NEEDS = re.compile(r"\bneeds (?:[a-z]+:[a-z_]+|strength|agility|intelligence|level)\b")
"""A rule's condition shown raw ("needs talked:kage", "needs intelligence 12"), not "who no longer needs it"."""
ECHOES = ("For all your trying to", "Nothing much comes of trying to", "You try to", "You make an attempt to")
"""The scripted narrator's tellings of an attempt: an echo with its pronouns turned when the words are no act."""
_FLAG = re.compile(r"\b[a-z]+:[a-z_]+\b|\b[a-z]+_[a-z_]+\b")
"""An internal flag or id ("talked:kage", "heartsap_tonic") shown to the player."""


def play(sentence: Natural, pack: ContentPack) -> tuple[TurnPipeline, list[TurnResult]]:
    memory = GameMemory(pack, ScriptedNarrator(pack), config=MemoryConfig(), background=False)  # type: ignore[arg-type]
    game = TurnPipeline(pack, state_for(sentence, pack), ScriptedNarrator(pack), memory)
    results = game.play_all(sentence.action)
    if results[-1].asking and game.pending is not None:
        offer = game.pending.offer
        meant = [a for a in offer if any(same_act(w, f"{a.verb} {a.target} {a.to}".strip()) for w in sentence.want)]
        answer = "no" if not meant else "yes" if len(offer) == 1 else str(offer.index(meant[0]) + 1)
        results += game.play_all(answer)
    return game, results


def reading(action: str) -> str:
    """The first clause's core: what an echo would turn back."""
    clauses = read(action).clauses
    return clauses[0].core if clauses and clauses[0].core else action.lower()


def judge(sentence: Natural, pack: ContentPack) -> str:
    """ "" when ``sentence`` is read right, else why not."""
    game, results = play(sentence, pack)
    applied = acts_applied([a for r in results for a in r.applied])
    told = "\n".join(r.narration for r in results)
    past = read_question(sentence.action, QueryRewriter(pack))
    forbidden = [*ALWAYS_FORBIDDEN, *sentence.forbid, *(e.title for e in pack.endings)]
    if not (past is not None and past.about_past):
        forbidden.append("You recall")
    if shown := [
        f for f in forbidden if f in told and not (f in (e.title for e in pack.endings) and game.state.ending)
    ] + _NEEDS.findall(told):
        return f"shows {shown}: {told[:160]!r}"
    if any(e in told for e in ECHOES) and not is_verb_phrase(reading(sentence.action)):
        return f"echoes the sentence back: {told[:160]!r}"
    if sentence.expect == "act":
        missed = first_not_done(sentence.want, applied)
        return f"{missed} not done (applied {applied}): {told[:160]!r}" if missed else ""
    if sentence.expect == "answer":
        if sentence.by == "rules":
            ok = not applied and re.search(r"\d|carry|carrying|inventory", told, re.I)
            return "" if ok else f"not the rules' answer (applied {applied}): {told[:160]!r}"
        npc = pack.npcs[sentence.by]
        others = [a for a in applied if a != f"talk {sentence.by}"]
        named = any(name.lower() in told.lower() for name in [npc.name, *npc.names])
        return "" if not others and named else f"{npc.name} does not answer (applied {applied}): {told[:160]!r}"
    if applied:
        return f"applied {applied}: {told[:160]!r}"
    if sentence.expect == "refuse":
        flags = [m for m in _FLAG.findall(told) if m not in ("ma'am",)]
        if flags or not all(r.free for r in results):
            return f"not a plain refusal at no cost ({flags}): {told[:160]!r}"
    return ""


def main(path: str) -> int:
    module = load_module(path)
    packs = shipped_packs()
    right = 0
    for sentence in module.NATURAL:
        why = judge(sentence, packs[sentence.story])
        right += not why
        print(
            f"{'ok ' if not why else 'NO '} [{sentence.expect}] {sentence.action!r}" + (f"\n     {why}" if why else "")
        )
    print(f"{right} of {len(module.NATURAL)} read right")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1]))
