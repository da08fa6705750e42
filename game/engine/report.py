"""The headless ``--json`` line for a turn: a contract later tools rely on.

Keys: ``turn``, ``action``, ``ok``, ``narration``, ``choices``, ``state``
(node, hp, max_hp, gold, inventory, quests, affinity, ending, ...),
``applied``, ``rejected`` (effect, value, reason), ``notices``, ``prompt`` (system, user,
tokens, token_source, blocks, budget_tokens, overhead_tokens: the
answer schema a narrator adds on the wire, cut), ``memory_blocks`` (name,
layer, tokens, items with text/score/source/parts, cut: the same items),
where ``parts`` is what the score is made of, weights applied, summing to the
score up to rounding (``semantic``, ``importance``, ``recency`` and any bonus
such as ``match`` or ``open_thread``; see ``MemoryItem``) and ``why`` (an imported lore entry: the key that
fired it, constant, sticky, recursion, meaning), ``retrieval_meta``
(strategy, strategies, fallback, summaries, pending_vectors, vector_lag_turns,
pinned, wait_ms, ``lore``: a verdict for each imported entry whose keys the turn saw, fired or not and why,
...), ``dropped_notes``, ``usage`` (per narrator call: tokens as
the model reported them, cached tokens, attempts, ms), ``asked_again`` (asked, first_rejected,
narration_replaced: a turn the rules partly refused is asked once more),
``understood`` (issue 41: ``asked``, what the engine read the action to ask, as the narrator's prompt says it;
``reading``, each clause with its mood and polarity; ``resolved``, how each was found in the world; ``asking``,
true when the game asks the player back and the next line answers, ``choices`` being the answers),
``timings_ms``. ``meta`` is ``refused``, ``answered`` or ``asked`` for a line answered at once without a
narrator (an act that cannot be, a question about the player's own state, a question back).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from game.engine.results import TurnResult


def state_json(result: TurnResult) -> dict[str, Any]:
    state = result.state
    return {
        "node": state.node,
        "hp": state.hp,
        "max_hp": state.max_hp,
        "gold": state.gold,
        "level": state.level,
        "exp": state.exp,
        "strength": state.strength,
        "agility": state.agility,
        "intelligence": state.intelligence,
        "inventory": list(state.inventory),
        "quests": {q: p.status for q, p in state.quests.items()},
        "affinity": dict(state.affinity),
        "combat": state.combat.model_dump() if state.combat else None,
        "talents": list(state.talents),
        "achievements": list(state.achievements),
        "clock": state.clock_text(),
        "ending": state.ending,
    }


def turn_json(result: TurnResult) -> dict[str, Any]:
    """One JSON-serialisable object describing ``result``."""
    trace = result.trace
    prompt = trace.prompt
    memory = trace.memory
    return {
        "turn": result.turn,
        "action": result.action,
        "ok": result.ok,
        "meta": result.meta,
        "error": result.error,
        "narration": result.narration,
        "choices": result.choices,
        "state": state_json(result),
        "applied": [asdict(a) for a in result.applied],
        "rejected": [asdict(r) for r in result.rejected],
        "memory_notes": result.memory_notes,
        "notices": result.notices,
        "prompt": {
            "system": prompt.system if prompt else "",
            "user": prompt.user if prompt else "",
            "tokens": prompt.tokens if prompt else 0,
            "token_source": prompt.token_source if prompt else "estimate",
            "blocks": [{"name": b.name, "tokens": b.tokens} for b in prompt.blocks] if prompt else [],
            "budget_tokens": prompt.budget_tokens if prompt else None,
            "overhead_tokens": prompt.overhead_tokens if prompt else 0,
            "cut": [asdict(c) for c in prompt.cut] if prompt else [],
        },
        "memory_blocks": [
            {
                "name": b.name,
                "layer": b.layer,
                "tokens": b.tokens,
                "items": [asdict(i) for i in b.items],
                "cut": [asdict(i) for i in b.cut],
            }
            for b in (memory.blocks if memory else [])
        ],
        "retrieval_meta": memory.retrieval_meta if memory else {},
        "usage": trace.usage,
        "raw_output": trace.raw_output,
        "validation_errors": trace.validation_errors,
        "repaired": trace.repaired,
        "dropped_notes": trace.dropped_notes,
        "asked_again": {
            "asked": trace.reasked,
            "first_rejected": [asdict(r) for r in trace.first_rejected],
            "narration_replaced": trace.narration_replaced,
            "unfounded": trace.unfounded,
        },
        "understood": {
            "asked": trace.asked,
            "reading": trace.reading,
            "resolved": trace.resolved,
            "asking": result.asking,
        },
        "timings_ms": trace.timings_ms,
    }
