"""The benchmarks run end to end (small inputs; the real figures are in docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import SHIPPED

ROOT = Path(__file__).resolve().parents[1]


def conversation() -> dict:
    """A tiny conversation in LoCoMo's format, made up for this test."""
    return {
        "speaker_a": "Maya",
        "speaker_b": "Tom",
        "session_1_date_time": "1:00 pm on 3 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I adopted a grey cat called Pixel last week."},
            {"speaker": "Tom", "dia_id": "D1:2", "text": "Nice! I started learning the cello."},
            {"speaker": "Maya", "dia_id": "D1:3", "text": "Pixel already sleeps on my keyboard."},
        ],
        "session_2_date_time": "9:00 am on 10 June, 2023",
        "session_2": [
            {"speaker": "Tom", "dia_id": "D2:1", "text": "My cello teacher moved to Lisbon."},
            {
                "speaker": "Maya",
                "dia_id": "D2:2",
                "text": "I ran my first half marathon on Sunday.",
                "blip_caption": "a woman holding a medal",
            },
            {"speaker": "Tom", "dia_id": "D2:3", "text": "Congratulations, that is a big step."},
        ],
        "qa": [
            {"question": "What is the name of Maya's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
            {
                "question": "Where did Tom's cello teacher move?",
                "answer": "Lisbon",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {
                "question": "When did Maya run a half marathon?",
                "answer": "June 2023",
                "evidence": ["D2:2"],
                "category": 2,
            },
            {"question": "Adversarial", "answer": "", "evidence": ["D1:2"], "category": 5},
        ],
    }


def test_locomo_recall_runs_on_any_folder(tmp_path):
    data = tmp_path / "conversations"
    data.mkdir()
    (data / "tiny.json").write_text(json.dumps(conversation()))
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "locomo_recall.py"), "--data", str(data), "--k", "1", "3", "--json",
         "--store", "inprocess", "--out", str(tmp_path / "result.json")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) == {"ours", "dense", "bm25"}
    assert set(result["ours"]) == {"1", "3"}
    assert result["ours"]["3"] == 1.0  # three questions (category 5 skipped), each found in the top 3
    assert json.loads((tmp_path / "result.json").read_text())["questions"] == 3


def test_game_memory_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "game_memory.py"), "--filler", "20", "--json",
         "--out", str(tmp_path / "result.json")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["probes"] == 12 and result["turns_played"] >= 38
    assert result["hit_rate"]["ours"] >= result["hit_rate"]["l1_window"]
    assert result["hit_rate"]["ours"] >= 0.9


def test_vector_index_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "vector_index.py"), "--sizes", "500", "--queries", "5", "--json",
         "--out", str(tmp_path / "result.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["size"] == 500 and row["numpy_ms"] > 0 and row["faiss_ms"] > 0


def test_saves_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "saves.py"), "--turns", "30", "--repeats", "3", "--json",
         "--dir", str(tmp_path), "--out", str(tmp_path / "result.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert json.loads(out.stdout)["ratios"] == result["ratios"]
    assert result["turns"] == 30 and result["repeats"] == 3 and result["save_bytes"] > 0
    for name in ["ours_write", "ours_write.snapshot", "ours_write.slot_write", "bare_write", "bare_write_fsync",
                 "ours_load", "ours_load.decode_only", "bare_load"]:  # fmt: skip
        timing = result["timings"][name]
        assert timing["median_ms"] > 0 and timing["p95_ms"] >= timing["median_ms"], name
    assert set(result["ratios"]) == {
        "write_vs_bare", "write_vs_bare_fsync", "snapshot_vs_dumps", "load_vs_bare", "decode_vs_loads",
    }  # fmt: skip
    assert all(r["of_medians"] > 0 and r["paired_median"] > 0 for r in result["ratios"].values())
    assert set(result["target"]) == {"ratio", "write_met", "write_met_vs_bare_fsync", "load_met"}
    assert list(tmp_path.iterdir()) == [tmp_path / "result.json"]  # the save folder is removed


def test_balance_benchmark_runs(tmp_path):
    def balance(out: Path) -> subprocess.CompletedProcess[str]:
        # run as a module from the checkout, so it plays this checkout's rules and stories
        return subprocess.run(
            [sys.executable, "-m", "bench.balance", "--runs", "4", "--json", "--out", str(out)],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )  # fmt: skip

    out = balance(tmp_path / "result.json")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert json.loads(out.stdout)["summary"] == result["summary"]
    policies = ["careless", "heedless", "careful", "thorough"]
    stories = SHIPPED
    assert list(result["summary"]) == [f"{s}/{p}" for s in stories for p in policies]
    for summary in result["summary"].values():
        assert summary["runs"] == 4
        assert 0 <= summary["ko_rate"] <= 1 and 0 <= summary["lowest_hp_p10"] <= summary["lowest_hp_median"] <= 1
    runs = result["runs"]
    assert len(runs) == len(stories) * 4 * 4
    # seeds 0-3 play the four walkthrough routes of each story once; the careful player ends every one of them
    careful = [r for r in runs if r["policy"] == "careful"]
    assert sorted(r["route"] for r in careful if r["story"] == "scifi_001") == ["pact", "purge", "reboot", "rewrite"]
    assert all(r["ending"] == r["route"] and r["knockouts"] == 0 for r in careful)
    assert set(result["targets"]["met"]) == set(stories)
    # the same seeds play the same games
    again = balance(tmp_path / "again.json")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again.json").read_text())["runs"] == runs


def test_turn_overhead_reports_the_turns_that_embed_nothing_apart():
    """The information row behind issue 11's note: turns whose action was played before (vectors remembered)."""
    import argparse

    from bench.turn_overhead import summarise

    played = [(20.0, False), (18.0, False), (6.0, True), (8.0, True), (10.0, True)]
    rows = [
        {"overhead_ms": ms, "embed_ms": 2.0, "autosave": False, "repeat": repeat, "stages": {"recall": 1.0}}
        for ms, repeat in played
    ]
    args = argparse.Namespace(narrator_ms=1000, episodes=10, bible=1, warmup=0)
    summary = summarise(args, {"paced": rows}, [], "model", None, 0.0, 0, {})["summary"]
    (row,) = [r for r in summary if "played before" in r["measure"]]
    assert row["value"] == "8.0 / 9.8 ms (4.00x / 4.90x the query embedding; 3 turns)"
    first = summarise(args, {"paced": [dict(r, repeat=False) for r in rows]}, [], "model", None, 0.0, 0, {})
    assert not [r for r in first["summary"] if "played before" in r["measure"]]


def test_the_delivery_benchmark_fails_when_memory_does_not_reach_the_prompt():
    """bench.memory_delivery's rows are computed from their goals: recall that finds but does not deliver fails."""
    from bench.memory_delivery import DISTANCES, summary

    def result(delivered, tokens):
        probe = {"retrieved": True, "delivered": delivered}
        return {
            "planted": {"probes": {str(d): [probe] * 8 for d in DISTANCES}, "tokens": tokens},
            "openings": {
                "fantasy_001": {"relevant_share": 1.0, "turns_after_10": 20, "told": [{"best3_delivered": True}]}
            },
        }

    flat = [2400] * 80
    good = summary(result(True, flat))
    assert all(row["met"] for row in good)
    found_not_sent = summary(result(False, flat))
    assert [row["met"] for row in found_not_sent if "delivered recall" in row["measure"]] == [False] * len(DISTANCES)
    grows = summary(result(True, [2000] * 60 + [2440] * 20))
    assert not next(r for r in grows if "max / median" in r["measure"])["met"]
    over = summary(result(True, [2400] * 79 + [2500]))
    assert not next(r for r in over if "every turn" in r["measure"])["met"]


def test_no_benchmark_row_is_met_by_hand():
    """Every "met" is computed from its goal; a row that cannot fail is information and says "reported" (met None)."""
    import re

    for path in sorted((ROOT / "bench").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r'"met":\s*True\b', text), path.name
        for goal in re.findall(r'"goal":\s*"reported",\s*"met":\s*([^,}\n]+)', text):
            assert goal.strip() == "None", (path.name, goal)


def test_measured_starts_cache_bytecode_as_a_players_python_does(monkeypatch):
    """A machine that sets PYTHONDONTWRITEBYTECODE (this one does) made every measured start compile the game's
    source again; a player's second start reads the cached bytecode, so the measured starts must too."""
    from bench.startup import player_env

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = player_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["HF_HUB_OFFLINE"] == "1" and env["ANONYMIZED_TELEMETRY"] == "False"
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == "False"


def test_the_prompt_split_of_the_kept_relay_game_gives_memory_the_room(tmp_path):
    """``bench/prompt_split.py`` on the relay game kept in the repo (issue 42): no schema pasted into the messages,
    and memory the largest part of a model's prompt, the five-turn summaries reaching most prompts."""
    out = tmp_path / "split.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.prompt_split", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "fixed" in done.stdout and "memory" in done.stdout
    (result,) = json.loads(out.read_text()).values()
    median = result["median"]
    assert result["turns"] >= 40 and median["schema"] == 0
    assert median["memory"] > median["fixed"] + median["state"] and median["summaries_reached"] >= 0.5
