"""Issue 11, target 3: the prompt stays small and flat over a long game, while a full history grows.

Plays a scripted Misty Forest game of ``--turns`` played turns (500; 120 with
``--quick``) through the real engine (``bench/prompt_game.py``: the walkthrough,
then varied actions with odd input: empty lines, gibberish, a 2,000-character
action, prompt injection, unicode and emoji, repeats) and records, for every
played turn, the size of the prompt the narrator got:

- ``ours``: the turn's :class:`PromptBundle` as the engine counts it
  (``tokens``, its estimate: :func:`game.text.estimate_messages`, the
  contents' :func:`~game.text.estimate_tokens` plus the chat markup, the
  count the prompt budget caps) and the real token count of its messages
  serialized in ChatML by the SmolLM2 tokenizer (``ours_real``);
- ``baseline``: what a naive engine would send: the same system prompt's fixed
  part (persona, the safety line, the answer format) plus every past turn's
  player action and narration as chat messages, plus this turn's action. Same
  two counts (the estimate with the same per-message markup).

Checks (each a row of ``summary``):

- the prompt's maximum over all turns is under 2,500 tokens (both counts);
- flat after turn 10: the maximum of turns 11..N is within 15% of the median of
  turns 11..60, and the least-squares slope over turns 11..N drifts less than
  5% of that median over the whole game (``|slope| * (N - 10) <= 0.05 * median``).

Writes ``bench/results/prompt_size.json`` (per-turn rows and the summary) and
``docs/prompt_size.png`` (both curves, and ours alone against the 2,500 line).

    python -m bench.prompt_size [--quick] [--turns N] [--no-embeddings]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.prompt_game import ROOT, actions, chatml, load_tokenizer, open_game
from game.engine.prompt import JSON_INSTRUCTION, persona_text
from game.text import MESSAGE_TOKENS, estimate_messages, estimate_tokens

LIMIT = 2500
"""Target: the prompt stays under this many tokens at every turn."""
FLAT_MAX_OVER_MEDIAN = 0.15
FLAT_DRIFT = 0.05
REPORT_TURNS = (1, 5, 10, 11, 25, 50, 100, 150, 200, 300, 400, 500)
OUT = ROOT / "bench" / "results" / "prompt_size.json"
PLOT = ROOT / "docs" / "prompt_size.png"


def slope(xs: list[int], ys: list[int]) -> float:
    """Least-squares slope of ``ys`` over ``xs``."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def run(turns: int, embeddings: bool, budget: int | None = None) -> dict[str, Any]:
    tokenizer = load_tokenizer()
    rows: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    started = time.perf_counter()
    with open_game(embeddings, budget=budget) as session:
        engine = session.engine
        naive_system = f"{persona_text(engine.pack)}\n\n{JSON_INSTRUCTION}"
        naive_est = estimate_messages([{"role": "system", "content": naive_system}])
        naive_real = tokenizer.count(chatml([{"role": "system", "content": naive_system}], generation_prompt=True))
        history_est = history_real = 0  # the past turns' messages a naive engine resends
        source = actions()
        inputs = 0
        while engine.state.turn < turns:
            action = next(source)
            inputs += 1
            result = session.play(action)
            prompt = result.trace.prompt
            if prompt is None or not result.ok:
                refused.append({"input": action[:60], "chars": len(action), "why": (result.error or result.meta or "")})
                continue
            if engine.state.ending or engine.state.hp <= 0:
                raise RuntimeError(f"the scripted game ended at turn {engine.state.turn}: extend the script")
            user = {"role": "user", "content": action}
            reply = {"role": "assistant", "content": result.narration}
            rows.append(
                {
                    "turn": result.turn,
                    "action": action[:60],
                    "ours": prompt.tokens,
                    "ours_real": tokenizer.count(chatml(prompt.messages)),
                    "baseline": naive_est + history_est + MESSAGE_TOKENS + estimate_tokens(action),
                    "baseline_real": naive_real
                    + history_real
                    + tokenizer.count(chatml([user], generation_prompt=False)),
                    "cut": len(prompt.cut),
                    "window": len(prompt.memory.window),
                }
            )
            history_est += 2 * MESSAGE_TOKENS + estimate_tokens(action) + estimate_tokens(result.narration)
            history_real += tokenizer.count(chatml([user, reply], generation_prompt=False))
        strategy = engine.memory.recall("look", engine.state).retrieval_meta.get("strategy")
    seconds = time.perf_counter() - started
    return {
        "turns": len(rows),
        "inputs": inputs,
        "seconds": round(seconds, 1),
        "tokenizer": tokenizer.name,
        "recall": strategy,
        "prompt_budget_tokens": engine.prompt_budget_tokens,
        "refused_inputs": refused,
        "rows": rows,
    }


def checks(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["rows"]
    out: dict[str, Any] = {}
    for key in ("ours", "ours_real"):
        after = [r for r in rows if r["turn"] > 10]
        early = [r[key] for r in after if r["turn"] <= 60]
        median = statistics.median(early)
        top = max(r[key] for r in after)
        drift = slope([r["turn"] for r in after], [r[key] for r in after])
        span = after[-1]["turn"] - 10
        out[key] = {
            "max_all": max(r[key] for r in rows),
            "max_after_10": top,
            "median_11_60": median,
            "max_over_median": round(top / median - 1, 3),
            "slope_per_turn": round(drift, 3),
            "drift_over_game": round(abs(drift) * span / median, 4),
            "under_limit": max(r[key] for r in rows) < LIMIT,
            "flat": top <= (1 + FLAT_MAX_OVER_MEDIAN) * median and abs(drift) * span <= FLAT_DRIFT * median,
        }
    by_turn = {r["turn"]: r for r in rows}
    out["at"] = {
        t: {
            "ours": by_turn[t]["ours"],
            "ours_real": by_turn[t]["ours_real"],
            "baseline": by_turn[t]["baseline"],
            "baseline_real": by_turn[t]["baseline_real"],
            "ratio": round(by_turn[t]["baseline"] / by_turn[t]["ours"], 2),
            "ratio_real": round(by_turn[t]["baseline_real"] / by_turn[t]["ours_real"], 2),
        }
        for t in REPORT_TURNS
        if t in by_turn
    }
    out["baseline_slope_per_turn"] = round(slope([r["turn"] for r in rows], [r["baseline"] for r in rows]), 1)
    return out


def summary(result: dict[str, Any], check: dict[str, Any]) -> list[dict[str, Any]]:
    ours, real = check["ours"], check["ours_real"]
    n = result["turns"]
    tokenizer = result["tokenizer"].split(" (")[0]
    over = sum(1 for r in result["rows"] if r["ours_real"] >= LIMIT)
    rows: list[dict[str, Any]] = [
        {
            "target": "3 prompt size",
            "measure": f"max prompt tokens over {n} turns, the engine's count (estimate, what the budget caps: "
            "under it by construction)",
            "value": str(ours["max_all"]),
            "goal": "reported",
            "met": None,
        },
        {
            "target": "3 prompt size",
            "measure": f"max prompt tokens over {n} turns, {tokenizer} tokens of the ChatML-serialized messages",
            "value": f"{real['max_all']} ({over} of {n} turns at {LIMIT} or more)",
            "goal": f"< {LIMIT} at every turn",
            "met": bool(real["under_limit"]),
        },
        {
            "target": "3 prompt size",
            "measure": "flat after turn 10: max(11..N) over median(11..60); slope drift over the game",
            "value": f"+{ours['max_over_median'] * 100:.1f}% (median {ours['median_11_60']:.0f}); "
            f"{ours['slope_per_turn']:+.3f}/turn = {ours['drift_over_game'] * 100:.1f}%",
            "goal": f"<= +{FLAT_MAX_OVER_MEDIAN * 100:.0f}%; drift <= {FLAT_DRIFT * 100:.0f}% of the median",
            "met": bool(ours["flat"] and real["flat"]),
        },
    ]
    for t in (50, 100, 500):
        at = check["at"].get(t)
        if at is not None:
            rows.append(
                {
                    "target": "3 prompt size",
                    "measure": f"full-history baseline / ours at turn {t} (estimate; real tokens)",
                    "value": f"{at['baseline']} / {at['ours']} = {at['ratio']}x; "
                    f"{at['baseline_real']} / {at['ours_real']} = {at['ratio_real']}x",
                    "goal": "the baseline grows linearly, ours stays flat",
                    "met": bool(at["ratio"] > 1 and ours["flat"]),
                }
            )
    return rows


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    turns = [r["turn"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    left.plot(turns, [r["baseline_real"] for r in rows], label="full history (naive), real tokens", color="tab:red")
    left.plot(turns, [r["baseline"] for r in rows], label="full history (naive), estimate", color="tab:red", ls=":")
    left.plot(turns, [r["ours_real"] for r in rows], label="StoryEcho, real tokens", color="tab:blue")
    left.plot(turns, [r["ours"] for r in rows], label="StoryEcho, estimate", color="tab:blue", ls=":")
    left.set(title="Prompt tokens per turn", xlabel="turn", ylabel="tokens")
    left.legend(fontsize=8)
    left.grid(alpha=0.3)
    right.plot(turns, [r["ours_real"] for r in rows], label=f"real ({result['tokenizer'].split(' (')[0]})")
    right.plot(turns, [r["ours"] for r in rows], label="estimate (engine's count)", ls=":")
    right.axhline(LIMIT, color="tab:red", lw=1, label=f"{LIMIT} tokens")
    right.axvline(10.5, color="grey", lw=0.8, ls="--")
    right.set(title="StoryEcho prompt (zoom)", xlabel="turn", ylabel="tokens", ylim=(0, LIMIT * 1.15))
    right.legend(fontsize=8, loc="lower right")
    right.grid(alpha=0.3)
    fig.suptitle(f"Scripted Misty Forest game, {result['turns']} turns, recall {result['recall']}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(result: dict[str, Any], check: dict[str, Any]) -> str:
    lines = [
        f"{result['turns']} turns from {result['inputs']} inputs ({len(result['refused_inputs'])} refused before "
        f"a prompt), {result['seconds']} s, recall {result['recall']}, tokenizer {result['tokenizer']}",
        "",
        f"{'turn':>5} {'ours est':>9} {'ours real':>10} {'naive est':>10} {'naive real':>11} {'ratio':>6} {'real':>6}",
    ]
    for t, at in check["at"].items():
        lines.append(
            f"{t:>5} {at['ours']:>9} {at['ours_real']:>10} {at['baseline']:>10} {at['baseline_real']:>11} "
            f"{at['ratio']:>6} {at['ratio_real']:>6}"
        )
    lines.append("")
    for key in ("ours", "ours_real"):
        c = check[key]
        lines.append(
            f"{key:<10} max {c['max_all']}, after turn 10: median(11..60) {c['median_11_60']:.0f}, "
            f"max {c['max_after_10']} (+{c['max_over_median'] * 100:.1f}%), slope {c['slope_per_turn']:+.3f}/turn "
            f"({c['drift_over_game'] * 100:.2f}% over the game): under {LIMIT} {c['under_limit']}, flat {c['flat']}"
        )
    lines.append(f"naive baseline slope {check['baseline_slope_per_turn']} tokens/turn")
    lines.append("")
    for row in result["summary"]:
        mark = "reported" if row["met"] is None else "met" if row["met"] else "NOT met"
        lines.append(f"[{mark}] {row['measure']}: {row['value']} (goal {row['goal']})")
    return "\n".join(lines)


def resummarize(path: Path = OUT) -> dict[str, Any]:
    """Recompute the checks and the summary of a saved run (no game is played)."""
    result: dict[str, Any] = json.loads(path.read_text())
    result["checks"] = checks(result)
    result["summary"] = summary(result, result["checks"])
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="120 turns (under 90 s)")
    parser.add_argument("--turns", type=int, default=None, help="played turns (default 500, 120 with --quick)")
    parser.add_argument("--no-embeddings", action="store_true", help="keyword recall (no sentence embeddings)")
    parser.add_argument("--budget", type=int, default=None, help="prompt budget in tokens (default: the engine's)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--plot", type=Path, default=PLOT)
    args = parser.parse_args(argv)
    turns = args.turns or (120 if args.quick else 500)
    result = run(turns, embeddings=not args.no_embeddings, budget=args.budget)
    check = checks(result)
    result["checks"] = check
    result["summary"] = summary(result, check)
    result["definitions"] = {
        "ours": "PromptBundle.tokens (the engine's estimate: game.text.estimate_messages, contents and chat markup); "
        "ours_real: the ChatML-serialized messages counted by the tokenizer",
        "baseline": "persona + safety line + answer format as the system prompt, every past turn's action and "
        "narration as chat messages, and this turn's action",
        "flat": f"max(turns 11..N) <= (1 + {FLAT_MAX_OVER_MEDIAN}) * median(turns 11..60) and "
        f"|least-squares slope over 11..N| * (N - 10) <= {FLAT_DRIFT} * median(turns 11..60)",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    plot(result, args.plot)
    print(table(result, check))
    print(f"\nwrote {args.out} and {args.plot}", file=sys.stderr)
    return 0  # the summary says which goals were met (bench/run_all.py reads it)


if __name__ == "__main__":
    raise SystemExit(main())
